"""Cross-validated accuracy of interval regression methods on many data sets.

For every data set folder under the given directory (features.csv,
targets.csv, folds.csv), each fold of folds.csv is in turn the test set and
every method chooses its hyperparameters by inner 5-fold cross-validation on
the other folds (the MMIT paper's protocol; see mmit/_evaluation.py):

- Constant: the best constant under the hinge loss (margin by CV);
- Interval-CART: scikit-learn's tree on the Interval-CART transform
  (margin and max_depth by CV);
- MMIT, MMIT squared: MMITCV with the linear / squared hinge (margin and
  pruning by CV);
- MMITForest: its defaults, no tuning;
- MMITForestCV: margin, loss, max_features and min_samples_leaf chosen by
  out-of-bag score (one forest per candidate);
- MMITBoost: its defaults, no tuning; MMITBoost CV: loss, max_depth and
  margin (0, 0.1 and 0.3 times the spread of the training bounds) by inner
  CV, 100 stages at learning rate 0.05;
- Stacking: IntervalStackingRegressor with its default members;
- XGBoost AFT, when xgboost is installed: ``survival:aft`` on exp(target)
  with interval labels, tuned as well as we could: the error distribution
  (normal, logistic), its scale (0.1, 0.3 and 1 times the spread of the
  training bounds) and max_depth (2, 4, 6) by inner CV, learning rate 0.05,
  and the number of rounds (up to 1000) by early stopping on the AFT
  negative log-likelihood of a fifth of each training set held out
  (patience 30 rounds);
- CatBoost AFT, when catboost is installed: ``SurvivalAft`` on exp(target)
  (an infinite upper bound as -1), the distribution, its scale (as for
  XGBoost) and depth (4, 6) by inner CV, the rest as for XGBoost.

Prints the mean test interval MSE and interval accuracy of each method on
each data set, each method's mean rank (1 = best) over the data sets, the
ratio of the stack's test MSE to the best other method's on each data set,
and the mean fit time of each method.

Usage: python benchmarks/accuracy.py DATA_DIR [--n-jobs 2] [--sets NAME ...]
       [--models NAME ...] [--previous earlier.csv] [--out results.csv]

A long run can be done in parts: ``--models`` runs only some methods and
``--previous`` takes the others' rows from an earlier ``--out`` file.
"""

import argparse
import csv
import importlib
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, KFold

from mmit._base import IntervalRegressorMixin
from mmit._evaluation import MODEL_GROUPS, cross_validate_models, make_model
from mmit._validation import bounds_spread
from mmit.datasets import load_folder


class AFTBooster(IntervalRegressorMixin, BaseEstimator):
    """A boosted accelerated failure time model on interval targets.

    AFT models positive times, so the targets enter as exp(target) (a
    left-censored bound becomes 0) and predictions come back through log.
    The distribution's scale is ``scale`` times the spread (standard
    deviation) of the finite training bounds: the targets of these data sets
    span from a few hundredths to a few units, and a fixed scale of 1 is far
    too wide for most of them. The rounds stop early on the AFT negative
    log-likelihood of a fifth of the training rows held out (patience 30).
    """

    def __init__(self, distribution="normal", scale=0.3, max_depth=4, n_estimators=1000,
                 learning_rate=0.05, early_stopping_rounds=30):
        self.distribution = distribution
        self.scale = scale
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.early_stopping_rounds = early_stopping_rounds

    def fit(self, X, y):
        held_out = np.random.default_rng(0).random(len(X)) < 0.2
        scale = self.scale * (bounds_spread(y[:, 0], y[:, 1]) or 1.0)
        self._train(X[~held_out], y[~held_out], X[held_out], y[held_out], scale)
        return self


class XGBoostAFT(AFTBooster):
    """XGBoost's ``survival:aft`` (hist, one thread)."""

    @staticmethod
    def matrix(X, y):
        """A DMatrix with the interval bounds as AFT label bounds (exp)."""
        import xgboost

        matrix = xgboost.DMatrix(X)
        with np.errstate(over="ignore"):
            matrix.set_float_info("label_lower_bound", np.exp(y[:, 0]))
            matrix.set_float_info("label_upper_bound", np.exp(y[:, 1]))
        return matrix

    def _train(self, X, y, X_held_out, y_held_out, scale):
        import xgboost

        params = {"objective": "survival:aft", "eval_metric": "aft-nloglik",
                  "aft_loss_distribution": self.distribution,
                  "aft_loss_distribution_scale": scale,
                  "max_depth": self.max_depth, "learning_rate": self.learning_rate,
                  "tree_method": "hist", "nthread": 1, "verbosity": 0}
        self.booster_ = xgboost.train(
            params, self.matrix(X, y), num_boost_round=self.n_estimators,
            evals=[(self.matrix(X_held_out, y_held_out), "validation")],
            early_stopping_rounds=self.early_stopping_rounds, verbose_eval=False)

    def predict(self, X):
        import xgboost

        rounds = (0, self.booster_.best_iteration + 1)
        return np.log(self.booster_.predict(xgboost.DMatrix(X), iteration_range=rounds))


