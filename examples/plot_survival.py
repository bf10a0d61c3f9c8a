"""
Censored targets and survival data
==================================

Interval targets hold every kind of label at once: an exact value is
``[t, t]``, a right-censored one (the event happened after ``t``, if ever)
is ``[t, inf]``, a left-censored one is ``[-inf, t]`` and an
interval-censored one is ``[a, b]``. :func:`mmit.intervals_from_survival`
turns right-censored survival data (an event indicator and a time) into
such targets; with ``log=True`` the model of the targets is an
accelerated failure time model. :class:`mmit.SurvivalRegressor` gives
any mmit model scikit-survival's conventions: structured targets, risk
scores, survival curves as step functions.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import MMITForest, SurvivalRegressor, intervals_from_survival
from mmit.metrics import concordance_index
from mmit.plot import plot_intervals

# %%
# Targets by hand
# ---------------
y = np.array([
    [2.0, 2.0],        # exact value
    [3.0, np.inf],     # right-censored: more than 3
    [-np.inf, 1.5],    # left-censored: less than 1.5
    [0.5, 1.0],        # interval-censored
])
print(y)

# %%
# Simulated survival data
# -----------------------
# The log survival time falls with the dose; follow-up stops at a random
# time, and an event after it is only known to come later (censored).
rng = np.random.RandomState(0)
n = 300
dose = rng.uniform(0, 10, n)
age = rng.uniform(20, 80, n)
X = np.column_stack([dose, age])
event_time = np.exp(3.0 - 0.25 * dose + 0.3 * rng.standard_normal(n))
follow_up = rng.uniform(1.0, 20.0, n)
event = event_time <= follow_up
time = np.minimum(event_time, follow_up)
print(f"{event.mean():.0%} of the events were observed, the others are censored")

y = intervals_from_survival(event, time, log=True)
print("observed events:\n", y[event][:3])
print("censored times:\n", y[~event][:3])

# %%
# A forest of the log times
# -------------------------
# The censored rows do not pull the predictions down to their censoring
# time: any prediction above it costs nothing.
forest = MMITForest(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)

fig, ax = plt.subplots(figsize=(9, 4))
plot_intervals(dose, y, {"MMITForest": forest.predict(X),
                         "true mean log time": 3.0 - 0.25 * dose},
               ax=ax, feature_name="dose")
ax.set_ylabel("log survival time")
ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
ax.set_title("Observed events (dots) and censored times (triangles)")
fig.tight_layout()

# %%
# Survival analysis in scikit-survival's form
# -------------------------------------------
# :class:`~mmit.SurvivalRegressor` takes scikit-survival's structured
# array of (event, time) records, fits the model on log times, and
# predicts a risk score (higher: an earlier event): minus the restricted
# mean survival time of each example's survival curve. Its ``score`` is
# Harrell's concordance index, also :func:`mmit.metrics.concordance_index`
# of the targets as intervals.
records = np.empty(n, dtype=[("event", bool), ("time", float)])
records["event"], records["time"] = event, time
train, test = np.arange(n) < 200, np.arange(n) >= 200
model = SurvivalRegressor(MMITForest(n_estimators=50, min_samples_leaf=15, n_jobs=2,
                                     random_state=0)).fit(X[train], records[train])
risk = model.predict(X[test])
print(f"Harrell's C on the test rows: {model.score(X[test], records[test]):.3f}")
print(f"the same, by hand: {concordance_index(y[test], -risk):.3f}")

# %%
# Survival curves
# ---------------
# ``predict_survival_function`` gives each example's curve as a step
# function on the training times (``return_array=True``: the values), from
# the forest's predictive distribution; censored rows count for what they
# say (the event came later), not as events.
examples = np.array([[1.0, 50.0], [5.0, 50.0], [9.0, 50.0]])
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
for curve, dose_level in zip(model.predict_survival_function(examples), examples[:, 0],
                             strict=True):
    left.step(curve.x, curve.y, where="post", label=f"dose {dose_level:g}")
left.set_xlabel("time")
left.set_ylabel("P(survival beyond time)")
left.legend()

# %%
# Calibration: in each third of the test rows by risk, the mean predicted
# curve against the Kaplan-Meier estimate of the rows' own times.


def kaplan_meier(event, time, grid):
    """The product-limit estimate of P(T > t) at each time of ``grid``."""
    order = np.argsort(time)
    event, time = event[order], time[order]
    at_risk = len(time) - np.arange(len(time))
    factors = np.where(event, 1.0 - 1.0 / at_risk, 1.0)
    survival = np.cumprod(factors)
    steps = np.searchsorted(time, grid, side="right")
    return np.where(steps > 0, survival[np.maximum(steps - 1, 0)], 1.0)


curves = model.predict_survival_function(X[test], return_array=True)
groups = np.array_split(np.argsort(risk), 3)
for group, colour, label in zip(groups, ["tab:green", "tab:orange", "tab:red"],
                                ["lowest risk", "middle", "highest risk"], strict=True):
    right.step(model.curve_times_, curves[group].mean(axis=0), where="post",
               color=colour, label=f"{label}: predicted")
    right.step(model.curve_times_, kaplan_meier(event[test][group], time[test][group],
                                                model.curve_times_),
               where="post", color=colour, linestyle="--", label="Kaplan-Meier")
right.set_xlabel("time")
right.legend(fontsize=8)
fig.tight_layout()
plt.show()
