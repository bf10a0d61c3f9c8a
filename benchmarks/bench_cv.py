"""MMITCV versus GridSearchCV over margin x ccp_alpha: same answers, less time.

On each data set, every fold of ``folds.csv`` is in turn the test set; on the
other folds, the margin and the pruning are chosen by 5-fold inner
cross-validation, either by ``MMITCV`` (one tree per inner fold and margin,
every pruned subtree scored without refitting) or by scikit-learn's
``GridSearchCV`` over the same candidates (one refit per margin, alpha and
inner fold; its time includes the pruning paths that give the alphas). The
table gives the test interval MSE of both (averaged over the outer folds),
whether they chose the same parameters on every outer fold, and the times.

Usage: python benchmarks/bench_cv.py [DATA_DIR ...]
(default: the data sets bundled with mmit)
"""

import sys
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold

from mmit import MMIT, MMITCV
from mmit._validation import default_margins
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
    sets = ([load_folder(path) for path in sys.argv[1:]] if len(sys.argv) > 1
            else [load_dataset(name) for name in list_datasets()])
    inner = KFold(5, shuffle=True, random_state=0)
    print(f"{'data set':<32} {'MMITCV mse':>10} {'Grid mse':>10} {'same':>5} "
          f"{'MMITCV s':>9} {'Grid s':>8} {'speed-up':>8}")
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
        mse_cv, mse_grid = np.mean(errors["cv"]), np.mean(errors["grid"])
        speed_up = times["grid"] / times["cv"]
        print(f"{data.name:<32} {mse_cv:>10.4f} {mse_grid:>10.4f} "
              f"{'yes' if same else 'NO':>5} {times['cv']:>9.2f} {times['grid']:>8.2f} "
              f"{speed_up:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
