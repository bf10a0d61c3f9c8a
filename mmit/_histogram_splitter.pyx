"""The histogram split search: splits from binned features (DESIGN.md
section 12), exact values in the leaves.

Each feature is binned once per fit (``mmit._binning``: at most 255 bins of
present values and one bin for missing values, codes as uint8). A tree is
grown on rows whose gradient ``g_i`` and curvature ``h_i`` of the loss at
the current prediction come from the criterion (``Criterion.gradients``,
the loss's own derivatives in ``_loss.pxd``, weighted). For a node, one pass
over its rows per evaluated feature sums ``g``, ``h`` and the rows in each
bin; a scan over the bins gives every split's Newton gain

    G_L^2 / H_L + G_R^2 / H_R - G^2 / H

(``G``, ``H``: sums over a side; a side without curvature scores 0), with
the missing rows tried on each side, and "present versus missing" a
candidate too, as in the exact search. For a loss without curvature (the
linear hinge) ``h_i`` is the row's weight: the gain of a least-squares fit
to the gradients (as for LightGBM's L1 objective). Ties go to the first
feature of the random order and the first bin (gains within a relative
``SPLIT_RTOL`` are ties).

The gain only chooses the split. The children's values are then solved
exactly by the criterion (the interval solver on the node's residual
intervals), and so are every node's value and cost: a binned booster's
leaves hold the exact optima of their rows, as LightGBM re-fits the leaves
of its L1 and quantile objectives and XGBoost its adaptive trees. A split
must lower the node's exact cost, as in the exact search.

Cost per node of m rows: O(k m) for the histograms of the k evaluated
features and O(k * 256) for the scans, O(m) for the exact children.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.string cimport memset

import numpy as np

from ._criterion cimport Criterion
from ._splitter cimport Splitter
from ._features cimport MISSING_BIN, BinnedFeatures
from ._solver cimport check_index
from ._tree cimport Tree

# Splits must lower the node's exact cost by more than this (relative), and
# gains within this of each other are ties: rounding in the sums (which
# depend on the order of the rows) never decides between equal splits.
cdef double SPLIT_RTOL = 1e-10

cdef enum:
    N_SUMS = 3              # per bin: gradient, curvature, rows


cdef inline double newton_score(double g, double h) noexcept nogil:
    """``g^2 / h``: the loss decrease of a Newton step (0 without curvature)."""
    return g * g / h if h > 0.0 else 0.0


cdef class HistogramSplitter(Splitter):
    """The split search on binned features (see the module doc).

    Parameters
    ----------
    criterion : Criterion
        The loss, initialised with the build's targets and weights.
    features : BinnedFeatures
    sample_weight : ndarray of shape (n_samples,)
    max_features, min_samples_leaf : int
    seed : int
        Seed of the feature order, in [1, 2**32).
    """

    def __cinit__(self, Criterion criterion, BinnedFeatures features,
                  const double[::1] sample_weight, intp_t max_features,
                  intp_t min_samples_leaf, uint32_t seed):
        cdef intp_t n = features.n_samples, p = features.n_features, i
        cdef bint curved = False
        self.setup(criterion, sample_weight, n, p, max_features, min_samples_leaf, seed)
        gradient = np.zeros(max(n, 1))
        hessian = np.zeros(max(n, 1))
        histogram = np.zeros(max(p, 1) * (MISSING_BIN + 1) * N_SUMS)
        child_rows = np.empty(max(n, 1), dtype=np.int32)
        self._buffers = (gradient, hessian, histogram, child_rows)
        cdef double[::1] gradient_view = gradient
        cdef double[::1] hessian_view = hessian
        cdef double[::1] histogram_view = histogram
        cdef int32_t[::1] child_rows_view = child_rows
        with nogil:
            criterion.gradients(&gradient_view[0], &hessian_view[0])
            for i in range(n):
                curved = curved or hessian_view[i] > 0.0
            if not curved:  # a loss without curvature: least squares on the gradients
                for i in range(n):
                    hessian_view[i] = sample_weight[i]
        self.features = features
        self.codes = &features.codes[0, 0] if n > 0 and p > 0 else NULL
        self.thresholds = &features.thresholds[0, 0] if p > 0 else NULL
        self.n_bins = &features.n_bins[0] if p > 0 else NULL
        self.gradient = &gradient_view[0]
        self.hessian = &hessian_view[0]
        self.histogram = &histogram_view[0]
        self.child_rows = &child_rows_view[0]

    cdef void build_histogram(self, const int32_t* rows, intp_t count,
                              intp_t feature) noexcept nogil:
        """Sums of gradient, curvature and rows per bin of ``feature`` over
        ``rows`` (the missing bin last), at ``histogram_of(feature)``; every
        feature's in one pass over the rows when ``feature`` is -1.
        O(count + 256) per feature."""
        cdef intp_t k, j, row, first = 0 if feature < 0 else feature
        cdef intp_t last = self.n_features if feature < 0 else feature + 1
        cdef const uint8_t* codes
        cdef double g, h
        cdef double* bin_sums
        memset(self.histogram_of(first), 0,
               (last - first) * (MISSING_BIN + 1) * N_SUMS * sizeof(double))
        for k in range(count):
            row = rows[k]
            check_index(row, self.n_samples)
            g = self.gradient[row]
            h = self.hessian[row]
            codes = self.codes + row * self.n_features
            for j in range(first, last):
                bin_sums = self.histogram_of(j) + N_SUMS * codes[j]
                bin_sums[0] += g
                bin_sums[1] += h
                bin_sums[2] += 1.0

    cdef inline double* histogram_of(self, intp_t feature) noexcept nogil:
        return self.histogram + feature * (MISSING_BIN + 1) * N_SUMS

    cdef void scan_feature(self, const NodeRecord* node, intp_t feature, double total_g,
                           double total_h, double* best_gain,
                           SplitRecord* best) noexcept nogil:
        """Make the best split of ``feature`` (its histogram built) the best
        one when its gain is larger than ``best_gain``."""
        cdef const double* sums = self.histogram_of(feature)
        cdef const double* missing = sums + N_SUMS * MISSING_BIN
        cdef intp_t n_bins = self.n_bins[feature], b, side
        cdef double m = node.end - node.start, min_leaf = self.min_samples_leaf
        cdef double parent = newton_score(total_g, total_h), left_g, left_h, left_n, gain
        cdef bint missing_left
        for side in range(2 if missing[2] > 0.0 else 1):
            missing_left = side == 1
            left_g = missing[0] if missing_left else 0.0
            left_h = missing[1] if missing_left else 0.0
            left_n = missing[2] if missing_left else 0.0
            for b in range(n_bins):
                left_g += sums[N_SUMS * b]
                left_h += sums[N_SUMS * b + 1]
                left_n += sums[N_SUMS * b + 2]
                # a boundary after a bin with rows, leaving rows on the right
                # (after the last bin: present rows left, missing ones right)
                if sums[N_SUMS * b + 2] == 0.0 or left_n >= m:
                    continue
                if left_n < min_leaf or m - left_n < min_leaf:
                    continue
                gain = (newton_score(left_g, left_h)
                        + newton_score(total_g - left_g, total_h - left_h) - parent)
                if gain > best_gain[0] * (1.0 + SPLIT_RTOL) and gain > 0.0:
                    best_gain[0] = gain
                    best.feature = feature
                    best.bin = b
                    best.has_missing = missing[2] > 0.0
                    best.missing_go_to_left = missing_left
                    best.threshold = (INFINITY if b == n_bins - 1
                                      else self.thresholds[feature * MISSING_BIN + b])

    cdef bint find_split(self, const NodeRecord* node, SplitRecord* split) noexcept nogil:
        """Best split by Newton gain over features drawn in a random order
        (at least ``max_features`` that can split the node, more while none
        has), its children's values and cost solved exactly. Returns False
        when no split lowers the node's exact cost."""
        cdef intp_t m = node.end - node.start, k, n_drawn = 0, n_visited = 0, feature
        cdef intp_t n_left = 0, row, n_bins
        cdef const int32_t* rows = self.node_rows + node.start
        cdef double total_g = 0.0, total_h = 0.0, best_gain = 0.0, left_cost = 0.0
        cdef double right_cost = 0.0, left_value = node.value, right_value = node.value
        cdef double nonempty
        cdef const double* sums
        cdef uint8_t code
        cdef bint left, all_features
        for k in range(m):
            total_g += self.gradient[rows[k]]
            total_h += self.hessian[rows[k]]
        split.cost = INFINITY
        split.feature = -1
        all_features = self.max_features >= self.n_features
        if all_features:  # every feature's histogram in one pass over the rows
            self.build_histogram(rows, m, -1)
        while n_drawn < self.n_features:
            if n_visited >= self.max_features and split.feature >= 0:
                break
            feature = self.draw_feature(n_drawn)
            n_drawn += 1
            if not all_features:
                self.build_histogram(rows, m, feature)
            # a feature splits the node when its rows lie in two bins or more
            sums = self.histogram_of(feature)
            nonempty = 0
            n_bins = self.n_bins[feature]
            for k in range(n_bins):
                nonempty += sums[N_SUMS * k + 2] > 0.0
            nonempty += sums[N_SUMS * MISSING_BIN + 2] > 0.0
            if nonempty < 2:
                continue
            n_visited += 1
            self.scan_feature(node, feature, total_g, total_h, &best_gain, split)
        if split.feature < 0:
            return False
        # the children's exact optima, on the node's solver slots
        for k in range(m):
            row = rows[k]
            code = self.codes[row * self.n_features + split.feature]
            left = (split.missing_go_to_left if code == MISSING_BIN
                    else code <= split.bin)
            if left:
                self.child_rows[n_left] = <int32_t> row
                n_left += 1
            else:
                self.child_rows[m - 1 - (k - n_left)] = <int32_t> row
        self.criterion.node_init(node.target_start, node.target_end)
        self.criterion.reset()
        self.criterion.add(self.child_rows, n_left)
        if not self.criterion.minimum(&left_value, &left_cost):
            left_value = node.value
        self.criterion.reset()
        self.criterion.add(self.child_rows + n_left, m - n_left)
        if not self.criterion.minimum(&right_value, &right_cost):
            right_value = node.value
        split.left_value = left_value
        split.right_value = right_value
        split.cost = left_cost + right_cost
        return node.cost - split.cost > SPLIT_RTOL * node.cost

    cdef int split_node(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                        NodeRecord* left, NodeRecord* right) except -1 nogil:
        cdef intp_t m = node.end - node.start, k, n_left = 0, row
        cdef const int32_t* rows = self.node_rows + node.start
        cdef uint8_t code
        for k in range(m):
            row = rows[k]
            check_index(row, self.n_samples)
            code = self.codes[row * self.n_features + split.feature]
            self.goes_left[row] = (split.missing_go_to_left if code == MISSING_BIN
                                   else code <= split.bin)
            n_left += self.goes_left[row]
        left.presorted = right.presorted = False
        return self.finish_split(tree, node, split, n_left, left, right)
