"""MMITCV versus GridSearchCV over margin x ccp_alpha: same answers, less time.

On each data set, every fold of ``folds.csv`` is in turn the test set; on the
other folds, the margin and the pruning are chosen by 5-fold inner
cross-validation, either by ``MMITCV`` (one tree per inner fold and margin,
every pruned subtree scored without refitting) or by scikit-learn's
``GridSearchCV`` over the same candidates (one refit per margin, alpha and
inner fold; its time includes the pruning paths that give the alphas). The
table gives the test interval MSE of both (averaged over the outer folds),
whether they chose the same parameters on every outer fold, and the times.

Usage: python benchmarks/speed/bench_cv.py [DATA_DIR ...] [--csv PATH]
(default: the data sets bundled with mmit)
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds

from mmit import MMIT, MMITCV
from mmit._utils._validation import default_margins
from mmit.datasets import list_datasets, load_dataset, load_folder
from mmit.metrics import interval_mse


def grid_search(X, y, margins, inner):
    """GridSearchCV over each margin's pruning path, as a user would run it."""
    grids = []
    for margin in margins:
        path = MMIT(margin=margin, random_state=0).cost_complexity_pruning_path(X, y)
        grids.append({"margin": [margin], "ccp_alpha": list(path.ccp_alphas)})
    return GridSearchCV(MMIT(random_state=0), grids, cv=inner).fit(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="*", metavar="DATA_DIR",
                        help="data set folders (default: the bundled data sets)")
    add_csv_argument(parser)
    args = parser.parse_args()
    sets = ([load_folder(path) for path in args.folders] if args.folders
            else [load_dataset(name) for name in list_datasets()])
    inner = KFold(5, shuffle=True, random_state=0)
    table = Table(["data set", "MMITCV MSE", "GridSearchCV MSE", "same", "MMITCV s",
                   "GridSearchCV s", "speed-up"], args.csv)
    for data in sets:
        errors = {"cv": [], "grid": []}
        times = {"cv": 0.0, "grid": 0.0}
        same = True
        for fold in np.unique(data.folds):
            test = data.folds == fold
            X, y = data.data[~test], data.target[~test]
            margins = default_margins(y[:, 0], y[:, 1])
            start = time.perf_counter()
            search = MMITCV(margins=margins, cv=inner, random_state=0).fit(X, y)
            times["cv"] += time.perf_counter() - start
            start = time.perf_counter()
            grid = grid_search(X, y, margins, inner)
            times["grid"] += time.perf_counter() - start
            same &= (search.best_params_["margin"] == grid.best_params_["margin"]
                     and search.best_params_["ccp_alpha"] == grid.best_params_["ccp_alpha"])
            for key, model in (("cv", search), ("grid", grid)):
                errors[key].append(interval_mse(data.target[test],
                                                model.predict(data.data[test])))
        table.add(data.name, f"{np.mean(errors['cv']):.4f}",
                  f"{np.mean(errors['grid']):.4f}", "yes" if same else "NO",
                  seconds(times["cv"]), seconds(times["grid"]),
                  f"{times['grid'] / times['cv']:.1f}")


if __name__ == "__main__":
    main()
