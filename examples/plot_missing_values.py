"""
Missing values
==============

The trees, forests, boosting and the stack take NaN in ``X`` at fit and
predict time: each split sends the missing values to the side where they
fit best (:func:`mmit.export_text` shows which). The linear models refuse
NaN; :class:`~mmit.MeanImputer` (the weighted training mean of each
feature and a 0/1 column per feature that had missing values) puts them
in front of a pipeline, as the stack does for its linear member.

Here a growing share of the feature values of the bundled ``servo`` data
set is removed at random, in the training and the test rows alike.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.pipeline import make_pipeline

from mmit import MMIT, IntervalLinearRegressionCV, MeanImputer, MMITBoost, export_text
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse

data = load_dataset("servo")
rng = np.random.RandomState(0)

# %%
# Where a split sends the missing values
# --------------------------------------
# ``or missing`` marks the side that receives them.
X = data.data.copy()
X[rng.uniform(size=X.shape) < 0.3] = np.nan
stump = MMIT(max_depth=1, random_state=0).fit(X, data.target)
print(export_text(stump, feature_names=data.feature_names))

# %%
# Test interval MSE as values go missing
# --------------------------------------
# Mean over the five folds of ``data.folds``, each the test set in turn.
models = {
    "MMIT": MMIT(max_depth=4, margin=0.01, random_state=0),
    "MMITBoost": MMITBoost(n_estimators=60, learning_rate=0.1, random_state=0),
    "MeanImputer + L1-Linear": make_pipeline(MeanImputer(),
                                             IntervalLinearRegressionCV(cv=3)),
}
shares = [0.0, 0.1, 0.2, 0.4]
scores = {name: [] for name in models}
for share in shares:
    X = data.data.copy()
    X[rng.uniform(size=X.shape) < share] = np.nan
    for name, model in models.items():
        errors = []
        for fold in np.unique(data.folds):
            train, test = data.folds != fold, data.folds == fold
            model.fit(X[train], data.target[train])
            errors.append(interval_mse(data.target[test], model.predict(X[test])))
        scores[name].append(np.mean(errors))

for name, values in scores.items():
    print(f"{name:>23}: " + ", ".join(f"{value:.4f}" for value in values))

fig, ax = plt.subplots(figsize=(7, 4))
for name, values in scores.items():
    ax.plot(np.multiply(shares, 100), values, "o-", label=name)
ax.set_xlabel("missing values (% of the feature values)")
ax.set_ylabel("mean test interval MSE")
ax.set_title("servo with values removed at random")
ax.legend(frameon=False)
plt.show()
