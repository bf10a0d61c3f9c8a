"""The interface of the split search of Maximum Margin Interval Trees, and
what every split search shares.

A :class:`Splitter` serves one tree build: it finds the best split of a
node under the criterion (a :class:`~mmit.tree._criterion.Criterion`) and
partitions the node's rows and targets between its children. This module
holds the interface the builder grows a tree through and what the split
searches share: the node rows and their partitions, the children's
records, the monotone and interaction constraints, the sets of
categorical splits (the categories absent from a node go where its
missing values go, see ``_tree``). The searches:
``_exact_splitter.ExactSplitter`` on the values, and
``_histogram_splitter.HistogramSplitter`` on binned features.

Monotone constraints (``monotonic``: -1, 0 or +1 per feature). Every node
carries bounds ``[value_lower, value_upper]`` on its value (bounds of the
prediction, not of the targets' intervals), and its value is its
optimum (``optimum``) clipped to them: the loss of a part is convex in its
value, so the clipped optimum is its minimum on the bounded range. A split
on a constrained feature is admissible only when the children's optima
follow its direction (left <= right for +1); otherwise the constrained
optimum of the two parts is one shared value, the node's own, which lowers
nothing. Rows missing the feature go with the side chosen for them and take
its values: the constraint orders the present values only ("present versus
missing" splits are not ordered). A part without a finite bound (no loss
anywhere) takes the other part's value.

Where the bounds come from (``bounds_from``, ``BOUNDS_*``):

- The leaves (``BOUNDS_LEAVES``, without categorical features): a leaf's
  bounds are the largest value of the leaves below its region along a
  constrained feature and the smallest of those above
  (:class:`~mmit.tree._monotone.MonotoneBounds`). Every leaf takes a value
  within its bounds as it appears, and keeps it, so the tree stays
  monotone as it grows; a child is only bounded by the leaves it is
  compared with, not by those of its whole parent. The split search
  therefore scores splits by their parts' optima (the direction of a
  constrained feature checked), and each child takes its value within its
  own bounds when the builder examines it, once, as it appears
  (``bound_node``; ``_builder``: best-first, so that the coarse leaves that
  bound others are refined first).
- Every node (``BOUNDS_NODES``, a tree that will be pruned): the same, the
  internal nodes too, but the node's own ancestors, so that every pruned
  subtree is monotone.
- The midpoints (``BOUNDS_MIDPOINTS``, with categorical features, whose
  regions are sets of categories). The children of an admissible split on
  a constrained feature take the bounds of their parent cut at the
  midpoint of their two values (the left child's upper bound for +1), so
  every value of the left subtree is at most every value of the right
  one; other splits pass the bounds on unchanged. The split search clips
  the parts to the node's bounds (each row's loss at the node's finite
  bounds once per node, their prefix sums in a feature's order when one of
  its splits first needs them): it stays exact.

Interaction constraints (the groups of features that may interact, as
bitsets: ``restrict_interactions``). Every node carries the set of the
groups that hold every feature split on above it (all of them at the
root); a split search skips the features outside those groups, and a
split on feature j leaves its children the node's groups that hold j.
"""

from libc.math cimport INFINITY, isfinite, isnan
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport qsort

import numpy as np

from .._utils._buffers import empty
from .._utils._checks import check_same_length

from ._criterion cimport Criterion
from ._monotone cimport BOUNDS_MIDPOINTS, MonotoneBounds
from ._partition cimport stable_partition_parallel
from .._utils._parallel cimport PARALLEL_MIN_ROWS, threads_for
from .._utils._typedefs cimport check_index
from ._tree cimport Tree

