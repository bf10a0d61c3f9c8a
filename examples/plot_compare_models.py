"""
Comparing model families on one data set
========================================

The bundled ``servo`` data set comes with the 5-fold split of the MMIT
paper (``data.folds``). Each fold in turn is the test set; the models are
fitted on the four others and scored by the test interval MSE. The
ensembles are kept small here so that the example runs in seconds; the
accuracy page of the user guide (:ref:`accuracy`) runs every model with
its defaults or tuned by inner cross-validation on 12 data sets.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import MMIT, IntervalLinearRegressionCV, MMITBoost, MMITForest
from mmit.baselines import ConstantRegressor
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse

data = load_dataset("servo")
models = {
    "Constant": ConstantRegressor(),
    "MMIT": MMIT(max_depth=4, margin=0.01, random_state=0),
    "L1-Linear": IntervalLinearRegressionCV(cv=3),
    "MMITForest": MMITForest(n_estimators=30, n_jobs=2, random_state=0),
    "MMITBoost": MMITBoost(n_estimators=60, learning_rate=0.1, random_state=0),
}

# %%
# Test interval MSE on each fold
# ------------------------------
folds = np.unique(data.folds)
scores = {name: [] for name in models}
for fold in folds:
    train, test = data.folds != fold, data.folds == fold
    for name, model in models.items():
        model.fit(data.data[train], data.target[train])
        scores[name].append(interval_mse(data.target[test], model.predict(data.data[test])))

for name, values in scores.items():
    print(f"{name:>11}: mean test interval MSE {np.mean(values):.5f}")

# %%
# The same numbers per fold (log scale: the constant model is far above
# the others).
fig, ax = plt.subplots(figsize=(9, 4))
for name, values in scores.items():
    ax.plot(folds, values, "o-", label=name)
ax.set_yscale("log")
ax.set_xticks(folds)
ax.set_xlabel("test fold")
ax.set_ylabel("test interval MSE")
ax.set_title("servo: five folds, five models")
ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
fig.tight_layout()
plt.show()
