"""The default survival model's two members: held-out C-index of the
forest's and a binned booster's predicted log times weighed together, for
several shares of the forest and the default's share by rows, against the
number of rows.

The forest is ``MMITForest(min_samples_leaf=15, max_features=0.5,
loss="linear_hinge")`` and the booster ``MMITBoost(splitter="hist",
n_estimators=2000, learning_rate=0.025, early_stopping=True)``
(``SurvivalRegressor``'s default model; ``--learning-rates`` fits it at
other rates too, ``n_estimators`` growing as the rate falls), both on log
times with 2 threads; the risk is minus ``share * forest + (1 - share) *
booster`` for each share of ``--shares`` (0: the booster alone, 1: the
forest alone) and for the default's (``1 - booster_share(n)``: a half up
to 1000 rows, then ``0.5 * sqrt(1000 / n)``), beside XGBoost's AFT booster
(as in ``survival_scale.py``). Shapes as in ``survival_leaf_size.py`` (the
four of ``survival.py``, half censored, and the log-normal data of
``survival_scale.py``); above ``--all-shapes-up-to`` rows only the
log-normal shape. Each setting is scored on ``--held-out`` rows (20 000:
a C-index there has a standard error of about 0.002, and the shares'
differences, on the same rows, far less); the table gives each shape's
C-index per share (mean over ``--seeds``) and, per size, the mean over
shapes and the number of (shape, seed) settings where each ranks at least
as well as XGBoost.

Needs the ``bench`` extra (scikit-survival for the shapes of
``survival.py``, xgboost).

Usage: python benchmarks/studies/survival_booster.py [--sizes 1e3 1e4 1e5]
       [--shares 0 0.25 0.5 0.75 1] [--learning-rates 0.025] [--seeds 0 1]
       [--all-shapes-up-to 1e5] [--held-out 20000] [--csv PATH]
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
from mmit.survival._survival import SURVIVAL_BOOSTER, SURVIVAL_FOREST, booster_share


def booster_at(rate, seed):
    """The default model's booster at learning rate ``rate`` (its stages'
    cap scaled by the default's rate over this one)."""
    stages = round(SURVIVAL_BOOSTER["n_estimators"] * SURVIVAL_BOOSTER["learning_rate"]
                   / rate)
    return MMITBoost(**{**SURVIVAL_BOOSTER, "learning_rate": rate,
                        "n_estimators": stages}, n_jobs=2, random_state=seed)


def predictions(shape, n, seed, rates, n_held_out):
    """The held-out targets, the forest's risks (minus predicted log times),
    the booster's at each rate, and XGBoost's."""
    X, event, time_ = survival_leaf_size.draw(shape, n + n_held_out, seed)
    train, test = slice(0, n), slice(n, None)
    target = intervals_from_survival(event[train], time_[train], log=True)
    forest = MMITForest(**SURVIVAL_FOREST, n_jobs=2, random_state=seed).fit(
        X[train], target)
    boosters = [booster_at(rate, seed).fit(X[train], target) for rate in rates]
    xgboost = survival_scale.SurvivalXGBoostAFT().fit(
        X[train], survival_scale.records(event[train], time_[train]))
    return (intervals_from_survival(event[test], time_[test]), -forest.predict(X[test]),
            [-booster.predict(X[test]) for booster in boosters], xgboost.predict(X[test]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--shares", type=float, nargs="+", default=[0, 0.25, 0.5, 0.75, 1])
    parser.add_argument("--learning-rates", type=float, nargs="+",
                        default=[SURVIVAL_BOOSTER["learning_rate"]])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--all-shapes-up-to", type=float, default=1e5)
    parser.add_argument("--held-out", type=float, default=20000)
    add_csv_argument(parser)
    args = parser.parse_args()
    shares = [f"forest {share:g}" for share in args.shares]
    table = Table(["rows", "shape", "booster rate", *shares, "default", "XGBoost AFT"],
                  args.csv, title="held-out C-index of share * forest + (1 - share) * "
                  "booster (default: 1 - booster_share(rows))")
    for n in map(int, args.sizes):
        shapes = survival_leaf_size.SHAPES if n <= args.all_shapes_up_to else ["lognormal"]
        default_share = 1.0 - booster_share(n)
        # per learning rate and (shape, seed): each share's C-index, then XGBoost's
        scores = {rate: [] for rate in args.learning_rates}
        for shape in shapes:
            rows = {rate: [] for rate in args.learning_rates}
            for seed in args.seeds:
                target, forest, boosters, xgboost = predictions(
                    shape, n, seed, args.learning_rates, int(args.held_out))
                for rate, booster in zip(args.learning_rates, boosters, strict=True):
                    mixed = [share * forest + (1 - share) * booster
                             for share in [*args.shares, default_share]]
                    rows[rate].append([concordance_index(target, -risk)
                                       for risk in [*mixed, xgboost]])
            for rate in args.learning_rates:
                table.add(size(n), shape, f"{rate:g}",
                          *(f"{c:.4f}" for c in np.mean(rows[rate], axis=0)))
                scores[rate].extend(rows[rate])
        for rate in args.learning_rates:
            rate_scores = np.array(scores[rate])
            table.add(size(n), "mean", f"{rate:g}",
                      *(f"{c:.4f}" for c in rate_scores.mean(axis=0)))
            table.add(size(n), ">= XGBoost AFT", f"{rate:g}", *(
                f"{np.sum(rate_scores[:, k] >= rate_scores[:, -1])} of {len(rate_scores)}"
                for k in range(rate_scores.shape[1] - 1)), "")


if __name__ == "__main__":
    main()
