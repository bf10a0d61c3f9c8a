"""Fit time of IntervalStackingRegressor (default members) against MMITForest.

Data: the largest bundled data set (H3K27ac-H3K4me3_TDHAM_BP_FPOP, 935 rows
x 26 features), servo (167 rows: below 200 rows the default fits every
member on the folds; ``--data-dir`` times every data set of a folder
instead) and
``make_interval_regression`` data of 1e4 rows with 20 and 200 features (the
"linear" pattern, 20% censored bounds; ``--sizes`` with no value leaves them
out). Both fit with
the same ``n_jobs`` (1, as their default None, and 2) and are timed
in turn, the forest then the stack, in pairs (``--repeats`` pairs, more
until the pairs took ``--min-seconds``, at most 25): the seconds are the
medians, the ratio the median of the pairs' ratios (with their range), for
the stack with each ``--out-of-fold`` setting (default: "folds", the
stack's default). Each member's share is the
wall time of its part of the stack's fit, timed alone the way the stack
runs it: the forest's and the linear model's one fit when they give their
out-of-fold predictions from it (the forest grown by the folds, or out of
bag with "free"; the linear model's own CV on the stack's folds); otherwise
(and always for the boosting) its fits on the 5 folds and on all rows in a
pool of ``n_jobs`` threads.

Usage: python benchmarks/speed/bench_stacking.py [--repeats 3] [--min-seconds 20]
       [--sizes 1e4] [--features 20 200] [--n-jobs 1 2] [--out-of-fold folds refit free]
       [--datasets NAME ...] [--data-dir DIR] [--csv PATH]
"""

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds, size
from timing import paired_seconds, seconds_of

from mmit import IntervalStackingRegressor, MMITForest
from mmit.datasets import load_dataset, load_folder, make_interval_regression
from mmit.ensemble._stacking import (
    default_estimators,
    fit_and_predict,
    fit_once,
    one_fit_plan,
)


def median_seconds(fit, repeats):
    return float(np.median([seconds_of(fit) for _ in range(repeats)]))


def member_seconds(X, y, n_jobs, repeats, out_of_fold):
    """Wall time of each default member's part of the stack's fit, run as the
    stack runs it."""
    members = default_estimators(check_random_state(0), n_jobs)
    cv = KFold(5, shuffle=True, random_state=0)
    splits = list(cv.split(X))
    times = {}
    plans = [one_fit_plan(estimator, out_of_fold, len(X), cv) for _, estimator in members]
    for (name, estimator), plan in zip(members, plans, strict=True):
        if plan is None:
            def fit(estimator=estimator):
                Parallel(n_jobs=n_jobs, prefer="threads")(
                    delayed(fit_and_predict)(0, k, estimator, X, y, None, train, test,
                                              None)
                    for k, (train, test) in [*enumerate(splits),
                                             (None, (np.arange(len(X)), None))])
        else:
            def fit(estimator=estimator, plan=plan):
                fit_once(0, estimator, plan, X, y, None, None)
        times[name] = median_seconds(fit, repeats)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=20.0,
                        help="time pairs of fits until they took this long")
    parser.add_argument("--sizes", type=float, nargs="*", default=[1e4])
    parser.add_argument("--features", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out-of-fold", nargs="+", default=["folds"],
                        choices=["folds", "refit", "free"],
                        help="the stack's out_of_fold settings timed")
    parser.add_argument("--datasets", nargs="*",
                        default=["H3K27ac-H3K4me3_TDHAM_BP_FPOP", "servo"],
                        help="bundled data sets (mmit.datasets.load_dataset names)")
    parser.add_argument("--data-dir", type=Path,
                        help="every data set folder of DIR instead (e.g. the paper's 12)")
    add_csv_argument(parser)
    args = parser.parse_args()
    cases = []
    sets = ([load_folder(folder) for folder in sorted(args.data_dir.iterdir())
             if (folder / "features.csv").exists()] if args.data_dir else
            [load_dataset(name) for name in args.datasets])
    for data in sets:
        cases.append((f"{data.name} ({data.data.shape[0]} x {data.data.shape[1]})",
                      data.data, data.target))
    for n in args.sizes:
        for p in args.features:
            X, y = make_interval_regression(int(n), p, "linear", random_state=0)
            cases.append((f"simulated {size(n)} x {p}", X, y))
    members = [name for name, _ in default_estimators(check_random_state(0), 1)]
    table = Table(["data", "out_of_fold", "n_jobs", "pairs", "stack s", "MMITForest s",
                   "ratio", "ratio range", *members], args.csv)
    for (label, X, y), out_of_fold, n_jobs in itertools.product(cases, args.out_of_fold,
                                                                args.n_jobs):
        def fit_stack(X=X, y=y, n_jobs=n_jobs, out_of_fold=out_of_fold):
            IntervalStackingRegressor(out_of_fold=out_of_fold, n_jobs=n_jobs,
                                      random_state=0).fit(X, y)

        def fit_forest(X=X, y=y, n_jobs=n_jobs):
            MMITForest(n_jobs=n_jobs, random_state=0).fit(X, y)

        forest, stack = paired_seconds(fit_forest, fit_stack, args.repeats,
                                       args.min_seconds)
        ratios = stack / forest
        shares = member_seconds(X, y, n_jobs, args.repeats, out_of_fold)
        total = sum(shares.values())
        table.add(label, out_of_fold, n_jobs, len(ratios), seconds(np.median(stack)),
                  seconds(np.median(forest)), f"{np.median(ratios):.2f}",
                  f"{ratios.min():.2f}-{ratios.max():.2f}",
                  *(f"{100 * shares[name] / total:.0f}%" for name in members))
        print(f"  {label}, {out_of_fold}, n_jobs={n_jobs} done", file=sys.stderr,
              flush=True)


if __name__ == "__main__":
    main()
