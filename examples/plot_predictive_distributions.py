"""
Predictive distributions: quantiles, intervals and survival curves
==================================================================

A forest gives more than one number per example.
:meth:`mmit.MMITForest.predict_quantiles`, :meth:`~mmit.MMITForest.predict_interval`
and :meth:`~mmit.MMITForest.predict_cdf` read each example's predictive
distribution: the average over the trees of the nonparametric
maximum-likelihood estimates (Turnbull's, since the targets are censored)
of the training intervals in its leaves. By default
(``distribution="spread"``) these are the forest's out-of-bag residuals in
the leaves of a second, small forest grown on their sizes, so that the
spread follows the features that change it.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import MMITForest, intervals_from_survival
from mmit.metrics import interval_coverage, pinball_loss
from mmit.plot import plot_intervals, plot_predictive_distribution

# %%
# A spread that one feature switches
# ----------------------------------
# The log survival time falls with the dose; its spread is four times
# larger for the second group. Follow-up stops at a random time: later
# events are right-censored.
rng = np.random.RandomState(0)


def simulate(n):
    dose = rng.uniform(0, 10, n)
    group = rng.randint(0, 2, n)
    log_time = 3.0 - 0.25 * dose + (0.1 + 0.3 * group) * rng.standard_normal(n)
    follow_up = rng.uniform(1.0, 25.0, n)
    event = np.exp(log_time) <= follow_up
    time = np.minimum(np.exp(log_time), follow_up)
    return np.column_stack([dose, group]), intervals_from_survival(event, time, log=True)


X, y = simulate(500)
forest = MMITForest(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)

# %%
# 80% intervals widen with the group, not with the dose:
X_new = np.array([[5.0, 0.0], [5.0, 1.0]])
print(forest.predict_interval(X_new, coverage=0.8))

# %%
# Along the dose, for each group, over the training intervals:
grid = np.linspace(0, 10, 40)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for group, ax in enumerate(axes):
    rows = X[:, 1] == group
    plot_intervals(X[rows, 0], y[rows], ax=ax, feature_name="dose")
    plot_predictive_distribution(forest, np.column_stack([grid, np.full(40, group)]),
                                 grid, ax=ax, feature_name="dose")
    ax.set_title(f"group {group}")
fig.tight_layout()
plt.show()

# %%
# Survival curves
# ---------------
# The targets were made with ``intervals_from_survival(..., log=True)``:
# ``predict_survival`` with ``log=True`` reads the probability to survive
# beyond each time (one minus the CDF at its log):
times = np.linspace(1.0, 25.0, 60)
survival = forest.predict_survival(X_new, times, log=True)
fig, ax = plt.subplots(figsize=(6, 3.5))
for curve, label in zip(survival, ["group 0", "group 1"], strict=True):
    ax.step(times, curve, where="post", label=f"dose 5, {label}")
ax.set_xlabel("time")
ax.set_ylabel("P(survival > time)")
ax.legend(frameon=False)
fig.tight_layout()
plt.show()

# %%
# Checking the calibration
# ------------------------
# On fresh rows, the censored targets are respected: a target known only
# to exceed its follow-up time is *certainly covered* when the interval's
# lower end is below that time and its upper end infinite, *certainly
# missed* when the whole interval lies below, *undecided* otherwise.
X_test, y_test = simulate(2000)
interval = forest.predict_interval(X_test, coverage=0.8)
shares = interval_coverage(y_test, interval)
print({name: round(share, 3) for name, share in shares.items()})
# an upper end is infinite where more than 10% of the weighted mass lies
# beyond every finite bound (censored times): the data cannot place it
print(f"infinite upper ends: {np.mean(np.isinf(interval[:, 1])):.1%}")
median = forest.predict_quantiles(X_test, [0.5])
print("pinball loss of the medians", pinball_loss(y_test, median, [0.5]))
