"""
Censored targets and survival data
==================================

Interval targets hold every kind of label at once: an exact value is
``[t, t]``, a right-censored one (the event happened after ``t``, if ever)
is ``[t, inf]``, a left-censored one is ``[-inf, t]`` and an
interval-censored one is ``[a, b]``. :func:`mmit.intervals_from_survival`
turns right-censored survival data (an event indicator and a time) into
such targets; with ``log=True`` the model of the targets is an
accelerated failure time model.
"""

import matplotlib.pyplot as plt
import numpy as np

from mmit import MMITForest, intervals_from_survival
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
plt.show()
