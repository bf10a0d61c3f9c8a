"""
Why this prediction: SHAP values
================================

:func:`mmit.shap_values` splits each prediction into one contribution per
feature, exactly: the contributions and the model's base value (its mean
prediction) add up to the prediction. Trees get path-dependent TreeSHAP
(compiled, on threads), linear models their coefficients times the
features' offsets from their training means, and a stack the weighted sum
of its members' values. ``explanation.to_shap()`` hands them to shap's
plots when shap is installed (``pip install 'scikit-mmit[explain]'``).
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import MMITForest, intervals_from_survival, shap_values
from mmit.datasets import load_dataset

# %%
# Which features set the penalty
# ------------------------------
# The MMIT paper's histone data set: each row is a genomic sequence, its
# target the interval of log penalties for which a changepoint model finds
# the right peaks. A forest learns the penalty from 26 features of the
# sequence (its size, its variance, quantiles of its counts...).
data = load_dataset()
forest = MMITForest(n_estimators=50, n_jobs=2, random_state=0).fit(data.data, data.target)
explanation = shap_values(forest, data.data, n_jobs=2)
prediction = explanation.values.sum(axis=1) + explanation.base_values
gap = np.max(np.abs(prediction - forest.predict(data.data)))
print(f"values + base value against predict(): largest gap {gap:.1e}")

# %%
# The mean absolute value of each feature's contributions is a global
# importance in the unit of the prediction (here the log penalty); unlike
# ``feature_importances_`` it comes with a direction for each sequence.
order = np.argsort(explanation.importances)[-10:]
names = np.array(data.feature_names)
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), width_ratios=[1, 1.3])
left.barh(names[order], explanation.importances[order])
left.set_xlabel("mean |SHAP value| (log penalty)")
top = order[-1]
points = right.scatter(explanation.data[:, top], explanation.values[:, top], s=8,
                       c=explanation.data[:, order[-2]], cmap="viridis")
right.set_xlabel(names[top])
right.set_ylabel(f"SHAP value of {names[top]}")
fig.colorbar(points, ax=right, label=names[order[-2]])
fig.tight_layout()

# %%
# With shap installed, its own plots take the same values.
try:
    import shap
except ImportError:
    shap = None
if shap is not None:
    shap.plots.beeswarm(explanation.to_shap(), max_display=10, show=False)
    plt.tight_layout()

# %%
# What moves a predicted survival time
# ------------------------------------
# Simulated patients: the log survival time falls with the dose, faster
# under treatment B, and does not depend on the age; follow-up ends at a
# random time, after which an event is only known to come later.
rng = np.random.default_rng(0)
n = 600
dose = rng.uniform(0, 10, n)
treatment_b = rng.integers(0, 2, n).astype(float)
age = rng.uniform(20, 80, n)
X = np.column_stack([dose, treatment_b, age])
event_time = np.exp(3.0 - (0.1 + 0.2 * treatment_b) * dose + 0.3 * rng.standard_normal(n))
follow_up = rng.uniform(1.0, 25.0, n)
event = event_time <= follow_up
y = intervals_from_survival(event, np.minimum(event_time, follow_up), log=True)
print(f"{1 - event.mean():.0%} of the times are censored")

survival = MMITForest(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)
patients = shap_values(survival, X, interactions=True, n_jobs=2)
values = patients.contributions
for j, name in enumerate(["dose", "treatment B", "age"]):
    print(f"{name:>12}: mean |SHAP value| {patients.importances[j]:.3f} (log time)")

# %%
# The dose's contribution falls with the dose, twice as steeply under
# treatment B: the interaction values of dose and treatment carry the
# difference, while age contributes almost nothing.
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for arm, colour in ((0.0, "tab:blue"), (1.0, "tab:orange")):
    rows = treatment_b == arm
    left.scatter(dose[rows], values[rows, 0], s=8, color=colour,
                 label=f"treatment {'B' if arm else 'A'}")
    right.scatter(dose[rows], 2 * patients.values[rows, 0, 1], s=8, color=colour)
left.set_xlabel("dose")
left.set_ylabel("SHAP value of the dose (log time)")
left.legend()
right.set_xlabel("dose")
right.set_ylabel("interaction of dose and treatment (x2)")
fig.tight_layout()
plt.show()