cdef class Splitter:
    """The split search and partitions of one tree build (abstract).

    What the builder asks (``init_root``, ``find_split``, ``split_node``) and
    what every split search shares: the criterion, the rows of each node in
    one list, the partitions of rows and targets, the children's records.
    Implementations: :class:`ExactSplitter` (on the values) and
    ``mmit.tree._histogram_splitter.HistogramSplitter`` (on binned features).
    """

    cdef int setup(self, Criterion criterion, const double[::1] sample_weight,
                   intp_t n_samples, intp_t n_features, intp_t max_features,
                   intp_t min_samples_leaf, uint32_t seed, object buffers) except -1:
        """The shared state (called by each implementation's constructor),
        its arrays in ``buffers`` when given (``_buffers``)."""
        cdef intp_t i, m = 0
        check_same_length("sample_weight", sample_weight, "X", n_samples)
        if criterion.n_samples != n_samples:
            raise ValueError(f"the criterion has {criterion.n_samples} rows for "
                             f"{n_samples} samples.")
        node_rows = empty(buffers, "splitter.node_rows", max(n_samples, 1), np.int32)
        goes_left = empty(buffers, "splitter.goes_left", max(n_samples, 1), np.uint8)
        goes_left.fill(0)
        scratch = empty(buffers, "splitter.scratch", max(n_samples, 1), np.int32)
        feature_ids = np.arange(max(n_features, 1), dtype=np.intp)
        self._shared_buffers = (node_rows, goes_left, scratch, feature_ids, sample_weight)
        cdef int32_t[::1] node_rows_view = node_rows
        cdef unsigned char[::1] goes_left_view = goes_left
        cdef int32_t[::1] scratch_view = scratch
        cdef intp_t[::1] feature_ids_view = feature_ids
        with nogil:
            # the rows of positive weight, in increasing order
            for i in range(n_samples):
                if sample_weight[i] > 0.0:
                    node_rows_view[m] = <int32_t>i
                    m += 1
        self.criterion = criterion
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.random_state = seed if seed != 0 else 1
        self.n_samples = n_samples
        self.n_features = n_features
        self.n_active = m
        self.sample_weight = &sample_weight[0] if n_samples > 0 else NULL
        self.node_rows = &node_rows_view[0]
        self.goes_left = &goes_left_view[0]
        self.scratch = &scratch_view[0]
        self.feature_ids = &feature_ids_view[0]
        self.row_values = NULL
        self.monotonic = NULL
        self.feature_groups = NULL
        self.n_group_words = 0
        self.categories_start = 0
        self.category_penalty = 0.0
        return 0

    cdef intp_t draw_feature(self, intp_t n_drawn) noexcept nogil:
        """The next feature of a random order (``n_drawn`` drawn so far in
        this node): features are evaluated in this order, ties between equal
        splits go to the first."""
        return draw_next(self.feature_ids, self.n_features, n_drawn, &self.random_state)

    cdef int init_root(self, NodeRecord* root) except -1 nogil:
        """Describe the root: all rows of positive weight, their value, cost
        and weight."""
        cdef double value = 0.0, cost
        self.describe_root(root)
        self.criterion.node_init(root.target_start, root.target_end)
        self.criterion.reset()
        self.criterion.add(self.node_rows, self.n_active)
        self.criterion.minimum(&value, &cost)
        root.value = value
        root.cost = self.criterion.node_cost(self.node_rows, self.n_active, value,
                                             &root.weight)
        return 0

    cdef void describe_root(self, NodeRecord* root) noexcept nogil:
        """The root's ranges: every row of positive weight, every target."""
        root.start = 0
        root.end = self.n_active
        root.target_start = 0
        root.target_end = self.criterion.n_targets
        root.depth = 0
        root.presorted = False
        root.value_lower = -INFINITY
        root.value_upper = INFINITY
        # every group (the last word's unused bits too: no feature holds them)
        root.groups = -1
        if self.feature_groups != NULL:
            root.groups = self.group_sets.size()
            self.group_sets.resize(root.groups + self.n_group_words, ~(<uint64_t>0))

    cdef bint find_split(self, const NodeRecord* node, SplitRecord* split) noexcept nogil:
        """The best split of the node; False when there is no valid split
        lowering its cost."""
        return False

    cdef int split_node(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                        NodeRecord* left, NodeRecord* right) except -1 nogil:
        """Partition the node's rows and targets, add its children to the tree
        and describe them in ``left`` and ``right``."""
        return 0

    cdef void settle_leaf(self, const NodeRecord* node) noexcept nogil:
        """The node stays a leaf: its value goes to its rows' ``row_values``
        (when asked for), the criterion hears of its targets; a split search
        may free what it kept for it."""
        cdef intp_t k
        self.criterion.settle(node.target_start, node.target_end)
        if self.row_values != NULL:
            for k in range(node.start, node.end):
                check_index(self.node_rows[k], self.n_samples)
                self.row_values[self.node_rows[k]] = node.value

    cdef void partition(self, const NodeRecord* node, intp_t n_left, NodeRecord* left,
                        NodeRecord* right, int n_threads) noexcept nogil:
        """With ``goes_left`` set for the node's rows (``n_left`` of them go
        left): partition its rows and targets (on up to ``n_threads``
        threads, the same result), and give the children's records their
        ranges. O(m)."""
        cdef intp_t m = node.end - node.start, n_left_targets
        # the rows in row order, whichever way the children find feature orders
        stable_partition_parallel(self.node_rows + node.start, m, self.goes_left, 0,
                                  self.scratch + node.start, self.n_samples,
                                  threads_for(m, PARALLEL_MIN_ROWS, n_threads))
        n_left_targets = self.criterion.partition_targets(
            node.target_start, node.target_end, self.goes_left, n_threads)
        left.start = node.start
        left.end = node.start + n_left
        left.target_start = node.target_start
        left.target_end = node.target_start + n_left_targets
        right.start = left.end
        right.end = node.end
        right.target_start = left.target_end
        right.target_end = node.target_end

    cdef void evaluate_child(self, const NodeRecord* parent, NodeRecord* child,
                             double value) noexcept nogil:
        """Give a partitioned child its value (its parent's when it has no
        finite bound), and the exact cost and the weight of its rows. O(m)."""
        child.value = value if child.target_end > child.target_start else parent.value
        child.cost = self.criterion.node_cost(self.node_rows + child.start,
                                              child.end - child.start, child.value,
                                              &child.weight)

    cdef int constrain(self, const signed char[::1] monotonic, int bounds_from) except -1:
        """Grow monotone trees: ``monotonic[j]`` (-1, 0, +1) is feature j's
        direction; ``bounds_from``: what the nodes' bounds come from
        (``BOUNDS_*``, module doc)."""
        check_same_length("monotonic", monotonic, "features", self.n_features)
        self._constraints = (self._constraints, monotonic)
        self.monotonic = &monotonic[0] if self.n_features > 0 else NULL
        self.bounds_from = bounds_from
        if bounds_from != BOUNDS_MIDPOINTS:
            self.monotone_bounds = MonotoneBounds(monotonic, bounds_from)
        return 0

    cdef int bound_node(self, Tree tree, NodeRecord* node) except -1 nogil:
        """Monotone trees (unless ``BOUNDS_MIDPOINTS``): the node's bounds, from
        the values of the other leaves of the tree grown so far that its
        region is comparable with along a constrained feature, and its value
        within them (module doc). O(depth + the nodes whose regions meet
        those the node is compared with)."""
        if self.monotone_bounds is None or node.node_id == 0:
            return 0
        self.monotone_bounds.node_bounds(tree, node.node_id, &node.value_lower,
                                         &node.value_upper)
        # its value: its optimum within its own bounds (the node's were its parent's)
        cdef double value = min(max(node.optimum, node.value_lower), node.value_upper)
        if value != node.value:
            self.revalue(node, value)
            tree.values[node.node_id] = value
            tree.nodes[node.node_id].cost = node.cost
            self.monotone_bounds.update_extremes(tree, node.node_id)
        return 0

    cdef void revalue(self, NodeRecord* child, double value) noexcept nogil:
        """Give an evaluated child another value, at its exact cost there."""
        cdef double weight
        if value != child.value:
            child.value = value
            child.cost = self.criterion.node_cost(self.node_rows + child.start,
                                                  child.end - child.start, value, &weight)

    cdef int restrict_interactions(self, const uint64_t[:, ::1] feature_groups) except -1:
        """Interaction constraints: ``feature_groups[j]`` is the bitset of the
        groups holding feature j. A node may split on the features of the
        groups that hold every feature split on above it (scikit-learn's
        ``interaction_cst``): its groups are its parent's less those without
        the parent's split feature."""
        check_same_length("feature_groups", feature_groups[:, 0], "features",
                          self.n_features)
        self._constraints = (self._constraints, feature_groups)
        self.n_group_words = feature_groups.shape[1]
        self.feature_groups = &feature_groups[0, 0] if self.n_features > 0 else NULL
        return 0

    cdef bint allows(self, const NodeRecord* node, intp_t feature) noexcept nogil:
        """Whether the node's interaction groups let it split on ``feature``."""
        cdef intp_t k
        cdef const uint64_t* mine
        cdef const uint64_t* holding
        if node.groups < 0:
            return True
        mine = self.group_sets.data() + node.groups
        holding = self.feature_groups + feature * self.n_group_words
        for k in range(self.n_group_words):
            if mine[k] & holding[k]:
                return True
        return False

    cdef signed char sign_of(self, intp_t feature) noexcept nogil:
        """The feature's constraint: -1, 0 or +1."""
        return self.monotonic[feature] if self.monotonic != NULL else 0

    cdef signed char direction(self, const SplitRecord* split) noexcept nogil:
        """The direction the split's children must follow: its feature's
        constraint for a split of present values, 0 otherwise (no
        constraint, a categorical split, present versus missing)."""
        if split.categories >= 0 or not isfinite(split.threshold):
            return 0
        return self.sign_of(split.feature)

    cdef void bound_children(self, const NodeRecord* node, const SplitRecord* split,
                             NodeRecord* left, NodeRecord* right) noexcept nogil:
        """Monotone trees: make the evaluated children's values (their
        optima) respect the node's bounds and the split's direction, at their
        exact costs, and give them their bounds (module doc)."""
        cdef signed char sign = self.direction(split)
        cdef double middle
        cdef bint left_free = left.target_end == left.target_start
        cdef bint right_free = right.target_end == right.target_start
        # a child without a finite bound takes its sibling's value
        if left_free and not right_free:
            left.value = right.value
        elif right_free and not left_free:
            right.value = left.value
        left.optimum = left.value
        right.optimum = right.value
        self.revalue(left, min(max(left.value, node.value_lower), node.value_upper))
        self.revalue(right, min(max(right.value, node.value_lower), node.value_upper))
        if sign != 0 and sign * (right.value - left.value) < 0.0:
            # the constrained optimum of two parts out of order: the node's
            self.revalue(left, node.value)
            self.revalue(right, node.value)
        left.value_lower = right.value_lower = node.value_lower
        left.value_upper = right.value_upper = node.value_upper
        if sign != 0 and self.bounds_from == BOUNDS_MIDPOINTS:
            middle = left.value / 2.0 + right.value / 2.0
            if sign > 0:
                left.value_upper = right.value_lower = middle
            else:
                left.value_lower = right.value_upper = middle

    cdef int add_children(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                          NodeRecord* left, NodeRecord* right) except -1 nogil:
        """Add the node's children (their records complete but for depth and
        id) to the tree and record the split."""
        left.depth = right.depth = node.depth + 1
        cdef bint missing_go_to_left
        cdef intp_t k, n_words = split.category_n_words, groups
        cdef const uint64_t* holding
        left.groups = right.groups = node.groups
        if node.groups >= 0:
            # the children's groups: the node's that hold the split feature
            groups = self.group_sets.size()
            self.group_sets.resize(groups + self.n_group_words)
            holding = self.feature_groups + split.feature * self.n_group_words
            for k in range(self.n_group_words):
                self.group_sets[groups + k] = self.group_sets[node.groups + k] & holding[k]
            left.groups = right.groups = groups
        cdef uint32_t* words
        cdef uint32_t absent_side
        left.node_id = tree.add_node(node.node_id, True, left.value, left.cost,
                                     left.end - left.start, left.weight, left.depth)
        right.node_id = tree.add_node(node.node_id, False, right.value, right.cost,
                                      right.end - right.start, right.weight, right.depth)
        if self.monotone_bounds is not None:
            self.monotone_bounds.add_children(tree, node.node_id, left.node_id,
                                              right.node_id)
        # without missing rows in the node, NaN follows the heavier child
        missing_go_to_left = (split.missing_go_to_left if split.has_missing
                              else left.weight >= right.weight)
        if split.categories < 0:
            tree.set_split(node.node_id, split.feature, split.threshold,
                           missing_go_to_left)
            return 0
        # the categories absent from the node go where missing values go
        words = self.category_words.data() + split.categories
        absent_side = 0xFFFFFFFFu if missing_go_to_left else 0u
        for k in range(n_words):
            words[k] = words[k] | (~words[n_words + k] & absent_side)
        tree.set_categorical_split(node.node_id, split.feature, split.category_first,
                                   words, n_words, missing_go_to_left)
        if split.categories + 2 * n_words == <intp_t>self.category_words.size():
            self.category_words.resize(split.categories)
        return 0

    cdef uint32_t* new_categories(self, SplitRecord* split, int64_t first,
                                  intp_t n_words) except NULL nogil:
        """The sets of a categorical split: ``2 * n_words`` words set to 0
        (the categories going left, then those present in the node) for the
        codes from ``first``, kept until the split is made. A search keeps
        only its best split's sets."""
        self.category_words.resize(self.categories_start)
        self.category_words.resize(self.categories_start + 2 * n_words, 0)
        split.categories = self.categories_start
        split.category_first = first
        split.category_n_words = n_words
        return self.category_words.data() + split.categories

    cdef bint category_goes_left(self, const SplitRecord* split,
                                 double code) noexcept nogil:
        """Whether a row of the node with this code (or NaN) goes left."""
        cdef intp_t k
        cdef const uint32_t* words
        if isnan(code):
            return split.missing_go_to_left
        k = <intp_t>(<int64_t>code - split.category_first)
        check_index(k >> 5, split.category_n_words)
        words = self.category_words.data() + split.categories
        return (words[k >> 5] >> (k & 31)) & 1


