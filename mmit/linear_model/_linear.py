"""Max-margin linear interval regression (Rigaill et al. 2013, elastic net).

The model ``f(x) = x.w + b`` minimises the mean weighted squared hinge loss
of the distance outside the margin-shrunk intervals (the loss of the trees'
``squared_hinge``) plus ``alpha * (l1_ratio * |w|_1 + (1 - l1_ratio) / 2 *
|w|_2^2)``, on internally standardised features. The solver is the
generalised Newton method (``_newton``) along the alpha path
(``_elastic_net_path``: its local models solved by coordinate descent with
working sets).
"""

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._utils._base import IntervalRegressorMixin, rows_as_read, set_init_parameters
from .._utils._blas import single_threaded_blas
from .._utils._categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    fitted_encoding,
    non_numeric_columns,
    numeric_values,
)
from .._utils._constraints import MONOTONIC_CST_CONSTRAINT, monotonic_constraints
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method, predict_method
from .._utils._protocols import Explainer, OneFitFoldPredictions
from .._utils._scores import interval_scores
from .._utils._validation import (
    bounds_spread,
    check_fold_weights,
    check_margin,
    validate_training_data,
)
from ._elastic_net_path import elastic_net_path
from ._newton import NEWTON_LOSS, newton_scale
from ._standardisation import StandardisedFeatures, transpose_dot


class StandardisedProblem:
    """The loss of ``features.Z @ w + b`` (a :class:`StandardisedFeatures`)
    for one margin, with the optimal constant as a start; ``loss`` a
    differentiable registry entry (ValueError for another, see
    ``_newton.newton_scale``)."""

    def __init__(self, features, lower, upper, margin, sample_weight, loss=NEWTON_LOSS,
                 signs=None):
        # the solver's squared hinge on weights times this is the loss
        self.scale = newton_scale(loss)
        # per column: its coefficient >= 0 (+1), <= 0 (-1), free (0); None: free
        self.signs = signs
        self.features = features
        self.objective = loss.objective(lower, upper, margin, sample_weight)
        self.constant = loss.optimal_constant(lower, upper, margin, sample_weight)
        # tolerances are relative to the spread of the bounds (or to 1)
        self.target_scale = bounds_spread(lower, upper, sample_weight) or 1.0

    def alpha_max(self, l1_ratio):
        """The smallest alpha whose solution has every coefficient zero
        (l1_ratio below 1e-3 counts as 1e-3, as in scikit-learn): the
        steepest descent a coefficient leaving 0 offers, in a direction its
        sign constraint allows."""
        Z = self.features.Z
        gradient = transpose_dot(Z, self.objective.gradient(np.full(Z.shape[0],
                                                                    self.constant)))
        descent = (np.abs(gradient) if self.signs is None
                   else np.where(self.signs == 0, np.abs(gradient), -self.signs * gradient))
        # raised by a relative 1e-9: the solver's gradient is summed in another
        # order, and its rounding must not let a coefficient in at alpha_max
        return (1.0 + 1e-9) * float(np.max(descent, initial=0.0)) / max(l1_ratio, 1e-3)

    def path(self, alphas, l1_ratio, tol, max_iter):
        """Solutions for decreasing ``alphas``, each started from the previous
        (warm starts), by coordinate descent. Returns coefficients (n_alphas,
        n_features) and intercepts on the original scale, the sweeps, and
        the alphas where the solver did not converge."""
        alphas = np.ascontiguousarray(alphas, dtype=np.float64)
        coefs, intercepts, sweeps, converged = elastic_net_path(
            self.features.Z, self.objective.lower, self.objective.upper,
            self.objective.weight * self.scale, alphas, l1_ratio, tol * self.target_scale,
            max_iter, self.constant, self.signs)
        coefs, intercepts = self.features.original_scale(coefs, intercepts)
        return coefs, intercepts, sweeps, list(alphas[~converged])


