"""Growing Maximum Margin Interval Trees: features, split search, growth.

The builder grows a regression tree whose leaves predict the constant that
minimises a loss (a :class:`~mmit._criterion.Criterion`) over their rows
(DESIGN.md sections 3, 7 and 10).

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

- presorted: every feature is sorted once per fit (:class:`Features`); a
  node's rows sit in the same range of every feature's list, and a split
  partitions every list stably between the children. O(p m) per split.
- sorted on demand: a node keeps its rows in one list; each drawn feature's
  present values are sorted when the feature is evaluated. O(k m log m) for
  k evaluated features.

A node keeps its children presorted while it has at least
``presort_min_rows`` rows (the cost model of ``_fitting.presort_min_rows``);
below that its subtree sorts on demand. Both ways order the rows by
(value, row index), so they give the same tree.

The whole build runs without the GIL, so trees of a forest grow in parallel
threads. Costs are stored exactly (re-evaluated at each node's prediction);
split costs compare with a relative tolerance so that rounding in the
solver's running sums never decides between equal splits.
"""

from libc.math cimport INFINITY, isfinite, isnan, log2
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy
from libcpp.algorithm cimport sort as std_sort
from libcpp.utility cimport pair

import numpy as np

from ._solver import check_row_count, check_same_length

from ._criterion cimport Criterion
from ._solver cimport check_index
from ._tree cimport Tree

# Splits whose costs differ by less than this (relative to the node's cost)
# are ties; a split must lower the node's cost by more than this.
cdef double SPLIT_RTOL = 1e-10

ctypedef pair[double, uint64_t] ValueKey


# ---------------------------------------------------------------------------
# Sorting values with their row: packed 64-bit keys
# ---------------------------------------------------------------------------

cdef inline uint64_t sortable_bits(double value) noexcept nogil:
    """Bits of ``value`` as an unsigned integer in the order of the values
    (-0.0 and +0.0 alike)."""
    cdef uint64_t bits
    value = value + 0.0
    memcpy(&bits, &value, sizeof(double))
    return bits ^ ((<uint64_t>(<long long> bits >> 63)) | (<uint64_t>1 << 63))


cdef inline uint64_t index_mask_for(intp_t count) noexcept nogil:
    """Mask of the low bits that hold an index below ``count``."""
    cdef uint64_t mask = 1
    while mask < <uint64_t>count:
        mask = (mask << 1) | 1
    return mask


cdef int order_close_values(uint64_t* keys, intp_t count, uint64_t index_mask,
                            const double* column, const int32_t* rows,
                            uint64_t missing_key) except -1 nogil:
    """Order exactly the sorted ``keys`` whose kept high bits tie.

    A key is a value's ``sortable_bits`` with the low bits replaced by an
    index (of the row itself when ``rows`` is NULL, else of ``rows``); sorting
    the keys orders them by value up to values that differ only in the
    dropped bits. Runs of keys with equal high bits are left in index order
    when they hold one value (ties) and sorted by (value, index) otherwise;
    runs of ``missing_key`` (missing values) stay in index order.
    """
    cdef intp_t start = 0, end, k
    cdef uint64_t high_mask = ~index_mask, index
    cdef double first
    cdef bint one_value
    cdef ValueKey* run = NULL
    cdef intp_t run_capacity = 0
    while start < count:
        end = start + 1
        while end < count and ((keys[end] ^ keys[start]) & high_mask) == 0:
            end += 1
        if end - start > 1 and (keys[start] & high_mask) != missing_key:
            index = keys[start] & index_mask
            first = column[rows[index] if rows != NULL else index]
            one_value = True
            for k in range(start + 1, end):
                index = keys[k] & index_mask
                if column[rows[index] if rows != NULL else index] != first:
                    one_value = False
                    break
            if not one_value:
                if end - start > run_capacity:
                    run_capacity = 2 * (end - start)
                    free(run)
                    run = <ValueKey*> malloc(run_capacity * sizeof(ValueKey))
                    if run == NULL:
                        with gil:
                            raise MemoryError("cannot allocate a run of close values")
                for k in range(start, end):
                    index = keys[k] & index_mask
                    run[k - start].first = column[rows[index] if rows != NULL else index]
                    run[k - start].second = keys[k]
                std_sort(run, run + (end - start))
                for k in range(start, end):
                    keys[k] = run[k - start].second
        start = end
    free(run)
    return 0


