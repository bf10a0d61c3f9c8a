"""IntervalPRIM's fit against ema_workbench's PRIM, timed in pairs.

Data: ``--features`` (20) features uniform on [0, 1] and interval targets
of width 1 around 3 in the box ``x0 > 0.6, x1 < 0.3`` and 0 elsewhere
(noise 0.3), 20% of the upper bounds right-censored, at each of
``--sizes`` rows. ``IntervalPRIM(random_state=0)`` (peel 5%, paste 1%,
mass 5%, a quarter of the rows held out to choose the box) alternates with
ema_workbench's ``Prim(mode=REGRESSION, obj_function=ORIGINAL,
paste_alpha=0.01)`` and its ``find_box()`` on the Interval-CART transform of
the rows (it takes exact targets only; scaled to [0, 1]), at least ``--pairs`` (5) pairs and
more until the pairs took ``--min-seconds``. The table gives each one's
median seconds, the median and range of the pairs' ratios (ours / ema's),
and our box's limits on the planted features.

Usage: python benchmarks/speed/bench_prim.py [--sizes 1e4 1e5] [--features 20]
       [--pairs 5] [--min-seconds 10] [--csv PATH]
"""

import argparse
import sys
import warnings
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds, size
from timing import add_pair_arguments, paired_ratios, paired_seconds

from mmit.baselines import interval_cart_rows
from mmit.inspection import IntervalPRIM


def planted_box(n, n_features):
    rng = np.random.default_rng([n, n_features])
    X = rng.uniform(0, 1, size=(n, n_features))
    center = np.where((X[:, 0] > 0.6) & (X[:, 1] < 0.3), 3.0, 0.0)
    center += 0.3 * rng.normal(size=n)
    y = np.column_stack([center - 0.5, center + 0.5])
    y[rng.random(n) < 0.2, 1] = np.inf
    return X, y


def ours(X, y):
    return IntervalPRIM(random_state=0).fit(X, y)


def ema_prim(frame, targets):
    from ema_workbench.analysis import prim
    from ema_workbench.analysis.scenario_discovery_util import RuleInductionType

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = prim.Prim(frame, targets, threshold=0.0, mode=RuleInductionType.REGRESSION,
                           obj_function=prim.PRIMObjectiveFunctions.ORIGINAL,
                           paste_alpha=0.01)
        return search.find_box()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--features", type=int, default=20)
    add_pair_arguments(parser)
    add_csv_argument(parser)
    args = parser.parse_args()
    try:
        import ema_workbench  # noqa: F401
        import pandas as pd
    except ImportError:
        print("ema_workbench (or pandas) is not installed: only ours is timed",
              file=sys.stderr)
        pd = None
    table = Table(["n", "p", "IntervalPRIM s", "ema PRIM s", "ratio", "ratio range",
                   "our box on x0, x1"], args.csv)
    for n in [int(value) for value in args.sizes]:
        X, y = planted_box(n, args.features)
        box = ours(X, y).boxes_[0]
        limits = ", ".join(f"{box[j][0]:.3f}..{box[j][1]:.3f}" if j in box else "free"
                           for j in (0, 1))
        if pd is None:
            mine = paired_seconds(partial(ours, X, y), lambda: None, args.pairs,
                                  args.min_seconds)[0]
            table.add(size(n), args.features, seconds(np.median(mine)), "", "", "", limits)
            continue
        rows, targets = interval_cart_rows(y[:, 0], y[:, 1], 0.0)
        # scaled to [0, 1]: ema's box statistics take a regression target's
        # mean for a probability (and fail above 1); its peels are the same
        targets = (targets - targets.min()) / np.ptp(targets)
        frame = pd.DataFrame(X[rows], columns=[f"x{j}" for j in range(args.features)])
        mine, theirs = paired_seconds(partial(ours, X, y),
                                      partial(ema_prim, frame, targets), args.pairs,
                                      args.min_seconds)
        table.add(size(n), args.features, seconds(np.median(mine)),
                  seconds(np.median(theirs)), *paired_ratios(mine, theirs), limits)


if __name__ == "__main__":
    main()