def _warn_unconverged(alphas, max_iter):
    if alphas:
        warnings.warn(f"IntervalLinearRegression did not converge in {max_iter} "
                      f"sweeps for alpha={alphas[0]:.4g}"
                      f"{f' and {len(alphas) - 1} more' if len(alphas) > 1 else ''}; "
                      "increase max_iter or tol.", ConvergenceWarning, stacklevel=3)


def one_hot(X, categories):
    """The columns a linear model fits on: ``X`` (validated, categorical
    features as codes) with each categorical feature (``categories[j]`` not
    None) replaced, where it stands, by one 0/1 column per category; a
    missing value (or a label unknown in fit, NaN too) gives all zeros."""
    if categories is None:
        return X
    return np.hstack([X[:, [j]] if labels is None
                      else (X[:, [j]] == np.arange(len(labels))).astype(np.float64)
                      for j, labels in enumerate(categories)])


def column_signs(estimator):
    """The sign constraint of each of a fitted linear model's columns (of
    :func:`one_hot`): its feature's ``monotonic_cst`` (a category's column
    free), +1 for every column with ``positive``; None when every column is
    free. A coefficient's sign on the standardised column is its sign on the
    original one (the scales are positive)."""
    constraints = monotonic_constraints(estimator)
    if constraints is not None and estimator.positive and np.any(constraints < 0):
        raise ValueError("positive=True makes every coefficient non-negative: "
                         "monotonic_cst cannot ask for a decreasing feature (-1) with it.")
    if constraints is None and not estimator.positive:
        return None
    feature = one_hot_features(fitted_encoding(estimator)[1], estimator.n_features_in_)
    signs = (np.zeros(feature.shape[0], dtype=np.int8) if constraints is None
             else constraints[feature])
    if estimator.positive:
        signs[:] = 1
    return signs


def one_hot_features(categories, n_features):
    """The feature each column of :func:`one_hot` comes from."""
    widths = [1 if labels is None else len(labels)
              for labels in (categories or [None] * n_features)]
    return np.repeat(np.arange(n_features), widths)


