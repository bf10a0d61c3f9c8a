"""
A tree and a forest on simulated interval data
==============================================

The MMIT paper's ``sin`` simulation: the target of each example is an
interval around ``sin(x0)``, and about one label in five has lost one of
its bounds (a censored label, drawn as a triangle at the open end).
:func:`mmit.plot.plot_intervals` draws the intervals along the signal
feature together with the predictions of a single
:class:`~mmit.MMIT` (steps: one constant per leaf) and of an
:class:`~mmit.MMITForest` (the average of many trees, smoother).
"""

import matplotlib.pyplot as plt

from mmit import MMIT, MMITForest
from mmit.datasets import make_interval_regression
from mmit.metrics import interval_accuracy, interval_mse
from mmit.plot import plot_intervals

# %%
# Simulated data
# --------------
# ``y`` has one row ``[lower, upper]`` per example; ``-inf`` or ``inf``
# marks a censored bound. Only the first of the two features carries the
# signal.
X, y = make_interval_regression(200, 2, pattern="sin", random_state=0)
X_test, y_test = make_interval_regression(200, 2, pattern="sin", random_state=1)
print(y[:5])

# %%
# Fit and score
# -------------
# The interval MSE is the squared distance of each prediction to its
# interval (zero inside it); the interval accuracy is the share of
# predictions inside their interval.
tree = MMIT(max_depth=4, margin=0.1, random_state=0).fit(X, y)
forest = MMITForest(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)
for name, model in [("MMIT", tree), ("MMITForest", forest)]:
    prediction = model.predict(X_test)
    print(f"{name:>10}: test interval MSE {interval_mse(y_test, prediction):.4f}, "
          f"accuracy {interval_accuracy(y_test, prediction):.2f}")

# %%
# Plot
# ----
fig, ax = plt.subplots(figsize=(9, 4))
plot_intervals(X_test[:, 0], y_test,
               {"MMIT (depth 4)": tree.predict(X_test),
                "MMITForest (50 trees)": forest.predict(X_test)},
               ax=ax, feature_name="x0")
ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
ax.set_title("Test intervals of the sin simulation and two models' predictions")
fig.tight_layout()
plt.show()
