"""The evidence behind MMITCV's default ``leaf_shrinkages``.

On every bundled data set (the MMIT paper's 12, their folds), the test
interval MSE (mean over folds) of MMITCV (squared hinge, default margins,
inner 5-fold CV) with constant or linear leaves under several shrinkage
grids, and with constant leaves only; then each one's mean rank, median
and worst ratio to the best (see variant_study.py), and each grid's wins
among the grids and worst ratio to constant leaves.

Usage: python benchmarks/studies/leaf_shrinkage.py DATA_DIR [--n-jobs 2]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import print_variant_table

from mmit import MMITCV
from mmit._cli._evaluation import cross_validate_models
from mmit._utils._validation import default_margins
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
    by_set = {}
    for folder in folders:
        data = load_folder(folder)
        by_set[data.name] = np.array(test_mses(data, args.n_jobs))
        print(data.name, file=sys.stderr, flush=True)
    mse = np.array(list(by_set.values()))
    linear = mse[:, :-1]
    extra = {  # the constant leaves' column: nan
        "wins among the grids": np.r_[(linear == linear.min(axis=1, keepdims=True))
                                      .sum(axis=0), np.nan],
        "worst / constant": np.r_[(linear / mse[:, -1:]).max(axis=0), np.nan],
    }
    print_variant_table("test interval MSE of MMITCV by leaf_shrinkages grid", by_set,
                        [*GRIDS, "constant"], extra, width=12)


if __name__ == "__main__":
    main()
