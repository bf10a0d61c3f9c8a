"""The models that the benchmarks define, in one place.

- ``xgboost_aft_params`` and ``aft_matrix``: XGBoost's AFT booster
  (``survival:aft``, ``hist``) as every benchmark sets it up;
- ``XGBoostAFT`` and ``CatBoostAFT``: the boosted accelerated failure time
  models of XGBoost (``survival:aft``) and CatBoost (``SurvivalAft``) on
  interval targets, and ``PEERS``: each with the package it needs and the
  grid that ``accuracy.py`` tunes it over by inner CV (``tuned_peer``);
- ``IntervalKNN``: a k-nearest-neighbour prototype that
  ``stacking_defaults.py`` tried as a stack member.
"""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.neighbors import NearestNeighbors

from mmit._loss._loss import LOSSES
from mmit._utils._base import IntervalRegressorMixin
from mmit._utils._validation import bounds_spread
from mmit.metrics import interval_mse


def xgboost_aft_params(*, max_depth, learning_rate, n_threads, distribution="normal",
                       scale=None, monotonic_cst=None):
    """The parameters of XGBoost's AFT booster (``survival:aft``, ``hist``,
    quiet) with these settings (``scale`` None: XGBoost's default;
    ``monotonic_cst``: -1, 0 or 1 per feature)."""
    params = {"objective": "survival:aft", "aft_loss_distribution": distribution,
              "max_depth": max_depth, "learning_rate": learning_rate,
              "tree_method": "hist", "nthread": n_threads, "verbosity": 0}
    if scale is not None:
        params["aft_loss_distribution_scale"] = scale
    if monotonic_cst is not None:
        params["monotone_constraints"] = "(" + ",".join(
            str(int(sign)) for sign in monotonic_cst) + ")"
    return params


def aft_matrix(X, lower_time, upper_time):
    """A DMatrix of X with these times as AFT label bounds."""
    import xgboost

    return xgboost.DMatrix(X, label_lower_bound=lower_time, label_upper_bound=upper_time)


class AFTBooster(IntervalRegressorMixin, BaseEstimator):
    """A boosted accelerated failure time model on interval targets.

    AFT models positive times, so the targets enter as exp(target) (a
    left-censored bound becomes 0) and predictions come back through log.
    The distribution's scale is ``scale`` times the spread (standard
    deviation) of the finite training bounds: the targets of these data sets
    span from a few hundredths to a few units, and a fixed scale of 1 is far
    too wide for most of them. The rounds stop early on the AFT negative
    log-likelihood of a fifth of the training rows held out (patience 30).
    ``monotonic_cst``: -1, 0 or 1 per feature (XGBoost's monotone
    constraints; CatBoost's are not used here).
    """

    def __init__(self, distribution="normal", scale=0.3, max_depth=4, n_estimators=1000,
                 learning_rate=0.05, early_stopping_rounds=30, monotonic_cst=None):
        self.monotonic_cst = monotonic_cst
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
        with np.errstate(over="ignore"):
            return aft_matrix(X, np.exp(y[:, 0]), np.exp(y[:, 1]))

    def _train(self, X, y, X_held_out, y_held_out, scale):
        import xgboost

        params = {**xgboost_aft_params(max_depth=self.max_depth,
                                       learning_rate=self.learning_rate, n_threads=1,
                                       distribution=self.distribution, scale=scale,
                                       monotonic_cst=self.monotonic_cst),
                  "eval_metric": "aft-nloglik"}
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


def tuned_peer(estimator, grid, y_train, n_jobs=None):
    """The peer tuned by inner 5-fold CV over ``grid`` (``y_train``: unused,
    the signature of mmit's model factories)."""
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


class IntervalKNN(IntervalRegressorMixin, BaseEstimator):
    """Prototype: the optimal constant (squared hinge, margin 0) of the
    intervals of the k nearest training rows, features replaced by their
    ranks (robust to heavy tails); k by leave-one-out."""

    def __init__(self, n_neighbors=(5, 10, 20, 40)):
        self.n_neighbors = n_neighbors

    def _ranks(self, X):
        return np.column_stack([np.searchsorted(column, X[:, j]) / len(column)
                                for j, column in enumerate(self.sorted_.T)])

    def _constants(self, neighbours, k):
        ones = np.ones(k)
        loss = LOSSES["squared_hinge"]
        return np.array([loss.optimal_constant(self.lower_[row[:k]], self.upper_[row[:k]],
                                               0.0, ones) for row in neighbours])

    def fit(self, X, y):
        self.sorted_ = np.sort(X, axis=0)
        self.lower_, self.upper_ = np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(
            y[:, 1])
        Z = self._ranks(X)
        candidates = [k for k in self.n_neighbors if k < len(X)] or [max(1, len(X) - 1)]
        self.index_ = NearestNeighbors().fit(Z)
        neighbours = self.index_.kneighbors(Z, max(candidates) + 1,
                                            return_distance=False)[:, 1:]
        errors = [interval_mse(y, self._constants(neighbours, k)) for k in candidates]
        self.k_ = candidates[int(np.argmin(errors))]
        return self

    def predict(self, X):
        neighbours = self.index_.kneighbors(self._ranks(X), self.k_, return_distance=False)
        return self._constants(neighbours, self.k_)