cdef void sort_categories(CategoryGroup* groups, intp_t count) noexcept nogil:
    """Order categories by increasing value, ties by code."""
    qsort(groups, count, sizeof(CategoryGroup), compare_groups)


cdef int compare_groups(const void* a, const void* b) noexcept nogil:
    cdef const CategoryGroup* x = <const CategoryGroup*> a
    cdef const CategoryGroup* y = <const CategoryGroup*> b
    if x.value != y.value:
        return -1 if x.value < y.value else 1
    return -1 if x.code < y.code else (1 if x.code > y.code else 0)


def stable_partition_rows(int32_t[::1] rows, const unsigned char[::1] goes_left,
                          int n_threads):
    """Partition ``rows`` in place, stably: those with ``goes_left[row]``
    first, each side in its order, on up to ``n_threads`` threads (the
    splitter's partition of a node's rows, for its tests). Returns how many
    go left."""
    cdef intp_t k, count = rows.shape[0]
    if n_threads < 1:
        raise ValueError(f"n_threads must be at least 1, got {n_threads}.")
    for k in range(count):
        if rows[k] < 0 or rows[k] >= goes_left.shape[0]:
            raise ValueError(f"row {rows[k]} is not a row of goes_left.")
    if count == 0:
        return 0
    scratch = np.empty(count, dtype=np.int32)
    cdef int32_t[::1] scratch_view = scratch
    with nogil:
        count = stable_partition_parallel(&rows[0], count, &goes_left[0], 0,
                                          &scratch_view[0], goes_left.shape[0], n_threads)
    return count
