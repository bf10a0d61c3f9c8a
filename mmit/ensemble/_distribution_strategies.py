"""How a model makes its predictive distributions: the strategies
``MMITForest(distribution=...)`` takes (:class:`SpreadDistribution`,
:class:`LocationDistribution`, by name in ``DISTRIBUTIONS``), each fitting
a ``ForestDistribution`` (``_distributions``) from the training rows the
fit keeps (:class:`TrainingRows`).
``IntervalStackingRegressor`` makes its own with ``SpreadDistribution.grow``
from its out-of-fold predictions.

The distributions are made on the first request, from the training rows
the fit keeps (:class:`DeferredDistribution`): a forest never asked for
one costs no more to fit than without (the performance page).

Cost: "location" costs the leaves' estimates alone; "spread" grows a
second forest first (``tree_share`` of the trees, on at most ``max_draws``
bootstrap draws each), a fraction of the forest's own fit.
"""

import threading
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, validate_parameter_constraints

from .._utils._categorical import encoded
from ..tree._growing import MAX_SEED, TREE_PARAMETER_CONSTRAINTS
from ._bagging import out_of_bag_predictions
from ._distributions import ForestDistribution, leaf_samples


@dataclass(frozen=True)
class LocationDistribution:
    """``MMITForest(distribution=LocationDistribution())``, or "location":
    the training intervals in the forest's own leaves (Meinshausen's
    quantile regression forest; the leaves' NPMLEs averaged for censored
    rows). Nothing more to fit; its spread follows only what the splits
    chosen for the location see.
    """

    def fit(self, forest, rows):
        """The ForestDistribution of a fitted ``forest`` and its
        ``TrainingRows``."""
        return ForestDistribution("location", forest, leaf_samples(
            forest, rows.X, rows.lower, rows.upper, rows.sample_weight))


@dataclass(frozen=True)
class SpreadDistribution:
    """``MMITForest(distribution=SpreadDistribution(...))``, or "spread": the
    forest's prediction plus its out-of-bag residual intervals, in the
    leaves of a second forest grown on the residuals' sizes ``|y - f(x)|``,
    so that the spread follows the features that change it. Needs
    ``bootstrap`` (out-of-bag residuals).

    The defaults grow a second forest of half as many trees,
    feature-subsampled, of leaves of at least 40 rows, each on at most
    100 000 bootstrap draws: a fraction of the forest's own fit, paid on
    the first request (:ref:`performance`; how the defaults were chosen:
    :ref:`defaults`).

    Parameters
    ----------
    tree_share : float, default=0.5
        Trees of the second forest, as a share of the forest's (at least 1).
    min_samples_leaf : int or float, default=40
        Its trees' ``min_samples_leaf``.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Its trees' ``max_features``.
    max_draws : int or None, default=100_000
        Bootstrap draws of each of its trees at most (its ``max_samples``
        when the forest draws more); None: as many as the forest's.
    random_state : int or None, default=None
        The seed of the second forest; None: drawn from the model's own
        (a forest's first tree's seed, a stack's ``random_state``).

    Examples
    --------
    >>> from mmit import MMITForest, SpreadDistribution
    >>> forest = MMITForest(distribution=SpreadDistribution(min_samples_leaf=60))
    >>> forest.distribution.min_samples_leaf
    60
    """

    tree_share: float = 0.5
    min_samples_leaf: int | float = 40
    max_features: int | float | str | None = "sqrt"
    max_draws: int | None = 100_000
    random_state: int | None = None

    _parameter_constraints = {
        "tree_share": [Interval(Real, 0.0, None, closed="neither")],
        "min_samples_leaf": TREE_PARAMETER_CONSTRAINTS["min_samples_leaf"],
        "max_features": TREE_PARAMETER_CONSTRAINTS["max_features"],
        "max_draws": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": [Interval(Integral, 0, MAX_SEED, closed="left"), None],
    }

    def __post_init__(self):
        validate_parameter_constraints(
            self._parameter_constraints,
            {name: getattr(self, name) for name in self._parameter_constraints},
            caller_name=type(self).__name__)

    def fit(self, forest, rows):
        """The ForestDistribution of a fitted ``forest`` and its
        ``TrainingRows``: grows the second forest."""
        seed = (self.random_state if self.random_state is not None else
                int(np.random.default_rng(forest.estimators_[0].random_state).integers(
                    MAX_SEED)))
        return self.grow(forest, rows, rows.out_of_bag_predictions(forest),
                         len(forest.estimators_), forest.loss, forest.n_jobs, seed)

    def grow(self, encoder, rows, location, n_trees, loss, n_jobs, seed):
        """The ForestDistribution of a model whose out-of-sample predictions
        of its ``TrainingRows`` are ``location`` (NaN where none): the second
        forest (``tree_share`` of ``n_trees`` trees, ``loss``, ``n_jobs``,
        seeded by ``seed``) grown on the residuals' sizes, the rows encoded as
        the fitted MMITForest ``encoder`` encodes them."""
        lower, upper, sample_weight = rows.lower, rows.upper, rows.sample_weight
        # residual intervals of the rows with an out-of-sample prediction
        held = ~np.isnan(location) & (sample_weight > 0)
        if not held.any():
            raise ValueError("distribution='spread' needs rows out of bag: use more "
                             "samples or more trees, or distribution='location'.")
        shift = np.where(held, location, 0.0)
        residual_lower = np.where(held, lower - shift, 0.0)
        residual_upper = np.where(held, upper - shift, 0.0)
        # the residuals' sizes: |y - f| over y in the interval
        size_lower = np.where((residual_lower <= 0) & (residual_upper >= 0), 0.0,
                              np.minimum(np.abs(residual_lower), np.abs(residual_upper)))
        size_upper = np.maximum(np.abs(residual_lower), np.abs(residual_upper))
        weight = np.where(held, sample_weight, 0.0)
        capped = self.max_draws is not None and rows.n_draws > self.max_draws
        spread = type(encoder)(
            max(1, round(self.tree_share * n_trees)),
            min_samples_leaf=self.min_samples_leaf, max_features=self.max_features,
            max_samples=self.max_draws if capped else None, loss=loss,
            n_jobs=n_jobs, random_state=seed, distribution=None)
        # the rows as the encoder encoded them, with its categories
        spread.fit(encoded(encoder, rows.X), np.column_stack([size_lower, size_upper]),
                   weight)
        if hasattr(encoder, "feature_names_in_"):  # it reads the frames the model takes
            spread.feature_names_in_ = encoder.feature_names_in_
        return ForestDistribution("spread", spread, leaf_samples(
            spread, rows.X, residual_lower, residual_upper, weight),
            np.where(held, location, np.nan))


