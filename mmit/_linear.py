"""Max-margin linear interval regression (Rigaill et al. 2013, elastic net).

The model ``f(x) = x.w + b`` minimises the mean weighted squared hinge loss
of the distance outside the margin-shrunk intervals (the loss of the trees'
``squared_hinge``) plus ``alpha * (l1_ratio * |w|_1 + (1 - l1_ratio) / 2 *
|w|_2^2)``, on internally standardised features. The solver is FISTA
(accelerated proximal gradient) with adaptive restart: the smooth part has
a Lipschitz gradient, the l1 part a closed-form proximal step.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _solver
from ._base import IntervalRegressorMixin
from ._validation import check_interval_target, check_sample_weight

# power-iteration steps bounding the largest eigenvalue of the Hessian
_POWER_STEPS = 50


class _SquaredHingeProblem:
    """The smooth part of the objective on standardised features ``Z``."""

    def __init__(self, Z, lower, upper, margin, sample_weight):
        self.Z = Z
        self.lower, self.upper = _solver.hinge_positions(lower, upper, margin)
        self.weight = sample_weight / sample_weight.sum()

    def residuals(self, f):
        """Distances below the lower and above the upper breakpoints."""
        return np.maximum(self.lower - f, 0.0), np.maximum(f - self.upper, 0.0)

    def loss(self, f):
        below, above = self.residuals(f)
        return float(self.weight @ (below * below + above * above))

    def gradient(self, f):
        """Gradient of the loss with respect to the predictions ``f``."""
        below, above = self.residuals(f)
        return 2.0 * self.weight * (above - below)

    def lipschitz(self):
        """Upper bound of the curvature of the loss in (w, b)."""
        scaled = np.sqrt(2.0 * self.weight)[:, np.newaxis] * np.column_stack(
            [self.Z, np.ones(self.Z.shape[0])])
        vector = np.ones(scaled.shape[1]) / np.sqrt(scaled.shape[1])
        value = 0.0
        for _ in range(_POWER_STEPS):
            product = scaled.T @ (scaled @ vector)
            value = float(np.linalg.norm(product))
            if value == 0.0:
                return 1.0
            vector = product / value
        return 1.05 * value + 1e-12


def _soft_threshold(values, threshold):
    return np.sign(values) * np.maximum(np.abs(values) - threshold, 0.0)


def fit_path_point(problem, alpha, l1_ratio, coef, intercept, tol, max_iter, step):
    """FISTA from ``(coef, intercept)`` for one ``alpha``.

    Returns the coefficients, the intercept, the iterations and whether the
    relative change of the iterates fell below ``tol``.
    """
    Z = problem.Z
    l1, l2 = alpha * l1_ratio, alpha * (1.0 - l1_ratio)
    step = 1.0 / (1.0 / step + l2)
    x, b = coef.copy(), intercept
    y, c, t = x.copy(), b, 1.0
    objective = np.inf
    for iteration in range(1, max_iter + 1):
        g = problem.gradient(Z @ y + c)
        x_new = _soft_threshold(y - step * (Z.T @ g + l2 * y), step * l1)
        b_new = c - step * g.sum()
        new_objective = (problem.loss(Z @ x_new + b_new) + l1 * np.abs(x_new).sum()
                         + 0.5 * l2 * x_new @ x_new)
        if new_objective > objective:  # adaptive restart
            t = 1.0
            y, c = x.copy(), b
            objective = np.inf
            continue
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        momentum = (t - 1.0) / t_new
        change = np.sqrt(np.sum((x_new - x) ** 2) + (b_new - b) ** 2)
        size = np.sqrt(np.sum(x_new**2) + b_new**2)
        y = x_new + momentum * (x_new - x)
        c = b_new + momentum * (b_new - b)
        x, b, t, objective = x_new, b_new, t_new, new_objective
        if change <= tol * max(size, 1.0):
            return x, b, iteration, True
    return x, b, max_iter, False


class IntervalLinearRegression(IntervalRegressorMixin, BaseEstimator):
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
    tol : float, default=1e-6
        Stop when the relative change of the coefficients is below this.
    max_iter : int, default=10000
        Maximum iterations of the solver.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients on the original scale of the features.
    intercept_ : float
        Intercept on the original scale.
    n_iter_ : int
        Solver iterations.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X was a DataFrame with string columns.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalLinearRegression
    >>> X = np.arange(10.0).reshape(-1, 1)
    >>> y = np.column_stack([2 * X[:, 0] - 1, 2 * X[:, 0] + 1])
    >>> model = IntervalLinearRegression(alpha=0.0).fit(X, y)
    >>> bool(np.all(np.abs(model.predict(X) - 2 * X[:, 0]) <= 1))
    True
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0.0, None, closed="left")],
        "l1_ratio": [Interval(Real, 0.0, 1.0, closed="both")],
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False  # a linear model needs every feature
        return tags

    def __init__(self, alpha=1e-3, *, l1_ratio=1.0, margin=0.0, tol=1e-6, max_iter=10_000):
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.margin = margin
        self.tol = tol
        self.max_iter = max_iter

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the linear model on interval targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Lower and upper bound of each target interval (``-inf``/``+inf``
            allowed), or exact values.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : IntervalLinearRegression
            The fitted estimator.
        """
        if y is None:
            raise ValueError("IntervalLinearRegression requires y to be passed, but the "
                             "target y is None.")
        X = validate_data(self, X, dtype=np.float64)
        lower, upper = check_interval_target(y, X.shape[0])
        sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=False)
        weight = sample_weight / sample_weight.sum()
        mean = weight @ X
        scale = np.sqrt(weight @ (X - mean) ** 2)
        scale[scale == 0.0] = 1.0
        problem = _SquaredHingeProblem((X - mean) / scale, lower, upper, self.margin,
                                       sample_weight)
        predictions, _, _ = _solver.optimal_costs(lower, upper, float(self.margin),
                                                  "squared_hinge", sample_weight)
        start = float(predictions[-1]) if predictions.size else 0.0
        coef, intercept, self.n_iter_, converged = fit_path_point(
            problem, self.alpha, self.l1_ratio, np.zeros(X.shape[1]), start, self.tol,
            self.max_iter, 1.0 / problem.lipschitz())
        if not converged:
            warnings.warn(f"IntervalLinearRegression did not converge in {self.max_iter} "
                          "iterations; increase max_iter or tol.", ConvergenceWarning,
                          stacklevel=2)
        self.coef_ = coef / scale
        self.intercept_ = float(intercept - self.coef_ @ mean)
        return self

    def predict(self, X):
        """Predicted value of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_