def presort(const double[::1, :] X):
    """Rows of X by increasing value of each feature, ties by row, NaN last.

    Returns ``order`` of shape (n_features, n_samples), int32: the order of
    ``numpy.argsort(X[:, j], kind="stable")`` for each feature j. One
    vectorised ``numpy.sort`` of packed keys (the value's high bits and the
    row) orders the values up to ties in the kept bits, which a linear pass
    then orders exactly; about three times faster than a stable argsort.
    """
    cdef intp_t n = X.shape[0], p = X.shape[1], i, j
    cdef uint64_t index_mask = index_mask_for(n)
    cdef uint64_t missing_key = ~index_mask
    keys_array = np.empty((p, n), dtype=np.uint64)
    cdef uint64_t[:, ::1] keys = keys_array
    with nogil:
        for j in range(p):
            for i in range(n):
                keys[j, i] = ((missing_key if isnan(X[i, j])
                               else sortable_bits(X[i, j]) & ~index_mask) | <uint64_t>i)
    keys_array.sort(axis=1)
    order_array = np.empty((p, n), dtype=np.int32)
    cdef int32_t[:, ::1] order = order_array
    with nogil:
        for j in range(p):
            if n > 0:
                order_close_values(&keys[j, 0], n, index_mask, &X[0, j], NULL, missing_key)
            for i in range(n):
                order[j, i] = <int32_t>(keys[j, i] & index_mask)
    return order_array


cdef class Features:
    """Training features, possibly presorted, shared read-only by all trees.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Validated features: finite or NaN (missing).
    presorted : bool
        Sort every feature now (see :func:`presort`), for trees whose large
        nodes keep their rows presorted.
    """

    def __cinit__(self, X, bint presorted):
        X = np.asfortranarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        check_row_count(X.shape[0])
        self.X = X
        self.n_samples = X.shape[0]
        self.n_features = X.shape[1]
        self.presorted = presorted
        self.order = presort(X) if presorted else np.empty((0, 0), dtype=np.int32)
        self.has_missing = np.isnan(X).any(axis=0).view(np.uint8)

    @property
    def rows(self):
        """The features in row-major order (made once, read-only), for walks
        down the trees grown on them."""
        if self._rows is None:
            rows = np.ascontiguousarray(self.X)
            rows.flags.writeable = False
            self._rows = rows
        return self._rows

    def __reduce__(self):
        return (Features, (np.asarray(self.X), self.presorted))


# ---------------------------------------------------------------------------
# Split search
# ---------------------------------------------------------------------------

cdef inline uint32_t random_below(uint32_t* state, uint32_t bound) noexcept nogil:
    """Pseudo-random integer in [0, bound) (xorshift32)."""
    cdef uint32_t x = state[0]
    x ^= x << 13
    x ^= x >> 17
    x ^= x << 5
    state[0] = x
    return x % bound


cdef inline double midpoint(double left_x, double right_x) noexcept nogil:
    """Threshold between two distinct values: ``left_x <= t < right_x``."""
    cdef double threshold = left_x / 2.0 + right_x / 2.0
    if threshold == right_x or not isfinite(threshold):
        return left_x
    return threshold


cdef intp_t stable_partition(int32_t* rows, intp_t count, const unsigned char* goes_left,
                             int32_t* scratch, intp_t n_rows) noexcept nogil:
    """Rows going left first, each side in its order. Returns how many go
    left. O(count)."""
    cdef intp_t k, n_left = 0, n_right = 0
    cdef int32_t row
    for k in range(count):
        row = rows[k]
        check_index(row, n_rows)
        if goes_left[row]:
            rows[n_left] = row
            n_left += 1
        else:
            scratch[n_right] = row
            n_right += 1
    memcpy(rows + n_left, scratch, n_right * sizeof(int32_t))
    return n_left


