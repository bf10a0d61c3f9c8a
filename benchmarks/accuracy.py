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
- MMITBoost: 100 stages, learning rate 0.1; loss, max_depth and margin (0,
  0.1 and 0.3 times the spread of the training bounds) by inner CV;
- XGBoost AFT, when xgboost is installed: ``survival:aft`` on exp(target)
  with interval labels, tuned as well as we could: the error distribution
  (normal, logistic), its scale (0.5, 1, 2) and max_depth (2, 4, 6) by
  inner CV, learning rate 0.05, and the number of rounds (up to 1000) by
  early stopping on the AFT negative log-likelihood of a fifth of each
  training set held out (patience 30 rounds).

Prints the mean test interval MSE and interval accuracy of each method on
each data set, and each method's mean rank (1 = best) over the data sets.

Usage: python benchmarks/accuracy.py DATA_DIR [--n-jobs 2]
"""

import argparse
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, KFold

from mmit._base import IntervalRegressorMixin
from mmit._evaluation import MODEL_GROUPS, cross_validate_models
from mmit.datasets import load_folder


class XGBoostAFT(IntervalRegressorMixin, BaseEstimator):
    """XGBoost's accelerated failure time model on interval targets.

    AFT models positive times, so the targets enter as exp(target) (a
    left-censored bound becomes 0) and predictions come back through log.
    """

    def __init__(self, distribution="normal", scale=1.0, max_depth=4, n_estimators=1000,
                 learning_rate=0.05, early_stopping_rounds=30):
        self.distribution = distribution
        self.scale = scale
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.early_stopping_rounds = early_stopping_rounds

    @staticmethod
    def matrix(X, y):
        """A DMatrix with the interval bounds as AFT label bounds (exp)."""
        import xgboost

        matrix = xgboost.DMatrix(X)
        with np.errstate(over="ignore"):
            matrix.set_float_info("label_lower_bound", np.exp(y[:, 0]))
            matrix.set_float_info("label_upper_bound", np.exp(y[:, 1]))
        return matrix

    def fit(self, X, y):
        import xgboost

        held_out = np.random.default_rng(0).random(len(X)) < 0.2
        params = {"objective": "survival:aft", "eval_metric": "aft-nloglik",
                  "aft_loss_distribution": self.distribution,
                  "aft_loss_distribution_scale": self.scale,
                  "max_depth": self.max_depth, "learning_rate": self.learning_rate,
                  "tree_method": "hist", "nthread": 1, "verbosity": 0}
        validation = self.matrix(X[held_out], y[held_out])
        self.booster_ = xgboost.train(
            params, self.matrix(X[~held_out], y[~held_out]),
            num_boost_round=self.n_estimators, evals=[(validation, "validation")],
            early_stopping_rounds=self.early_stopping_rounds, verbose_eval=False)
        return self

    def predict(self, X):
        import xgboost

        rounds = (0, self.booster_.best_iteration + 1)
        return np.log(self.booster_.predict(xgboost.DMatrix(X), iteration_range=rounds))


def xgboost_model(y_train, n_jobs=None):
    inner = KFold(5, shuffle=True, random_state=0)
    return GridSearchCV(XGBoostAFT(), {"distribution": ["normal", "logistic"],
                                       "scale": [0.5, 1.0, 2.0], "max_depth": [2, 4, 6]},
                        cv=inner, n_jobs=n_jobs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()
    extra = {}
    try:
        import xgboost  # noqa: F401

        extra["XGBoost AFT"] = partial(xgboost_model, n_jobs=args.n_jobs)
    except ImportError:
        print("xgboost is not installed: XGBoost AFT is left out", file=sys.stderr)

    folders = sorted(p for p in args.data_dir.iterdir() if (p / "folds.csv").exists())
    results = {}
    for folder in folders:
        data = load_folder(folder)
        start = time.perf_counter()
        rows = cross_validate_models(data, MODEL_GROUPS["all"], extra_models=extra,
                                     n_jobs=args.n_jobs)
        print(f"{data.name}: {time.perf_counter() - start:.0f} s", file=sys.stderr,
              flush=True)
        methods = list(dict.fromkeys(row["model"] for row in rows))
        results[data.name] = {
            method: (np.mean([r["mse"] for r in rows if r["model"] == method]),
                     np.mean([r["accuracy"] for r in rows if r["model"] == method]))
            for method in methods
        }

    methods = list(next(iter(results.values())))
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


if __name__ == "__main__":
    main()