class CatBoostAFT(AFTBooster):
    """CatBoost's ``SurvivalAft`` (one thread): labels are the two bounds as
    times, -1 for an infinite upper bound; it predicts log times."""

    @staticmethod
    def labels(y):
        with np.errstate(over="ignore"):
            times = np.exp(y)
        times[np.isposinf(y[:, 1]), 1] = -1.0
        return times

    def _train(self, X, y, X_held_out, y_held_out, scale):
        from catboost import CatBoostRegressor

        distribution = {"normal": "Normal", "logistic": "Logistic"}[self.distribution]
        self.booster_ = CatBoostRegressor(
            loss_function=f"SurvivalAft:dist={distribution};scale={scale:.6g}",
            iterations=self.n_estimators, learning_rate=self.learning_rate,
            depth=self.max_depth, thread_count=1, random_seed=0, verbose=0,
            allow_writing_files=False,
            use_best_model=True, early_stopping_rounds=self.early_stopping_rounds)
        self.booster_.fit(X, self.labels(y), eval_set=(X_held_out, self.labels(y_held_out)))

    def predict(self, X):
        return self.booster_.predict(X)


def peer(estimator, grid, y_train, n_jobs=None):
    """The peer tuned by inner 5-fold CV over ``grid``."""
    return GridSearchCV(estimator, grid, cv=KFold(5, shuffle=True, random_state=0),
                        n_jobs=n_jobs)


PEERS = {
    "XGBoost AFT": ("xgboost", XGBoostAFT(), {"distribution": ["normal", "logistic"],
                                              "scale": [0.1, 0.3, 1.0],
                                              "max_depth": [2, 4, 6]}),
    "CatBoost AFT": ("catboost", CatBoostAFT(max_depth=6),
                     {"distribution": ["normal", "logistic"], "scale": [0.1, 0.3, 1.0],
                      "max_depth": [4, 6]}),
}


def read_rows(path):
    """Rows of an earlier ``--out`` file, numbers as numbers."""
    with open(path, newline="") as file:
        return [{**row, "fold": int(row["fold"]),
                 **{key: float(row[key]) for key in ("seconds", "mse", "accuracy")}}
                for row in csv.DictReader(file)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--sets", nargs="+", help="only these data sets (folder names)")
    parser.add_argument("--models", nargs="+",
                        help="only these methods (the others come from --previous)")
    parser.add_argument("--previous", type=Path,
                        help="an earlier --out file: its rows of the methods not run now")
    parser.add_argument("--out", type=Path, help="write every fold's scores (CSV)")
    args = parser.parse_args()
    models = {name: (lambda y, name=name: make_model(name, y, n_jobs=args.n_jobs))
              for name in MODEL_GROUPS["all"]}
    for name, (package, estimator, grid) in PEERS.items():
        try:
            importlib.import_module(package)
        except ImportError:
            print(f"{package} is not installed: {name} is left out", file=sys.stderr)
            continue
        models[name] = partial(peer, estimator, grid, n_jobs=args.n_jobs)
    if args.models:
        unknown = sorted(set(args.models) - set(models))
        if unknown:
            parser.error(f"unknown methods {unknown}; known: {sorted(models)}")
        models = {name: models[name] for name in args.models}
    previous = read_rows(args.previous) if args.previous else []

    folders = sorted(p for p in args.data_dir.iterdir() if (p / "folds.csv").exists()
                     and (not args.sets or p.name in args.sets))
    all_rows = []
    for folder in folders:
        data = load_folder(folder)
        start = time.perf_counter()
        rows = cross_validate_models(data, [], extra_models=models, n_jobs=args.n_jobs)
        print(f"{data.name}: {time.perf_counter() - start:.0f} s", file=sys.stderr,
              flush=True)
        all_rows += [row for row in previous
                     if row["data set"] == data.name and row["model"] not in models]
        all_rows += [{"data set": data.name, **row} for row in rows]
    if args.out:
        with open(args.out, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(all_rows[0]))
            writer.writeheader()
            writer.writerows(all_rows)
    report(all_rows)


def report(rows):
    """Per data set means, mean ranks, fit times and the stack's ratios."""
    sets = list(dict.fromkeys(row["data set"] for row in rows))
    methods = list(dict.fromkeys(row["model"] for row in rows))
    results = {name: {method: tuple(np.mean([r[key] for r in rows
                                             if r["data set"] == name
                                             and r["model"] == method])
                                    for key in ("mse", "accuracy", "seconds"))
                      for method in methods} for name in sets}
    width = max(len(m) for m in methods) + 2
    for index, label in ((0, "mean test interval MSE"), (1, "mean test interval accuracy")):
        print(f"\n{label}")
        print(f"{'data set':<30}" + "".join(f"{m:>{width}}" for m in methods))
        for name, scores in results.items():
            print(f"{name:<30}" + "".join(f"{scores[m][index]:>{width}.4f}"
                                          for m in methods))
    ranks = np.array([rankdata([scores[m][0] for m in methods])
                      for scores in results.values()])
    print(f"\n{'mean rank (MSE)':<30}"
          + "".join(f"{rank:>{width}.2f}" for rank in ranks.mean(axis=0)))
    seconds = [np.mean([r["seconds"] for r in rows if r["model"] == m]) for m in methods]
    print(f"{'mean fit seconds':<30}" + "".join(f"{s:>{width}.2f}" for s in seconds))
    others = [m for m in methods if m != "Stacking"]
    if "Stacking" in methods and others:
        print("\nStacking's test MSE / the best other method's")
        for name, scores in results.items():
            best = min(others, key=lambda m: scores[m][0])
            print(f"{name:<30}{scores['Stacking'][0] / scores[best][0]:>8.3f}  ({best})")


if __name__ == "__main__":
    main()