def coef_names(estimator):
    """The name of each column of :func:`one_hot` for a fitted estimator: the
    feature's name (``x<j>`` without names), ``<name>_<label>`` for a
    category, as scikit-learn's ``OneHotEncoder`` names its columns."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = [f"x{j}" for j in range(estimator.n_features_in_)]
    categories = fitted_encoding(estimator)[1] or [None] * len(names)
    return np.array([f"{name}_{label}" if labels is not None else name
                     for name, labels in zip(names, categories, strict=True)
                     for label in (labels if labels is not None else [None])],
                    dtype=object)


def feature_range(X, sample_weight):
    """Smallest and largest value of each feature among the rows of positive
    weight (the rows a fit sees)."""
    positive = sample_weight > 0
    rows = X if positive.all() else X[positive]
    if sp.issparse(rows):  # its zeros included
        return (rows.min(axis=0).toarray().ravel(), rows.max(axis=0).toarray().ravel())
    return rows.min(axis=0), rows.max(axis=0)


def feature_mean(X, sample_weight):
    """The weighted training mean of each feature (rows of positive weight:
    within the training range, so unchanged by clipping)."""
    if sp.issparse(X):
        return X.T @ sample_weight / sample_weight.sum()
    return np.average(X, axis=0, weights=sample_weight)


def clipped(X, low, high):
    """``X`` clipped to ``[low, high]`` per feature: a sparse X stays sparse
    when every range holds 0 (its stored values clipped), else is
    densified."""
    if sp.issparse(X):
        if np.all((low <= 0.0) & (high >= 0.0)):
            X = sp.csr_matrix(X, copy=True)
            X.data = np.clip(X.data, low[X.indices], high[X.indices])
            return X
        X = X.toarray()
    return np.clip(X, low, high)


#: the fitted arrays and values of a linear model a model file holds
LINEAR_STATE_ARRAYS = ("coef_", "data_min_", "data_max_")
LINEAR_STATE_VALUES = ("intercept_", "n_iter_")


@dataclass(frozen=True)
class LinearTerms(Explainer):
    """A fitted linear model's prediction as a sum of terms: ``coef_[c] *
    (column_c - data_mean_[c])`` for each column of :func:`one_hot` (clipped
    to its training range when the model clips), plus ``constant``, the
    prediction at the training means; what SHAP values of a linear model
    are, exactly (its explainer, ``mmit._utils._protocols``), each
    column's term going to the feature it comes from (a categorical
    feature's one-hot columns summed; behind a pipeline of imputers, a
    feature's missing-value indicator too). A linear model has no
    interactions: its interaction values lie on the diagonal.

    Parameters
    ----------
    model : IntervalLinearRegression or IntervalLinearRegressionCV
        The fitted model (with its training means, ``data_mean_``).
    pipeline : Pipeline, default=None
        A scikit-learn ``Pipeline`` of imputers (steps with
        ``output_features``, as :class:`MeanImputer`) ending in ``model``,
        explained as a whole (:meth:`behind`).
    """

    model: object
    pipeline: object = None

    def behind(self, pipeline):
        """The terms of ``pipeline``, whose last step is the model."""
        return LinearTerms(self.model, pipeline)

    def rows(self, X):
        if self.pipeline is None:
            return rows_as_read(self.model, X)
        passed = non_numeric_columns(X)
        rows = numeric_values(self.pipeline[0], X, passed, reset=False)
        if passed is not None and passed.any():  # the codes of the model behind
            codes = rows_as_read(self.model, self.pipeline[:-1].transform(X))
            rows[:, passed] = codes[:, :rows.shape[1]][:, passed]
        return rows

    def contributions(self, X, interactions, n_threads):
        Z, n_features = X, self.model.n_features_in_
        feature_of_input = np.arange(n_features)  # of the linear model's inputs
        if self.pipeline is not None:
            n_features = self.pipeline.n_features_in_
            for imputer in reversed(self.pipeline[:-1]):
                feature_of_input = imputer.output_features()[feature_of_input]
            Z = self.pipeline[:-1].transform(X)
        Z = rows_as_read(self.model, Z)
        feature_of_column = feature_of_input[self.feature_of_column()]
        values = np.zeros((Z.shape[0], n_features))
        np.add.at(values.T, feature_of_column, self.terms(Z).T)
        if interactions:
            values = np.einsum("ij,jk->ijk", values, np.eye(values.shape[1]))
        return values, self.constant

    @property
    def constant(self):
        """The prediction at the training means."""
        model = self.model
        return float(model.intercept_ + model.coef_ @ model.data_mean_)

    def feature_of_column(self):
        """The model's input feature each column comes from."""
        return one_hot_features(fitted_encoding(self.model)[1], self.model.n_features_in_)

    def terms(self, Z):
        """Each column's term for the rows ``Z`` as the model reads them (its
        :func:`~mmit._utils._base.rows_as_read`): (n_samples, n_columns)."""
        model = self.model
        columns = one_hot(Z, fitted_encoding(model)[1])
        if model.clip_features:
            columns = np.clip(columns, model.data_min_, model.data_max_)
        return model.coef_ * (columns - model.data_mean_)


