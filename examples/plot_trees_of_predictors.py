"""
Trees of predictors: each region chooses its model family
=========================================================

:class:`~mmit.TreeOfPredictors` grows a tree whose every node holds the
member of a library (here the L1-regularised linear model, a forest and a
boosted ensemble) whose out-of-fold predictions of the node's rows have
the least interval loss, trained on the node's rows or on an ancestor's.
A split is kept when its children's members lower that loss; each leaf
weighs the members on its path. Here it runs on the default bundled data
set (the MMIT paper's histone set, penalties of a changepoint detector),
with a smaller forest than the default one so that the example runs fast.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import (
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    TreeOfPredictors,
)
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse

data = load_dataset()
train, test = data.folds != 1, data.folds == 1
library = [("linear", IntervalLinearRegressionCV()),
           ("forest", MMITForest(n_estimators=30)),
           ("boost", MMITBoost(n_estimators=30, learning_rate=0.15))]
tops = TreeOfPredictors(library, n_jobs=2, random_state=0).fit(
    data.data[train], data.target[train])

# %%
# The tree: which family each region chose
# ----------------------------------------
# Every node names its member and the node whose rows trained it, its
# held-out loss and its number of rows; every leaf the weights of its
# path's members.
print(tops.export_text(feature_names=list(data.feature_names)))

# %%
# Against the stack, which gives every region the same mix
# ---------------------------------------------------------
stack = IntervalStackingRegressor(library, n_jobs=2, random_state=0).fit(
    data.data[train], data.target[train])
for name, model in [("tree of predictors", tops), ("stack", stack)]:
    print(f"{name}: test interval MSE "
          f"{interval_mse(data.target[test], model.predict(data.data[test])):.4f}")

# %%
# The members' weights, row by row
# --------------------------------
# ``predictor_weights`` gives the weight of every node's predictor in each
# row's prediction, and ``tree_.member_weights`` the weight of each family
# in every node's predictor (one family, or a node's mix of them): their
# product shows where each family predicts.
weights = tops.tree_.member_weights.T @ tops.predictor_weights(data.data[test])
share = dict(zip(tops.estimator_names_, weights, strict=True))
fig, ax = plt.subplots(figsize=(6, 3))
bottom = np.zeros(weights.shape[1])
order = np.argsort(tops.predict(data.data[test]))
for family, values in share.items():
    ax.bar(np.arange(order.size), values[order], bottom=bottom[order], width=1.0,
           label=family)
    bottom += values
ax.set_xlabel("test rows, by prediction")
ax.set_ylabel("weight")
ax.legend()
fig.tight_layout()
plt.show()