cdef class Splitter:
    """The split search and partitions of one tree build (see the module doc).

    Parameters
    ----------
    criterion : Criterion
        The loss, initialised with the build's targets and weights.
    features : Features
    sample_weight : ndarray of shape (n_samples,)
    max_features, min_samples_leaf, presort_min_rows : int
    seed : int
        Seed of the feature order, in [1, 2**32).
    """

    def __cinit__(self, Criterion criterion, Features features,
                  const double[::1] sample_weight, intp_t max_features,
                  intp_t min_samples_leaf, intp_t presort_min_rows, uint32_t seed):
        cdef intp_t n = features.n_samples, p = features.n_features, m = 0, i, j, k
        check_same_length("sample_weight", sample_weight, "X", n)
        if criterion.n_samples != n:
            raise ValueError(f"the criterion has {criterion.n_samples} rows for "
                             f"{n} samples.")
        with nogil:
            for i in range(n):
                m += sample_weight[i] > 0.0
        cdef bint presorted = features.presorted and m >= presort_min_rows
        samples = np.empty((p if presorted else 0, m if presorted else 0), dtype=np.int32)
        node_rows = np.empty(max(n, 1), dtype=np.int32)
        goes_left = np.zeros(max(n, 1), dtype=np.uint8)
        scratch = np.empty(max(n, 1), dtype=np.int32)
        keys = np.empty(max(n, 1), dtype=np.uint64)
        feature_rows = np.empty(max(n, 1), dtype=np.int32)
        change = np.empty(n + 1, dtype=np.uint8)
        sweeps = np.empty((6, max(n, 1)))
        feature_ids = np.arange(max(p, 1), dtype=np.intp)
        self._buffers = (samples, node_rows, goes_left, scratch, keys, feature_rows,
                         change, sweeps, feature_ids)

        cdef int32_t[:, ::1] samples_view = samples
        cdef int32_t[::1] node_rows_view = node_rows
        cdef unsigned char[::1] goes_left_view = goes_left
        cdef int32_t[::1] scratch_view = scratch
        cdef uint64_t[::1] keys_view = keys
        cdef int32_t[::1] feature_rows_view = feature_rows
        cdef unsigned char[::1] change_view = change
        cdef double[:, ::1] sweeps_view = sweeps
        cdef intp_t[::1] feature_ids_view = feature_ids
        cdef int32_t row
        with nogil:
            # the rows of positive weight, in increasing order and in each
            # feature's presorted order
            k = 0
            for i in range(n):
                if sample_weight[i] > 0.0:
                    node_rows_view[k] = <int32_t>i
                    k += 1
            if presorted:
                for j in range(p):
                    k = 0
                    for i in range(n):
                        row = features.order[j, i]
                        if sample_weight[row] > 0.0:
                            samples_view[j, k] = row
                            k += 1
        self.criterion = criterion
        self.features = features
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.presort_min_rows = presort_min_rows
        self.random_state = seed if seed != 0 else 1
        self.X = &features.X[0, 0] if n > 0 and p > 0 else NULL
        self.n_samples = n
        self.n_features = p
        self.n_active = m
        self.samples = &samples_view[0, 0] if presorted and m > 0 else NULL
        self.node_rows = &node_rows_view[0]
        self.goes_left = &goes_left_view[0]
        self.scratch = &scratch_view[0]
        self.keys = &keys_view[0]
        self.feature_rows = &feature_rows_view[0]
        self.change = &change_view[0]
        self.forward_cost = &sweeps_view[0, 0]
        self.forward_value = &sweeps_view[1, 0]
        self.backward_cost = &sweeps_view[2, 0]
        self.backward_value = &sweeps_view[3, 0]
        self.missing_cost = &sweeps_view[4, 0]
        self.missing_value = &sweeps_view[5, 0]
        self.feature_ids = &feature_ids_view[0]

    cdef int init_root(self, NodeRecord* root, double* weight) except -1 nogil:
        """Describe the root (all rows of positive weight, its value and cost)
        and write its weight."""
        cdef double value = 0.0, cost
        root.start = 0
        root.end = self.n_active
        root.target_start = 0
        root.target_end = self.criterion.n_targets
        root.depth = 0
        root.presorted = self.samples != NULL
        self.criterion.node_init(root.target_start, root.target_end)
        self.criterion.reset()
        self.criterion.add(self.node_rows, self.n_active)
        self.criterion.minimum(&value, &cost)
        root.value = value
        root.cost = self.criterion.node_cost(self.node_rows, self.n_active, value, weight)
        return 0

    cdef const int32_t* feature_order(self, const NodeRecord* node, intp_t feature,
                                      intp_t* n_present) noexcept nogil:
        """The node's rows by increasing value of ``feature`` (ties by row),
        rows missing it last; the number of rows with it present in
        ``n_present``. NULL when the feature cannot split the node (one
        present value and nothing missing, or nothing present)."""
        cdef intp_t m = node.end - node.start, count, t
        cdef const double* column = self.X + feature * self.n_samples
        cdef const int32_t* rows
        cdef int32_t* sorted_rows
        cdef uint64_t index_mask
        cdef double x, low = INFINITY, high = -INFINITY
        if node.presorted:
            rows = self.samples + feature * self.n_active + node.start
            count = m
            while count > 0 and isnan(column[rows[count - 1]]):
                count -= 1
            n_present[0] = count
            if count == 0 or (count == m and column[rows[0]] >= column[rows[m - 1]]):
                return NULL
            return rows
        # unsorted node: sort the present values, keyed by position in the node
        rows = self.node_rows + node.start
        sorted_rows = self.feature_rows
        index_mask = index_mask_for(m)
        count = 0
        for t in range(m):
            check_index(rows[t], self.n_samples)
            x = column[rows[t]]
            if isnan(x):
                sorted_rows[m - 1 - (t - count)] = rows[t]
                continue
            low = x if x < low else low
            high = x if x > high else high
            self.keys[count] = (sortable_bits(x) & ~index_mask) | <uint64_t>t
            count += 1
        n_present[0] = count
        if count == 0 or (count == m and low >= high):
            return NULL
        # missing rows were written backwards from the end: restore row order
        reverse_rows(sorted_rows + count, m - count)
        std_sort(self.keys, self.keys + count)
        order_close_values(self.keys, count, index_mask, column, rows, ~index_mask)
        for t in range(count):
            sorted_rows[t] = rows[self.keys[t] & index_mask]
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
        if k == n_present:
            best.threshold = INFINITY  # present rows left, missing rows right
        else:
            best.threshold = midpoint(column[rows[k - 1]], column[rows[k]])

    cdef void evaluate_feature(self, const NodeRecord* node, intp_t feature,
                               const int32_t* rows, intp_t n_present,
                               double tolerance, SplitRecord* best) noexcept nogil:
        """Best split of the node on ``feature`` (``rows``: present rows in
        order, then missing ones), if better than ``best`` by more than
        ``tolerance``. O(m) with 2 sweeps, 4 with missing rows."""
        cdef intp_t m = node.end - node.start, n_missing = m - n_present, k
        cdef intp_t min_leaf = self.min_samples_leaf
        cdef const double* column = self.X + feature * self.n_samples
        cdef const int32_t* missing_rows = rows + n_present
        cdef unsigned char* change = self.change
        cdef double bound, missing_alone, missing_alone_value = node.value
        cdef bint any_change = False
        change[0] = 0
        for k in range(1, n_present):
            check_index(rows[k], self.n_samples)
            change[k] = column[rows[k - 1]] < column[rows[k]]
            any_change |= change[k]
        change[n_present] = n_missing > 0
        if not (any_change or n_missing > 0):
            return
        # cost of every left part [0, k) forwards, of every right part [k, n_present) backwards
        self.criterion.reset()
        self.criterion.sweep(rows, n_present, False, change + 1, self.forward_cost,
                        self.forward_value)
        self.criterion.reset()
        self.criterion.sweep(rows, n_present, True, change, self.backward_cost,
                        self.backward_value)
        if n_missing == 0:
            for k in range(1, n_present):
                if change[k] and k >= min_leaf and m - k >= min_leaf:
                    self.consider(best, self.forward_cost[k - 1] + self.backward_cost[k],
                                  tolerance, feature, column, rows, k, n_present, False,
                                  False, self.forward_value[k - 1], self.backward_value[k])
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
                self.consider(best, self.forward_cost[k - 1]
                              + (self.missing_cost[k] if k < n_present else missing_alone),
                              tolerance, feature, column, rows, k, n_present, True, False,
                              self.forward_value[k - 1],
                              self.missing_value[k] if k < n_present
                              else missing_alone_value)
        # missing rows left: missing + [0, k) and [k, n_present)
        self.criterion.reset()
        self.criterion.add(missing_rows, n_missing)
        self.criterion.sweep(rows, n_present, False, change + 1, self.missing_cost,
                        self.missing_value)
        for k in range(1, n_present):
            if change[k] and k + n_missing >= min_leaf and n_present - k >= min_leaf:
                self.consider(best, self.missing_cost[k - 1] + self.backward_cost[k],
                              tolerance, feature, column, rows, k, n_present, True, True,
                              self.missing_value[k - 1], self.backward_value[k])

    cdef bint find_split(self, const NodeRecord* node, SplitRecord* split) noexcept nogil:
        """Best split of the node over features drawn in a random order.

        At least ``max_features`` features that can split the node are
        evaluated, more while none gives a valid split. Returns False when
        there is no valid split lowering the cost by more than the
        tolerance.
        """
        cdef intp_t n_drawn = 0, n_visited = 0, n_present, j, feature
        cdef double tolerance = SPLIT_RTOL * node.cost
        cdef const int32_t* rows
        self.criterion.node_init(node.target_start, node.target_end)
        split.cost = INFINITY
        while n_drawn < self.n_features:
            if n_visited >= self.max_features and split.cost < INFINITY:
                break
            j = n_drawn + random_below(&self.random_state, self.n_features - n_drawn)
            feature = self.feature_ids[j]
            self.feature_ids[j] = self.feature_ids[n_drawn]
            self.feature_ids[n_drawn] = feature
            n_drawn += 1
            rows = self.feature_order(node, feature, &n_present)
            if rows == NULL:
                continue
            n_visited += 1
            self.evaluate_feature(node, feature, rows, n_present, tolerance, split)
        return split.cost < INFINITY and node.cost - split.cost > tolerance

    cdef int split_node(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                        NodeRecord* left, NodeRecord* right) except -1 nogil:
        """Partition the node's rows and targets, add its children to the tree
        and describe them in ``left`` and ``right``. O(m) per presorted list
        kept, O(m log m) when the children start sorting on demand."""
        cdef intp_t m = node.end - node.start, k, j, n_left = 0, n_left_targets
        cdef const double* column = self.X + split.feature * self.n_samples
        cdef int32_t* rows = self.node_rows + node.start
        cdef bint keep_presorted = node.presorted and m >= self.presort_min_rows
        cdef double x, left_weight, right_weight
        for k in range(m):
            check_index(rows[k], self.n_samples)
            x = column[rows[k]]
            self.goes_left[rows[k]] = (split.missing_go_to_left if isnan(x)
                                       else x <= split.threshold)
            n_left += self.goes_left[rows[k]]
        if keep_presorted:
            for j in range(self.n_features):
                stable_partition(self.samples + j * self.n_active + node.start, m,
                                 self.goes_left, self.scratch, self.n_samples)
        # the rows in row order, whichever way the children find feature orders
        stable_partition(rows, m, self.goes_left, self.scratch, self.n_samples)
        n_left_targets = self.criterion.partition_targets(
            node.target_start, node.target_end, self.goes_left)
        left.start = node.start
        left.end = node.start + n_left
        left.target_start = node.target_start
        left.target_end = node.target_start + n_left_targets
        right.start = left.end
        right.end = node.end
        right.target_start = left.target_end
        right.target_end = node.target_end
        left.presorted = right.presorted = keep_presorted
        left_weight = self.add_child(tree, node, left, split.left_value, True)
        right_weight = self.add_child(tree, node, right, split.right_value, False)
        # without missing rows in the node, NaN follows the heavier child
        tree.set_split(node.node_id, split.feature, split.threshold,
                       split.missing_go_to_left if split.has_missing
                       else left_weight >= right_weight)
        return 0

    cdef double add_child(self, Tree tree, const NodeRecord* parent, NodeRecord* child,
                          double value, bint is_left) except -1 nogil:
        """Complete a child's record (ranges set), add it to the tree and
        return its weight. A child without a finite bound keeps its parent's
        prediction."""
        cdef double weight
        child.value = value if child.target_end > child.target_start else parent.value
        child.depth = parent.depth + 1
        child.cost = self.criterion.node_cost(self.node_rows + child.start,
                                              child.end - child.start, child.value,
                                              &weight)
        child.node_id = tree.add_node(parent.node_id, is_left, child.value, child.cost,
                                      child.end - child.start, weight, child.depth)
        return weight