class _LinearPredictor(IntervalRegressorMixin, BaseEstimator):
    """What the linear estimators share: no missing numeric values, their
    categorical features one-hot encoded, ``x.coef_ + intercept_`` on
    columns clipped to their training range."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False  # a linear model needs every feature
        return tags

    _state_arrays = LINEAR_STATE_ARRAYS
    _state_values = LINEAR_STATE_VALUES

    def _training_columns(self, X, y, sample_weight):
        """Validated training data, X as the columns of :func:`one_hot`
        (``coef_names_`` set)."""
        X, lower, upper, sample_weight = validate_training_data(
            self, X, y, sample_weight, allow_nan=False)
        self.coef_names_ = coef_names(self)
        return one_hot(X, fitted_encoding(self)[1]), lower, upper, sample_weight

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the linear terms."""
        check_is_fitted(self)
        if getattr(self, "data_mean_", None) is None:
            raise ValueError("This linear model has no training means (a model file of an "
                             "older mmit): fit it again to explain it.")
        return LinearTerms(self)

    def _set_feature_range(self, X, sample_weight):
        self.data_min_, self.data_max_ = feature_range(X, sample_weight)
        self.data_mean_ = feature_mean(X, sample_weight)

    def _export_state(self, writer):
        """The fitted arrays and values, for a model file
        (``mmit._persistence._model_files``)."""
        for name in self._state_arrays:
            writer.array(name.rstrip("_"), getattr(self, name))
        writer.array("data_mean", self.data_mean_)
        return {"values": {name: getattr(self, name) for name in self._state_values}}

    def _import_state(self, state, reader):
        """The fitted model of a model file (``n_features_in_`` and the
        categories set), checked: finite coefficients and feature range, one
        per column of :func:`one_hot`."""
        for name in self._state_arrays:
            setattr(self, name, reader.array(name.rstrip("_")))
        for name in self._state_values:
            setattr(self, name, state["values"][name])
        self.coef_names_ = coef_names(self)
        for name in ("coef_", "data_min_", "data_max_"):
            array = reader.array(name.rstrip("_"), np.float64, (len(self.coef_names_),))
            if not np.all(np.isfinite(array)):
                raise ValueError("a linear model's arrays are not finite")
        # the training means (for SHAP values) came with format 7
        self.data_mean_ = reader.optional_array("data_mean", np.float64,
                                                (len(self.coef_names_),))
        if self.data_mean_ is not None and not np.all(np.isfinite(self.data_mean_)):
            raise ValueError("a linear model's arrays are not finite")
        self.intercept_ = float(self.intercept_)

    @predict_method
    def predict(self, X):
        """Predicted value of each sample.

        With ``clip_features`` (the default), each feature is first clipped
        to the range it had in training.

        %(predict)s
        """
        X = one_hot(self._validate_X_predict(X), fitted_encoding(self)[1])
        if self.clip_features:
            X = np.clip(X, self.data_min_, self.data_max_)
        return X @ self.coef_ + self.intercept_


