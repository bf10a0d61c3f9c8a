"""Predictive distributions from a forest's leaves: what ``MMITForest(distribution=...)``
takes (:class:`SpreadDistribution`, :class:`LocationDistribution`), what they
make (:class:`ForestDistribution`), and the estimators' methods that read
them (:class:`PredictiveDistributionMixin`, :class:`OutOfBagDistributionMixin`).
``IntervalStackingRegressor`` makes its own with ``SpreadDistribution.grow``
from its out-of-fold predictions.

Each tree puts a query ``x`` in a leaf, whose training rows each weigh
their weight in the tree's sample over the leaf's total. The predictive
distribution at ``x`` is the average over the trees of the weighted
nonparametric maximum-likelihood estimate (NPMLE, ``_turnbull``) of the
intervals of the rows in x's leaf. With exact values it is the weighted
empirical distribution under Meinshausen's quantile regression forest
weights ``w_i(x)`` = the mean over the trees of (the weight of row i in the
tree's sample, if it lies in x's leaf) / (the leaf's total weight); with
censored ones every leaf's estimate puts mass only where its intervals
allow, and the trees' estimates are averaged as random survival forests
average theirs. Quantiles and CDF values are read from it; out of bag,
each training row uses only the trees whose sample left it out.

Averaging the leaves' estimates rather than estimating once per query
under the pooled weights ``w_i(x)`` (the two agree with exact values):
every leaf's estimate is made once, so a query costs no iteration; the
two are as accurate, and the average's intervals cover closer to their
nominal level on censored data (the accuracy page of the docs).

The distributions are made on the first request, from the training rows
the fit keeps (:class:`DeferredDistribution`): a forest never asked for
one costs no more to fit than without (the performance page).

Cost: every leaf's estimate on first use, O(m log m + iterations * m) for
a leaf of m rows, on threads; then per query O(T) leaf look-ups and one
sweep over its leaves' Turnbull intervals, ordered by the ranks of their
ends: O(intervals + distinct values / 64); queries run in parallel
threads, each with O(distinct values) working memory.
"""

import functools
import threading
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.utils._param_validation import Interval, validate_parameter_constraints
from sklearn.utils.validation import check_is_fitted

from .._utils._categorical import encoded
from .._utils._sparse import by_row_blocks, row_blocks
from ..tree._additive import tree_leaves
from ..tree._growing import MAX_SEED, TREE_PARAMETER_CONSTRAINTS
from ._bagging import out_of_bag_predictions, tree_samples
from ._forest_readout import forest_cdf_sums, forest_readout
from ._turnbull import leaf_estimates

# The NPMLE stops when the mean log-likelihood is within this of its maximum
NPMLE_TOLERANCE = 1e-6
NPMLE_MAX_ITER = 10_000


