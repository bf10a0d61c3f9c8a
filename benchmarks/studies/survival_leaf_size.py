"""The survival forest's leaf size against the number of rows: held-out
C-index and fit time of ``MMITForest(min_samples_leaf=m, max_features=0.5,
loss="linear_hinge")`` on log times, for several m and n.

Shapes: the four of ``survival.py`` (10 uniform features, 3 carry the
signal; half the rows right-censored by uniform times) and ``lognormal``,
the data of ``survival_scale.py`` (40 normal features, log-normal event and
censoring times). For each shape, size n (``--sizes``) and seed
(``--seeds``), every leaf size (``--leaves``) is fitted on the same n rows
(2 threads) and scored on 5000 held-out rows of the same law: Harrell's C
of minus the forest's prediction (``SurvivalRegressor``'s risk for its
default forest). The table gives each setting's C-index and fit seconds
(means over seeds) and, per size, the mean over shapes and the number of
shapes where each leaf size ranks best.

Needs the ``bench`` extra (scikit-survival, for the shapes of ``survival.py``).

Usage: python benchmarks/studies/survival_leaf_size.py [--sizes 1e3 1e4 3e4]
       [--leaves 5 15 40] [--seeds 0 1] [--shapes ...] [--csv PATH]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other studies' data
import numpy as np
import survival
import survival_scale
from tables import Table, add_csv_argument, seconds, size

from mmit import MMITForest, intervals_from_survival
from mmit.metrics import concordance_index
from mmit.survival._survival import SURVIVAL_FOREST

N_HELD_OUT = 5000
SHAPES = [*survival.SHAPES, "lognormal"]


def draw(shape, n, seed):
    """Features, events and observed times of n rows."""
    if shape == "lognormal":
        return survival_scale.survival_data(n, seed)
    X, y = survival.simulate(shape, "0.5", n, seed)
    return X, y["event"], y["time"]


def scores(shape, n, seed, leaves):
    """Held-out C-index and fit seconds of each leaf size."""
    X, event, time_ = draw(shape, n + N_HELD_OUT, seed)
    train, test = slice(0, n), slice(n, None)
    target = intervals_from_survival(event[train], time_[train], log=True)
    held_out = intervals_from_survival(event[test], time_[test])
    for leaf in leaves:
        forest = MMITForest(**{**SURVIVAL_FOREST, "min_samples_leaf": leaf}, n_jobs=2,
                            random_state=seed)
        start = time.perf_counter()
        forest.fit(X[train], target)
        elapsed = time.perf_counter() - start
        yield leaf, concordance_index(held_out, forest.predict(X[test])), elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 3e4])
    parser.add_argument("--leaves", type=int, nargs="+", default=[5, 15, 40])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--shapes", nargs="+", default=SHAPES, choices=SHAPES)
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["rows", "shape", "min_samples_leaf", "C-index", "fit s", "best in"],
                  args.csv, title="the survival forest's leaf size: held-out C-index")
    for n in map(int, args.sizes):
        results = {}   # (shape, leaf) -> [(C, seconds)] over seeds
        for shape in args.shapes:
            for seed in args.seeds:
                for leaf, c_index, elapsed in scores(shape, n, seed, args.leaves):
                    results.setdefault((shape, leaf), []).append((c_index, elapsed))
            for leaf in args.leaves:
                c_index, elapsed = np.mean(results[shape, leaf], axis=0)
                table.add(size(n), shape, leaf, f"{c_index:.4f}", seconds(elapsed), "")
        means = {leaf: np.mean([results[shape, leaf] for shape in args.shapes], axis=(0, 1))
                 for leaf in args.leaves}
        best = [max(args.leaves, key=lambda leaf: np.mean(results[shape, leaf], axis=0)[0])
                for shape in args.shapes]
        for leaf in args.leaves:
            table.add(size(n), "mean", leaf, f"{means[leaf][0]:.4f}",
                      seconds(means[leaf][1]), f"{best.count(leaf)} of {len(args.shapes)}")


if __name__ == "__main__":
    main()
