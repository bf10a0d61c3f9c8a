"""SurvivalRegressor at scale: fit, the first and later risk requests, the
interval prediction they are compared with, and the concordance index.

Right-censored data simulated with log-normal event times (from two of the
features) and log-normal censoring times (about a third censored), 40
features. For each size n: the default ``SurvivalRegressor`` (the survival
forest, ``n_jobs`` threads) fitted on n rows; the forest's interval
``predict`` and the risk (``predict``: minus the restricted mean survival
time) of ``--queries`` new rows, the first request making the predictive
distributions; ``concordance_index`` of the n training rows' risks. Each
step's seconds, and the process's peak resident memory after it (GB).

Usage: python benchmarks/speed/bench_survival_scale.py [--sizes 1e4 1e5]
       [--queries 1e4] [--n-jobs 2] [--csv PATH]
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
from tables import Table, add_csv_argument, seconds, size

from mmit import SurvivalRegressor, intervals_from_survival
from mmit.metrics import concordance_index


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


def peak_gb():
    """The process's peak resident memory so far (VmHWM), in GB."""
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    return kib / 2**20


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def measure(n, args, table):
    """The rows of the table for n training rows."""
    X, y = survival_data(n + int(args.queries), args.features, seed=0)
    train, new = slice(0, n), slice(n, None)
    model, elapsed = timed(lambda: SurvivalRegressor(
        n_jobs=args.n_jobs, random_state=0).fit(X[train], y[train]))
    table.add(size(n), "fit", seconds(elapsed), f"{peak_gb():.2f}")
    steps = [("interval predict", lambda: model.estimator_.predict(X[new])),
             ("risk, first request", lambda: model.predict(X[new])),
             ("risk", lambda: model.predict(X[new]))]
    for name, step in steps:
        _, elapsed = timed(step)
        table.add(size(n), name, seconds(elapsed), f"{peak_gb():.2f}")
    risk = model.predict(X[train])
    target = intervals_from_survival(y["event"][train], y["time"][train], log=True)
    _, elapsed = timed(lambda: concordance_index(target, -risk))
    table.add(size(n), "concordance_index", seconds(elapsed), f"{peak_gb():.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--queries", type=float, default=1e4)
    parser.add_argument("--features", type=int, default=40)
    parser.add_argument("--n-jobs", type=int, default=2)
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["rows", "step", "seconds", "peak GB"], args.csv,
                  title=f"SurvivalRegressor(n_jobs={args.n_jobs}), {args.features} "
                        f"features, risk of {size(int(args.queries))} new rows")
    for n in map(int, args.sizes):
        measure(n, args, table)

if __name__ == "__main__":
    main()