class LeafSamples:
    """Where a forest's training rows fell, and their intervals: what its
    predictive distributions are made of.

    Parameters
    ----------
    leaves : ndarray of shape (n_samples, n_trees), int32
        The leaf of each training row in each tree.
    node_counts : ndarray of shape (n_trees,)
        The number of nodes of each tree.
    lower, upper : ndarray of shape (n_samples,)
        The training intervals' bounds.
    tree_weights : TreeSamples
        ``tree_weights(t)``: the weights of the training rows in tree t's
        sample (bootstrap counts or sample weights), regenerated from the
        trees' seeds when needed rather than stored.
    """

    def __init__(self, leaves, node_counts, lower, upper, tree_weights):
        self.leaves = np.ascontiguousarray(leaves, dtype=np.int32)
        self.node_counts = np.asarray(node_counts, dtype=np.int64)
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.tree_weights = tree_weights
        self._estimates = None

    @property
    def n_trees(self):
        return self.leaves.shape[1]

    def _leaf_rows(self):
        """Every tree's leaves' rows, with their weights over the leaf's total
        weight, as CSR arrays (one ``indptr`` segment of node_count + 1
        entries per tree, from ``offsets``)."""
        offsets = np.concatenate([[0], np.cumsum(self.node_counts + 1)[:-1]])
        indptr = np.empty(int(np.sum(self.node_counts + 1)), dtype=np.int64)
        rows, weights = [], []
        start = 0
        for t, n_nodes in enumerate(self.node_counts):
            weight = self.tree_weights(t)
            held = np.flatnonzero(weight > 0)
            leaf = self.leaves[held, t]
            order = held[np.argsort(leaf, kind="stable")]
            totals = np.bincount(leaf, weights=weight[held], minlength=n_nodes)
            segment = indptr[offsets[t]:offsets[t] + n_nodes + 1]
            segment[0] = start
            segment[1:] = start + np.cumsum(np.bincount(leaf, minlength=n_nodes))
            rows.append(order.astype(np.int32))
            weights.append(weight[order] / totals[self.leaves[order, t]])
            start += held.size
        return (offsets.astype(np.int64), indptr,
                np.concatenate(rows) if rows else np.empty(0, np.int32),
                np.concatenate(weights) if weights else np.empty(0))

    def _leaf_estimates(self, n_threads):
        """Every leaf's NPMLE (``leaf_estimates``), made on first use: the
        trees' ``offsets`` into ``indptr``, whose segments hold each leaf's
        Turnbull intervals of positive mass (their ends as ranks among the
        distinct ``values`` of the bounds) and masses."""
        if self._estimates is None:
            offsets, indptr, rows, weights = self._leaf_rows()
            left, right, mass, count = leaf_estimates(indptr, rows, weights, self.lower,
                                                      self.upper, NPMLE_TOLERANCE,
                                                      NPMLE_MAX_ITER, n_threads)
            sizes = np.diff(indptr)
            kept = (np.arange(left.size) - np.repeat(indptr[:-1], sizes)
                    < np.repeat(count, sizes))
            values = np.unique(np.concatenate([self.lower, self.upper]))
            self._estimates = (
                offsets, np.concatenate([[0], np.cumsum(count)]).astype(np.int64),
                np.searchsorted(values, left[kept]).astype(np.int32),
                np.searchsorted(values, right[kept]).astype(np.int32),
                np.ascontiguousarray(mass[kept]), values)
        return self._estimates

    def readout(self, leaves, shift, points, quantiles, n_threads):
        """Quantiles at the levels ``points`` (``quantiles`` True) or CDF values
        at the thresholds ``points`` of each query whose leaf in tree t is
        ``leaves[:, t]`` (-1: tree t left out): the average over those trees
        of its leaves' estimates, moved by ``shift``; NaN without any."""
        offsets, indptr, left_rank, right_rank, mass, values = self._leaf_estimates(
            n_threads)
        return forest_readout(np.ascontiguousarray(leaves, dtype=np.int64), offsets,
                              indptr, left_rank, right_rank, mass, values,
                              np.ascontiguousarray(shift, dtype=np.float64),
                              np.ascontiguousarray(points, dtype=np.float64),
                              quantiles, n_threads)

    def cdf_sums(self, leaves, shift, thresholds, spans, n_threads):
        """``sum_k spans[k] * F(thresholds[k])`` for the CDF F of each query
        (as ``readout`` reads it, moved by ``shift``), without the array of
        CDF values (``forest_cdf_sums``); NaN without any tree."""
        offsets, indptr, left_rank, right_rank, mass, values = self._leaf_estimates(
            n_threads)
        return forest_cdf_sums(np.ascontiguousarray(leaves, dtype=np.int64), offsets,
                               indptr, np.column_stack([values[left_rank],
                                                        values[right_rank], mass]),
                               np.ascontiguousarray(shift, dtype=np.float64),
                               np.ascontiguousarray(thresholds, dtype=np.float64),
                               np.ascontiguousarray(spans, dtype=np.float64), n_threads)

    def out_of_bag_leaves(self):
        """Each training row's leaves in the trees whose sample left it out
        (-1 for the others)."""
        leaves = self.leaves.astype(np.int64)
        for t in range(self.n_trees):
            leaves[self.tree_weights(t) > 0, t] = -1
        return leaves


def leaf_samples(forest, X, lower, upper, sample_weight):
    """Where the training rows ``X`` (validated, of ``sample_weight``) fall in
    every tree of the fitted ``forest``, with their intervals
    (:class:`LeafSamples`)."""
    leaves = np.empty((X.shape[0], len(forest.estimators_)), dtype=np.int32)
    for rows, block in row_blocks(X):
        for t, tree in enumerate(forest.estimators_):
            leaves[rows, t] = tree.tree_.apply(block)
    return samples_in_leaves(forest, leaves, lower, upper, sample_weight)