@fill_doc
class IntervalLinearRegression(_LinearPredictor):
    """Max-margin linear interval regression with an elastic-net penalty.

    Fits ``f(x) = x.w + b`` minimising the mean squared hinge loss of the
    distance of ``f(x)`` outside each interval shrunk by ``margin`` (the
    loss of ``MMIT(loss="squared_hinge")``; censored bounds and exact values
    alike), plus ``alpha * (l1_ratio * |w|_1 + (1 - l1_ratio) / 2 *
    |w|_2^2)`` on standardised features (the L1-Linear model of Rigaill et
    al. 2013 with ``l1_ratio=1``). ``coef_`` is on the original scale.

    Parameters
    ----------
    alpha : float, default=1e-3
        Strength of the penalty.
    l1_ratio : float, default=1.0
        Share of the l1 penalty (1: lasso, 0: ridge).
    margin : float, default=0.0
        Margin of the hinges, see :class:`MMIT`.
    tol : float, default=1e-4
        Tolerance relative to the standard deviation of the finite bounds:
        the solver stops when a full Newton step leaves the same hinges
        active or moves the coefficients by less than this, and no
        coefficient's gradient violates its optimality condition by more
        than this.
    max_iter : int, default=100000
        Maximum sweeps of coordinate descent per alpha, over the Newton
        steps (each sweep costs O(n_features) per coefficient, not
        O(n_samples); see ``_elastic_net_path``).
    clip_features : bool, default=True
        Clip each feature to its training range (``data_min_``,
        ``data_max_``) before predicting, so that a row beyond the training
        range predicts as at its edge instead of extrapolating (see Notes).
        False extrapolates linearly.
    %(categorical_features)s
        Each categorical feature is one-hot encoded inside the model: one
        0/1 column per category, all zeros for a missing value or a label
        not seen in fit (numeric features must not be missing).
    %(linear_constraints)s

    Attributes
    ----------
    coef_ : ndarray of shape (n_columns,)
        Coefficients on the original scale of the columns the model fits
        on: each numeric feature, and in its place each category of a
        categorical feature (named by ``coef_names_``).
    intercept_ : float
        Intercept on the original scale.
    n_iter_ : int
        Sweeps of coordinate descent.
    %(column_ranges)s
    coef_names_ : ndarray of shape (n_columns,) of str
        The name of each column: the feature's name (``x<j>`` without
        names), ``<name>_<category>`` for a category (as scikit-learn's
        ``OneHotEncoder`` names its columns).
    %(features_in)s
    %(categorical_attributes)s

    Notes
    -----
    Clipping guards against heavy-tailed features (raw counts spanning many
    orders of magnitude, as in genomics): a test row far beyond the training
    range would otherwise move the prediction far outside every training
    bound. The measurements behind ``clip_features=True`` are in the user
    guide (:ref:`defaults`).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalLinearRegression
    >>> X = np.arange(10.0).reshape(-1, 1)
    >>> y = np.column_stack([2 * X[:, 0] - 1, 2 * X[:, 0] + 1])
    >>> model = IntervalLinearRegression(alpha=0.0).fit(X, y)

    Every line through the intervals has zero loss; the fit is one of them
    (to rounding):

    >>> from mmit.metrics import interval_mse
    >>> bool(interval_mse(y, model.predict(X)) < 1e-12)
    True
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0.0, None, closed="left")],
        "l1_ratio": [Interval(Real, 0.0, 1.0, closed="both")],
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "clip_features": ["boolean"],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "positive": ["boolean"],
        "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
    }

    def __init__(self, alpha=1e-3, *, l1_ratio=1.0, margin=0.0, tol=1e-4,
                 max_iter=100_000, clip_features=True, categorical_features="from_dtype",
                 positive=False, monotonic_cst=None):
        set_init_parameters(self, locals())

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Fit the linear model on interval targets.

        %(fit_parameters_numeric)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        %(fit_returns)s
        """
        X, lower, upper, sample_weight = self._training_columns(X, y, sample_weight)
        problem = StandardisedProblem(StandardisedFeatures(X, sample_weight), lower, upper,
                                      self.margin, sample_weight,
                                      signs=column_signs(self))
        with single_threaded_blas():
            coefs, intercepts, self.n_iter_, unconverged = problem.path(
                [self.alpha], self.l1_ratio, self.tol, self.max_iter)
        _warn_unconverged(unconverged, self.max_iter)
        self.coef_, self.intercept_ = coefs[0], float(intercepts[0])
        self._set_feature_range(X, sample_weight)
        return self


# with store_cv_predictions, the folds keep their coefficient paths (every
# margin and alpha) while the problem is this small in values over all folds;
# wider ones solve each fold's path of the chosen margin again instead
MAX_KEPT_PATH_VALUES = 2 ** 24


def _path_predictions(X_test, coefs, intercepts):
    """The predictions (n_alphas, n_test) of a path's coefficients
    (n_alphas, n_columns) and intercepts."""
    predictions = (X_test @ coefs.T).T if sp.issparse(X_test) else coefs @ X_test.T
    return predictions + intercepts[:, np.newaxis]


@dataclass
class FoldPaths:
    """A fold's fitted paths, filled by :func:`_fold_paths`: each margin's
    coefficients (n_alphas, n_columns) and intercepts, and the training
    rows' range that its test rows are clipped to (None without clipping)."""

    coefs: list = field(default_factory=list)
    intercepts: list = field(default_factory=list)
    clip_range: tuple | None = None

    def predictions(self, X_test, margin_index, alpha_index):
        """The predictions of test rows (as given, unclipped) by the fold's
        model at one margin and alpha."""
        if self.clip_range is not None:
            X_test = clipped(X_test, *self.clip_range)
        at = slice(alpha_index, alpha_index + 1)
        return _path_predictions(X_test, self.coefs[margin_index][at],
                                 self.intercepts[margin_index][at])[0]


