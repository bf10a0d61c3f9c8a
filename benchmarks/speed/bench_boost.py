"""Fit time and memory of MMITBoost versus XGBoost AFT and scikit-learn's boosting.

Same data as bench_tree.py (speed_data.py: p = 20 features, interval targets, 40% censored
bounds). All boost ``--stages`` stages of depth-3 trees with learning
rate 0.1 on 2 threads, timed in turn within each repeat (median; one repeat
from 1e5 rows):

- MMITBoost (squared hinge, early stopping off) with the binned split
  search (``splitter="hist"``, ``n_jobs=2``) and, up to ``--exact-max-n``
  rows, the exact one (the default, one thread);
- XGBoost's ``survival:aft`` (``tree_method="hist"``, 2 threads) on
  exp(bounds), when xgboost is installed, its DMatrix made within the
  timed fit as MMITBoost bins within its own;
- up to ``--exact-max-n`` rows, scikit-learn's GradientBoostingRegressor
  (exact splits, squared error) on the Interval-CART transform (one row per
  finite bound).

With ``--memory``, the peak memory of the binned booster's fit and of
XGBoost's, each in a fresh process (see timing.peak_fit_memory_mb; the data
are made before). ``--memory-only`` measures only that (for 1e7 rows).

Usage: python benchmarks/speed/bench_boost.py [--sizes 1e4 1e5 1e6] [--exact-max-n 1e4]
       [--stages 100] [--repeats 3] [--memory | --memory-only] [--csv PATH]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

from sklearn.ensemble import GradientBoostingRegressor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from models import XGBoostAFT, xgboost_aft_params  # noqa: E402
from speed_data import MARGIN, benchmark_data, interval_cart_data  # noqa: E402
from tables import Table, add_csv_argument, seconds, size  # noqa: E402
from timing import interleaved_medians, peak_fit_memory_mb, xgboost_available  # noqa: E402

from mmit import MMITBoost  # noqa: E402

N_THREADS = 2


def xgboost_fit(X, y, stages):
    import xgboost

    params = xgboost_aft_params(max_depth=3, learning_rate=0.1, n_threads=N_THREADS)
    return xgboost.train(params, XGBoostAFT.matrix(X, y), num_boost_round=stages)


def booster_params(stages):
    return dict(n_estimators=stages, learning_rate=0.1, max_depth=3, min_samples_leaf=5,
                margin=MARGIN, early_stopping=False, random_state=0)


MEMORY_SETUP = """
from bench_boost import booster_params, xgboost_fit
from speed_data import benchmark_data
from mmit import MMITBoost
X, y = benchmark_data({n}, 20)
"""
MEMORY_FITS = {
    "hist": "MMITBoost(**booster_params({stages}), splitter='hist', n_jobs={threads})"
            ".fit(X, y)",
    "xgb": "xgboost_fit(X, y, {stages})",
}


def fit_memory(which, n, stages):
    return peak_fit_memory_mb(MEMORY_SETUP.format(n=n),
                              MEMORY_FITS[which].format(stages=stages, threads=N_THREADS))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--exact-max-n", type=float, default=1e4,
                        help="largest n for the exact MMITBoost and scikit-learn")
    parser.add_argument("--stages", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory", action="store_true",
                        help="also the peak memory of the binned booster and XGBoost")
    parser.add_argument("--memory-only", action="store_true")
    add_csv_argument(parser)
    args = parser.parse_args()
    with_xgboost = xgboost_available("columns")
    columns = ["n"]
    if not args.memory_only:
        columns += ["hist s", "XGBoost hist s", "ratio", "exact s", "sklearn exact s",
                    "ratio"]
    if args.memory or args.memory_only:
        columns += ["hist MB", "XGBoost MB", "ratio"]
    table = Table(columns, args.csv)
    # the first fits of a process load libraries: not timed
    X, y = benchmark_data(200, 20)
    MMITBoost(**booster_params(2), splitter="hist", n_jobs=N_THREADS).fit(X, y)
    if with_xgboost:
        xgboost_fit(X, y, 2)
    for n in [int(value) for value in args.sizes]:
        X, y = benchmark_data(n, 20)
        row = [size(n)]
        if not args.memory_only:
            hist = MMITBoost(**booster_params(args.stages), splitter="hist",
                             n_jobs=N_THREADS)
            fits = {"hist": partial(hist.fit, X, y)}
            if with_xgboost:
                fits["xgb"] = partial(xgboost_fit, X, y, args.stages)
            if n <= args.exact_max_n:
                X_rows, targets = interval_cart_data(X, y, MARGIN)
                sklearn = GradientBoostingRegressor(n_estimators=args.stages,
                                                    learning_rate=0.1, max_depth=3,
                                                    min_samples_leaf=5, random_state=0)
                fits["exact"] = partial(MMITBoost(**booster_params(args.stages)).fit, X, y)
                fits["sklearn"] = partial(sklearn.fit, X_rows, targets)
            times = dict(zip(fits, interleaved_medians(list(fits.values()),
                                                       args.repeats if n < 10**5 else 1),
                             strict=True))
            row.append(seconds(times["hist"]))
            row += ([seconds(times["xgb"]), f"{times['hist'] / times['xgb']:.2f}"]
                    if with_xgboost else ["-", "-"])
            row += ([seconds(times["exact"]), seconds(times["sklearn"]),
                     f"{times['exact'] / times['sklearn']:.2f}"] if "exact" in times
                    else ["-", "-", "-"])
        if args.memory or args.memory_only:
            hist = fit_memory("hist", n, args.stages)
            row.append(seconds(hist))
            if with_xgboost:
                xgb = fit_memory("xgb", n, args.stages)
                row += [seconds(xgb), f"{hist / xgb:.2f}"]
            else:
                row += ["-", "-"]
        table.add(*row)


if __name__ == "__main__":
    main()
