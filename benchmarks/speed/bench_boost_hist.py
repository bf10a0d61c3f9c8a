"""The binned MMITBoost against XGBoost's AFT booster, fits timed in pairs.

Data: speed_data.py's (20 features, interval targets, 40% censored
bounds) at each of ``--sizes`` rows. Both boost ``--stages`` (100) stages of
depth-3 trees, learning rate 0.1, on ``--threads`` threads (1 and 2):
``MMITBoost(splitter="hist", early_stopping=False)`` and XGBoost's
``survival:aft`` with ``tree_method="hist"`` on exp(bounds), its DMatrix made
within the timed fit as MMITBoost bins within its own. The two fits
alternate (ours, then XGBoost's), at least ``--pairs`` (5) pairs and more
until the pairs took ``--min-seconds``; the table gives each one's median
seconds and the median and range of the pairs' ratios (ours / XGBoost's).

Usage: python benchmarks/speed/bench_boost_hist.py [--sizes 1e4 1e5 1e6]
       [--threads 1 2] [--stages 100] [--pairs 5] [--min-seconds 10] [--csv PATH]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from models import XGBoostAFT, xgboost_aft_params
from speed_data import MARGIN, benchmark_data
from tables import Table, add_csv_argument, seconds, size
from timing import add_pair_arguments, paired_ratios, paired_seconds, xgboost_available

from mmit import MMITBoost


def ours(X, y, stages, threads):
    return MMITBoost(n_estimators=stages, learning_rate=0.1, max_depth=3,
                     min_samples_leaf=5, margin=MARGIN, early_stopping=False,
                     splitter="hist", n_jobs=threads, random_state=0).fit(X, y)


def xgboost_aft(X, y, stages, threads):
    import xgboost

    params = xgboost_aft_params(max_depth=3, learning_rate=0.1, n_threads=threads)
    return xgboost.train(params, XGBoostAFT.matrix(X, y), num_boost_round=stages)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--stages", type=int, default=100)
    add_pair_arguments(parser)
    add_csv_argument(parser)
    args = parser.parse_args()
    if not xgboost_available("pairs"):
        return
    table = Table(["n", "threads", "MMITBoost hist s", "XGBoost hist s", "ratio",
                   "ratio range"], args.csv)
    X, y = benchmark_data(200, 20)  # the first fits of a process load libraries
    ours(X, y, 2, 1)
    xgboost_aft(X, y, 2, 1)
    for n in [int(value) for value in args.sizes]:
        X, y = benchmark_data(n, 20)
        for threads in args.threads:
            mine, theirs = paired_seconds(partial(ours, X, y, args.stages, threads),
                                          partial(xgboost_aft, X, y, args.stages, threads),
                                          args.pairs, args.min_seconds)
            table.add(size(n), threads, seconds(np.median(mine)),
                      seconds(np.median(theirs)), *paired_ratios(mine, theirs))


if __name__ == "__main__":
    main()
