"""
Categorical features in a data frame
====================================

Clinical and genomic data come as data frames with categorical columns: the
hospital, the treatment arm, the tumour grade, the chromosome. Every mmit
model takes such a frame as it is: a pandas ``category`` column is a
categorical feature (``categorical_features="from_dtype"``, the default, as
in scikit-learn's ``HistGradientBoostingRegressor``). A tree's split then
sends a *set* of categories left (``site in {...}``), found by ordering the
node's categories by the optimal constant of their rows, instead of peeling
one level off at a time (one-hot columns) or cutting an order the codes
only pretend to have (ordinal codes).

Here a simulated survival study: 40 sites with effects drawn at random, a
grade and an age, right-censored times turned into intervals with
:func:`mmit.intervals_from_survival`.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder

from mmit import MMIT, MMITForest, export_text, intervals_from_survival
from mmit.metrics import interval_mse

rng = np.random.RandomState(0)
n = 1500
site_effect = rng.normal(0.0, 0.8, 40)
site = rng.randint(0, 40, n)
grade = rng.randint(1, 4, n)
age = rng.uniform(30, 80, n)
log_time = (3.0 + site_effect[site] - 0.4 * grade - 0.02 * (age - 55)
            + rng.normal(0.0, 0.3, n))
censor_time = rng.uniform(1.5, 5.0, n)
event = log_time <= censor_time
y = intervals_from_survival(event, np.exp(np.minimum(log_time, censor_time)), log=True)

frame = pd.DataFrame({
    "site": pd.Categorical([f"site {k:02d}" for k in site]),
    "grade": pd.Categorical(grade, categories=[1, 2, 3], ordered=True),
    "age": age,
})
frame.loc[rng.uniform(size=n) < 0.05, "site"] = np.nan   # missing sites
train, test = train_test_split(np.arange(n), test_size=0.4, random_state=0)
print(frame.dtypes)

# %%
# A tree on the frame
# -------------------
# The splits on ``site`` name the sites of each side; missing sites, and
# sites the tree never saw, go where ``or missing`` says.
tree = MMIT(max_depth=2, random_state=0).fit(frame.iloc[train], y[train])
print(tree.is_categorical_)
print(export_text(tree))

# %%
# A site unseen in training is predicted like a missing one
# ---------------------------------------------------------
new = frame.iloc[:2].copy()
new["site"] = pd.Categorical(["a new site", None])
print(tree.predict(new))

# %%
# Native splits, one-hot columns and ordinal codes
# ------------------------------------------------
# Test interval MSE of a default forest (on log times) fitted three ways.
one_hot = OneHotEncoder(sparse_output=False, handle_unknown="ignore")
encoded = np.c_[one_hot.fit_transform(frame[["site"]].astype(str)),
                frame["grade"].cat.codes, frame["age"]]
codes = np.c_[frame["site"].cat.codes.replace(-1, np.nan), frame["grade"].cat.codes,
              frame["age"]]
inputs = {"native": frame, "one-hot": encoded, "codes": codes}
errors = {}
for name, X in inputs.items():
    X_train = X.iloc[train] if name == "native" else X[train]
    X_test = X.iloc[test] if name == "native" else X[test]
    forest = MMITForest(n_estimators=100, n_jobs=2, random_state=0,
                        categorical_features="from_dtype" if name == "native" else None)
    forest.fit(X_train, y[train])
    errors[name] = interval_mse(y[test], forest.predict(X_test))
    print(f"{name:>8}: {errors[name]:.4f}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.barh(list(errors), list(errors.values()), color=["#d95f02", "0.6", "0.6"])
ax.set_xlabel("test interval MSE (log time)")
ax.set_title("MMITForest on a frame with a 40-level column")
fig.tight_layout()
plt.show()
