"""Boosting stages grown a level at a time on one partition of rows, with
splits chosen elsewhere: a worker's part of a binned booster's fit on a
Dask cluster (``mmit.ensemble._dask_boosting``).

A :class:`LevelBuilder` keeps a partition's binned features and the
residual hinges of its rows, sorted, in a criterion kept from stage to
stage (``HingeCriterion`` with ``keep_leaves``), and grows each stage's
tree through a ``HistogramSplitter`` as the local builder does, with the
splits the client chose from every partition's sums: the rows are
partitioned by the split's bin, each child's hinges stay sorted, and of
two siblings only the smaller histogram is built from its rows (the
larger is its parent's minus it). For each node of a level the builder
reports:

- its histogram of gradients, curvatures and rows;
- the optimum of the partition's own rows in it (``targets_minimum``, in
  sequential passes over its sorted hinges), their number and weight;
- its largest lower and smallest upper breakpoint: the node costs nothing
  (every interval meets the others) when the first is at most the second;

and, for the nodes of the level before, once the client knows the range
where their optima lie, their hinges near it (:meth:`LevelBuilder.grow`).
A stage ends with its leaves' values: the rows of each leaf move by its
shrunk value, the leaves' sorted hinge lists are merged into the next
stage's (``HingeCriterion.advance``), or sorted again, as a local fit of
such trees does.
"""

from libc.math cimport INFINITY, isnan
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

import numpy as np

from .._loss._loss import weighted_loss
from .._loss._solver import hinge_positions
from .._utils._buffers import Buffers

from ._criterion cimport HingeCriterion, HingeTargets
from ._features cimport MISSING_BIN, BinnedFeatures
from ._histogram cimport (N_BINS, BinSums, FeatureSplit, best_split_of, category_sets,
                          set_words)
from ._histogram_splitter cimport HistogramSplitter, child_key, order_state
from .._loss._solver cimport HingeEntry, first_hinge_past
from ._splitter cimport SPLIT_RTOL, NodeRecord, SplitRecord, draw_next
from ._tree cimport Tree
from .._utils._typedefs cimport check_index, intp_t

cdef void add_hinge(double* sums, const HingeEntry* hinge) noexcept nogil:
    """Add a hinge's weight, weight times breakpoint and its square."""
    sums[0] += hinge.weight
    sums[1] += hinge.weight * hinge.position
    sums[2] += hinge.weight * hinge.position * hinge.position