def samples_in_leaves(forest, leaves, lower, upper, sample_weight):
    """:class:`LeafSamples` of the training rows of the fitted ``forest``
    whose leaf in every tree is given (``leaves``)."""
    return LeafSamples(leaves, [tree.tree_.node_count for tree in forest.estimators_],
                       lower, upper, tree_samples(forest, sample_weight))


class ForestDistribution:
    """The predictive distributions of a fitted forest.

    ``kind="location"``: the training intervals in the forest's own leaves
    (Meinshausen's quantile regression forest; the leaves' NPMLEs averaged
    for censored rows). ``kind="spread"``: the forest's prediction plus its
    out-of-bag residual intervals ``[lower - f_oob(x), upper - f_oob(x)]``
    in the leaves of a second forest (``weighting``) grown on the
    residuals' sizes ``|y - f_oob(x)|``: its splits follow the features
    that change the spread, which the forest's own splits (chosen for the
    location) miss.

    Parameters
    ----------
    kind : {"location", "spread"}
    weighting : MMITForest
        The forest whose leaves weigh the training rows.
    samples : LeafSamples
        Its training rows' leaves, with the intervals distributed (the
        targets for "location", the residuals for "spread").
    out_of_bag_location : ndarray of shape (n_samples,) or None
        "spread": the forest's out-of-bag predictions of its training rows.
    """

    def __init__(self, kind, weighting, samples, out_of_bag_location=None):
        self.kind = kind
        self.weighting = weighting
        self.samples = samples
        self.out_of_bag_location = out_of_bag_location

    def fitted(self, forest):
        """Itself (a distribution read from a model file is made already)."""
        return self

    def _export_state(self, writer):
        """The training rows' leaves, intervals and weights, and the forest
        that weighs them when it is not the forest itself, for a model file
        (``mmit._persistence._model_files``)."""
        writer.array("distribution_leaves", self.samples.leaves)
        writer.array("distribution_lower", self.samples.lower)
        writer.array("distribution_upper", self.samples.upper)
        writer.array("distribution_weight", self.samples.tree_weights.sample_weight)
        state = {"kind": self.kind}
        if self.kind == "spread":
            writer.array("distribution_location", self.out_of_bag_location)
            state["weighting"] = writer.model("spread", self.weighting)
        return state

    @classmethod
    def _from_state(cls, forest, state, reader):
        """The distribution of ``forest`` read from a model file, checked."""
        kind = state["kind"]
        if kind not in ("location", "spread"):
            raise ValueError(f"unknown distribution {kind!r}")
        weighting = (forest if kind == "location"
                     else reader.model("spread", state["weighting"]))
        if weighting.n_features_in_ != forest.n_features_in_:
            raise ValueError("the spread forest has the wrong number of features")
        leaves = reader.array("distribution_leaves", np.int32,
                              (None, len(weighting.estimators_)))
        n_samples = leaves.shape[0]
        lower, upper, weight = (reader.array(f"distribution_{name}", np.float64,
                                             (n_samples,))
                                for name in ("lower", "upper", "weight"))
        node_counts = np.array([tree.tree_.node_count for tree in weighting.estimators_])
        if (np.any(leaves < 0) or np.any(leaves >= node_counts)
                or np.any(np.isnan(lower) | np.isnan(upper) | (lower > upper))
                or np.any(~(weight >= 0)) or not np.any(weight > 0)):
            raise ValueError("the predictive distributions' arrays are inconsistent")
        location = (reader.array("distribution_location", np.float64, (n_samples,))
                    if kind == "spread" else None)
        return cls(kind, weighting,
                   samples_in_leaves(weighting, leaves, lower, upper, weight), location)

    def _queries(self, X, location, n_threads):
        """The leaves of ``X`` as ``weighting`` takes it (validated: float64,
        C-contiguous, encoded) in its trees (found on ``n_threads`` threads),
        and how far each query's distribution moves: the model's predictions
        ``location`` ("spread"; None for "location")."""
        leaves = tree_leaves([tree.tree_ for tree in self.weighting.estimators_], X,
                             n_threads)
        return leaves, location if self.kind == "spread" else np.zeros(X.shape[0])

    def readout(self, X, location, points, quantiles, n_threads):
        """Quantiles or CDF values (see ``LeafSamples.readout``) of the queries
        ``X`` of predictions ``location`` (see ``_queries``)."""
        return self.samples.readout(*self._queries(X, location, n_threads), points,
                                    quantiles, n_threads)

    def cdf_sums(self, X, location, thresholds, spans, n_threads):
        """``sum_k spans[k] * F(thresholds[k])`` for the CDF F of each query
        (see ``LeafSamples.cdf_sums``, ``_queries``)."""
        return self.samples.cdf_sums(*self._queries(X, location, n_threads), thresholds,
                                     spans, n_threads)

    def out_of_bag_readout(self, points, quantiles, n_threads):
        """The same for the training rows, out of bag (NaN for a row in every
        tree's sample, or without an out-of-bag prediction)."""
        shift = (self.out_of_bag_location if self.kind == "spread"
                 else np.zeros(self.samples.leaves.shape[0]))
        out = self.samples.readout(self.samples.out_of_bag_leaves(), np.nan_to_num(shift),
                                   points, quantiles, n_threads)
        out[np.isnan(shift)] = np.nan
        return out


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


