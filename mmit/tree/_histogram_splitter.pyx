"""The histogram split search: splits from binned features, exact values in
every node.

Each feature is binned once per fit (``mmit.tree._binning``: at most 255 bins of
present values and one bin for missing values, codes as uint8). A tree is
grown on rows whose gradient ``g_i`` and curvature ``h_i`` of the loss at
the current prediction come from the criterion (``Criterion.gradients``,
the loss's own derivatives in ``_loss.pxd``, weighted). A node's histogram
holds, per feature and bin, the sums of ``g``, ``h`` and the rows
(``_histogram``, which also scans them); a scan over the bins gives every
split's Newton gain

    G_L^2 / H_L + G_R^2 / H_R - G^2 / H

(``G``, ``H``: sums over a side; a side without curvature scores 0), with
the missing rows tried on each side, and "present versus missing" a
candidate too, as in the exact search. Monotone constraints (see
``_splitter``): a split on a constrained feature is a candidate only when
the Newton steps ``-G / H`` of its sides follow the feature's direction;
the children's exact values are then clipped to the node's bounds, and
pooled to the node's value if they are out of order. For a loss without curvature (the
linear hinge) ``h_i`` is the row's weight: the gain of a least-squares fit
to the gradients (as for LightGBM's L1 objective). The best split of each
feature is the first bin of largest gain; between features, the first in
a random order (gains within a relative ``SPLIT_RTOL`` are ties, so that
rounding in the sums never decides). A node's order follows from its key:
the root's is the build's seed, a child's a hash of its parent's and its
side (``child_key``), so that the order is a function of the node's path,
which a fit on a cluster, growing a tree a level at a time, draws alike
(``_level_builder.draw_order``). A split's improvement, which orders best-first
growth, is half its gain: the loss decrease of a Newton step.

Histograms. When every feature is evaluated, a node's histogram is built
in one pass over its rows for all features at once, and of two siblings
only the smaller is built from its rows: the larger is its parent's minus
the smaller (scikit-learn's and LightGBM's subtraction). The subtraction
waits until one of the siblings is searched, so that children that stay
leaves cost nothing. A pool of histograms, reference-counted by the node
records that may still need them, holds a parent's histogram until its
children are served; with depth-first growth it holds at most one per
level, with best-first growth one per leaf of the frontier, up to
``MAX_KEPT_BYTES`` (beyond, children build theirs from their rows). With
``max_features`` below the number of features, each drawn feature's
histogram is built from the node's rows (no subtraction). With several
threads, a histogram's features are shared between them (each pass over
the rows sums the bins of its features) and so are the scans.

Sparse codes (binned sparse features: each row's codes other than their
feature's bin of 0, see ``BinnedFeatures``) are summed from the rows'
stored codes only: each feature's bin of 0 gets the node's sums less
those of its other bins, so that a histogram costs O(stored codes of the
rows + 256 p), not O(m p); a split reads a row's code of its feature by a
binary search of the row's stored codes.

A categorical feature (one bin per category) is scanned twice: in the
order of its codes, and in the order of its categories' ratio of gradient
to curvature sums (LightGBM's and scikit-learn's order, the best of all
partitions for a quadratic loss); a split sends the categories of a
prefix left. Categories absent from the node follow its missing rows.

The gain only chooses the split. Every node's value and cost are then
solved exactly by the criterion, in sequential passes over its sorted
hinges (``Criterion.targets_minimum``: the interval solver's optimum of the
node's residual intervals): a binned booster's leaves hold the exact optima
of their rows, as LightGBM re-fits the leaves of its L1 and quantile
objectives and XGBoost its adaptive trees.

Cost per split of a node of m rows with H finite hinges: O(m p) for the
histogram of the smaller child (none for the larger), O(p * 256) for the
subtraction and the scans, O(m + H) for the partitions and the exact
values.
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY, NAN
from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

import numpy as np

from .._utils._buffers import empty

from ._criterion cimport Criterion
from ._features cimport MISSING_BIN, BinnedFeatures
from ._histogram cimport (N_BINS, accumulate, accumulate_entries, best_split_of,
                          category_sets, set_words, stored_code)
from .._utils._parallel cimport PARALLEL_MIN_ROWS, PARALLEL_MIN_WORK, threads_for
from .._utils._typedefs cimport check_index
from ._splitter cimport SPLIT_RTOL, Splitter
from ._tree cimport Tree

cdef enum:
    ROWS_PER_BLOCK = 1 << 14    # rows of a block routed to the children on one thread

# Parents' histograms kept for their children's subtraction, at most (bytes):
# beyond, a split node's children build theirs from their rows.
cdef double MAX_KEPT_BYTES = 256.0 * 2**20

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
    n_threads : int
        Threads sharing a histogram's rows and the scans (at least 1).
    buffers : Buffers, default=None
        Where the working arrays live (``_buffers``).
    """

    def __cinit__(self, Criterion criterion, BinnedFeatures features,
                  const double[::1] sample_weight, intp_t max_features,
                  intp_t min_samples_leaf, uint32_t seed, int n_threads, buffers=None):
        cdef intp_t n = features.n_samples, p = features.n_features, i
        cdef bint curved = False
        self.setup(criterion, sample_weight, n, p, max_features, min_samples_leaf, seed,
                   buffers)
        self.root_key = seed
        self.pool = NULL
        self.slot_users = NULL
        self.slot_node = NULL
        self.links = NULL
        self.n_slots = 0
        self.n_links = 0
        self.n_threads = max(n_threads, 1)
        self.subtract = max_features >= p
        derivatives = empty(buffers, "histogram.derivatives", (2, max(n, 1)))
        feature_splits = np.empty(max(p, 1) * sizeof(FeatureSplit), dtype=np.uint8)
        drawn = np.empty(max(p, 1), dtype=np.intp)
        self._buffers = (derivatives, feature_splits, drawn)
        cdef double[:, ::1] derivatives_view = derivatives
        cdef unsigned char[::1] feature_splits_view = feature_splits
        cdef intp_t[::1] drawn_view = drawn
        self.gradient = &derivatives_view[0, 0]
        self.hessian = &derivatives_view[1, 0]
        self.feature_splits = <FeatureSplit*> &feature_splits_view[0]
        self.drawn = &drawn_view[0]
        cdef int row_threads = threads_for(n, PARALLEL_MIN_ROWS, self.n_threads)
        with nogil:
            criterion.gradients(self.gradient, self.hessian, row_threads)
            for i in range(n):
                if self.hessian[i] > 0.0:
                    curved = True
                    break
            if not curved:  # a loss without curvature: least squares on the gradients
                for i in range(n):
                    self.hessian[i] = sample_weight[i]
        self.curved = curved
        self.features = features
        self.sparse = features.sparse
        self.codes = NULL
        self.row_starts = NULL
        self.entry_features = NULL
        self.entry_codes = NULL
        self.zero_bins = NULL
        if self.sparse and p > 0:
            self.row_starts = &features.row_starts[0]
            self.zero_bins = &features.zero_bins[0]
            if features.entry_codes.shape[0] > 0:
                self.entry_features = &features.entry_features[0]
                self.entry_codes = &features.entry_codes[0]
        elif n > 0 and p > 0:
            self.codes = &features.codes[0, 0]
        self.thresholds = &features.thresholds[0, 0] if p > 0 else NULL
        self.n_bins = &features.n_bins[0] if p > 0 else NULL

    def __dealloc__(self):
        free(self.pool)
        free(self.slot_users)
        free(self.slot_node)
        free(self.links)

    cdef inline BinSums* histogram(self, intp_t slot) noexcept nogil:
        return self.pool + slot * self.n_features * N_BINS

    cdef intp_t new_slot(self) except -1 nogil:
        """A free slot of the pool (grown, capacity doubling, when none is)."""
        cdef intp_t slot, capacity
        cdef void* grown
        for slot in range(self.n_slots):
            if self.slot_users[slot] == 0:
                self.slot_users[slot] = 1
                return slot
        capacity = max(2 * self.n_slots, 4)
        grown = realloc(self.pool, capacity * self.n_features * N_BINS * sizeof(BinSums))
        if grown == NULL:
            with gil:
                raise MemoryError("cannot grow the histogram pool")
        self.pool = <BinSums*> grown
        grown = realloc(self.slot_users, capacity * sizeof(intp_t))
        if grown == NULL:
            with gil:
                raise MemoryError("cannot grow the histogram pool")
        self.slot_users = <intp_t*> grown
        grown = realloc(self.slot_node, capacity * sizeof(intp_t))
        if grown == NULL:
            with gil:
                raise MemoryError("cannot grow the histogram pool")
        self.slot_node = <intp_t*> grown
        for slot in range(self.n_slots, capacity):
            self.slot_users[slot] = 0
            self.slot_node[slot] = -1
        slot = self.n_slots
        self.n_slots = capacity
        self.slot_users[slot] = 1
        return slot

    cdef int grow_links(self, intp_t count) except -1 nogil:
        """Room for the links of node ids below ``count`` (new ones empty)."""
        cdef intp_t capacity, k
        cdef void* grown
        if count <= self.n_links:
            return 0
        capacity = max(2 * self.n_links, count, 64)
        grown = realloc(self.links, capacity * sizeof(HistogramLink))
        if grown == NULL:
            with gil:
                raise MemoryError("cannot grow the histogram links")
        self.links = <HistogramLink*> grown
        for k in range(self.n_links, capacity):
            self.links[k].slot = -1
            self.links[k].parent_slot = -1
        self.n_links = capacity
        return 0

    cdef void build(self, const int32_t* rows, intp_t count, intp_t feature,
                    BinSums* out) noexcept nogil:
        """The histogram of ``rows`` in ``out``: of every feature when
        ``feature`` is -1 (one pass over the rows; the features shared
        between the threads when the work is large enough), else of that
        feature only."""
        cdef intp_t p = self.n_features, t, first, last, n_parts = 1
        if feature >= 0:
            first, last = feature, feature + 1
            memset(out + first * N_BINS, 0, N_BINS * sizeof(BinSums))
            self.sum_rows(rows, count, first, last, out)
            return
        n_parts = threads_for(count * p, PARALLEL_MIN_WORK, min(self.n_threads, p))
        for t in prange(n_parts, num_threads=n_parts, schedule="static"):
            first = t * p // n_parts
            last = (t + 1) * p // n_parts
            memset(out + first * N_BINS, 0, (last - first) * N_BINS * sizeof(BinSums))
            self.sum_rows(rows, count, first, last, out)

    cdef void sum_rows(self, const int32_t* rows, intp_t count, intp_t first,
                       intp_t last, BinSums* out) noexcept nogil:
        """Add the rows to the bins of features ``first .. last - 1`` of
        ``out`` (zero there): from the dense or the sparse codes."""
        if self.sparse:
            accumulate_entries(rows, count, self.row_starts, self.entry_features,
                               self.entry_codes, self.zero_bins, first, last,
                               self.gradient, self.hessian, out)
        else:
            accumulate(rows, count, self.codes, self.n_features, first, last,
                       self.gradient, self.hessian, out)

    cdef intp_t node_histogram(self, const NodeRecord* node) except -1 nogil:
        """The slot of the node's histogram of every feature: built from its
        rows, or its parent's minus its sibling's, whichever sibling is the
        smaller being built from its rows (module doc)."""
        cdef HistogramLink* link = &self.links[node.node_id]
        cdef intp_t parent = link.parent_slot, slot, temporary, k
        cdef intp_t size = self.n_features * N_BINS
        cdef intp_t m = node.end - node.start
        cdef intp_t m_sibling = link.sibling_end - link.sibling_start
        cdef const int32_t* rows = self.node_rows + node.start
        cdef const int32_t* sibling_rows = self.node_rows + link.sibling_start
        cdef BinSums* mine
        cdef BinSums* other
        cdef BinSums sums
        if link.slot >= 0:
            return link.slot
        if parent < 0:  # the root
            slot = self.new_slot()
            self.build(rows, m, -1, self.histogram(slot))
        elif self.slot_node[parent] == node.node_id:  # the sibling made it
            slot = parent
        elif self.slot_users[parent] == 2:  # make both, leave the sibling's in parent
            slot = self.new_slot()
            mine = self.histogram(slot)
            other = self.histogram(parent)
            if m <= m_sibling:
                self.build(rows, m, -1, mine)
                for k in range(size):
                    other[k].gradient -= mine[k].gradient
                    other[k].hessian -= mine[k].hessian
                    other[k].count -= mine[k].count
            else:
                self.build(sibling_rows, m_sibling, -1, mine)
                for k in range(size):
                    sums = mine[k]
                    mine[k].gradient = other[k].gradient - sums.gradient
                    mine[k].hessian = other[k].hessian - sums.hessian
                    mine[k].count = other[k].count - sums.count
                    other[k] = sums
            self.slot_users[parent] = 1
            self.slot_node[parent] = link.sibling
        else:  # the sibling stays a leaf: the parent's slot becomes this node's
            slot = parent
            if m <= m_sibling:
                self.build(rows, m, -1, self.histogram(slot))
            else:
                temporary = self.new_slot()
                other = self.histogram(temporary)
                self.build(sibling_rows, m_sibling, -1, other)
                mine = self.histogram(slot)
                for k in range(size):
                    mine[k].gradient -= other[k].gradient
                    mine[k].hessian -= other[k].hessian
                    mine[k].count -= other[k].count
                self.slot_users[temporary] = 0
        self.slot_node[slot] = node.node_id
        link.slot = slot
        link.parent_slot = -1
        return slot

    cdef int use_curvature(self) except -1 nogil:
        """Sum the rows' curvatures even though none has any (a fit whose
        other rows have some: on a cluster, each partition its own
        splitter), and forget the root's histogram, which summed their
        weights. Before the root splits."""
        cdef intp_t slot
        if self.curved:
            return 0
        self.criterion.gradients(self.gradient, self.hessian,
                                 threads_for(self.n_samples, PARALLEL_MIN_ROWS,
                                             self.n_threads))
        self.curved = True
        if self.n_links > 0 and self.links[0].slot >= 0:
            slot = self.links[0].slot
            self.slot_users[slot] = 0
            self.slot_node[slot] = -1
            self.links[0].slot = -1
        return 0

    cdef int init_root(self, NodeRecord* root) except -1 nogil:
        """The root's value and cost from its sorted hinges, as every node's."""
        cdef intp_t k
        self.describe_root(root)
        if not self.criterion.targets_minimum(root.target_start, root.target_end,
                                              &root.value, &root.cost):
            root.value = 0.0
        root.weight = 0.0
        for k in range(self.n_active):
            root.weight += self.sample_weight[self.node_rows[k]]
        self.grow_links(1)
        self.node_keys.clear()
        self.node_keys.push_back(self.root_key)  # the root is node 0
        return 0

    cdef bint find_split(self, const NodeRecord* node, SplitRecord* split) noexcept nogil:
        """Best split by Newton gain over features drawn in a random order
        (at least ``max_features`` that can split the node, more while none
        has). Returns False when no split has a positive gain."""
        cdef intp_t m = node.end - node.start, k, n_drawn = 0, n_visited = 0, feature
        cdef intp_t p = self.n_features, n_scans = 1
        cdef const int32_t* rows = self.node_rows + node.start
        cdef double total_g = 0.0, total_h = 0.0, best_gain = 0.0, penalty
        cdef double min_leaf = self.min_samples_leaf
        cdef const int32_t* n_bins = self.n_bins
        cdef const int32_t* n_categories = &self.features.n_categories[0]
        cdef const intp_t* drawn = self.drawn
        cdef FeatureSplit* feature_splits = self.feature_splits
        cdef BinSums* sums
        cdef FeatureSplit* candidate
        # in gain units (twice a cost decrease), per category beyond two
        penalty = (2.0 * self.category_penalty * node.cost / node.weight
                   if node.weight > 0.0 else 0.0)
        split.feature = -1
        split.categories = -1
        self.categories_start = self.category_words.size()
        # the node's order of the features, from its key (module doc)
        self.random_state = order_state(self.node_keys[node.node_id])
        for k in range(p):
            self.feature_ids[k] = k
        if self.subtract:
            sums = self.histogram(self.node_histogram(node))
            for k in range(N_BINS):
                total_g += sums[k].gradient
                total_h += sums[k].hessian
            for k in range(p):
                self.drawn[k] = self.draw_feature(k)
            n_scans = threads_for(p * N_BINS, PARALLEL_MIN_WORK, self.n_threads)
            for k in prange(p, num_threads=n_scans, schedule="static"):
                best_split_of(sums + drawn[k] * N_BINS, n_bins[drawn[k]],
                              n_categories[drawn[k]] > 0, self.sign_of(drawn[k]),
                              total_g, total_h, m, min_leaf, penalty,
                              &feature_splits[drawn[k]])
            n_drawn = p
        else:
            # a scratch histogram, one drawn feature at a time
            if self.n_slots == 0:
                self.new_slot()
            sums = self.histogram(0)
            for k in range(m):
                total_g += self.gradient[rows[k]]
                total_h += self.hessian[rows[k]]
        for k in range(p):
            if k >= n_drawn:
                if n_visited >= self.max_features and split.feature >= 0:
                    break
                self.drawn[k] = self.draw_feature(k)
                if not self.allows(node, self.drawn[k]):
                    continue
                self.build(rows, m, self.drawn[k], sums)
                feature = self.drawn[k]
                best_split_of(sums + feature * N_BINS, self.n_bins[feature],
                              n_categories[feature] > 0, self.sign_of(feature), total_g,
                              total_h, m, min_leaf, penalty,
                              &self.feature_splits[feature])
            feature = self.drawn[k]
            if not self.allows(node, feature):  # interaction constraints
                continue
            candidate = &self.feature_splits[feature]
            n_visited += candidate.can_split
            if candidate.gain > best_gain * (1.0 + SPLIT_RTOL):
                best_gain = candidate.gain
                split.feature = feature
                split.bin = candidate.bin
                split.missing_go_to_left = candidate.missing_go_to_left
        if split.feature < 0:
            return False
        split.has_missing = sums[split.feature * N_BINS + MISSING_BIN].count > 0.0
        split.threshold = (INFINITY if split.bin == self.n_bins[split.feature] - 1
                           else self.thresholds[split.feature * MISSING_BIN + split.bin])
        split.improvement = 0.5 * best_gain
        if n_categories[split.feature] > 0:
            self.keep_categories(split, sums + split.feature * N_BINS, total_h,
                                 self.feature_splits[split.feature].by_ratio)
        return True

    cdef int keep_categories(self, SplitRecord* split, const BinSums* sums,
                             double total_h, bint by_ratio) except -1 nogil:
        """Make the best split, on a categorical feature with histogram
        ``sums``, a split of sets (``category_sets``)."""
        cdef intp_t n_words = set_words(self.n_bins[split.feature])
        category_sets(sums, self.n_bins[split.feature], split.bin, total_h, by_ratio,
                      self.new_categories(split, 0, n_words), n_words)
        split.threshold = NAN
        return 0

    cdef int take_categories(self, SplitRecord* split, const uint32_t* words,
                             intp_t n_words) except -1 nogil:
        """Make ``split`` one of sets chosen elsewhere (``words``: the
        categories going left, then those of the node, ``2 * n_words``
        words; see ``category_sets``)."""
        self.categories_start = self.category_words.size()
        memcpy(self.new_categories(split, 0, n_words), words,
               2 * n_words * sizeof(uint32_t))
        split.threshold = NAN
        return 0

    cdef int split_node(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                        NodeRecord* left, NodeRecord* right) except -1 nogil:
        """Partition the node by the split's bin, solve its children exactly
        on their sorted hinges, add them to the tree and link their
        histograms to the node's. O(m + H)."""
        cdef intp_t m = node.end - node.start, k, n_left = 0, slot, n_kept, side
        cdef intp_t n_blocks = (m + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
        cdef int n_parts = threads_for(m, PARALLEL_MIN_ROWS, self.n_threads)
        cdef double left_weight = 0.0, right_weight = 0.0
        cdef BlockSums* blocks = <BlockSums*> malloc(n_blocks * sizeof(BlockSums))
        cdef NodeRecord* child
        if blocks == NULL:
            with gil:
                raise MemoryError("cannot allocate the partition's block sums")
        # each block of rows on one thread; the blocks' sums added in order,
        # so that the weights do not depend on the threads
        for k in prange(n_blocks, num_threads=n_parts, schedule="static"):
            self.route_block(node, split, k, &blocks[k])
        for k in range(n_blocks):
            n_left += blocks[k].n_left
            left_weight += blocks[k].left_weight
            right_weight += blocks[k].right_weight
        free(blocks)
        left.presorted = right.presorted = False
        self.partition(node, n_left, left, right, self.n_threads)
        left.weight = left_weight
        right.weight = right_weight
        # each child's value from its sorted hinges, and the cost there (the
        # parent's value and no cost without a finite bound)
        n_parts = threads_for(node.target_end - node.target_start, PARALLEL_MIN_ROWS,
                              self.n_threads)
        for side in prange(2, num_threads=n_parts, schedule="static"):
            child = left if side == 0 else right
            if not self.criterion.targets_minimum(child.target_start, child.target_end,
                                                  &child.value, &child.cost):
                child.value = node.value
        if self.monotonic != NULL:
            self.bound_children(node, split, left, right)
        self.add_children(tree, node, split, left, right)
        if <intp_t>self.node_keys.size() <= right.node_id:
            self.node_keys.resize(right.node_id + 1)
        self.node_keys[left.node_id] = child_key(self.node_keys[node.node_id], 0)
        self.node_keys[right.node_id] = child_key(self.node_keys[node.node_id], 1)
        if not self.subtract:
            return 0
        # the children share the node's histogram until one of them is searched
        self.grow_links(right.node_id + 1)
        slot = self.links[node.node_id].slot
        self.links[node.node_id].slot = -1
        n_kept = 0
        for k in range(self.n_slots):
            n_kept += self.slot_users[k] > 0
        if n_kept * self.n_features * N_BINS * sizeof(BinSums) > MAX_KEPT_BYTES:
            self.slot_users[slot] = 0
            return 0
        self.slot_users[slot] = 2
        self.slot_node[slot] = node.node_id
        self.links[left.node_id].parent_slot = slot
        self.links[left.node_id].sibling = right.node_id
        self.links[left.node_id].sibling_start = right.start
        self.links[left.node_id].sibling_end = right.end
        self.links[right.node_id].parent_slot = slot
        self.links[right.node_id].sibling = left.node_id
        self.links[right.node_id].sibling_start = left.start
        self.links[right.node_id].sibling_end = left.end
        return 0

    cdef void route_block(self, const NodeRecord* node, const SplitRecord* split,
                          intp_t block, BlockSums* sums) noexcept nogil:
        """Set ``goes_left`` for the node's rows of block ``block``; their
        count and weights on each side in ``sums``."""
        cdef intp_t start = node.start + block * ROWS_PER_BLOCK, k, row, left
        cdef intp_t end = min(node.end, start + ROWS_PER_BLOCK)
        cdef const uint8_t* codes = self.codes + split.feature if not self.sparse else NULL
        cdef const uint32_t* words = (self.category_words.data() + split.categories
                                      if split.categories >= 0 else NULL)
        cdef uint8_t code
        cdef double weight
        sums.n_left = 0
        sums.left_weight = 0.0
        sums.right_weight = 0.0
        for k in range(start, end):
            row = self.node_rows[k]
            check_index(row, self.n_samples)
            if self.sparse:
                code = stored_code(self.row_starts, self.entry_features, self.entry_codes,
                                   self.zero_bins[split.feature], row, split.feature)
            else:
                code = codes[row * self.n_features]
            if code == MISSING_BIN:
                left = split.missing_go_to_left
            elif words != NULL:
                left = (words[code >> 5] >> (code & 31)) & 1
            else:
                left = code <= split.bin
            self.goes_left[row] = left
            weight = self.sample_weight[row]
            sums.n_left += left
            sums.left_weight += left * weight
            sums.right_weight += (1 - left) * weight

    cdef void settle_leaf(self, const NodeRecord* node) noexcept nogil:
        """Also give back the histogram the leaf holds, or its share of its
        parent's."""
        cdef HistogramLink* link
        cdef intp_t parent
        Splitter.settle_leaf(self, node)
        if not self.subtract:
            return
        link = &self.links[node.node_id]
        parent = link.parent_slot
        if link.slot >= 0:
            self.slot_users[link.slot] = 0
        elif parent >= 0:
            if self.slot_node[parent] == node.node_id:
                self.slot_users[parent] = 0
            else:
                self.slot_users[parent] = self.slot_users[parent] - 1
        link.slot = -1
        link.parent_slot = -1
