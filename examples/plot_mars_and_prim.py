"""
MARS and bump hunting on interval targets
=========================================

:class:`~mmit.IntervalMARS` fits a sum of hinge functions ``max(0, x - t)``
and ``max(0, t - x)`` (and their products) to interval targets, grown by a
forward pass and pruned by generalized cross-validation: smooth where trees
make staircases, adaptive where a linear model is rigid, and readable
term by term. :class:`~mmit.inspection.IntervalPRIM` hunts for bumps: the
boxes of the feature space where the target is highest (or lowest), each
box valued by the optimum of the interval loss on its rows, so that
censored values count as what they say.

Both run here on simulated survival data, turned into interval targets by
:func:`~mmit.intervals_from_survival` (an event at ``t`` is ``[t, t]``, a
censored time ``[t, inf)``) on log times.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from mmit import IntervalLinearRegressionCV, IntervalMARS, intervals_from_survival
from mmit.inspection import IntervalPRIM
from mmit.metrics import concordance_index
from mmit.plot import plot_prim_box, plot_prim_trajectory

rng = np.random.default_rng(0)
n = 3000
age = rng.uniform(30, 80, n)
dose = rng.uniform(0, 10, n)
marker = rng.normal(size=n)
X = pd.DataFrame(np.column_stack([age, dose, marker, rng.normal(size=(n, 3))]),
                 columns=["age", "dose", "marker", "noise1", "noise2", "noise3"])
# log survival times: worse with age past 60, better with dose up to 6, and
# much better for the subgroup of young patients with a high marker
log_time = (3.0 - 0.05 * np.maximum(0, age - 60) + 0.2 * np.minimum(dose, 6)
            + 1.0 * ((age < 50) & (marker > 0.5)) + 0.3 * rng.normal(size=n))
censoring = np.log(rng.uniform(5, 300, n))
event = log_time <= censoring
y = intervals_from_survival(event, np.exp(np.minimum(log_time, censoring)), log=True)
print(f"{100 * (1 - event.mean()):.0f}% of the times are right-censored")
train, test = np.arange(n) < 2000, np.arange(n) >= 2000

# %%
# MARS: hinges where the effects bend
# -----------------------------------
# The summary lists the terms kept by the backward pass; the knots sit near
# the bends of the simulated effects (age 60, dose 6). With products of two
# hinges (``max_degree=2``) it can also find the subgroup's interaction.
mars = IntervalMARS(max_degree=2).fit(X[train], y[train])
print(mars.summary())
linear = IntervalLinearRegressionCV().fit(X[train], y[train])
for name, model in [("MARS", mars), ("linear model", linear)]:
    # Harrell's C of the predicted log times (a longer time, a lower risk)
    score = concordance_index(y[test], model.predict(X[test]))
    print(f"{name}: test C-index {score:.3f}")

# %%
# PRIM: who survives longest?
# ---------------------------
# The box is peeled 5% of its rows at a time, keeping the side that raises
# its value (the loss's optimum on its rows: a typical log survival time
# there, censored times counting as lower bounds) most; a quarter of the
# rows, held out, choose the box along the trajectory.
prim = IntervalPRIM(random_state=0)
prim.fit(X, y)
print(prim.inspect().text)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
plot_prim_trajectory(prim, ax=axes[0])
plot_prim_box(prim, ax=axes[1])
fig.tight_layout()

# %%
# The box holds the young patients with a high marker, and the high doses
# (whose effect rises up to 6). Its value is their typical log survival
# time; the rows outside it are left for further boxes (``max_boxes``),
# found in turn among the rows no box holds yet.
inside = prim.apply(X) == 0
print("median log time of the events inside the box "
      f"{np.median(y[inside & event, 0]):.2f}, "
      f"outside {np.median(y[~inside & event, 0]):.2f}")