def check_levels(quantiles):
    """Quantile levels as a 1-D float array in [0, 1] (ValueError otherwise)."""
    levels = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(f"quantiles must be a non-empty 1-D list of levels, got "
                         f"{quantiles!r}.")
    if not np.all((levels >= 0.0) & (levels <= 1.0)):
        raise ValueError(f"quantiles must lie in [0, 1], got {quantiles!r}.")
    return levels


def interval_levels(coverage):
    """The quantile levels of a central interval of ``coverage`` in (0, 1)."""
    if isinstance(coverage, bool) or not isinstance(coverage, (int, float, np.floating)):
        raise TypeError(f"coverage must be a float in (0, 1), got {coverage!r}.")
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must lie in (0, 1), got {coverage!r}.")
    return np.array([(1.0 - coverage) / 2.0, (1.0 + coverage) / 2.0])


def check_thresholds(thresholds, name="thresholds"):
    """Thresholds (or times: ``name``) as a 1-D float array without NaN
    (ValueError otherwise)."""
    values = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if values.ndim != 1 or values.size == 0 or np.isnan(values).any():
        raise ValueError(f"{name} must be a non-empty 1-D list of numbers, got "
                         f"{thresholds!r}.")
    return values


def check_time_grid(times, log, name="times"):
    """Times as a 1-D float array, increasing, finite, from a non-negative
    (with ``log``: positive) first time (ValueError naming ``name``
    otherwise)."""
    values = check_thresholds(times, name)
    if (np.any(np.diff(values) <= 0) or values[0] < 0 or (log and values[0] == 0)
            or not np.isfinite(values[-1])):
        first = "positive" if log else "non-negative"
        raise ValueError(f"{name} must increase from a {first} first time and be "
                         f"finite, got {times!r}.")
    return values


