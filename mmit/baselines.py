"""Baselines for interval regression, with the same API as the mmit models.

- :class:`ConstantRegressor` predicts one value for every sample.
- :class:`IntervalCART` is scikit-learn's regression tree on the
  Interval-CART transform of the targets (Drouin et al. 2017): every finite
  bound becomes a training row whose target is the bound moved inside the
  interval by the margin.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils._param_validation import Interval, StrOptions

from ._loss._loss import LOSSES, breakpoints
from ._utils._base import IntervalRegressorMixin, set_init_parameters
from ._utils._methods import fit_method, predict_method
from ._utils._sparse import dense_rows
from ._utils._validation import validate_training_data

__all__ = ["ConstantRegressor", "IntervalCART", "interval_cart_rows"]


def interval_cart_rows(lower, upper, margin):
    """The Interval-CART transform: one regression row per finite bound.

    Returns ``(rows, targets)``: the sample index of each row (lower bounds
    first) and its target, ``lower + margin`` or ``upper - margin`` (exact
    values use margin 0).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.baselines import interval_cart_rows
    >>> interval_cart_rows(np.array([0.0, 2.0]), np.array([1.0, np.inf]), 0.25)
    (array([0, 1, 0]), array([0.25, 2.25, 0.75]))
    """
    lower_target, upper_target = breakpoints(lower, upper, margin)
    has_lower, has_upper = np.isfinite(lower_target), np.isfinite(upper_target)
    rows = np.r_[np.flatnonzero(has_lower), np.flatnonzero(has_upper)]
    return rows, np.r_[lower_target[has_lower], upper_target[has_upper]]


class ConstantRegressor(IntervalRegressorMixin, BaseEstimator):
    """Predicts the constant with the least total hinge loss on the training set.

    This is a tree with a single leaf: the baseline every model should beat.

    Parameters
    ----------
    margin : float, default=0.0
        Margin of the hinge loss (exact values use 0).
    loss : {"linear_hinge", "squared_hinge"}, default="linear_hinge"
        Hinge applied to the distance outside the shrunk interval.

    Attributes
    ----------
    constant_ : float
        The prediction.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> from mmit.baselines import ConstantRegressor
    >>> model = ConstantRegressor().fit([[0], [1], [2]], [[0, 1], [0.5, 2], [1, 3]])
    >>> model.predict([[5]])
    array([1.])
    """

    _parameter_constraints = {
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
    }

    def __init__(self, *, margin=0.0, loss="linear_hinge"):
        set_init_parameters(self, locals())

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Find the best constant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Only its shape is used.
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Target intervals, or exact values.
        sample_weight : array-like of shape (n_samples,), default=None

        %(fit_returns)s
        """
        _, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        self.constant_ = LOSSES[self.loss].optimal_constant(lower, upper, self.margin,
                                                            sample_weight)
        return self

    @predict_method
    def predict(self, X):
        """The constant, once per sample.

        %(predict)s
        """
        return np.full(self._validate_X_predict(X).shape[0], self.constant_)


class IntervalCART(IntervalRegressorMixin, BaseEstimator):
    """scikit-learn's regression tree fitted on the Interval-CART transform.

    Each finite bound of a training interval becomes one regression row
    with the same features: a lower bound ``l`` targets ``l + margin``, an
    upper bound ``u`` targets ``u - margin`` (exact values use margin 0);
    infinite bounds give no row. This is the baseline of Drouin et al.
    (2017), and what a user without interval-aware trees would fit.

    Parameters
    ----------
    margin : float, default=0.0
        How far inside the interval the bound targets move.
    max_depth : int, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    ccp_alpha : float, default=0.0
        Parameters of the :class:`~sklearn.tree.DecisionTreeRegressor`.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    tree_ : DecisionTreeRegressor
        The fitted scikit-learn tree.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.baselines import IntervalCART
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([[0.0, 1.0], [0.0, 1.0], [5.0, np.inf], [5.0, 6.0]])
    >>> IntervalCART(max_depth=1).fit(X, y).predict([[0.0], [3.0]])
    array([0.5       , 5.33333333])
    """

    _parameter_constraints = {
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_split": [Interval(Integral, 2, None, closed="left"),
                              Interval(Real, 0.0, 1.0, closed="right")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left"),
                             Interval(Real, 0.0, 1.0, closed="neither")],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, margin=0.0, max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, ccp_alpha=0.0, random_state=None):
        set_init_parameters(self, locals())

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Fit the regression tree on one row per finite bound.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The tree is fitted on the transform's rows as a dense array, a
            sparse X's too: it is then the dense fit's tree (scikit-learn's
            split search on sparse columns orders a node's rows otherwise,
            so its sums of fractional weights, its leaf values and its
            choice between tied splits differ, and it refuses NaN).
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Target intervals, or exact values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample, given to each of its rows.

        %(fit_returns)s
        """
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        rows, targets = interval_cart_rows(lower, upper, float(self.margin))
        if rows.size == 0:
            raise ValueError("IntervalCART needs at least one finite bound.")
        self.tree_ = DecisionTreeRegressor(
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf, ccp_alpha=self.ccp_alpha,
            random_state=self.random_state,
        ).fit(dense_rows(X, rows), targets, sample_weight=sample_weight[rows])
        return self

    @predict_method
    def predict(self, X):
        """Predictions of the regression tree.

        %(predict)s
        """
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)