#: The distributions ``MMITForest(distribution=...)`` names by a string.
DISTRIBUTIONS = {"spread": SpreadDistribution(), "location": LocationDistribution()}


@dataclass(frozen=True)
class TrainingRows:
    """What a forest's fit keeps to make its distributions on request:
    validated ``X`` (a copy, float64: C-contiguous, or a CSR matrix), the bounds, the
    sample weights, the draws per bootstrap sample (None without bootstrap)
    and the out-of-bag predictions when the fit made them."""

    X: np.ndarray | sp.csr_matrix
    lower: np.ndarray
    upper: np.ndarray
    sample_weight: np.ndarray
    n_draws: int | None
    out_of_bag: np.ndarray | None

    def out_of_bag_predictions(self, forest):
        """The forest's out-of-bag predictions of the rows (NaN where none)."""
        if self.out_of_bag is not None:
            return self.out_of_bag
        return out_of_bag_predictions(forest, self.X, self.sample_weight)


class DeferredDistribution:
    """A forest's predictive distributions, made from its training rows on the
    first request (:meth:`fitted`), once, whichever thread asks first.

    Parameters
    ----------
    strategy : SpreadDistribution, LocationDistribution or "auto"
        "auto": "spread" when some rows of positive weight are out of bag
        (``bootstrap``), else "location".
    rows : TrainingRows
    """

    def __init__(self, strategy, rows):
        self.strategy = strategy
        self.rows = rows
        self._fitted = None
        self._lock = threading.Lock()

    def fitted(self, forest):
        """The ForestDistribution, made now if not yet (the training rows are
        then released)."""
        with self._lock:
            if self._fitted is None:
                self._fitted = self._resolved(forest).fit(forest, self.rows)
                self.rows = None
            return self._fitted

    def _resolved(self, forest):
        if self.strategy != "auto":
            return self.strategy
        if forest.bootstrap:
            out_of_bag = self.rows.out_of_bag_predictions(forest)
            if np.any(~np.isnan(out_of_bag) & (self.rows.sample_weight > 0)):
                return DISTRIBUTIONS["spread"]
        return DISTRIBUTIONS["location"]

    def __getstate__(self):
        with self._lock:
            return {"strategy": self.strategy, "rows": self.rows, "fitted": self._fitted}

    def __setstate__(self, state):
        self.strategy = state["strategy"]
        self.rows = state["rows"]
        self._fitted = state["fitted"]
        self._lock = threading.Lock()
