"""Fit time of TreeOfPredictors (default library) against IntervalStackingRegressor.

Data: ``make_interval_regression`` data ("linear" pattern, 20% censored
bounds) of ``--sizes`` rows and ``--features`` features. The stack and the
tree with each ``--candidates`` setting (``n_candidates``: the candidate
splits of a node the library is trained on after the exact MMIT screening;
"all" is None, the paper's search of every feature and threshold) fit with
the same ``n_jobs`` and are timed in turn within each of ``--repeats``
rounds: the seconds are medians, the ratio the tree's median over the
stack's; ``fits`` is the tree's member fits (``n_fits_``) and ``nodes`` its
node count.

Usage: python benchmarks/speed/bench_trees_of_predictors.py [--sizes 1e3 1e4]
       [--features 10] [--n-jobs 2] [--candidates 3 all] [--repeats 3] [--csv PATH]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds, size
from timing import interleaved_medians

from mmit import IntervalStackingRegressor, TreeOfPredictors
from mmit.datasets import make_interval_regression


def candidates_setting(text):
    return None if text == "all" else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4])
    parser.add_argument("--features", type=int, nargs="+", default=[10])
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[2])
    parser.add_argument("--candidates", nargs="+", default=["3", "all"],
                        help="n_candidates settings timed (an int or 'all')")
    parser.add_argument("--repeats", type=int, default=3)
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["data", "n_jobs", "n_candidates", "stack s", "ToPs s", "ratio", "fits",
                   "nodes"], args.csv)
    for n in args.sizes:
        for p in args.features:
            X, y = make_interval_regression(int(n), p, "linear", random_state=0)
            for n_jobs in args.n_jobs:
                trees = [TreeOfPredictors(n_candidates=candidates_setting(setting),
                                          n_jobs=n_jobs, random_state=0)
                         for setting in args.candidates]
                stack = IntervalStackingRegressor(n_jobs=n_jobs, random_state=0)
                times = interleaved_medians(
                    [lambda model=model, X=X, y=y: model.fit(X, y)
                     for model in (stack, *trees)], args.repeats)
                for setting, tree, tree_seconds in zip(args.candidates, trees, times[1:],
                                                       strict=True):
                    table.add(f"simulated {size(n)} x {p}", n_jobs, setting,
                              seconds(times[0]), seconds(tree_seconds),
                              f"{tree_seconds / times[0]:.2f}", tree.n_fits_,
                              tree.tree_.node_count)
                print(f"  {size(n)} x {p}, n_jobs={n_jobs} done", file=sys.stderr,
                      flush=True)


if __name__ == "__main__":
    main()