def _fold_paths(X, lower, upper, weight, train, test, margins, alphas, l1_ratio, tol,
                max_iter, clip_features, signs, kept=None):
    """For each margin (``alphas[m]`` the path of ``margins[m]``), the test
    rows' predictions (n_alphas, n_test) of the path fitted on ``train``
    (with the columns' sign constraints ``signs``) and the alphas where the
    solver did not converge. A generator: one margin's predictions in
    memory at a time. ``kept``: a FoldPaths to fill."""
    X_train, X_test = X[train], X[test]
    clip_range = feature_range(X_train, weight[train]) if clip_features else None
    if clip_range is not None:
        X_test = clipped(X_test, *clip_range)
    if kept is not None:
        kept.clip_range = clip_range
    features = StandardisedFeatures(X_train, weight[train], overwrite_X=True)
    for margin, margin_alphas in zip(margins, alphas, strict=True):
        problem = StandardisedProblem(features, lower[train], upper[train], margin,
                                      weight[train], signs=signs)
        coefs, intercepts, _, missed = problem.path(margin_alphas, l1_ratio, tol, max_iter)
        if kept is not None:
            kept.coefs.append(coefs)
            kept.intercepts.append(intercepts)
        yield _path_predictions(X_test, coefs, intercepts), missed


def _fold_mse(X, lower, upper, weight, train, test, *path_args, keep_paths=False):
    """Test interval MSE of every margin and alpha of the paths fitted on
    ``train`` (NaN when every test row weighs 0), the alphas where the solver
    did not converge, and with ``keep_paths`` the fold's FoldPaths (else
    None)."""
    scores, unconverged = [], []
    kept = FoldPaths() if keep_paths else None
    weighed = weight[test].sum() > 0
    for predictions, missed in _fold_paths(X, lower, upper, weight, train, test,
                                           *path_args, kept=kept):
        scores.append(interval_scores(lower[test], upper[test], predictions,
                                      sample_weight=weight[test]) if weighed
                      else np.full(predictions.shape[0], np.nan))
        unconverged += missed
    return scores, unconverged, kept


