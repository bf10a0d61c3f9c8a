"""The exact split search of Maximum Margin Interval Trees: on the values.

:class:`ExactSplitter` implements the builder's interface
(:class:`~mmit.tree._splitter.Splitter`, which holds the constraints and
the partitions) by sweeps of the criterion over a node's rows in the order
of each feature drawn.

Split search. For a node and a candidate feature, the node's rows with the
feature present are taken in increasing order of the feature; one backward
and one forward sweep of the criterion give the optimal cost of every right
and left part, and the split cost at each boundary between distinct values
is their sum (O(m) per feature for m rows). Rows missing the feature (NaN)
are tried on each side: a sweep that starts with them gives the costs of
the parts they join. Before those two extra sweeps, a lower bound (the best
split of the present rows plus the optimal cost of the missing rows alone)
skips features that cannot beat the best split found so far. "Present
versus missing" is a candidate split too. Ties between equally good splits
go to the first feature of a random order (``random_state``) and the first
boundary within it.

Rows in feature order, two ways (the work per node follows the features
evaluated, not all of them):

- presorted: every feature is sorted once per fit
  (:class:`~mmit.tree._features.Features`); a node's rows sit in the same range
  of every feature's list, and a split partitions every list stably between
  the children. O(p m) per split.
- sorted on demand: a node keeps its rows in one list; each drawn feature's
  present values are sorted when the feature is evaluated. O(k m log m) for
  k evaluated features.

A node keeps its children presorted while it has at least
``presort_min_rows`` rows (the cost model of ``_growing.presort_min_rows``);
below that its subtree sorts on demand. Both ways order the rows by
(value, row index), so they give the same tree.

Sparse features (compressed columns, see ``_features``) are never
densified: a node finds the stored values of a feature at its rows (both
row lists are increasing: a merge or binary searches, the cheapest),
skips the feature when they are all 0, and otherwise sorts only the
nonzero ones and places its zero rows, in row order, between the negative
and the positive values: the order of the dense sort, so a sparse fit
grows the dense fit's tree. O(m + s log s) per evaluated feature for s
nonzero values at the node's m rows, plus the search.

Categorical features (codes ``0 .. K - 1``, see ``_features``). A split
sends a set of categories left. The node's categories are ordered by the
optimal constant of their rows (the solver's minimum, ties by code) and
the order is scanned as a numeric feature: the best of the K - 1 splits
into a prefix and the rest, with the missing rows on either side. For
the squared error this finds the best of all 2^(K-1) - 1 partitions
(Fisher 1958; Breiman et al. 1984, Theorem 4.5); for the hinge losses it
is a heuristic, so the codes' own order (the ordinal split, which means
something for ordered categories) is scanned too: a categorical split is
never worse than the best split of the codes as numbers. O(m + K log K)
more per categorical feature than a numeric one.

Costs are stored exactly (re-evaluated at each node's prediction); split
costs compare with a relative tolerance so that rounding in the solver's
running sums never decides between equal splits.

This module is longer than most (about 700 lines of code): the one
class's methods share its working memory in the hot loops of the search
(the rows in a feature's order, dense, presorted or sparse, the sweeps'
outputs, the bounded costs), and splitting them would pass that state
between modules on every candidate.
"""

cimport cython
from libc.math cimport INFINITY, NAN, isfinite, isnan, log2
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

import numpy as np

from .._utils._buffers import empty

from ._criterion cimport Criterion
from ._features cimport Features, midpoint
from ._monotone cimport BOUNDS_MIDPOINTS
from ._partition cimport stable_partition
from .._utils._typedefs cimport check_index
from .._utils._sorting cimport dropped_bits, index_mask_for, key_index, order_keys, pack_key
from .._utils._sorting cimport first_at_least, sort_keys, sortable_bits
from ._splitter cimport SPLIT_RTOL, NodeRecord, SplitRecord, Splitter, sort_categories
from ._tree cimport Tree


cdef inline void key_value(uint64_t* keys, int32_t* dropped, double x, intp_t position,
                           intp_t count, uint64_t index_mask) noexcept nogil:
    """The sort key of the node's ``count``-th present value ``x``, at
    ``position`` in the node (``keys[count]``), and the bits it drops
    (``dropped[position]``)."""
    cdef uint64_t bits = sortable_bits(x)
    keys[count] = pack_key(bits, position, index_mask)
    dropped[position] = dropped_bits(bits, index_mask)