cdef inline void reverse_rows(int32_t* rows, intp_t count) noexcept nogil:
    cdef intp_t k
    cdef int32_t row
    for k in range(count // 2):
        row = rows[k]
        rows[k] = rows[count - 1 - k]
        rows[count - 1 - k] = row


# ---------------------------------------------------------------------------
# Growth
# ---------------------------------------------------------------------------

ctypedef struct Frontier:
    NodeRecord node             # a leaf that may be split (best-first growth)
    SplitRecord split           # its best split
    bint splittable             # whether `split` is a valid split
    double improvement          # cost decrease of that split


ctypedef struct GrowthLimits:
    intp_t max_depth
    intp_t min_samples_split
    intp_t min_samples_leaf
    double min_decrease         # a split must lower the cost by at least this much


cdef bint can_split(const GrowthLimits* limits, const NodeRecord* node) noexcept nogil:
    cdef intp_t m = node.end - node.start
    return (node.depth < limits.max_depth and m >= limits.min_samples_split
            and m >= 2 * limits.min_samples_leaf and node.cost > 0.0)


cdef bint split_found(Splitter splitter, const GrowthLimits* limits,
                      const NodeRecord* node, SplitRecord* split) noexcept nogil:
    """Whether the node may split and has a split lowering its cost enough."""
    return (can_split(limits, node) and splitter.find_split(node, split)
            and node.cost - split.cost >= limits.min_decrease)


cdef void* grow_buffer(void* buffer, intp_t size, intp_t* capacity,
                       size_t item_size) except NULL nogil:
    """``buffer`` with room for ``size`` items (capacity doubles)."""
    cdef void* grown
    if size <= capacity[0] and buffer != NULL:
        return buffer
    capacity[0] = max(2 * capacity[0], size, 64)
    grown = realloc(buffer, capacity[0] * item_size)
    if grown == NULL:
        with gil:
            raise MemoryError("cannot grow the tree builder's node list")
    return grown


cdef int grow_depth_first(Splitter splitter, const GrowthLimits* limits, Tree tree,
                          NodeRecord* root) except -1 nogil:
    cdef NodeRecord* stack = NULL
    cdef intp_t size = 1, capacity = 0
    cdef NodeRecord node
    cdef SplitRecord split
    try:
        stack = <NodeRecord*> grow_buffer(stack, 1, &capacity, sizeof(NodeRecord))
        stack[0] = root[0]
        while size > 0:
            size -= 1
            node = stack[size]
            if not split_found(splitter, limits, &node, &split):
                continue
            stack = <NodeRecord*> grow_buffer(stack, size + 2, &capacity,
                                              sizeof(NodeRecord))
            # push the right child below the left one: left subtrees first
            splitter.split_node(tree, &node, &split, &stack[size + 1], &stack[size])
            size += 2
    finally:
        free(stack)
    return 0


cdef void examine(Splitter splitter, const GrowthLimits* limits, const NodeRecord* node,
                  Frontier* leaf) noexcept nogil:
    leaf.node = node[0]
    leaf.splittable = split_found(splitter, limits, node, &leaf.split)
    leaf.improvement = node.cost - leaf.split.cost if leaf.splittable else -INFINITY


cdef int grow_best_first(Splitter splitter, const GrowthLimits* limits, Tree tree,
                         NodeRecord* root, intp_t max_leaf_nodes) except -1 nogil:
    """Split the leaf whose best split lowers the cost most, until
    ``max_leaf_nodes`` leaves (a binary max-heap of candidate leaves, grown
    as leaves appear: at most one entry per leaf of the tree)."""
    cdef Frontier* heap = NULL
    cdef intp_t size = 0, capacity = 0, n_leaves = 1
    cdef Frontier best
    cdef NodeRecord left, right
    try:
        heap = <Frontier*> grow_buffer(heap, 1, &capacity, sizeof(Frontier))
        examine(splitter, limits, root, &heap[0])
        size = 1
        while size > 0 and n_leaves < max_leaf_nodes:
            best = heap[0]
            size -= 1
            heap[0] = heap[size]
            sift_down(heap, size, 0)
            if not best.splittable:
                continue
            splitter.split_node(tree, &best.node, &best.split, &left, &right)
            n_leaves += 1
            heap = <Frontier*> grow_buffer(heap, size + 2, &capacity, sizeof(Frontier))
            examine(splitter, limits, &left, &heap[size])
            sift_up(heap, size)
            examine(splitter, limits, &right, &heap[size + 1])
            sift_up(heap, size + 1)
            size += 2
    finally:
        free(heap)
    return 0


cdef inline bint heap_before(const Frontier* a, const Frontier* b) noexcept nogil:
    """Larger improvement first; equal ones in the order nodes were created."""
    if a.improvement != b.improvement:
        return a.improvement > b.improvement
    return a.node.node_id < b.node.node_id


cdef void sift_up(Frontier* heap, intp_t k) noexcept nogil:
    cdef Frontier item = heap[k]
    cdef intp_t parent
    while k > 0:
        parent = (k - 1) // 2
        if not heap_before(&item, &heap[parent]):
            break
        heap[k] = heap[parent]
        k = parent
    heap[k] = item


cdef void sift_down(Frontier* heap, intp_t size, intp_t k) noexcept nogil:
    cdef Frontier item
    cdef intp_t child
    if size == 0:
        return
    item = heap[k]
    while True:
        child = 2 * k + 1
        if child >= size:
            break
        if child + 1 < size and heap_before(&heap[child + 1], &heap[child]):
            child += 1
        if not heap_before(&heap[child], &item):
            break
        heap[k] = heap[child]
        k = child
    heap[k] = item


cdef class TreeBuilder:
    """Grows trees with resolved parameters (all inputs already validated).

    Parameters
    ----------
    loss : IntervalLoss
        The loss (an entry of ``mmit._loss.LOSSES``): its ``criterion(targets,
        sample_weight)`` is the split criterion of each build.
    max_depth : int
        Maximum depth (a large number for no limit).
    min_samples_split, min_samples_leaf : int
        Minimum (positive-weight) rows to split a node / in each leaf.
    max_features : int
        Features evaluated per node (at least; more while no split is valid).
    max_leaf_nodes : int
        Grow best-first up to this many leaves; -1 grows depth-first.
    min_cost_decrease : float
        A split must lower the node's cost by at least this much times the
        total weight of the training rows.
    presort_min_rows : int
        Nodes with at least this many rows keep their children's rows in
        presorted lists; smaller ones sort on demand (see the module doc).
    """

    def __cinit__(self, loss, intp_t max_depth, intp_t min_samples_split,
                  intp_t min_samples_leaf, intp_t max_features, intp_t max_leaf_nodes,
                  double min_cost_decrease, intp_t presort_min_rows):
        if not callable(getattr(loss, "criterion", None)):
            raise TypeError(f"loss must be an IntervalLoss, got {loss!r}.")
        if (max_depth < 0 or min_samples_split < 1 or min_samples_leaf < 1
                or max_features < 1 or not (max_leaf_nodes == -1 or max_leaf_nodes >= 2)
                or not min_cost_decrease >= 0.0 or presort_min_rows < 0):
            raise ValueError("invalid tree builder parameters.")
        self.loss = loss
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_cost_decrease = min_cost_decrease
        self.presort_min_rows = presort_min_rows

    def build(self, Features features, targets, const double[::1] sample_weight,
              uint32_t seed):
        """Grow a Tree on the rows of positive weight.

        Parameters
        ----------
        features : Features
        targets : object
            The criterion's targets (HingeTargets for the hinge losses), one
            per row of ``features``.
        sample_weight : ndarray of shape (n_samples,)
            Non-negative weights, at least one positive.
        seed : int
            Seed of the feature order (ties between splits), in [0, 2**32).

        Returns
        -------
        tree : Tree
        """
        if self.max_features > features.n_features:
            raise ValueError(f"max_features={self.max_features} exceeds the number of "
                             f"features ({features.n_features}).")
        cdef Criterion criterion = self.loss.criterion(targets, sample_weight)
        cdef Splitter splitter = Splitter(criterion, features, sample_weight,
                                          self.max_features, self.min_samples_leaf,
                                          self.presort_min_rows, seed)
        if splitter.n_active == 0:
            raise ValueError("no sample has a positive weight.")
        cdef Tree tree = Tree(features.n_features)
        cdef GrowthLimits limits
        limits.max_depth = self.max_depth
        limits.min_samples_split = self.min_samples_split
        limits.min_samples_leaf = self.min_samples_leaf
        cdef NodeRecord root
        cdef double root_weight
        with nogil:
            splitter.init_root(&root, &root_weight)
            limits.min_decrease = self.min_cost_decrease * root_weight
            root.node_id = tree.add_node(-1, False, root.value, root.cost, root.end,
                                         root_weight, 0)
            if self.max_leaf_nodes > 0:
                grow_best_first(splitter, &limits, tree, &root, self.max_leaf_nodes)
            else:
                grow_depth_first(splitter, &limits, tree, &root)
        tree._resize(tree.node_count)
        return tree
