"""The split search of Maximum Margin Interval Trees, and node partitions.

A :class:`Splitter` serves one tree build: it finds the best split of a
node under the criterion (a :class:`~mmit.tree._criterion.Criterion`) and
partitions the node's rows and targets between its children.
:class:`Splitter` holds what every split search shares;
:class:`ExactSplitter`, described here, searches the values
(``_histogram_splitter`` searches binned features).

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
more per categorical feature than a numeric one. The categories absent
from the node go where its missing values go (see ``_tree``).

Costs are stored exactly (re-evaluated at each node's prediction); split
costs compare with a relative tolerance so that rounding in the solver's
running sums never decides between equal splits.

Monotone constraints (``monotonic``: -1, 0 or +1 per feature). Every node
carries bounds ``[lower, upper]`` on its value, and its value is its
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

cimport cython
from libc.math cimport INFINITY, NAN, isfinite, isnan, log2
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport qsort
from libc.string cimport memcpy, memset

import numpy as np

from .._utils._buffers import empty
from .._utils._checks import check_same_length

from ._criterion cimport Criterion
from ._features cimport Features
from ._monotone cimport BOUNDS_MIDPOINTS, MonotoneBounds
from ._partition cimport stable_partition
from .._utils._typedefs cimport check_index
from .._utils._sorting cimport dropped_bits, index_mask_for, key_index, order_keys, pack_key
from .._utils._sorting cimport first_at_least, sort_keys, sortable_bits
from ._tree cimport Tree

cdef inline double midpoint(double left_x, double right_x) noexcept nogil:
    """Threshold between two distinct values: ``left_x <= t < right_x``."""
    cdef double threshold = left_x / 2.0 + right_x / 2.0
    if threshold == right_x or not isfinite(threshold):
        return left_x
    return threshold


cdef inline void key_value(uint64_t* keys, int32_t* dropped, double x, intp_t position,
                           intp_t count, uint64_t index_mask) noexcept nogil:
    """The sort key of the node's ``count``-th present value ``x``, at
    ``position`` in the node (``keys[count]``), and the bits it drops
    (``dropped[position]``)."""
    cdef uint64_t bits = sortable_bits(x)
    keys[count] = pack_key(bits, position, index_mask)
    dropped[position] = dropped_bits(bits, index_mask)


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
        root.lower = -INFINITY
        root.upper = INFINITY
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
                        NodeRecord* right) noexcept nogil:
        """With ``goes_left`` set for the node's rows (``n_left`` of them go
        left): partition its rows and targets, and give the children's
        records their ranges. O(m)."""
        cdef intp_t m = node.end - node.start, n_left_targets
        # the rows in row order, whichever way the children find feature orders
        stable_partition(self.node_rows + node.start, m, self.goes_left, 0, self.scratch,
                         self.n_samples)
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
        self.monotone_bounds.node_bounds(tree, node.node_id, &node.lower, &node.upper)
        # its value: its optimum within its own bounds (the node's were its parent's)
        cdef double value = min(max(node.optimum, node.lower), node.upper)
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
        self.revalue(left, min(max(left.value, node.lower), node.upper))
        self.revalue(right, min(max(right.value, node.lower), node.upper))
        if sign != 0 and sign * (right.value - left.value) < 0.0:
            # the constrained optimum of two parts out of order: the node's
            self.revalue(left, node.value)
            self.revalue(right, node.value)
        left.lower = right.lower = node.lower
        left.upper = right.upper = node.upper
        if sign != 0 and self.bounds_from == BOUNDS_MIDPOINTS:
            middle = left.value / 2.0 + right.value / 2.0
            if sign > 0:
                left.upper = right.lower = middle
            else:
                left.lower = right.upper = middle

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
        cdef bint lower = isfinite(node.lower), upper = isfinite(node.upper)
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
                left_value < node.lower or right_value < node.lower
                or left_value > node.upper or right_value > node.upper):
            self.bound_costs(node, rows)
        missing_at_lower = missing_at_upper = 0.0
        if left_value < node.lower or right_value < node.lower:
            missing_at_lower = self.lower_costs[m] - self.lower_costs[n_present]
        if left_value > node.upper or right_value > node.upper:
            missing_at_upper = self.upper_costs[m] - self.upper_costs[n_present]
        if left_value < node.lower:
            left_value = node.lower
            left_cost = self.lower_costs[k] + missing_go_to_left * missing_at_lower
        elif left_value > node.upper:
            left_value = node.upper
            left_cost = self.upper_costs[k] + missing_go_to_left * missing_at_upper
        if right_value < node.lower:
            right_value = node.lower
            right_cost = (self.lower_costs[n_present] - self.lower_costs[k]
                          + (has_missing and not missing_go_to_left) * missing_at_lower)
        elif right_value > node.upper:
            right_value = node.upper
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
            if isfinite(node.lower):
                self.criterion.row_costs(self.node_rows + node.start, node.end - node.start,
                                         node.lower, self.lower_losses)
            if isfinite(node.upper):
                self.criterion.row_costs(self.node_rows + node.start, node.end - node.start,
                                         node.upper, self.upper_losses)
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
        self.partition(node, n_left, left, right)
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


cdef void sort_categories(CategoryGroup* groups, intp_t count) noexcept nogil:
    """Order categories by increasing value, ties by code."""
    qsort(groups, count, sizeof(CategoryGroup), compare_groups)


cdef int compare_groups(const void* a, const void* b) noexcept nogil:
    cdef const CategoryGroup* x = <const CategoryGroup*> a
    cdef const CategoryGroup* y = <const CategoryGroup*> b
    if x.value != y.value:
        return -1 if x.value < y.value else 1
    return -1 if x.code < y.code else (1 if x.code > y.code else 0)
