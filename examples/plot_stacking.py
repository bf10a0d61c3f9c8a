"""
Stacking: one model that follows the best family
================================================

:class:`~mmit.IntervalStackingRegressor` fits a forest, a boosted ensemble
and the L1-regularised linear model, and weighs them by their out-of-fold
predictions (non-negative weights summing to one). Here it runs on the
default bundled data set (the MMIT paper's histone set), with a smaller
forest than the default one so that the example runs fast.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import (
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
)
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse

data = load_dataset()
print(data.DESCR)
train, test = data.folds != 1, data.folds == 1

stack = IntervalStackingRegressor(
    [("forest", MMITForest(n_estimators=40)),
     ("boost", MMITBoost(n_estimators=30, learning_rate=0.15)),
     ("linear", IntervalLinearRegressionCV())],
    n_jobs=2, random_state=0,
).fit(data.data[train], data.target[train])

# %%
# The weights, and each member's out-of-fold interval MSE
# -------------------------------------------------------
# ``cv_scores_`` is the negative interval MSE of each member's out-of-fold
# predictions (higher is better), the numbers the weights follow.
names = list(stack.named_estimators_)
for name, weight, score in zip(names, stack.weights_, stack.cv_scores_, strict=True):
    print(f"{name:>7}: weight {weight:.3f}, out-of-fold interval MSE {-score:.4f}")

# %%
# On the held-out fold
# --------------------
test_mse = {name: interval_mse(data.target[test], member.predict(data.data[test]))
            for name, member in stack.named_estimators_.items()}
test_mse["stack"] = interval_mse(data.target[test], stack.predict(data.data[test]))
for name, value in test_mse.items():
    print(f"{name:>7}: test interval MSE {value:.4f}")

fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.bar(names, stack.weights_, color="tab:blue")
left.set_ylabel("weight")
left.set_title("Weights of the members")
right.bar(list(test_mse), list(test_mse.values()),
          color=["tab:gray"] * len(names) + ["tab:blue"])
right.set_ylabel("test interval MSE")
right.set_title("Fold 1 held out")
right.set_ylim(0, 1.15 * np.max(list(test_mse.values())))
fig.tight_layout()
plt.show()