cdef class LevelBuilder:
    """A partition's rows through the stages of a binned booster (module doc).

    Parameters
    ----------
    features : BinnedFeatures
        The partition's binned features (dense codes).
    lower, upper : ndarray of shape (n_rows,), float64
        Validated interval bounds.
    sample_weight : ndarray of shape (n_rows,), float64
    margin : float
    loss : int
        The loss's tag (``mmit._loss._loss.LOSSES[name].tag``).
    merge : bool
        Whether a stage's leaves merge their sorted hinges into the next
        stage's (else they are sorted again).
    n_threads : int, default=1
        Threads of the histograms, the partitions and the merges.

    The predictions start at 0: :meth:`finish` of a one-leaf stage with the
    optimal constant moves them to it.
    """

    cdef BinnedFeatures features
    cdef HingeCriterion criterion
    cdef HistogramSplitter splitter
    cdef Tree tree                       # the stage's tree, as the splitter grows it
    cdef vector[NodeRecord] frontier     # the nodes of the level last reported
    cdef vector[NodeRecord] leaves       # the stage's leaves, in the order settled
    cdef readonly intp_t n_rows
    cdef readonly double margin
    cdef readonly int loss
    cdef bint merge
    cdef int n_threads
    cdef object lower, upper, sample_weight
    cdef object prediction               # per row: the predictions so far (unless merged)
    cdef object buffers

    def __cinit__(self, BinnedFeatures features, lower, upper, sample_weight,
                  double margin, int loss, bint merge, int n_threads=1):
        self.features = features
        self.n_rows = features.n_samples
        self.lower = np.ascontiguousarray(lower, dtype=np.float64)
        self.upper = np.ascontiguousarray(upper, dtype=np.float64)
        self.sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        if not (self.lower.shape == self.upper.shape == self.sample_weight.shape
                == (self.n_rows,)):
            raise ValueError("lower, upper and sample_weight need one entry per row.")
        self.margin = margin
        self.loss = loss
        self.merge = merge
        self.n_threads = max(n_threads, 1)
        self.buffers = Buffers()
        # the predictions, for criteria sorted afresh (a 0 that broadcasts until then)
        self.prediction = np.zeros(1)
        self.criterion = self.sorted_criterion()
        if merge:  # the criterion moves its breakpoints: the bounds are done with
            self.lower = self.upper = None

    cdef HingeCriterion sorted_criterion(self):
        """The criterion of the residual intervals around the predictions, its
        hinges sorted afresh (the sorted targets' arrays freed once it holds
        them)."""
        targets = HingeTargets(self.lower - self.prediction, self.upper - self.prediction,
                               self.margin, None, self.n_threads)
        return HingeCriterion(targets, self.sample_weight, self.loss, False, None,
                              self.n_threads, keep_leaves=True)

    def start(self, bint search):
        """Begin a stage at its root, on the rows' residuals: the gradients,
        and the root's summary (see :meth:`grow`; its histogram when
        ``search``). Returns ``(curved, summary)``: whether a row has
        curvature (else the histograms sum weights, the splitter's rule for
        a loss without curvature)."""
        cdef NodeRecord root
        self.splitter = HistogramSplitter(self.criterion, self.features, self.sample_weight,
                                          self.features.n_features, 1, 1, self.n_threads,
                                          self.buffers)
        self.tree = Tree(self.features.n_features)
        self.frontier.clear()
        self.leaves.clear()
        with nogil:
            self.splitter.init_root(&root)
            root.node_id = self.tree.add_node(-1, False, root.value, root.cost, root.end,
                                              root.weight, 0)
        self.frontier.push_back(root)
        return self.splitter.curved, self.summary(search)

    def use_curvature(self):
        """Sum the rows' curvatures although none has any (a fit where other
        partitions' rows have some): the root's summary again."""
        with nogil:
            self.splitter.use_curvature()
        return self.summary(True)

    def grow(self, const double[::1] lows, const double[::1] highs,
             const intp_t[::1] feature, const intp_t[::1] bins,
             const uint8_t[::1] missing_left, list categories, bint search):
        """The next level: for each node of the current one, its hinges near
        ``[lows[k], highs[k]]`` (none where ``lows[k]`` is NaN), then its split
        by ``feature[k]`` (codes up to ``bins[k]`` go left, missing ones to
        ``missing_left[k]``; on a categorical feature, the sets of
        ``categories[k]``, else None: the codes going left, then those of
        the node, as words of 32 bits) or, where ``feature[k]`` is -1, its end
        as a leaf. The children, in order (each split node's left then
        right), make the next level.

        Returns ``(near, summary)``. ``near``: the hinges listed (their
        nodes, breakpoints, weights and parities, 1 for an upper hinge), the
        edges (the range widened to the node's next breakpoint on each
        side; shape (n_nodes, 2)), and the sums (weight, weight times
        breakpoint and its square) of the upper hinges below the edges and
        of the lower hinges above them (each (n_nodes, 3)). ``summary``:
        per node of the next level, its histogram (shape (n_nodes,
        n_features, 256, 3), None unless ``search``), the optimum of the
        partition's rows in it (NaN without a hinge), their number and
        weight, its largest lower breakpoint and its smallest upper one.
        """
        cdef intp_t n = self.frontier.size(), k
        cdef NodeRecord node, left, right
        cdef SplitRecord split
        cdef vector[NodeRecord] children
        cdef const uint32_t[::1] words
        if not (lows.shape[0] == highs.shape[0] == feature.shape[0] == bins.shape[0]
                == missing_left.shape[0] == len(categories) == n):
            raise ValueError(f"lows, highs, feature, bins, missing_left and categories "
                             f"need one entry per node of the level ({n}).")
        p = self.features.n_features
        if n and (np.max(feature) >= p or np.min(feature) < -1):
            raise ValueError(f"split features must be -1 or in [0, {p}).")
        near = self.near_hinges(lows, highs)
        split.has_missing = True
        split.improvement = 0.0
        for k in range(n):
            node = self.frontier[k]
            if feature[k] < 0:
                self.splitter.settle_leaf(&node)
                self.leaves.push_back(node)
                continue
            split.feature = feature[k]
            split.bin = bins[k]
            split.missing_go_to_left = missing_left[k]
            split.categories = -1
            split.threshold = (INFINITY if bins[k] >= self.features.n_bins[feature[k]] - 1
                               else self.features.thresholds[feature[k], bins[k]])
            if self.features.n_categories[feature[k]] > 0:
                words = self.category_words(categories[k], feature[k])
                self.splitter.take_categories(&split, &words[0], words.shape[0] // 2)
            with nogil:
                self.splitter.split_node(self.tree, &node, &split, &left, &right)
            children.push_back(left)
            children.push_back(right)
        self.frontier = children
        return near, self.summary(search)

    cdef category_words(self, categories, intp_t feature):
        """A categorical split's sets as given (see :meth:`grow`), checked."""
        cdef intp_t n_words = set_words(self.features.n_bins[feature])
        if categories is None or np.shape(categories) != (2 * n_words,):
            raise ValueError(f"a split of categorical feature {feature} needs its sets: "
                             f"{2 * n_words} words.")
        return np.ascontiguousarray(categories, dtype=np.uint32)

    def near(self, const double[::1] lows, const double[::1] highs):
        """The hinges of the current level's nodes near ``[lows[k],
        highs[k]]`` (see :meth:`grow`), before their splits are chosen."""
        if not lows.shape[0] == highs.shape[0] == <intp_t>self.frontier.size():
            raise ValueError(f"lows and highs need one entry per node of the level "
                             f"({self.frontier.size()}).")
        return self.near_hinges(lows, highs)

    cdef summary(self, bint search):
        """The summary of the current level's nodes (see :meth:`grow`)."""
        cdef intp_t n = self.frontier.size(), p = self.features.n_features, k, t, slot
        cdef intp_t size = p * N_BINS
        cdef NodeRecord* node
        cdef const HingeEntry* hinges = self.criterion.hinges
        histograms = np.zeros((n, p, N_BINS, 3)) if search else None
        optima = np.full(n, np.nan)
        rows = np.empty(n)
        weights = np.empty(n)
        largest_lower = np.full(n, -np.inf)
        smallest_upper = np.full(n, np.inf)
        cdef double[:, :, :, ::1] out = histograms if search else None
        cdef double[::1] optima_view = optima, rows_view = rows, weights_view = weights
        cdef double[::1] lower_view = largest_lower, upper_view = smallest_upper
        for k in range(n):
            node = &self.frontier[k]
            rows_view[k] = node.end - node.start
            weights_view[k] = node.weight
            with nogil:
                if search and size > 0:
                    slot = self.splitter.node_histogram(node)
                    memcpy(&out[k, 0, 0, 0], self.splitter.histogram(slot),
                           size * sizeof(BinSums))
                # the splitter solved the node on its sorted hinges, if any
                if node.target_end > node.target_start:
                    optima_view[k] = node.value
                for t in range(node.target_start, node.target_end):
                    if hinges[t].hinge & 1:
                        upper_view[k] = hinges[t].position
                        break
                for t in range(node.target_end - 1, node.target_start - 1, -1):
                    if not hinges[t].hinge & 1:
                        lower_view[k] = hinges[t].position
                        break
        return histograms, optima, rows, weights, largest_lower, smallest_upper

    cdef near_hinges(self, const double[::1] lows, const double[::1] highs):
        """The hinges of the current level's nodes near their ranges (see
        :meth:`grow`): binary searches of each node's sorted hinges, and one
        pass over those beyond the edges."""
        cdef intp_t n = self.frontier.size(), k, t, start, end, first, last, count = 0
        cdef const HingeEntry* hinges = self.criterion.hinges
        cdef NodeRecord* node
        edges = np.empty((n, 2))
        edges[:, 0], edges[:, 1] = -np.inf, np.inf
        below = np.zeros((n, 3))
        above = np.zeros((n, 3))
        cdef double[:, ::1] edges_view = edges, below_view = below, above_view = above
        firsts = np.zeros(n, dtype=np.intp)
        lasts = np.zeros(n, dtype=np.intp)
        cdef intp_t[::1] firsts_view = firsts, lasts_view = lasts
        with nogil:
            for k in range(n):
                if isnan(lows[k]):
                    continue
                node = &self.frontier[k]
                start, end = node.target_start, node.target_end
                # the edges: the largest breakpoint below the range, the
                # smallest above it; the hinges listed lie between them
                first = first_hinge_past(hinges, start, end, 0.0, lows[k], False)
                if first > start:
                    edges_view[k, 0] = hinges[first - 1].position
                    first = first_hinge_past(hinges, start, first, 0.0,
                                             hinges[first - 1].position, False)
                last = first_hinge_past(hinges, first, end, 0.0, highs[k], True)
                if last < end:
                    edges_view[k, 1] = hinges[last].position
                    last = first_hinge_past(hinges, last, end, 0.0, hinges[last].position,
                                            True)
                firsts_view[k], lasts_view[k] = first, last
                count += last - first
                for t in range(start, first):
                    if hinges[t].hinge & 1:
                        add_hinge(&below_view[k, 0], &hinges[t])
                for t in range(last, end):
                    if not hinges[t].hinge & 1:
                        add_hinge(&above_view[k, 0], &hinges[t])
        nodes = np.empty(count, dtype=np.intp)
        positions = np.empty(count)
        weights = np.empty(count)
        parity = np.empty(count, dtype=np.int32)
        cdef intp_t[::1] nodes_view = nodes
        cdef double[::1] positions_view = positions, weights_view = weights
        cdef int32_t[::1] parity_view = parity
        count = 0
        with nogil:
            for k in range(n):
                for t in range(firsts_view[k], lasts_view[k]):
                    nodes_view[count] = k
                    positions_view[count] = hinges[t].position
                    weights_view[count] = hinges[t].weight
                    parity_view[count] = hinges[t].hinge & 1
                    count += 1
        return nodes, positions, weights, parity, edges, below, above

    def finish(self, const double[::1] values, double learning_rate):
        """End the stage: its leaves (``values`` in the order they ended) move
        their rows by ``learning_rate`` times their value. Returns the
        weighted sum of the rows' losses at the new predictions."""
        cdef intp_t k, t
        cdef NodeRecord* leaf
        cdef double shift
        if self.frontier.size() > 0:
            raise ValueError("the stage's last level has not ended: grow it without "
                             "splits first.")
        if values.shape[0] != <intp_t>self.leaves.size():
            raise ValueError(f"values has {values.shape[0]} entries for "
                             f"{self.leaves.size()} leaves.")
        shifts = np.zeros(self.n_rows)  # what each row's prediction grows by
        cdef double[::1] shifts_view = shifts
        cdef const int32_t* node_rows = self.splitter.node_rows
        with nogil:
            for k in range(<intp_t>self.leaves.size()):
                leaf = &self.leaves[k]
                shift = learning_rate * values[k]
                for t in range(leaf.start, leaf.end):
                    check_index(node_rows[t], self.n_rows)
                    shifts_view[node_rows[t]] = shift
        self.leaves.clear()
        if self.merge:
            return self.criterion.advance(shifts, self.n_threads)
        self.prediction = self.prediction + shifts
        self.criterion = self.sorted_criterion()
        lower, upper = hinge_positions(self.lower, self.upper, self.margin)
        return weighted_loss(lower, upper, self.prediction, self.sample_weight, self.loss,
                             self.n_threads)


# The cluster's split search: the client draws each node's features and
# scans the sums of every partition's histograms as HistogramSplitter does.

def child_keys(uint64_t key):
    """The keys of the children of a node of key ``key`` (the root's: the
    build's seed): (left, right)."""
    return int(child_key(key, 0)), int(child_key(key, 1))


def draw_order(uint64_t key, intp_t n_features):
    """The order in which a node of key ``key`` tries the features (ties go
    to the first), as ``HistogramSplitter`` draws it: int array."""
    cdef intp_t k
    cdef uint32_t state = order_state(key)
    order_array = np.arange(max(n_features, 0), dtype=np.intp)
    cdef intp_t[::1] order = order_array
    for k in range(n_features):
        draw_next(&order[0], n_features, k, &state)
    return order_array


def best_histogram_split(const double[:, :, ::1] sums, const int32_t[::1] n_bins,
                         double min_samples_leaf, const intp_t[::1] order,
                         const int32_t[::1] n_categories, double penalty):
    """The best split of a node from its histogram (``sums`` of shape
    (n_features, 256, 3): per feature and bin, the rows' gradient,
    curvature and count), without constraints, the features tried in
    ``order`` (the node's :func:`draw_order`), categorical ones (of
    ``n_categories`` categories, 0: numeric) with ``penalty`` per category
    beyond two (in gain units), by the rules of
    ``HistogramSplitter.find_split``: ``(feature, bin, missing_go_to_left,
    has_missing, gain, categories)``, ``feature`` -1 when no split has a
    positive gain; ``categories``: for a categorical split, its sets as
    words of 32 bits (uint32, the codes going left, then those of the
    node), else None."""
    cdef intp_t p = sums.shape[0], j, k, feature = -1, n_words
    cdef double total_g = 0.0, total_h = 0.0, m = 0.0, best_gain = 0.0
    cdef FeatureSplit split, best
    if (sums.shape[1] != N_BINS or sums.shape[2] != 3 or n_bins.shape[0] != p
            or n_categories.shape[0] != p):
        raise ValueError("sums must have shape (n_features, 256, 3), n_bins and "
                         "n_categories one count per feature.")
    if order.shape[0] != p or not np.array_equal(np.sort(order), np.arange(p)):
        raise ValueError("order must hold every feature once.")
    if p == 0:
        return -1, -1, False, False, 0.0, None
    cdef const BinSums* histogram = <const BinSums*> &sums[0, 0, 0]
    with nogil:
        for j in range(N_BINS):
            total_g += histogram[j].gradient
            total_h += histogram[j].hessian
            m += histogram[j].count
        for k in range(p):
            j = order[k]
            best_split_of(histogram + j * N_BINS, n_bins[j], n_categories[j] > 0, 0,
                          total_g, total_h, m, min_samples_leaf, penalty, &split)
            if split.gain > best_gain * (1.0 + SPLIT_RTOL):
                best_gain = split.gain
                feature = j
                best = split
    if feature < 0:
        return -1, -1, False, False, 0.0, None
    categories = None
    cdef uint32_t[::1] words
    if n_categories[feature] > 0:
        n_words = set_words(n_bins[feature])
        categories = np.zeros(2 * n_words, dtype=np.uint32)
        words = categories
        category_sets(histogram + feature * N_BINS, n_bins[feature], best.bin, total_h,
                      best.by_ratio, &words[0], n_words)
    return (int(feature), int(best.bin), bool(best.missing_go_to_left),
            bool(histogram[feature * N_BINS + MISSING_BIN].count > 0.0), float(best_gain),
            categories)
