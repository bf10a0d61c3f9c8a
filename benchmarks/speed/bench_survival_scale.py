"""SurvivalRegressor at scale: fit, risk scores, restricted means, curves and
the concordance index, with the peak memory of each step.

Right-censored data simulated with log-normal event times (from two of the
features) and log-normal censoring times (about a third censored), 40
features. For each size n: the survival forest alone (the reference the
front-end's cost is measured against; up to ``--forest-alone`` rows), then
the default ``SurvivalRegressor`` (the survival forest and its booster,
``n_jobs`` threads) fitted on n rows (the distributions are made on the
first request that needs them); on ``--queries`` new rows, the forest's
interval ``predict``, the risk (``predict``: minus the forest's and the
booster's predictions weighed together), the restricted mean survival
times (the first request making the predictive distributions) and, on
``--curves`` of them, the survival curves on the default time grid;
``concordance_index`` of the n training rows' risks. Each step's seconds
and the process's peak resident memory during it (GB; the peak is reset
before each step).

Usage: python benchmarks/speed/bench_survival_scale.py [--sizes 1e4 1e5 1e6]
       [--queries 1e5] [--curves 1e4] [--forest-alone 1e5] [--n-jobs 2]
       [--csv PATH]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
from memory import GB, peak_bytes, reset_peak
from tables import Table, add_csv_argument, seconds, size

from mmit import MMITForest, SurvivalRegressor, intervals_from_survival
from mmit.metrics import concordance_index
from mmit.survival._survival import SURVIVAL_FOREST


def survival_data(n, n_features, seed):
    """Features, and scikit-survival's (event, time) records."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    event_time = np.exp(1.0 + X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n))
    censoring_time = np.exp(1.5 + rng.normal(size=n))
    y = np.empty(n, dtype=[("event", bool), ("time", float)])
    y["event"] = event_time <= censoring_time
    y["time"] = np.minimum(event_time, censoring_time)
    return X, y


def timed(function):
    """The function's result, its seconds and the peak memory while it ran."""
    reset_peak()
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start, peak_bytes() / GB


def measure(n, args, table):
    """The rows of the table for n training rows."""
    n_queries = int(args.queries)
    X, y = survival_data(n + n_queries, args.features, seed=0)
    train, new = slice(0, n), slice(n, n + n_queries)
    if n <= args.forest_alone:
        target = intervals_from_survival(y["event"][train], y["time"][train], log=True)
        _, elapsed, peak = timed(lambda: MMITForest(
            **SURVIVAL_FOREST, n_jobs=args.n_jobs, random_state=0).fit(X[train], target))
        table.add(size(n), "the forest alone: fit", size(n), seconds(elapsed),
                  f"{peak:.2f}")
    model, elapsed, peak = timed(lambda: SurvivalRegressor(
        n_jobs=args.n_jobs, random_state=0).fit(X[train], y[train]))
    table.add(size(n), "fit", size(n), seconds(elapsed), f"{peak:.2f}")
    curves = slice(n, n + int(args.curves))
    steps = [("interval predict", new, lambda: model.estimator_.predict(X[new])),
             ("risk", new, lambda: model.predict(X[new])),
             ("restricted mean, first request", new, lambda: model.restricted_mean(X[new])),
             ("restricted mean", new, lambda: model.restricted_mean(X[new])),
             ("curves (default grid)", curves,
              lambda: model.predict_survival_function(X[curves], return_array=True))]
    for name, rows, step in steps:
        _, elapsed, peak = timed(step)
        table.add(size(n), name, size(rows.stop - rows.start), seconds(elapsed),
                  f"{peak:.2f}")
    risk = model.predict(X[train])
    target = intervals_from_survival(y["event"][train], y["time"][train], log=True)
    _, elapsed, peak = timed(lambda: concordance_index(target, -risk))
    table.add(size(n), "concordance_index", size(n), seconds(elapsed), f"{peak:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--queries", type=float, default=1e5)
    parser.add_argument("--curves", type=float, default=1e4)
    parser.add_argument("--features", type=int, default=40)
    parser.add_argument("--forest-alone", type=float, default=1e5,
                        help="the largest size where the forest alone is fitted too")
    parser.add_argument("--n-jobs", type=int, default=2)
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["rows", "step", "on rows", "seconds", "peak GB"], args.csv,
                  title=f"SurvivalRegressor(n_jobs={args.n_jobs}), {args.features} "
                        f"features")
    for n in map(int, args.sizes):
        measure(n, args, table)

if __name__ == "__main__":
    main()