class PredictiveDistributionMixin:
    """Quantiles, intervals, CDFs and survival curves of a model's predictive
    distributions, at new rows: for a model holding ``distribution_`` (a
    forest, a stack), whose ``_distribution_query(X, distribution)`` gives X
    as the distribution's weighting forest takes it and the model's
    predictions there."""

    def _distribution(self):
        check_is_fitted(self)
        if getattr(self, "distribution_", None) is None:
            raise ValueError(f"this {type(self).__name__} has no predictive distributions "
                             "(fitted with distribution=None, or loaded from a model "
                             "file written without them): fit it with a distribution.")
        return self.distribution_.fitted(self)

    def _readout(self, X, points, quantiles):
        distribution = self._distribution()
        X, location = self._distribution_query(X, distribution)
        return distribution.readout(X, location, points, quantiles,
                                    effective_n_jobs(self.n_jobs))

    @by_row_blocks
    def predict_restricted_mean(self, X, times, *, log=False):
        """Restricted mean survival times: the area from 0 to ``times[-1]``
        under the survival step function that :meth:`predict_survival` gives
        at ``times`` (1 before the first time), for a model fitted on the
        targets of :func:`mmit.intervals_from_survival` (with the same
        ``log``).

        ``times[0] + sum_k S(times[k]) * (times[k + 1] - times[k])``, computed
        from the leaves' estimates without the curves: in O(trees' items *
        log(n_times)) time a sample and O(n_samples) memory, where the curves
        take O(n_samples * n_times).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        times : array-like of shape (n_times,)
            Increasing finite non-negative times (positive with ``log``).
        log : bool, default=False
            Whether the targets were made with ``log=True`` (log times).

        Returns
        -------
        time : ndarray of shape (n_samples,)

        Examples
        --------
        >>> import numpy as np
        >>> from mmit import MMITForest, intervals_from_survival
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(0, 1, size=(200, 2))
        >>> time = np.exp(1 + X[:, 0] + 0.3 * rng.normal(size=200))
        >>> y = intervals_from_survival(rng.random(200) < 0.7, time, log=True)
        >>> forest = MMITForest(20, random_state=0).fit(X, y)
        >>> times = np.sort(time)
        >>> mean = forest.predict_restricted_mean(X[:3], times, log=True)
        >>> curves = forest.predict_survival(X[:3], times, log=True)
        >>> bool(np.allclose(mean, times[0] + curves[:, :-1] @ np.diff(times)))
        True
        """
        times = check_time_grid(times, log)
        distribution = self._distribution()
        X, location = self._distribution_query(X, distribution)
        thresholds = np.log(times[:-1]) if log else times[:-1]
        return times[-1] - distribution.cdf_sums(X, location, thresholds, np.diff(times),
                                                 effective_n_jobs(self.n_jobs))

    @by_row_blocks
    def predict_quantiles(self, X, quantiles=(0.1, 0.5, 0.9)):
        """Quantiles of each sample's predictive distribution.

        The distribution is the average over a forest's trees of the
        weighted nonparametric maximum-likelihood estimates of training
        intervals in the sample's leaves (see the estimator's
        ``distribution``; with exact values, a weighted empirical
        distribution): a quantile falls where the CDF reaches the level,
        spreading the mass of a bounded Turnbull interval evenly over it;
        it is -inf or +inf where the level falls in mass that the data
        place only beyond their last finite bound (censored rows).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        quantiles : array-like of shape (n_quantiles,), default=(0.1, 0.5, 0.9)
            Levels in [0, 1].

        Returns
        -------
        quantiles : ndarray of shape (n_samples, n_quantiles)
            Non-decreasing along each row.

        Examples
        --------
        >>> from mmit import MMITForest
        >>> from mmit.datasets import load_dataset
        >>> data = load_dataset("servo")
        >>> forest = MMITForest(20, random_state=0).fit(data.data, data.target)
        >>> quantiles = forest.predict_quantiles(data.data[:4], [0.1, 0.5, 0.9])
        >>> quantiles.shape, bool((quantiles[:, 0] <= quantiles[:, 2]).all())
        ((4, 3), True)
        """
        return self._readout(X, check_levels(quantiles), True)

    @by_row_blocks
    def predict_interval(self, X, coverage=0.9):
        """A central prediction interval of each sample: the quantiles at
        ``(1 - coverage) / 2`` and ``(1 + coverage) / 2``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        coverage : float, default=0.9
            Probability of the interval, in (0, 1).

        Returns
        -------
        interval : ndarray of shape (n_samples, 2)
            Lower and upper ends.
        """
        return self._readout(X, interval_levels(coverage), True)

    @by_row_blocks
    def predict_cdf(self, X, thresholds):
        """P(value <= threshold) under each sample's predictive distribution.

        For data made with :func:`mmit.intervals_from_survival`,
        :meth:`predict_survival` gives one minus it, each sample's survival
        curve.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        thresholds : array-like of shape (n_thresholds,)

        Returns
        -------
        cdf : ndarray of shape (n_samples, n_thresholds)
            In [0, 1], non-decreasing in the threshold.
        """
        return self._readout(X, check_thresholds(thresholds), False)

    @by_row_blocks
    def predict_survival(self, X, times, *, log=False):
        """Survival curves: P(time > t) under each sample's predictive
        distribution, for a model fitted on the targets of
        :func:`mmit.intervals_from_survival` (with the same ``log``).

        ``1 - predict_cdf(X, times)``, at ``np.log(times)`` with ``log``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        times : array-like of shape (n_times,)
            Times (positive with ``log``).
        log : bool, default=False
            Whether the targets were made with ``log=True`` (log times).

        Returns
        -------
        survival : ndarray of shape (n_samples, n_times)
            In [0, 1], non-increasing in the time.

        Examples
        --------
        >>> import numpy as np
        >>> from mmit import MMITForest, intervals_from_survival
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(0, 1, size=(200, 2))
        >>> time = np.exp(1 + X[:, 0] + 0.3 * rng.normal(size=200))
        >>> y = intervals_from_survival(rng.random(200) < 0.7, time, log=True)
        >>> forest = MMITForest(20, random_state=0).fit(X, y)
        >>> curves = forest.predict_survival(X[:3], [1.0, 3.0, 10.0], log=True)
        >>> curves.shape, bool(np.all(np.diff(curves, axis=1) <= 0))
        ((3, 3), True)
        """
        times = check_thresholds(times, "times")
        if log:
            if np.any(times <= 0):
                raise ValueError("log=True needs positive times.")
            times = np.log(times)
        return 1.0 - self._readout(X, times, False)



