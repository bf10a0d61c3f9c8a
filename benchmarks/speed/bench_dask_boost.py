"""The binned booster on a Dask cluster against xgboost.dask's AFT booster.

Same data law as bench_boost.py (speed_data.py: 20 features, interval
targets, 40% censored bounds), made on the workers a partition at a time
(``--partition-rows`` rows each, seeded by their index) and persisted there.
For each model a fresh ``LocalCluster`` of ``--workers`` workers of one
thread (``--memory-limit`` each) makes the data, then fits ``--stages``
stages of depth-3 trees, learning rate 0.1, no early stopping:

- ``MMITBoost(splitter="hist")`` (squared hinge, margin 0.1,
  ``min_samples_leaf=5``) on the Dask arrays, through the cluster's client;
- ``xgboost.dask.train`` with ``survival:aft`` (normal, ``hist``) on a
  ``DaskDMatrix`` of the same arrays, exp(bounds) as its label bounds.

The table: fit seconds (median of ``--repeats``; "failed" when a worker
went past its memory limit, was restarted and the fit could not go on),
their ratio, and each worker's resident memory just before the fit and at
its peak over the cluster's life (the largest of the workers), beside the
data a worker holds. Past 0.7 of ``--memory-limit`` a worker spills the data
it holds to disk, past 0.8 it pauses, past 0.95 it is restarted (Dask's
defaults). With ``--lazy`` the data are not persisted: each task that reads
a partition makes it (the booster reads each twice, for its binning sample
and for the bins; ``xgboost.dask`` keeps a copy of its own), so that a
worker holds only what the fit keeps, and the time includes the making.

Usage: python benchmarks/speed/bench_dask_boost.py [--sizes 1e6 1e7] [--stages 100]
       [--workers 2] [--memory-limit 4GiB] [--partition-rows 250000] [--repeats 1]
       [--lazy] [--csv PATH]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from bench_boost import booster_params  # noqa: E402
from models import xgboost_aft_params  # noqa: E402
from speed_data import N_FEATURES, interval_data  # noqa: E402
from tables import Table, add_csv_argument, seconds, size  # noqa: E402


def partition(index, n_rows):
    """Rows of one partition: features and interval targets."""
    return interval_data(n_rows, np.random.default_rng([index, n_rows]))


def cluster_data(client, n, partition_rows, lazy=False):
    """X and y as Dask arrays made and persisted on the workers (``lazy``:
    made by each task that reads a partition, never kept)."""
    import dask
    import dask.array as da

    sizes = [partition_rows] * (n // partition_rows) + (
        [n % partition_rows] if n % partition_rows else [])
    parts = [dask.delayed(partition)(index, rows) for index, rows in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(part[0], (rows, N_FEATURES), dtype=np.float64)
                        for part, rows in zip(parts, sizes, strict=True)])
    y = da.concatenate([da.from_delayed(part[1], (rows, 2), dtype=np.float64)
                        for part, rows in zip(parts, sizes, strict=True)])
    if lazy:
        return X, y
    X, y = client.persist([X, y])
    from distributed import wait
    wait([X, y])
    return X, y


def mmit_fit(client, X, y, stages):
    from mmit import MMITBoost

    return MMITBoost(splitter="hist", n_jobs=1, **booster_params(stages)).fit(X, y)


def xgboost_fit(client, X, y, stages):
    import dask.array as da
    import xgboost.dask

    with np.errstate(over="ignore"):
        matrix = xgboost.dask.DaskDMatrix(client, X, label_lower_bound=da.exp(y[:, 0]),
                                          label_upper_bound=da.exp(y[:, 1]))
    params = xgboost_aft_params(max_depth=3, learning_rate=0.1, n_threads=1)
    return xgboost.dask.train(client, params, matrix, num_boost_round=stages)


FITS = {"MMITBoost (hist)": mmit_fit, "xgboost.dask AFT": xgboost_fit}


HELPERS = str(Path(__file__).resolve().parents[1] / "common")


def worker_memory_gb(peak):
    """A worker's peak (or current) resident memory, in GB (memory.py, which
    the worker imports from the helpers' folder)."""
    sys.path.insert(0, HELPERS)
    from memory import GB, peak_bytes, resident_bytes

    return (peak_bytes() if peak else resident_bytes()) / GB


def measure(fit, n, args):
    """Median fit seconds (None when a fit fails: a worker past its memory
    limit is restarted, which neither fit survives), the workers' largest
    resident memory just before the first fit and their largest peak (GB)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        X, y = cluster_data(client, n, args.partition_rows, args.lazy)
        before = max(client.run(worker_memory_gb, False).values())
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            try:
                fit(client, X, y, args.stages)
            except Exception as error:  # noqa: BLE001 - the table says it failed
                print(f"the fit failed: {error!r}", file=sys.stderr)
                return None, before, None
            times.append(time.perf_counter() - start)
        peak = max(client.run(worker_memory_gb, True).values())
    return statistics.median(times), before, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6])
    parser.add_argument("--stages", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="4GiB")
    parser.add_argument("--partition-rows", type=int, default=250_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--lazy", action="store_true",
                        help="data made by each task that reads them, not persisted")
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["n", "workers", "memory limit", "data", "model", "fit s", "ratio",
                   "before fit GB", "peak GB per worker", "data GB per worker"], args.csv)
    for n in (int(value) for value in args.sizes):
        data_gb = n * (N_FEATURES + 2) * 8 / args.workers / 2**30
        results = {}
        for name, fit in FITS.items():
            results[name] = measure(fit, n, args)
            print(f"{name} at {size(n)} rows: "
                  + ("failed" if results[name][0] is None else f"{results[name][0]:.1f} s"),
                  file=sys.stderr, flush=True)
        reference = results["xgboost.dask AFT"][0]
        for name, (fit_seconds, before, peak) in results.items():
            failed = fit_seconds is None
            table.add(size(n), args.workers, args.memory_limit,
                      "lazy" if args.lazy else "persisted", name,
                      "failed" if failed else seconds(fit_seconds),
                      "" if failed or reference is None
                      else f"{fit_seconds / reference:.2f}",
                      f"{before:.2f}", "" if failed else f"{peak:.2f}", f"{data_gb:.2f}")


if __name__ == "__main__":
    main()
