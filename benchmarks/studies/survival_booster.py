"""The default survival model's two members: held-out C-index of the mean
of the survival forest's and a binned booster's predicted log times, for
several shares of the forest, against the number of rows.

The forest is ``MMITForest(min_samples_leaf=15, max_features=0.5,
loss="linear_hinge")`` and the booster ``MMITBoost(splitter="hist",
n_estimators=1000, early_stopping=True)`` (``SurvivalRegressor``'s default
model), both on log times with 2 threads; the risk is minus
``share * forest + (1 - share) * booster`` for each share of
``--shares`` (0: the booster alone, 1: the forest alone), beside XGBoost's
AFT booster (as in ``survival_scale.py``). Shapes as in
``survival_leaf_size.py`` (the four of ``survival.py``, half censored, and
the log-normal data of ``survival_scale.py``); above
``--all-shapes-up-to`` rows only the log-normal shape (the forest's fit
takes minutes there). Each setting is scored on 5000 held-out rows; the
table gives each shape's C-index per share (mean over ``--seeds``) and,
per size, the mean over shapes and the number of (shape, seed) settings
where the share ranks at least as well as the forest alone and as XGBoost.

Needs the ``bench`` extra (scikit-survival for the shapes of
``survival.py``, xgboost).

Usage: python benchmarks/studies/survival_booster.py [--sizes 1e3 1e4 1e5]
       [--shares 0 0.25 0.5 0.75 1] [--seeds 0 1] [--all-shapes-up-to 1e4]
       [--csv PATH]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other studies' data
import numpy as np
import survival_leaf_size
import survival_scale
from tables import Table, add_csv_argument, size

from mmit import MMITBoost, MMITForest, intervals_from_survival
from mmit.metrics import concordance_index
from mmit.survival._survival import SURVIVAL_BOOSTER, SURVIVAL_FOREST

N_HELD_OUT = 5000


def predictions(shape, n, seed):
    """The held-out targets and the forest's, the booster's and XGBoost's
    risks (minus predicted log times)."""
    X, event, time_ = survival_leaf_size.draw(shape, n + N_HELD_OUT, seed)
    train, test = slice(0, n), slice(n, None)
    target = intervals_from_survival(event[train], time_[train], log=True)
    forest = MMITForest(**SURVIVAL_FOREST, n_jobs=2, random_state=seed)
    booster = MMITBoost(**SURVIVAL_BOOSTER, n_jobs=2, random_state=seed)
    for model in (forest, booster):
        model.fit(X[train], target)
    xgboost = survival_scale.XGBoostAFT().fit(
        X[train], survival_scale.records(event[train], time_[train]))
    return (intervals_from_survival(event[test], time_[test]), -forest.predict(X[test]),
            -booster.predict(X[test]), xgboost.predict(X[test]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--shares", type=float, nargs="+", default=[0, 0.25, 0.5, 0.75, 1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--all-shapes-up-to", type=float, default=1e4)
    add_csv_argument(parser)
    args = parser.parse_args()
    shares = [f"forest {share:g}" for share in args.shares]
    table = Table(["rows", "shape", *shares, "XGBoost AFT"], args.csv,
                  title="held-out C-index of share * forest + (1 - share) * booster")
    for n in map(int, args.sizes):
        shapes = survival_leaf_size.SHAPES if n <= args.all_shapes_up_to else ["lognormal"]
        scores = []  # per (shape, seed): the C-index of each share, then XGBoost's
        for shape in shapes:
            rows = []
            for seed in args.seeds:
                target, forest, booster, xgboost = predictions(shape, n, seed)
                mixed = [share * forest + (1 - share) * booster for share in args.shares]
                rows.append([concordance_index(target, -risk)
                             for risk in [*mixed, xgboost]])
            table.add(size(n), shape, *(f"{c:.4f}" for c in np.mean(rows, axis=0)))
            scores.extend(rows)
        scores = np.array(scores)
        table.add(size(n), "mean", *(f"{c:.4f}" for c in scores.mean(axis=0)))
        forest_alone = scores[:, args.shares.index(1.0)] if 1.0 in args.shares else None
        if forest_alone is not None:
            table.add(size(n), ">= forest alone", *(
                f"{np.sum(scores[:, k] >= forest_alone)} of {len(scores)}"
                for k in range(len(args.shares))), "")
        table.add(size(n), ">= XGBoost AFT", *(
            f"{np.sum(scores[:, k] >= scores[:, -1])} of {len(scores)}"
            for k in range(len(args.shares))), "")


if __name__ == "__main__":
    main()