class OutOfBagDistributionMixin:
    """The predictive distributions of a forest's training rows, out of bag
    (with :class:`PredictiveDistributionMixin`)."""

    def _out_of_bag_readout(self, points, quantiles):
        return self._distribution().out_of_bag_readout(points, quantiles,
                                                       effective_n_jobs(self.n_jobs))

    def oob_quantiles(self, quantiles=(0.1, 0.5, 0.9)):
        """:meth:`predict_quantiles` of each training sample out of bag (from
        the trees whose bootstrap sample left it out; NaN for a sample in
        every one): for checking the distributions' calibration.

        Parameters
        ----------
        quantiles : array-like of shape (n_quantiles,), default=(0.1, 0.5, 0.9)

        Returns
        -------
        quantiles : ndarray of shape (n_samples, n_quantiles)
        """
        return self._out_of_bag_readout(check_levels(quantiles), True)

    def oob_interval(self, coverage=0.9):
        """:meth:`predict_interval` of each training sample out of bag.

        Parameters
        ----------
        coverage : float, default=0.9

        Returns
        -------
        interval : ndarray of shape (n_samples, 2)
        """
        return self._out_of_bag_readout(interval_levels(coverage), True)

    def oob_cdf(self, thresholds):
        """:meth:`predict_cdf` of each training sample out of bag.

        Parameters
        ----------
        thresholds : array-like of shape (n_thresholds,)

        Returns
        -------
        cdf : ndarray of shape (n_samples, n_thresholds)
        """
        return self._out_of_bag_readout(check_thresholds(thresholds), False)


def _delegated(method):
    """``method`` of a search, read from the forest it chose
    (``best_estimator_``)."""

    @functools.wraps(method)
    def delegate(self, *args, **kwargs):
        check_is_fitted(self)
        return getattr(self.best_estimator_, method.__name__)(*args, **kwargs)

    return delegate


class ChosenForestDistributionMixin:
    """The predictive distributions of a search's chosen forest
    (``best_estimator_``): every method of :class:`PredictiveDistributionMixin`
    and :class:`OutOfBagDistributionMixin`, the forest's own."""

    predict_quantiles = _delegated(PredictiveDistributionMixin.predict_quantiles)
    predict_interval = _delegated(PredictiveDistributionMixin.predict_interval)
    predict_cdf = _delegated(PredictiveDistributionMixin.predict_cdf)
    predict_survival = _delegated(PredictiveDistributionMixin.predict_survival)
    predict_restricted_mean = _delegated(
        PredictiveDistributionMixin.predict_restricted_mean)
    oob_quantiles = _delegated(OutOfBagDistributionMixin.oob_quantiles)
    oob_interval = _delegated(OutOfBagDistributionMixin.oob_interval)
    oob_cdf = _delegated(OutOfBagDistributionMixin.oob_cdf)