@fill_doc
class IntervalLinearRegressionCV(_LinearPredictor):
    """IntervalLinearRegression with alpha and margin chosen by K-fold CV.

    For each margin, the alphas run down a log-spaced path from the smallest
    alpha that zeroes every coefficient (on all data); each fold fits the
    whole path with warm starts and scores every alpha by the test interval
    MSE, like scikit-learn's ``LassoCV``. The best (margin, alpha) is then
    refitted on all data.

    Parameters
    ----------
    l1_ratio : float, default=1.0
        Share of the l1 penalty, see :class:`IntervalLinearRegression`.
    n_alphas : int, default=100
        Alphas on each path (when ``alphas`` is None).
    eps : float, default=1e-3
        Ratio of the smallest to the largest alpha of the path.
    alphas : array-like of float, default=None
        Candidate alphas for every margin instead of the path.
    margins : array-like of float, default=None
        Candidate margins; None: 0 and 0.03, 0.1 and 0.3 times the standard
        deviation of the finite bounds.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``KFold``).
    tol, max_iter
        Solver settings, see :class:`IntervalLinearRegression`.
    clip_features : bool, default=True
        Clip each feature to its training range before predicting (in the
        folds too), see :class:`IntervalLinearRegression`.
    store_cv_predictions : bool, default=False
        Keep each row's prediction by the fold model that held it out, at
        the chosen alpha and margin (``cv_predictions_``): out-of-fold
        predictions for stacking. The folds keep their coefficient paths
        for it (every margin and alpha: 8 bytes a value, up to 128 MB);
        wider data solve each fold's path of the chosen margin again, down
        to the chosen alpha.
    n_jobs : int, default=None
        Parallel jobs over margins and folds (threads; numpy releases the
        GIL in its products).
    %(categorical_features)s
        Each categorical feature is one-hot encoded inside the model, see
        :class:`IntervalLinearRegression`.
    %(linear_constraints)s

    Attributes
    ----------
    alpha_ : float
        The chosen alpha.
    margin_ : float
        The chosen margin.
    alphas_ : ndarray of shape (n_margins, n_alphas)
        The alphas of each margin's path.
    margins_ : ndarray of shape (n_margins,)
        The candidate margins.
    mse_path_ : ndarray of shape (n_margins, n_alphas, n_folds)
        Test interval MSE of every margin, alpha and fold.
    coef_ : ndarray of shape (n_columns,)
    intercept_ : float
        The refitted model on all data, original scale of the columns (see
        :class:`IntervalLinearRegression`).
    %(column_ranges)s
    coef_names_ : ndarray of shape (n_columns,) of str
        The name of each column, see :class:`IntervalLinearRegression`.
    cv_predictions_ : ndarray of shape (n_samples,)
        With ``store_cv_predictions``: each row's prediction by the fold
        model at the chosen alpha and margin that held it out (the mean
        over its folds if several did, NaN if none did).
    %(features_in)s
    %(categorical_attributes)s

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalLinearRegressionCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 5))
    >>> y = np.column_stack([X[:, 0] - 0.5, X[:, 0] + 0.5])
    >>> model = IntervalLinearRegressionCV(n_alphas=20, cv=3).fit(X, y)
    >>> model.mse_path_.shape, bool(abs(model.coef_[0] - 1) < 0.2)
    ((4, 20, 3), True)
    """

    _parameter_constraints = {
        "l1_ratio": [Interval(Real, 0.0, 1.0, closed="both")],
        "n_alphas": [Interval(Integral, 1, None, closed="left")],
        "eps": [Interval(Real, 0.0, 1.0, closed="neither")],
        "alphas": ["array-like", None],
        "margins": ["array-like", None],
        "cv": ["cv_object"],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "clip_features": ["boolean"],
        "store_cv_predictions": ["boolean"],
        "n_jobs": [Integral, None],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "positive": ["boolean"],
        "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
    }
    _state_arrays = (*LINEAR_STATE_ARRAYS, "alphas_", "margins_", "mse_path_")
    _state_values = (*LINEAR_STATE_VALUES, "alpha_", "margin_")

    def __init__(self, *, l1_ratio=1.0, n_alphas=100, eps=1e-3, alphas=None, margins=None,
                 cv=None, tol=1e-4, max_iter=100_000, clip_features=True,
                 store_cv_predictions=False, n_jobs=None,
                 categorical_features="from_dtype", positive=False, monotonic_cst=None):
        set_init_parameters(self, locals())

    def _candidate_margins(self, lower, upper, sample_weight):
        if self.margins is None:
            spread = bounds_spread(lower, upper, sample_weight)
            return (np.r_[0.0, spread * np.array([0.03, 0.1, 0.3])] if spread
                    else np.zeros(1))
        margins = np.array([check_margin(m) for m in np.ravel(self.margins)])
        if margins.size == 0:
            raise ValueError("margins must not be empty.")
        return margins

    def _path_alphas(self, problem):
        if self.alphas is not None:
            alphas = np.sort(np.ravel(np.asarray(self.alphas, dtype=np.float64)))[::-1]
            if alphas.size == 0 or np.any(~np.isfinite(alphas)) or np.any(alphas < 0):
                raise ValueError("alphas must be non-negative finite numbers.")
            return alphas
        alpha_max = problem.alpha_max(self.l1_ratio)
        if alpha_max == 0.0:  # the constant fits: every alpha gives it
            return np.zeros(self.n_alphas)
        return np.geomspace(alpha_max, alpha_max * self.eps, self.n_alphas)

    def __mmit_fold_predictions__(self, cv, out_of_fold):
        """How one fit gives out-of-fold predictions of every row (the
        protocol of ``mmit._utils._protocols``): its own CV on the folds
        ``cv``, the fold models' predictions at the chosen alpha and
        margin."""
        return OneFitFoldPredictions({"cv": cv, "store_cv_predictions": True})

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Cross-validate the paths and refit the best model on all data.

        %(fit_parameters_numeric)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, for fitting and for the test MSE.

        %(fit_returns)s
        """
        X, lower, upper, sample_weight = self._training_columns(X, y, sample_weight)
        margins = self._candidate_margins(lower, upper, sample_weight)
        features = StandardisedFeatures(X, sample_weight)
        signs = column_signs(self)
        problems = [StandardisedProblem(features, lower, upper, margin, sample_weight,
                                        signs=signs)
                    for margin in margins]
        alphas = np.array([self._path_alphas(problem) for problem in problems])
        folds = list(check_cv(self.cv).split(X, np.column_stack([lower, upper])))
        check_fold_weights(folds, sample_weight)
        keep_paths = self.store_cv_predictions and (
            alphas.size * (X.shape[1] + 1) * len(folds) <= MAX_KEPT_PATH_VALUES)
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads")
        with single_threaded_blas():
            results = parallel(
                delayed(_fold_mse)(X, lower, upper, sample_weight, train, test, margins,
                                   alphas, self.l1_ratio, self.tol, self.max_iter,
                                   self.clip_features, signs, keep_paths=keep_paths)
                for train, test in folds)
            _warn_unconverged([a for _, unconverged, _ in results for a in unconverged],
                              self.max_iter)
            # (margins, alphas, folds)
            self.mse_path_ = np.array([scores for scores, _, _ in results]
                                      ).transpose(1, 2, 0)
            self.alphas_, self.margins_ = alphas, margins
            # a fold whose test rows all weigh 0 has no score
            mean = (np.nanmean(self.mse_path_, axis=2) if np.isnan(self.mse_path_).any()
                    else self.mse_path_.mean(axis=2))
            best_margin, best_alpha = np.unravel_index(np.argmin(mean), mean.shape)
            self.margin_ = float(margins[best_margin])
            self.alpha_ = float(alphas[best_margin, best_alpha])
            best_path = alphas[best_margin:best_margin + 1, :best_alpha + 1]
            coefs, intercepts, self.n_iter_, unconverged = problems[best_margin].path(
                best_path[0], self.l1_ratio, self.tol, self.max_iter)
            if keep_paths:  # the fold models that mse_path_ scored
                fold_predictions = [
                    kept.predictions(X[test], best_margin, best_alpha)
                    for (_, test), (_, _, kept) in zip(folds, results, strict=True)]
            elif self.store_cv_predictions:
                # the same fold models: the same warm-started path, down to
                # the chosen alpha
                fold_predictions = parallel(
                    delayed(_last_alpha_predictions)(
                        X, lower, upper, sample_weight, train, test, [self.margin_],
                        best_path, self.l1_ratio, self.tol, self.max_iter,
                        self.clip_features, signs)
                    for train, test in folds)
            if self.store_cv_predictions:
                self.cv_predictions_ = _mean_over_folds(
                    fold_predictions, [test for _, test in folds], X.shape[0])
        _warn_unconverged(unconverged, self.max_iter)
        self.coef_, self.intercept_ = coefs[-1], float(intercepts[-1])
        self._set_feature_range(X, sample_weight)
        return self


def _last_alpha_predictions(*fold_path_args):
    """The test rows' predictions at the last alpha of one margin's fold path
    (arguments of :func:`_fold_paths`)."""
    predictions, _ = next(_fold_paths(*fold_path_args))
    return predictions[-1]


def _mean_over_folds(predictions, tests, n_samples):
    """Each row's mean prediction over the folds that tested it (NaN if none)."""
    total, count = np.zeros(n_samples), np.zeros(n_samples)
    for fold_predictions, test in zip(predictions, tests, strict=True):
        np.add.at(total, test, fold_predictions)
        np.add.at(count, test, 1.0)
    with np.errstate(invalid="ignore"):
        return total / count
