"""A forest's predictive distributions (:class:`ForestDistribution`): where
the training rows fell in the leaves of the forest that weighs them, with
their intervals (:class:`LeafSamples`), every leaf's estimate made once,
and the read-outs of the distributions at new rows and out of bag.

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

Cost: every leaf's estimate on first use, O(m log m + iterations * m) for
a leaf of m rows, on threads (``_turnbull.leaf_estimates``); then per
query O(T) leaf look-ups and one sweep over its leaves' Turnbull
intervals, ordered by the ranks of their ends: O(intervals + distinct
values / 64); queries run in parallel threads, each with O(distinct
values) working memory (``_forest_readout``).
"""

import numpy as np

from .._utils._sparse import row_blocks
from ..tree._additive import tree_leaves
from ._bagging import tree_samples
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