@cython.final
cdef class ExactSplitter(Splitter):
    """The split search on the values of the features (see the module doc).

    Parameters
    ----------
    criterion : Criterion
        The loss, initialised with the build's targets and weights.
    features : Features
    sample_weight : ndarray of shape (n_samples,)
    max_features, min_samples_leaf, presort_min_rows : int
    seed : int
        Seed of the feature order, in [1, 2**32).
    buffers : Buffers, default=None
        Where the working arrays live (``_buffers``).
    """

    def __cinit__(self, Criterion criterion, Features features,
                  const double[::1] sample_weight, intp_t max_features,
                  intp_t min_samples_leaf, intp_t presort_min_rows, uint32_t seed,
                  buffers=None):
        cdef intp_t n = features.n_samples, p = features.n_features, m, i, j, k
        self.setup(criterion, sample_weight, n, p, max_features, min_samples_leaf, seed,
                   buffers)
        m = self.n_active
        cdef bint presorted = features.presorted and m >= presort_min_rows
        # the one tree of its features partitions their presorted order itself
        cdef bint adopt = presorted and features.single_build and m == n
        samples = (np.asarray(features.take_order()) if adopt else
                   empty(buffers, "exact.samples",
                         (p if presorted else 0, m if presorted else 0), np.int32))
        # a node sorts its rows on demand below presort_min_rows (a node of
        # fewer than 2 rows never splits), and sparse features always
        cdef intp_t sorted_rows = (max(n, 1) if features.sparse or not presorted
                                   or presort_min_rows > 2 else 1)
        keys = empty(buffers, "exact.keys", sorted_rows, np.uint64)
        dropped = empty(buffers, "exact.dropped", sorted_rows, np.int32)
        feature_rows = empty(buffers, "exact.feature_rows", sorted_rows, np.int32)
        change = empty(buffers, "exact.change", n + 1, np.uint8)
        # the sweeps that start with the missing rows only where some are
        cdef bint missing = np.asarray(features.missing).any()
        sweeps = empty(buffers, "exact.sweeps", (6 if missing else 4, max(n, 1)))
        categorical = np.asarray(features.n_categories).any()
        category_rows = empty(buffers, "exact.category_rows",
                              max(n, 1) if categorical else 1, np.int32)
        groups = empty(buffers, "exact.groups",
                       (max(n, 1) if categorical else 1) * sizeof(CategoryGroup), np.uint8)
        values = empty(buffers, "exact.values", max(n, 1) if features.sparse else 1)
        values[:] = 0.0  # 0 at every row until a feature is read
        written_rows = empty(buffers, "exact.written_rows",
                             max(n, 1) if features.sparse else 1, np.int32)
        found_positions = empty(buffers, "exact.found_positions",
                                max(n, 1) if features.sparse else 1, np.int32)
        found_entries = empty(buffers, "exact.found_entries",
                              max(n, 1) if features.sparse else 1, np.int64)
        self._buffers = (samples, keys, dropped, feature_rows, change, sweeps,
                         category_rows, groups, values, written_rows, found_positions,
                         found_entries, features)
        self.lower_losses = self.upper_losses = NULL
        self.lower_costs = self.upper_costs = NULL
        self.costs_ready = False

        cdef int32_t[:, ::1] samples_view = samples
        cdef uint64_t[::1] keys_view = keys
        cdef int32_t[::1] dropped_view = dropped
        cdef int32_t[::1] feature_rows_view = feature_rows
        cdef unsigned char[::1] change_view = change
        cdef double[:, ::1] sweeps_view = sweeps
        cdef int32_t[::1] category_rows_view = category_rows
        cdef unsigned char[::1] groups_view = groups
        cdef double[::1] values_view = values
        cdef int32_t[::1] found_positions_view = found_positions
        cdef int32_t[::1] written_rows_view = written_rows
        cdef int64_t[::1] found_entries_view = found_entries
        cdef int32_t row
        if presorted and not adopt:
            with nogil:
                # the rows of positive weight in each feature's presorted order
                for j in range(p):
                    k = 0
                    for i in range(n):
                        row = features.order[j, i]
                        if sample_weight[row] > 0.0:
                            samples_view[j, k] = row
                            k += 1
        self.features = features
        self.presort_min_rows = presort_min_rows
        self.X = self.data = NULL
        self.indptr = NULL
        self.indices = NULL
        self.row_step = 1  # sparse: `values` holds a feature's values by row
        self.column_step = 0
        if features.sparse:
            self.indptr = &features.indptr[0]
            self.indices = &features.indices[0] if features.indices.shape[0] else NULL
            self.data = &features.data[0] if features.data.shape[0] else NULL
        else:
            self.X = features.values
            self.row_step = features.row_step
            self.column_step = features.column_step
        self.values = &values_view[0]
        self.found_positions = &found_positions_view[0]
        self.written_rows = &written_rows_view[0]
        self.n_written = 0
        self.found_entries = &found_entries_view[0]
        self.samples = &samples_view[0, 0] if presorted and m > 0 else NULL
        self.keys = &keys_view[0]
        self.dropped = &dropped_view[0]
        self.feature_rows = &feature_rows_view[0]
        self.change = &change_view[0]
        self.forward_cost = &sweeps_view[0, 0]
        self.forward_value = &sweeps_view[1, 0]
        self.backward_cost = &sweeps_view[2, 0]
        self.backward_value = &sweeps_view[3, 0]
        self.missing_cost = &sweeps_view[4, 0] if missing else NULL
        self.missing_value = &sweeps_view[5, 0] if missing else NULL
        self.category_rows = &category_rows_view[0]
        self.groups = <CategoryGroup*> &groups_view[0]

    cdef int init_root(self, NodeRecord* root) except -1 nogil:
        Splitter.init_root(self, root)
        root.presorted = self.samples != NULL
        return 0

    cdef int constrain(self, const signed char[::1] monotonic, int bounds_from) except -1:
        """Also the losses of a bounded node's rows at its bounds."""
        Splitter.constrain(self, monotonic, bounds_from)
        bound_costs = np.empty((4, self.n_samples + 1))
        cdef double[:, ::1] bound_costs_view = bound_costs
        self._buffers = (*self._buffers, bound_costs)
        self.lower_losses = &bound_costs_view[0, 0]
        self.upper_losses = &bound_costs_view[1, 0]
        self.lower_costs = &bound_costs_view[2, 0]
        self.upper_costs = &bound_costs_view[3, 0]
        return 0

    cdef void bound_costs(self, const NodeRecord* node, const int32_t* rows) noexcept nogil:
        """Monotone trees: the loss of the node's first k rows in the order of
        ``rows`` (present rows in feature order, then missing ones) at each
        finite bound of the node, from its rows' losses there (``find_split``).
        Made when a split of the feature first needs them."""
        cdef intp_t m = node.end - node.start, k
        cdef bint lower = isfinite(node.value_lower), upper = isfinite(node.value_upper)
        self.lower_costs[0] = self.upper_costs[0] = 0.0
        for k in range(m):
            check_index(rows[k], self.n_samples)
            if lower:
                self.lower_costs[k + 1] = self.lower_costs[k] + self.lower_losses[rows[k]]
            if upper:
                self.upper_costs[k + 1] = self.upper_costs[k] + self.upper_losses[rows[k]]
        self.costs_ready = True

    cdef inline void offer(self, const NodeRecord* node, SplitRecord* best,
                           double tolerance, intp_t feature, const double* column,
                           const int32_t* rows, intp_t k, intp_t n_present,
                           bint has_missing, bint missing_go_to_left, double left_cost,
                           double left_value, double right_cost,
                           double right_value) noexcept nogil:
        """``consider`` the split of the present rows before position ``k``
        (the missing ones, if any, on the side given) whose parts have these
        optima; in a monotone tree, if they follow the feature's direction
        and, with midpoint bounds, as ``offer_bounded`` does (module doc)."""
        cdef signed char sign
        if self.monotonic != NULL and self.bounds_from == BOUNDS_MIDPOINTS:
            self.offer_bounded(node, best, tolerance, feature, column, rows, k, n_present,
                               has_missing, missing_go_to_left, left_cost, left_value,
                               right_cost, right_value)
            return
        # present versus missing rows is not ordered; NaN: a part free of loss
        sign = self.sign_of(feature) if k < n_present else 0
        if not (sign != 0 and sign * (right_value - left_value) < 0.0):
            self.consider(best, left_cost + right_cost, tolerance, feature, column, rows,
                          k, n_present, has_missing, missing_go_to_left, left_value,
                          right_value)

    cdef void offer_bounded(self, const NodeRecord* node, SplitRecord* best,
                            double tolerance, intp_t feature, const double* column,
                            const int32_t* rows, intp_t k, intp_t n_present,
                            bint has_missing, bint missing_go_to_left, double left_cost,
                            double left_value, double right_cost,
                            double right_value) noexcept nogil:
        """``offer`` in a monotone tree: the parts at their values clipped to
        the node's bounds (the costs there), if the values follow the
        feature's direction (module doc)."""
        cdef intp_t m = node.end - node.start
        cdef double missing_at_lower, missing_at_upper
        cdef signed char sign
        # clipping only adds cost: a split no better unclipped cannot win
        if not (left_cost + right_cost < best.cost - tolerance):
            return
        if not self.costs_ready and (
                left_value < node.value_lower or right_value < node.value_lower
                or left_value > node.value_upper or right_value > node.value_upper):
            self.bound_costs(node, rows)
        missing_at_lower = missing_at_upper = 0.0
        if left_value < node.value_lower or right_value < node.value_lower:
            missing_at_lower = self.lower_costs[m] - self.lower_costs[n_present]
        if left_value > node.value_upper or right_value > node.value_upper:
            missing_at_upper = self.upper_costs[m] - self.upper_costs[n_present]
        if left_value < node.value_lower:
            left_value = node.value_lower
            left_cost = self.lower_costs[k] + missing_go_to_left * missing_at_lower
        elif left_value > node.value_upper:
            left_value = node.value_upper
            left_cost = self.upper_costs[k] + missing_go_to_left * missing_at_upper
        if right_value < node.value_lower:
            right_value = node.value_lower
            right_cost = (self.lower_costs[n_present] - self.lower_costs[k]
                          + (has_missing and not missing_go_to_left) * missing_at_lower)
        elif right_value > node.value_upper:
            right_value = node.value_upper
            right_cost = (self.upper_costs[n_present] - self.upper_costs[k]
                          + (has_missing and not missing_go_to_left) * missing_at_upper)
        # present versus missing rows is not ordered; NaN: a part free of loss
        sign = self.sign_of(feature) if k < n_present else 0
        if sign != 0 and sign * (right_value - left_value) < 0.0:
            return
        self.consider(best, left_cost + right_cost, tolerance, feature, column, rows, k,
                      n_present, has_missing, missing_go_to_left, left_value, right_value)

    cdef const int32_t* feature_order(self, const NodeRecord* node, intp_t feature,
                                      intp_t* n_present) noexcept nogil:
        """The node's rows by increasing value of ``feature`` (ties by row),
        rows missing it last; the number of rows with it present in
        ``n_present``. NULL when the feature cannot split the node (one
        present value and nothing missing, or nothing present)."""
        cdef intp_t m = node.end - node.start, count, t
        cdef const double* column
        cdef const int32_t* rows
        cdef int32_t* sorted_rows
        cdef uint64_t index_mask
        cdef double x, low = INFINITY, high = -INFINITY
        cdef intp_t step = self.row_step
        if self.indptr != NULL:
            return self.sparse_order(node, feature, n_present)
        column = self.column_of(feature)
        if node.presorted:
            rows = self.samples + feature * self.n_active + node.start
            count = m
            if self.features.missing[feature]:
                while count > 0 and isnan(column[rows[count - 1] * step]):
                    count -= 1
            n_present[0] = count
            if count == 0 or (count == m and column[rows[0] * step]
                              >= column[rows[m - 1] * step]):
                return NULL
            return rows
        # unsorted node: sort the present values, keyed by position in the node
        rows = self.node_rows + node.start
        sorted_rows = self.feature_rows
        index_mask = index_mask_for(m)
        count = 0
        for t in range(m):
            check_index(rows[t], self.n_samples)
            x = column[rows[t] * step]
            if isnan(x):
                sorted_rows[m - 1 - (t - count)] = rows[t]
                continue
            low = x if x < low else low
            high = x if x > high else high
            key_value(self.keys, self.dropped, x, t, count, index_mask)
            count += 1
        n_present[0] = count
        if count == 0 or (count == m and low >= high):
            return NULL
        # missing rows were written backwards from the end: restore row order
        reverse_rows(sorted_rows + count, m - count)
        sort_keys(self.keys, count)
        order_keys(self.keys, count, index_mask, self.dropped, m)
        for t in range(count):
            sorted_rows[t] = rows[key_index(self.keys[t], index_mask)]
        return sorted_rows

    cdef inline const double* column_of(self, intp_t feature) noexcept nogil:
        """The values of ``feature``: row i's at ``column_of(feature)[i *
        row_step]``. For sparse features, valid at the rows of the node
        whose values of this feature were read last (``read_stored``)."""
        if self.indptr != NULL:
            return self.values
        return self.X + feature * self.column_step

    cdef intp_t find_stored(self, const NodeRecord* node, intp_t feature) noexcept nogil:
        """The stored values of the sparse ``feature`` at the node's rows:
        their positions in the node and their indices in ``data``
        (``found_positions``, ``found_entries``, in row order); returns how
        many. Both row lists are increasing: the cheapest of a merge
        (O(m + s) for s stored values in the column), a binary search of
        each node row among the stored ones (O(m log s)) and of each stored
        row among the node's (O(s log m))."""
        cdef intp_t m = node.end - node.start, t, count = 0, lo
        cdef int64_t at = self.indptr[feature], end = self.indptr[feature + 1]
        cdef const int32_t* rows = self.node_rows + node.start
        cdef double stored = <double>(end - at)
        cdef double merge_cost = m + stored
        cdef double row_search_cost = m * log2(stored + 1.0)
        cdef double entry_search_cost = stored * log2(m + 1.0)
        cdef int32_t row
        if end == at or m == 0:
            return 0
        if entry_search_cost < merge_cost and entry_search_cost < row_search_cost:
            lo = 0
            while at < end and lo < m:
                row = self.indices[at]
                lo = first_at_least(rows, lo, m, row)
                if lo < m and rows[lo] == row:
                    self.found_positions[count] = <int32_t>lo
                    self.found_entries[count] = at
                    count += 1
                at += 1
            return count
        for t in range(m):
            if at >= end:
                break
            row = rows[t]
            if merge_cost <= row_search_cost:
                while at < end and self.indices[at] < row:
                    at += 1
            else:
                at = first_at_least(self.indices, at, end, row)
            if at < end and self.indices[at] == row:
                self.found_positions[count] = <int32_t>t
                self.found_entries[count] = at
                count += 1
                at += 1
        return count

    cdef intp_t read_stored(self, const NodeRecord* node, intp_t feature) noexcept nogil:
        """``find_stored``, and ``values`` 0 at every row but those of the
        stored values found, which hold them (the previous read's rows are
        set back to 0: O(stored values), not O(m)). Returns how many."""
        cdef intp_t k, n_found
        cdef int32_t row
        for k in range(self.n_written):
            self.values[self.written_rows[k]] = 0.0
        n_found = self.find_stored(node, feature)
        for k in range(n_found):
            row = self.node_rows[node.start + self.found_positions[k]]
            check_index(row, self.n_samples)
            self.values[row] = self.data[self.found_entries[k]]
            self.written_rows[k] = row
        self.n_written = n_found
        return n_found

    cdef const int32_t* sparse_order(self, const NodeRecord* node, intp_t feature,
                                     intp_t* n_present) noexcept nogil:
        """``feature_order`` of a sparse feature: the nonzero values sorted,
        the zero rows (in row order) between the negative and the positive
        ones, the missing rows last (module doc); the node's values in
        ``values``. NULL when the feature cannot split the node (every
        value 0, among others)."""
        cdef intp_t m = node.end - node.start, t, k, count = 0, at = 0, previous = 0
        cdef intp_t n_found = self.read_stored(node, feature), n_negative = 0
        cdef intp_t n_missing = 0
        cdef const int32_t* rows = self.node_rows + node.start
        cdef int32_t* sorted_rows = self.feature_rows
        cdef uint64_t index_mask = index_mask_for(m)
        cdef double x, low = INFINITY, high = -INFINITY
        for k in range(n_found):
            x = self.data[self.found_entries[k]]
            t = self.found_positions[k]
            if isnan(x):
                n_missing += 1
            elif x != 0.0:
                n_negative += x < 0.0
                low = x if x < low else low
                high = x if x > high else high
                key_value(self.keys, self.dropped, x, t, count, index_mask)
                count += 1
        n_present[0] = m - n_missing
        if count < n_present[0]:  # some zeros
            low = min(low, 0.0)
            high = max(high, 0.0)
        if n_present[0] == 0 or (n_missing == 0 and low >= high):
            return NULL
        sort_keys(self.keys, count)
        order_keys(self.keys, count, index_mask, self.dropped, m)
        for k in range(n_negative):
            sorted_rows[at] = rows[key_index(self.keys[k], index_mask)]
            at += 1
        # the zero rows in row order: the runs between stored values, and the
        # values stored as 0
        for k in range(n_found):
            t = self.found_positions[k]
            memcpy(sorted_rows + at, rows + previous, (t - previous) * sizeof(int32_t))
            at += t - previous
            if self.data[self.found_entries[k]] == 0.0:
                sorted_rows[at] = rows[t]
                at += 1
            previous = t + 1
        memcpy(sorted_rows + at, rows + previous, (m - previous) * sizeof(int32_t))
        at += m - previous
        for k in range(n_negative, count):
            sorted_rows[at] = rows[key_index(self.keys[k], index_mask)]
            at += 1
        for k in range(n_found):
            if isnan(self.data[self.found_entries[k]]):
                sorted_rows[at] = rows[self.found_positions[k]]
                at += 1
        return sorted_rows

    cdef void consider(self, SplitRecord* best, double total, double tolerance,
                       intp_t feature, const double* column, const int32_t* rows,
                       intp_t k, intp_t n_present, bint has_missing,
                       bint missing_go_to_left, double left_value,
                       double right_value) noexcept nogil:
        """Make the split of ``rows`` before position ``k`` the best one if it
        is better than ``best`` by more than ``tolerance``."""
        if not (total < best.cost - tolerance):
            return
        best.cost = total
        best.feature = feature
        best.has_missing = has_missing
        best.missing_go_to_left = missing_go_to_left
        best.left_value = left_value
        best.right_value = right_value
        best.boundary = k
        best.categories = -1
        if k == n_present:
            best.threshold = INFINITY  # present rows left, missing rows right
        else:
            best.threshold = midpoint(column[rows[k - 1] * self.row_step],
                                      column[rows[k] * self.row_step])

    cdef void evaluate_feature(self, const NodeRecord* node, intp_t feature,
                               const int32_t* rows, intp_t n_present,
                               double tolerance, SplitRecord* best) noexcept nogil:
        """Best split of the node on ``feature`` (``rows``: present rows in
        order, then missing ones), if better than ``best`` by more than
        ``tolerance``. O(m) with 2 sweeps, 4 with missing rows."""
        cdef intp_t m = node.end - node.start, n_missing = m - n_present, k
        cdef intp_t min_leaf = self.min_samples_leaf
        cdef const double* column = self.column_of(feature)
        cdef const int32_t* missing_rows = rows + n_present
        cdef intp_t step = self.row_step
        cdef unsigned char* change = self.change
        cdef double bound, missing_alone, missing_alone_value = node.value
        cdef bint any_change = n_present > 1
        cdef const int32_t* ranks = self.features.ranks[feature]
        change[0] = 0
        if self.features.ranked and ranks == NULL:  # no two rows share a value
            if n_present > 1:
                memset(change + 1, 1, n_present - 1)
        else:
            # rows in increasing order of the values, or of categories grouped:
            # equal values where the ranks (else the values) are
            any_change = False
            for k in range(1, n_present):
                check_index(rows[k], self.n_samples)
                if ranks != NULL:
                    change[k] = ranks[rows[k - 1]] != ranks[rows[k]]
                else:
                    change[k] = column[rows[k - 1] * step] != column[rows[k] * step]
                any_change |= change[k]
        change[n_present] = n_missing > 0
        if not (any_change or n_missing > 0):
            return
        if self.monotonic != NULL:
            # no value yet (NaN: a part without a finite bound keeps it)
            for k in range(n_present + 1):
                self.forward_value[k] = NAN
                self.backward_value[k] = NAN
                if self.missing_value != NULL:
                    self.missing_value[k] = NAN
            self.costs_ready = False
        # cost of every left part [0, k) forwards, of every right part
        # [k, n_present) backwards
        self.criterion.reset()
        self.criterion.sweep(rows, n_present, False, change + 1, self.forward_cost,
                             self.forward_value)
        self.criterion.reset()
        self.criterion.sweep(rows, n_present, True, change, self.backward_cost,
                             self.backward_value)
        if n_missing == 0:
            for k in range(1, n_present):
                if change[k] and k >= min_leaf and m - k >= min_leaf:
                    self.offer(node, best, tolerance, feature, column, rows, k, n_present,
                               False, False, self.forward_cost[k - 1],
                               self.forward_value[k - 1], self.backward_cost[k],
                               self.backward_value[k])
            return
        # the missing rows alone; no split with them on one side costs less than
        # the best split of the present rows plus this
        self.criterion.reset()
        self.criterion.add(missing_rows, n_missing)
        if not self.criterion.minimum(&missing_alone_value, &missing_alone):
            missing_alone_value = node.value
        bound = self.forward_cost[n_present - 1]
        for k in range(1, n_present):
            if change[k] and self.forward_cost[k - 1] + self.backward_cost[k] < bound:
                bound = self.forward_cost[k - 1] + self.backward_cost[k]
        if bound + missing_alone >= best.cost:
            return
        # missing rows right: [0, k) and [k, n_present) + missing
        self.criterion.sweep(rows, n_present, True, change, self.missing_cost,
                             self.missing_value)
        for k in range(1, n_present + 1):
            if change[k] and k >= min_leaf and m - k >= min_leaf:
                self.offer(node, best, tolerance, feature, column, rows, k, n_present,
                           True, False, self.forward_cost[k - 1], self.forward_value[k - 1],
                           self.missing_cost[k] if k < n_present else missing_alone,
                           self.missing_value[k] if k < n_present
                           else missing_alone_value)
        # missing rows left: missing + [0, k) and [k, n_present)
        self.criterion.reset()
        self.criterion.add(missing_rows, n_missing)
        self.criterion.sweep(rows, n_present, False, change + 1, self.missing_cost,
                             self.missing_value)
        for k in range(1, n_present):
            if change[k] and k + n_missing >= min_leaf and n_present - k >= min_leaf:
                self.offer(node, best, tolerance, feature, column, rows, k, n_present,
                           True, True, self.missing_cost[k - 1], self.missing_value[k - 1],
                           self.backward_cost[k], self.backward_value[k])

    cdef int evaluate_categories(self, const NodeRecord* node, intp_t feature,
                                 const int32_t* rows, intp_t n_present,
                                 double tolerance, SplitRecord* best) except -1 nogil:
        """Best split of the node on categorical ``feature`` (``rows``: present
        rows in code order, then missing ones), if better than ``best`` by
        more than ``tolerance``: the codes' order scanned, then the order of
        the categories' optimal constants (module doc). O(m + K log K) and
        the sweeps of two orders."""
        cdef intp_t m = node.end - node.start, k, g, n_groups = 0, at
        cdef const double* column = self.column_of(feature)
        cdef CategoryGroup* groups = self.groups
        cdef double before = best.cost, cost, penalty
        cdef SplitRecord trial
        cdef bint reordered = False
        cdef intp_t step = self.row_step
        for k in range(n_present):
            check_index(rows[k], self.n_samples)
            if k == 0 or column[rows[k] * step] != column[rows[k - 1] * step]:
                groups[n_groups].code = <intp_t>column[rows[k] * step]
                groups[n_groups].start = k
                n_groups += 1
            groups[n_groups - 1].count = k + 1 - groups[n_groups - 1].start
        self.evaluate_feature(node, feature, rows, n_present, tolerance, best)
        if best.cost < before:
            self.keep_categories(best, feature, rows, n_present)
        if n_groups < 3:  # two categories have one partition, the codes' split
            return 0
        for g in range(n_groups):
            self.criterion.reset()
            self.criterion.add(rows + groups[g].start, groups[g].count)
            if not self.criterion.minimum(&groups[g].value, &cost):
                groups[g].value = node.value
        sort_categories(groups, n_groups)
        at = 0
        for g in range(n_groups):
            reordered |= groups[g].start != at
            for k in range(groups[g].count):
                self.category_rows[at + k] = rows[groups[g].start + k]
            at += groups[g].count
        if not reordered:
            return 0
        for k in range(n_present, m):
            self.category_rows[k] = rows[k]
        # a split of the ordered categories must beat the best so far by the
        # penalty of its choice among many (module doc)
        penalty = (self.category_penalty * (n_groups - 2) * node.cost / node.weight
                   if node.weight > 0.0 else 0.0)
        trial = best[0]
        trial.cost = best.cost - penalty
        self.evaluate_feature(node, feature, self.category_rows, n_present, tolerance,
                              &trial)
        if trial.cost < best.cost - penalty:
            best[0] = trial
            best.cost = trial.cost + penalty
            self.keep_categories(best, feature, self.category_rows, n_present)
        return 0

    cdef int keep_categories(self, SplitRecord* best, intp_t feature,
                             const int32_t* rows, intp_t n_present) except -1 nogil:
        """Make the best split, just found on categorical ``feature`` by a scan
        of ``rows`` (present rows in a category order), a split of sets: the
        categories of the rows before ``best.boundary`` go left."""
        cdef const double* column = self.column_of(feature)
        cdef double low = INFINITY, high = -INFINITY
        cdef intp_t k, n_words, code
        cdef int64_t first
        cdef uint32_t* words
        cdef intp_t step = self.row_step
        for k in range(n_present):
            low = min(low, column[rows[k] * step])
            high = max(high, column[rows[k] * step])
        first = <int64_t>low
        n_words = (<int64_t>high - first) // 32 + 1
        words = self.new_categories(best, first, n_words)
        for k in range(n_present):
            code = <intp_t>(<int64_t>column[rows[k] * step] - first)
            words[n_words + (code >> 5)] |= 1u << (code & 31)
            if k < best.boundary:
                words[code >> 5] |= 1u << (code & 31)
        best.threshold = NAN
        return 0

    cdef bint find_split(self, const NodeRecord* node, SplitRecord* split) noexcept nogil:
        """Best split of the node over features drawn in a random order.

        At least ``max_features`` features that can split the node are
        evaluated, more while none gives a valid split. Returns False when
        there is no valid split lowering the cost by more than the
        tolerance.
        """
        cdef intp_t n_drawn = 0, n_visited = 0, n_present, feature
        cdef double tolerance = SPLIT_RTOL * node.cost
        cdef const int32_t* rows
        self.criterion.node_init(node.target_start, node.target_end)
        self.categories_start = self.category_words.size()
        split.categories = -1
        split.cost = INFINITY
        if self.monotonic != NULL and self.bounds_from == BOUNDS_MIDPOINTS:
            # each row's loss at the node's finite bounds
            if isfinite(node.value_lower):
                self.criterion.row_costs(self.node_rows + node.start, node.end - node.start,
                                         node.value_lower, self.lower_losses)
            if isfinite(node.value_upper):
                self.criterion.row_costs(self.node_rows + node.start, node.end - node.start,
                                         node.value_upper, self.upper_losses)
        while n_drawn < self.n_features:
            if n_visited >= self.max_features and split.cost < INFINITY:
                break
            feature = self.draw_feature(n_drawn)
            n_drawn += 1
            if not self.allows(node, feature):
                continue
            rows = self.feature_order(node, feature, &n_present)
            if rows == NULL:
                continue
            n_visited += 1
            if self.features.n_categories[feature] > 0:
                self.evaluate_categories(node, feature, rows, n_present, tolerance, split)
            else:
                self.evaluate_feature(node, feature, rows, n_present, tolerance, split)
        if split.categories < 0:
            self.category_words.resize(self.categories_start)
        split.improvement = node.cost - split.cost
        return split.cost < INFINITY and split.improvement > tolerance

    cdef int split_node(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                        NodeRecord* left, NodeRecord* right) except -1 nogil:
        """Partition the node's rows and targets, add its children to the tree
        and describe them in ``left`` and ``right``. O(m) per presorted list
        kept, O(m log m) when the children start sorting on demand."""
        cdef intp_t m = node.end - node.start, k, j, n_left = 0
        cdef const double* column
        cdef int32_t* rows = self.node_rows + node.start
        cdef bint keep_presorted = node.presorted and m >= self.presort_min_rows
        cdef const int32_t* ordered
        cdef double x
        if self.indptr != NULL:
            self.read_stored(node, split.feature)
        column = self.column_of(split.feature)
        if node.presorted and split.categories < 0 and self.indptr == NULL:
            # the rows before the scan's boundary in the feature's order go
            # left, and the missing ones (last) where the split sends them
            ordered = self.samples + split.feature * self.n_active + node.start
            for k in range(m):
                check_index(ordered[k], self.n_samples)
                self.goes_left[ordered[k]] = k < split.boundary
            n_left = split.boundary
            k = m - 1
            while (split.has_missing and split.missing_go_to_left and k >= 0
                   and isnan(column[ordered[k] * self.row_step])):
                self.goes_left[ordered[k]] = True
                n_left += 1
                k -= 1
        else:
            for k in range(m):
                check_index(rows[k], self.n_samples)
                x = column[rows[k] * self.row_step]
                if split.categories >= 0:
                    self.goes_left[rows[k]] = self.category_goes_left(split, x)
                else:
                    self.goes_left[rows[k]] = (split.missing_go_to_left if isnan(x)
                                               else x <= split.threshold)
                n_left += self.goes_left[rows[k]]
        if keep_presorted:
            for j in range(self.n_features):
                stable_partition(self.samples + j * self.n_active + node.start, m,
                                 self.goes_left, 0, self.scratch, self.n_samples)
        left.presorted = right.presorted = keep_presorted
        self.partition(node, n_left, left, right, 1)
        self.evaluate_child(node, left, split.left_value)
        self.evaluate_child(node, right, split.right_value)
        if self.monotonic != NULL:
            self.bound_children(node, split, left, right)
        return self.add_children(tree, node, split, left, right)


cdef inline void reverse_rows(int32_t* rows, intp_t count) noexcept nogil:
    cdef intp_t k
    cdef int32_t row
    for k in range(count // 2):
        row = rows[k]
        rows[k] = rows[count - 1 - k]
        rows[count - 1 - k] = row
