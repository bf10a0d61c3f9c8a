"""The evidence behind MMITCV's default ``leaf_shrinkages``.

On every bundled data set (the MMIT paper's 12, their folds), the test
interval MSE (mean over folds) of MMITCV (squared hinge, default margins,
inner 5-fold CV) with constant leaves only, and with constant or linear
leaves under several shrinkage grids; then each grid's mean rank, wins,
worst ratio to the best grid and worst ratio to constant leaves.

Usage: python benchmarks/leaf_shrinkage.py ../shared/data [--n-jobs 2]
"""

import argparse
from functools import partial
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from sklearn.model_selection import KFold

from mmit import MMITCV
from mmit._evaluation import cross_validate_models
from mmit._validation import default_margins
from mmit.datasets import load_folder

GRIDS = {"10": [10.0], "0.1-10": [0.1, 1.0, 10.0], "1-100": [1.0, 10.0, 100.0],
         "0.3-30": [0.3, 3.0, 30.0]}


def tuned_tree(y_train, leaf_shrinkages, n_jobs):
    """MMITCV (squared hinge) with constant or linear leaves under
    ``leaf_shrinkages`` (None: constant leaves only)."""
    leaves = ({} if leaf_shrinkages is None else
              {"leaf_models": ["constant", "linear"], "leaf_shrinkages": leaf_shrinkages})
    return MMITCV(margins=default_margins(y_train[:, 0], y_train[:, 1]),
                  losses=["squared_hinge"], cv=KFold(5, shuffle=True, random_state=0),
                  random_state=0, n_jobs=n_jobs, **leaves)


def test_mses(data, n_jobs):
    """Mean test MSE over the folds of every grid, then of constant leaves."""
    factories = {name: partial(tuned_tree, leaf_shrinkages=grid, n_jobs=n_jobs)
                 for name, grid in GRIDS.items()}
    factories["constant"] = partial(tuned_tree, leaf_shrinkages=None, n_jobs=n_jobs)
    rows = cross_validate_models(data, [], extra_models=factories)
    return [float(np.mean([row["mse"] for row in rows if row["model"] == name]))
            for name in factories]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()
    folders = sorted(p for p in args.data_dir.iterdir() if (p / "folds.csv").exists())
    print(f"{'data set':<30}" + "".join(f"{name:>10}" for name in GRIDS)
          + f"{'constant':>10}")
    table = []
    for folder in folders:
        data = load_folder(folder)
        row = test_mses(data, args.n_jobs)
        table.append(row)
        print(f"{data.name:<30}" + "".join(f"{value:>10.5f}" for value in row), flush=True)
    table = np.array(table)
    linear = table[:, :-1]
    ranks = np.array([rankdata(row) for row in linear])
    summary = {
        "mean rank": ranks.mean(axis=0),
        "wins": (ranks == 1).sum(axis=0),
        "worst / best grid": (linear / linear.min(axis=1, keepdims=True)).max(axis=0),
        "worst / constant": (linear / table[:, -1:]).max(axis=0),
    }
    for label, values in summary.items():
        print(f"{label:<30}" + "".join(f"{value:>10.2f}" for value in values))


if __name__ == "__main__":
    main()
