"""
Monotone constraints
====================

A domain expert often knows a direction: the penalty of a changepoint model
should not fall when a sequence holds more data points, the risk of an
event should not fall with a longer exposure. ``monotonic_cst`` (-1, 0 or
1 per feature, scikit-learn's convention, or a dict by feature name) makes
the trees, forests, boosting, the linear models and the stack follow it:
the prediction is monotone in each constrained feature, whatever the
other features are (see :ref:`constraints`).
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import MMITBoost, SurvivalRegressor
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse

# %%
# A monotone penalty on a genomics data set
# -----------------------------------------
# The targets are intervals of log penalties of a changepoint model; the
# penalty a model selection criterion gives grows with the number of data
# points of a sequence (``log.data``). The booster is fitted with and
# without that direction, on each of the data set's folds in turn.
data = load_dataset("H3K27ac-H3K4me3_TDHAM_BP_FPOP")
names = list(data.feature_names)
constraint = {"log.data": 1}
signs = [constraint.get(name, 0) for name in names]
models = {"free": None, "log.data increasing": signs}
for label, monotonic_cst in models.items():
    errors = []
    for fold in np.unique(data.folds):
        train, test = data.folds != fold, data.folds == fold
        model = MMITBoost(n_estimators=1000, early_stopping=True, random_state=0,
                          monotonic_cst=monotonic_cst)
        model.fit(data.data[train], data.target[train])
        errors.append(interval_mse(data.target[test], model.predict(data.data[test])))
    print(f"{label}: test interval MSE {np.mean(errors):.4f} (mean over the folds)")

# %%
# The predictions along ``log.data``, the other features of a few sequences
# held fixed: the constrained model's never decrease.
column = names.index("log.data")
grid = np.linspace(*np.percentile(data.data[:, column], [1, 99]), 100)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
for ax, (label, monotonic_cst) in zip(axes, models.items(), strict=True):
    model = MMITBoost(n_estimators=1000, early_stopping=True, random_state=0,
                      monotonic_cst=monotonic_cst).fit(data.data, data.target)
    for row in data.data[:: len(data.data) // 6][:6]:
        rows = np.repeat(row[np.newaxis], grid.size, axis=0)
        rows[:, column] = grid
        ax.plot(grid, model.predict(rows))
    ax.set(title=label, xlabel="log.data")
axes[0].set_ylabel("predicted log penalty")
fig.tight_layout()

# %%
# A monotone risk on survival data
# --------------------------------
# Simulated times whose hazard grows with a dose (feature 0) and falls with
# a second feature; the third is noise. The survival front-end's default
# model (a forest and a booster on log times) takes ``monotonic_cst`` on
# the predicted time: -1 for the dose (more dose, a shorter predicted time,
# a higher risk), 1 for the second feature.
rng = np.random.default_rng(0)
X = rng.uniform(size=(400, 3))
time = np.exp(2.0 - 1.5 * X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=400))
censored = rng.random(400) < 0.3
y = np.column_stack([time, np.where(censored, np.inf, time)])
survival = SurvivalRegressor(monotonic_cst=[-1, 1, 0], random_state=0).fit(X, y)
doses = np.column_stack([np.linspace(0, 1, 50), np.full(50, 0.5), np.full(50, 0.5)])
risk = survival.predict(doses)
print("the risk never falls as the dose grows:", bool(np.all(np.diff(risk) >= 0)))
