"""The binned booster fitted on a Dask cluster against the same booster fitted
locally: test interval MSE, the cluster's bins from its own sample.

A cluster fit takes its bin edges from a sample of at most ``SUBSAMPLE``
(200 000) rows drawn from its partitions in proportion to their rows, a
local fit from a sample of the same size drawn from all its rows; below
that size both bin every row and the two fits are the same booster (their
trees differ only where two features tie exactly). Each model is
``MMITBoost(splitter="hist", n_estimators=100, learning_rate=0.1,
early_stopping=False, random_state=0)``, fitted locally and on a
``LocalCluster`` of 2 workers of one thread (the training rows cut into
``--partitions`` chunks of rows):

- on each data set of DATA_DIR (every fold of ``folds.csv`` in turn the
  test set), when given;
- on simulated data of each of ``--sizes`` rows (the speed benchmarks'
  law, ``speed_data.interval_data``: 20 features, 40% censored bounds),
  scored on 50 000 held-out rows of the same law, for each of ``--seeds``.

The table gives the mean test interval MSE of each fit, their ratio,
cluster over local (at most 1.01: within 1% of the local fit), and the
largest difference between the two fits' test predictions (below 1e-10
where both bin every row: the same booster).

Needs the ``dask`` extra.

Usage: python benchmarks/studies/dask_bins.py [DATA_DIR] [--sizes 1e6]
       [--seeds 0 1] [--partitions 4] [--csv PATH]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
from speed_data import interval_data
from tables import Table, add_csv_argument, size
from variant_study import splits_of

from mmit import MMITBoost
from mmit.metrics import interval_mse

N_HELD_OUT = 50_000
PARAMS = {"splitter": "hist", "n_estimators": 100, "learning_rate": 0.1,
          "early_stopping": False, "random_state": 0}


def test_mse_pair(client, split, n_partitions):
    """The local fit's and the cluster fit's test interval MSE on one split,
    and the largest difference between their test predictions."""
    import dask.array as da

    X_train, y_train, X_test, y_test = split
    local = MMITBoost(**PARAMS, n_jobs=2).fit(X_train, y_train)
    rows = -(-len(X_train) // n_partitions)
    X, y = client.persist([da.from_array(X_train, chunks=(rows, X_train.shape[1])),
                           da.from_array(y_train, chunks=(rows, 2))])
    cluster = MMITBoost(**PARAMS, n_jobs=1).fit(X, y)
    local_prediction, cluster_prediction = local.predict(X_test), cluster.predict(X_test)
    return (interval_mse(y_test, local_prediction),
            interval_mse(y_test, cluster_prediction),
            np.max(np.abs(cluster_prediction - local_prediction)))


def simulated_splits(n, seeds):
    for seed in seeds:
        X, y = interval_data(n + N_HELD_OUT, np.random.default_rng([n, seed]))
        yield X[:n], y[:n], X[n:], y[n:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, nargs="?")
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--partitions", type=int, default=4)
    add_csv_argument(parser)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    table = Table(["data", "splits", "local MSE", "cluster MSE", "cluster / local",
                   "largest difference"], args.csv,
                  title="MMITBoost(splitter='hist'), local and on 2 workers")
    data = [] if args.data_dir is None else list(splits_of(args.data_dir, shapes=[]))
    data += [(f"simulated {size(n)}", list(simulated_splits(int(n), args.seeds)))
             for n in args.sizes]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for name, splits in data:
            pairs = np.array([test_mse_pair(client, split, args.partitions)
                              for split in splits])
            local, on_cluster = pairs[:, :2].mean(axis=0)
            table.add(name, len(splits), f"{local:.5f}", f"{on_cluster:.5f}",
                      f"{on_cluster / local:.4f}", f"{pairs[:, 2].max():.1e}")


if __name__ == "__main__":
    main()
