"""
Additive models: terms to read and constrain
============================================

:class:`~mmit.IntervalGAMCV` fits ``f(x) = a + f_1(x_1) + ... + f_p(x_p)``
to interval targets: a penalized cubic spline per numeric feature (its
penalty chosen by cross-validation), an effect per category, an effect of
its own for a missing value. Here it runs on the default bundled data set
(the MMIT paper's histone set: penalties of a changepoint detector, many
of them censored), beside the linear model, and on survival times through
:class:`~mmit.SurvivalRegressor`.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import IntervalGAMCV, IntervalLinearRegressionCV, SurvivalRegressor
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse
from mmit.plot import plot_terms

data = load_dataset()
train, test = data.folds != 1, data.folds == 1
gam = IntervalGAMCV(n_jobs=2).fit(data.data[train], data.target[train])
linear = IntervalLinearRegressionCV(n_jobs=2).fit(data.data[train], data.target[train])
for name, model in [("additive model", gam), ("linear model", linear)]:
    print(f"{name}: test interval MSE "
          f"{interval_mse(data.target[test], model.predict(data.data[test])):.4f}")
print(f"chosen penalties: lam = {gam.lam_.min():.3g} to {gam.lam_.max():.3g} per term")

# %%
# The strongest terms
# -------------------
# Each panel draws a term along its feature's training range, with every
# training row's partial residual interval behind it: its target interval
# minus the other terms, the interval the term would pass through to fit
# the row (triangles: censored ends). The four terms that vary most over
# the training rows are drawn.
terms = gam.term_values(data.data[train])
strongest = np.argsort(terms.std(axis=0))[::-1][:4]
fig, axes = plt.subplots(2, 2, figsize=(9, 6))
plot_terms(gam, data.data[train], data.target[train],
           features=[int(j) for j in strongest], axes=axes.ravel())
for ax, j in zip(axes.ravel(), strongest, strict=True):
    ax.set_xlabel(data.feature_names[j])
fig.tight_layout()

# %%
# A monotone term
# ---------------
# ``monotonic_cst`` constrains a term's spline to rise (1) or fall (-1)
# everywhere, exactly. Here the strongest term is made non-decreasing.
constraints = np.zeros(data.data.shape[1], dtype=int)
constraints[strongest[0]] = 1
monotone = IntervalGAMCV(monotonic_cst=constraints, n_jobs=2).fit(
    data.data[train], data.target[train])
grid = np.tile(data.data[train].mean(axis=0), (200, 1))
grid[:, strongest[0]] = np.linspace(data.data[train, strongest[0]].min(),
                                    data.data[train, strongest[0]].max(), 200)
fig, ax = plt.subplots(figsize=(6, 3))
for name, model in [("free", gam), ("non-decreasing", monotone)]:
    ax.plot(grid[:, strongest[0]], model.term_values(grid)[:, strongest[0]], label=name)
ax.set_xlabel(data.feature_names[strongest[0]])
ax.set_ylabel("term")
ax.legend()
fig.tight_layout()
print(f"monotone model: test interval MSE "
      f"{interval_mse(data.target[test], monotone.predict(data.data[test])):.4f}")

# %%
# Survival times
# --------------
# Through :class:`~mmit.SurvivalRegressor` the additive model fits
# right-censored survival times (as intervals of log times); ``score`` is
# Harrell's C of its risk.
rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, size=(600, 3))
log_time = 1.0 + np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.3 * rng.normal(size=600)
censor = 1.5 + rng.normal(size=600)
event = log_time <= censor
time = np.exp(np.where(event, log_time, censor))
survival = np.array(list(zip(event, time, strict=True)),
                    dtype=[("event", bool), ("time", float)])
model = SurvivalRegressor(IntervalGAMCV()).fit(X[:400], survival[:400])
print(f"survival: C-index {model.score(X[400:], survival[400:]):.3f}")
plt.show()
