"""Maximum Margin Interval Trees: tree storage, builder and pruning.

The builder grows a regression tree whose leaves predict the constant that
minimises the sum of hinge losses of their intervals (DESIGN.md section 3):

- every feature is sorted once (``TrainingData``), and so are the hinge
  breakpoints; when a node splits, every sorted list is partitioned stably
  between the children, so a node sees its samples and its breakpoints in
  order without sorting;
- at a node the breakpoints get node-local slots in one walk of its sorted
  hinge list; for each candidate feature one backward and one forward sweep
  of the interval solver (``solver_sweep``) give the optimal cost of every
  right and left part, and the split cost at each boundary between distinct
  feature values is their sum (O(m) per feature for m samples);
- ties between equally good splits go to the first feature of a random
  order (``random_state``) and the first boundary within it.

The whole build runs without the GIL, so trees of a forest grow in parallel
threads. Costs are stored exactly (re-evaluated at each node's prediction);
split costs compare with a relative tolerance so that rounding in the
solver's running sums never decides between equal splits.
"""

from libc.math cimport INFINITY, isfinite
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset
from libcpp.queue cimport priority_queue
from libcpp.utility cimport pair

import numpy as np
from scipy.sparse import csr_matrix

from ._solver cimport (
    NO_SLOT,
    HingeSolver,
    Interval,
    SolverWorkspace,
    check_index,
    solver_minimum,
    solver_reset,
    solver_sweep,
)

# Splits whose costs differ by less than this (relative to the node's cost)
# are ties; a split must lower the node's cost by more than this.
cdef double SPLIT_RTOL = 1e-10

cdef enum:
    TRAVERSAL_BLOCK = 16    # rows walked down a tree together


# ---------------------------------------------------------------------------
# Tree storage
# ---------------------------------------------------------------------------

cdef Node _dummy
NODE_DTYPE = np.dtype({
    "names": ["left_child", "right_child", "feature", "threshold", "cost",
              "n_node_samples", "weighted_n_node_samples"],
    "formats": [np.int64, np.int64, np.int64, np.float64, np.float64, np.int64,
                np.float64],
    "offsets": [
        <Py_ssize_t>(<char*>&_dummy.left_child - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.right_child - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.feature - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.threshold - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.cost - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.n_node_samples - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.weighted_n_node_samples - <char*>&_dummy),
    ],
    "itemsize": sizeof(Node),
})


cdef class Tree:
    """A fitted interval-regression tree stored as flat arrays.

    Node ``i`` has children ``children_left[i]`` and ``children_right[i]``
    (``-1`` for a leaf), splits on ``feature[i]`` at ``threshold[i]``
    (samples with ``x[feature] <= threshold`` go left; ``-2`` for a leaf),
    predicts ``value[i]`` and has optimal total cost ``cost[i]`` over its
    ``n_node_samples[i]`` training samples of total weight
    ``weighted_n_node_samples[i]``. A child's id is always larger than its
    parent's. The attributes are read-only views of the tree's arrays.

    Parameters
    ----------
    n_features : int
        Number of features of the samples the tree applies to.
    """

    def __cinit__(self, intp_t n_features):
        self.n_features = n_features
        self.max_depth = 0
        self.node_count = 0
        self.capacity = 0
        self._node_array = np.zeros(0, dtype=NODE_DTYPE)
        self._value_array = np.zeros(0)
        self.nodes = NULL
        self.values = NULL

    cdef int _resize(self, intp_t capacity) except -1:
        """Grow (or shrink) the arrays to ``capacity`` nodes; new nodes are zero."""
        node_array = np.zeros(capacity, dtype=NODE_DTYPE)
        value_array = np.zeros(capacity)
        kept = min(capacity, self.node_count)
        node_array[:kept] = self._node_array[:kept]
        value_array[:kept] = self._value_array[:kept]
        cdef Node[::1] nodes = node_array
        cdef double[::1] values = value_array
        self._node_array = node_array
        self._value_array = value_array
        self.nodes = &nodes[0] if capacity > 0 else NULL
        self.values = &values[0] if capacity > 0 else NULL
        self.capacity = capacity
        self.node_count = kept
        return 0

    cdef intp_t add_node(self, intp_t parent, bint is_left, double value, double cost,
                         intp_t n_node_samples, double weighted_n_node_samples,
                         intp_t depth) except -1 nogil:
        """Append a leaf (a child of ``parent`` unless it is -1); return its id."""
        if self.node_count >= self.capacity:
            with gil:
                self._resize(max(2 * self.capacity, 15))
        cdef intp_t node_id = self.node_count
        cdef Node* node = &self.nodes[node_id]
        node.left_child = TREE_LEAF
        node.right_child = TREE_LEAF
        node.feature = TREE_UNDEFINED
        node.threshold = TREE_UNDEFINED
        node.cost = cost
        node.n_node_samples = n_node_samples
        node.weighted_n_node_samples = weighted_n_node_samples
        self.values[node_id] = value
        if parent != -1:
            if is_left:
                self.nodes[parent].left_child = node_id
            else:
                self.nodes[parent].right_child = node_id
        if depth > self.max_depth:
            self.max_depth = depth
        self.node_count = node_id + 1
        return node_id

    cdef void set_split(self, intp_t node_id, intp_t feature,
                        double threshold) noexcept nogil:
        self.nodes[node_id].feature = feature
        self.nodes[node_id].threshold = threshold

    def _field(self, name):
        view = self._node_array[:self.node_count][name]
        view.flags.writeable = False
        return view

    @property
    def children_left(self):
        return self._field("left_child")

    @property
    def children_right(self):
        return self._field("right_child")

    @property
    def feature(self):
        return self._field("feature")

    @property
    def threshold(self):
        return self._field("threshold")

    @property
    def cost(self):
        return self._field("cost")

    @property
    def n_node_samples(self):
        return self._field("n_node_samples")

    @property
    def weighted_n_node_samples(self):
        return self._field("weighted_n_node_samples")

    @property
    def value(self):
        view = self._value_array[:self.node_count]
        view.flags.writeable = False
        return view

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    def apply(self, const double[:, ::1] X):
        """Id of the leaf each row of X (float64, C-contiguous) falls in."""
        leaves = np.empty(X.shape[0], dtype=np.int64)
        cdef int64_t[::1] out = leaves
        with nogil:
            self._descend(X, &out[0] if X.shape[0] > 0 else NULL, NULL)
        return leaves.astype(np.intp, copy=False)

    def predict(self, const double[:, ::1] X):
        """Prediction of the leaf of each row of X (float64, C-contiguous)."""
        predictions = np.empty(X.shape[0])
        cdef double[::1] out = predictions
        with nogil:
            self._descend(X, NULL, &out[0] if X.shape[0] > 0 else NULL)
        return predictions

    cdef void _descend(self, const double[:, ::1] X, int64_t* leaves,
                       double* values) noexcept nogil:
        """Write the leaf (if ``leaves``) or the prediction (if ``values``) of
        every row of X, walking blocks of rows down the tree together."""
        cdef intp_t n = X.shape[0], block, start, k, size
        cdef int64_t block_leaves[TRAVERSAL_BLOCK]
        for block in range((n + TRAVERSAL_BLOCK - 1) // TRAVERSAL_BLOCK):
            start = block * TRAVERSAL_BLOCK
            size = min(TRAVERSAL_BLOCK, n - start)
            find_leaves(self.nodes, self.node_count, X, start, size, block_leaves)
            for k in range(size):
                if leaves != NULL:
                    leaves[start + k] = block_leaves[k]
                if values != NULL:
                    values[start + k] = self.values[block_leaves[k]]

    def decision_path(self, const double[:, ::1] X):
        """Sparse (n_samples, node_count) indicator of the nodes each row visits."""
        cdef intp_t n = X.shape[0], i, k
        cdef int64_t node
        indptr_array = np.zeros(n + 1, dtype=np.intp)
        cdef intp_t[::1] indptr = indptr_array
        with nogil:
            for i in range(n):
                node = 0
                k = 1
                while self.nodes[node].left_child != TREE_LEAF:
                    if X[i, self.nodes[node].feature] <= self.nodes[node].threshold:
                        node = self.nodes[node].left_child
                    else:
                        node = self.nodes[node].right_child
                    k += 1
                indptr[i + 1] = indptr[i] + k
        indices_array = np.empty(indptr[n], dtype=np.intp)
        cdef intp_t[::1] indices = indices_array
        with nogil:
            for i in range(n):
                node = 0
                k = indptr[i]
                indices[k] = 0
                while self.nodes[node].left_child != TREE_LEAF:
                    if X[i, self.nodes[node].feature] <= self.nodes[node].threshold:
                        node = self.nodes[node].left_child
                    else:
                        node = self.nodes[node].right_child
                    k += 1
                    indices[k] = node
        data = np.ones(indptr[n], dtype=np.int64)
        return csr_matrix((data, indices_array, indptr_array), shape=(n, self.node_count))

    def __reduce__(self):
        return (Tree, (self.n_features,), self.__getstate__())

    def __getstate__(self):
        return {
            "max_depth": self.max_depth,
            "nodes": self._node_array[:self.node_count].copy(),
            "values": self._value_array[:self.node_count].copy(),
        }

    def __setstate__(self, state):
        """Restore a tree after checking it is one: the arrays may come from a
        file, and prediction indexes nodes without bounds checks."""
        nodes = np.asarray(state["nodes"])
        values = np.asarray(state["values"])
        if nodes.dtype != NODE_DTYPE or nodes.ndim != 1 or nodes.shape[0] == 0:
            raise ValueError("Tree state has nodes of the wrong layout.")
        if values.dtype != np.float64 or values.shape != nodes.shape:
            raise ValueError("Tree state has values of the wrong shape or type.")
        depth = checked_depth(nodes, self.n_features)
        self.node_count = 0
        self._resize(nodes.shape[0])
        self._node_array[:] = nodes
        self._value_array[:] = values
        self.node_count = nodes.shape[0]
        self.max_depth = depth


cdef inline void find_leaves(const Node* nodes, intp_t n_nodes, const double[:, ::1] X,
                             intp_t start, intp_t size, int64_t* leaves) noexcept nogil:
    """Leaf of rows ``start .. start + size - 1`` of X (size <= TRAVERSAL_BLOCK).

    The rows descend level by level together and the child is selected
    arithmetically: the loads of different rows overlap, and the coin-flip
    comparison at every level costs no branch misprediction. A row at a leaf
    stays there (a leaf's feature, -2, is clamped to a valid column).
    """
    cdef intp_t k, n_features = X.shape[1]
    cdef int64_t left, feature
    cdef const Node* node
    cdef const double* rows = &X[start, 0]
    cdef bint moved = True
    for k in range(size):
        leaves[k] = 0
    while moved:
        moved = False
        for k in range(size):
            check_index(leaves[k], n_nodes)
            node = &nodes[leaves[k]]
            left = node.left_child
            feature = node.feature & ~(node.feature >> 63)
            if left != TREE_LEAF:
                moved = True
            leaves[k] = (leaves[k] if left == TREE_LEAF else
                         left + (rows[k * n_features + feature] > node.threshold)
                         * (node.right_child - left))


def checked_depth(nodes, intp_t n_features):
    """Depth of a tree given as an array of NODE_DTYPE, after checking that it
    is a binary tree whose children follow their parent (raises ValueError)."""
    cdef intp_t n = nodes.shape[0], node
    left, right, feature = nodes["left_child"], nodes["right_child"], nodes["feature"]
    internal = left != TREE_LEAF
    ids = np.arange(n)
    if not (np.array_equal(internal, right != TREE_LEAF)
            and np.all((left[internal] > ids[internal]) & (left[internal] < n))
            and np.all((right[internal] > ids[internal]) & (right[internal] < n))
            and np.all((feature[internal] >= 0) & (feature[internal] < n_features))
            and np.all(feature[~internal] == TREE_UNDEFINED)
            and not np.isnan(nodes["threshold"][internal]).any()):
        raise ValueError("Tree state does not describe a valid tree.")
    parents = np.full(n, -1, dtype=np.intp)
    parents[left[internal]] = ids[internal]
    parents[right[internal]] = ids[internal]
    if np.count_nonzero(parents == -1) != 1 or parents[0] != -1:
        raise ValueError("Tree state does not describe a valid tree.")
    cdef intp_t[::1] parent = parents
    cdef intp_t[::1] depth = np.zeros(n, dtype=np.intp)
    for node in range(1, n):
        depth[node] = depth[parent[node]] + 1
    return int(np.max(depth))


# ---------------------------------------------------------------------------
# Training data: presorted features and hinges
# ---------------------------------------------------------------------------

cdef class TrainingData:
    """Features and interval breakpoints, presorted once for all trees.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, column-major
    order : ndarray of shape (n_features, n_samples), int32
        ``order[j]`` lists the rows by increasing ``X[:, j]`` (stable).
    lower_position, upper_position : ndarray of shape (n_samples,)
        Breakpoints of the lower and upper hinge of each row (``-inf`` and
        ``+inf`` for infinite bounds).
    hinge_order : ndarray of int32
        The finite hinges ``2 * row + is_upper`` by increasing breakpoint.

    The arrays are shared, read-only, by every tree built on the data.
    """

    def __cinit__(self, const double[::1, :] X, const int32_t[:, ::1] order,
                  const double[::1] lower_position, const double[::1] upper_position,
                  const int32_t[::1] hinge_order):
        self.n_samples = X.shape[0]
        self.n_features = X.shape[1]
        if order.shape[0] != self.n_features or order.shape[1] != self.n_samples:
            raise ValueError("order must have shape (n_features, n_samples)")
        if (lower_position.shape[0] != self.n_samples
                or upper_position.shape[0] != self.n_samples):
            raise ValueError("one lower and one upper breakpoint per sample")
        self.X = X
        self.order = order
        self.lower_position = lower_position
        self.upper_position = upper_position
        self.hinge_order = hinge_order

    def __reduce__(self):
        return (TrainingData, (np.asarray(self.X), np.asarray(self.order),
                               np.asarray(self.lower_position),
                               np.asarray(self.upper_position),
                               np.asarray(self.hinge_order)))


# ---------------------------------------------------------------------------
# Builder
# ---------------------------------------------------------------------------

ctypedef struct NodeRecord:
    intp_t node_id              # id in the tree
    intp_t start                # samples of the node: [start, end) of each feature's list
    intp_t end
    intp_t hinge_start          # its finite hinges: [hinge_start, hinge_end) of the list
    intp_t hinge_end
    intp_t depth                # depth in the tree (root: 0)
    double value                # prediction of the node
    double cost                 # exact optimal cost of the node


ctypedef struct SplitRecord:
    intp_t feature              # feature to split on
    intp_t position             # the first `position` samples (in that feature's order) go left
    double threshold            # midpoint between the two feature values
    double cost                 # optimal cost of left plus right (from the sweeps)
    double left_value           # prediction of the left child (if it has a finite hinge)
    double right_value          # prediction of the right child (if it has a finite hinge)


ctypedef struct Frontier:
    NodeRecord node             # a leaf that may be split (best-first growth)
    SplitRecord split           # its best split
    bint splittable             # whether `split` is a valid split
    double improvement          # cost decrease of that split


ctypedef struct BuildState:
    # configuration
    bint squared
    intp_t max_depth
    intp_t min_samples_split
    intp_t min_samples_leaf
    intp_t max_features
    double min_decrease         # a split must lower the cost by at least this much
    uint32_t random_state       # xorshift state (never 0)
    # data (shared, read-only)
    const double* X             # column-major features
    intp_t n_samples
    intp_t n_features
    # working memory of this build
    intp_t n_active             # samples with weight > 0 (the root's samples)
    int32_t* samples            # per feature, n_active rows in node-partitioned order
    int32_t* hinges             # finite hinges by breakpoint, node-partitioned
    Interval* intervals         # per row: breakpoints, weight, node-local slots
    unsigned char* goes_left    # per row, during a partition
    int32_t* scratch            # partition buffer
    double* slot_pos            # positions of the node's slots
    unsigned char* boundary     # boundary[k]: a split before the k-th sample is valid
    double* left_cost           # sweep outputs
    double* left_value
    double* right_cost
    double* right_value
    intp_t* features            # features in a random order
    HingeSolver* solver


cdef inline uint32_t random_below(uint32_t* state, uint32_t bound) noexcept nogil:
    """Pseudo-random integer in [0, bound) (xorshift32)."""
    cdef uint32_t x = state[0]
    x ^= x << 13
    x ^= x >> 17
    x ^= x << 5
    state[0] = x
    return x % bound


cdef inline double hinge_position(const Interval* interval, int32_t hinge) noexcept nogil:
    return interval.upper_position if hinge & 1 else interval.lower_position


cdef intp_t assign_slots(BuildState* state, const NodeRecord* node) noexcept nogil:
    """Give the node's breakpoints dense slots in one walk of its hinge list.

    Returns the number of slots; O(node hinges).
    """
    cdef intp_t k, n_slots = 0
    cdef int32_t hinge
    cdef Interval* interval
    cdef double position, previous = -INFINITY
    for k in range(node.hinge_start, node.hinge_end):
        hinge = state.hinges[k]
        check_index(hinge >> 1, state.n_samples)
        interval = &state.intervals[hinge >> 1]
        position = hinge_position(interval, hinge)
        if n_slots == 0 or position != previous:
            state.slot_pos[n_slots] = position
            n_slots += 1
            previous = position
        if hinge & 1:
            interval.upper_slot = <int32_t>(n_slots - 1)
        else:
            interval.lower_slot = <int32_t>(n_slots - 1)
    return n_slots


cdef double exact_cost(const BuildState* state, const int32_t* rows, intp_t count,
                       double value, double* weight) noexcept nogil:
    """Total weighted hinge loss of predicting ``value`` for ``rows``, and
    (in ``weight``) their total weight. O(count)."""
    cdef intp_t k
    cdef double total = 0.0, total_weight = 0.0, below, above
    cdef const Interval* interval
    for k in range(count):
        check_index(rows[k], state.n_samples)
        interval = &state.intervals[rows[k]]
        below = interval.lower_position - value
        above = value - interval.upper_position
        below = below if below > 0.0 else 0.0
        above = above if above > 0.0 else 0.0
        if state.squared:
            below = below * below
            above = above * above
        total += interval.weight * (below + above)
        total_weight += interval.weight
    weight[0] = total_weight
    return total


cdef void evaluate_feature(BuildState* state, intp_t feature, const NodeRecord* node,
                           intp_t n_slots, double tolerance,
                           SplitRecord* best) noexcept nogil:
    """Best split of the node on ``feature``, if better than ``best`` by more
    than ``tolerance``. O(m) for m samples."""
    cdef intp_t m = node.end - node.start, k
    cdef const int32_t* rows = state.samples + feature * state.n_active + node.start
    cdef const double* column = state.X + feature * state.n_samples
    cdef intp_t min_leaf = state.min_samples_leaf
    cdef bint any_boundary = False
    cdef double total
    state.boundary[0] = 0
    state.boundary[m] = 0
    for k in range(1, m):
        check_index(rows[k], state.n_samples)
        state.boundary[k] = ((column[rows[k - 1]] < column[rows[k]])
                             & (k >= min_leaf) & (m - k >= min_leaf))
        any_boundary |= state.boundary[k]
    if not any_boundary:
        return
    # right parts [k, m) by a backward sweep, left parts [0, k) forward
    solver_reset(state.solver, state.slot_pos, n_slots)
    solver_sweep(state.solver, state.intervals, rows, m, True, state.boundary,
                 state.right_cost, state.right_value)
    solver_reset(state.solver, state.slot_pos, n_slots)
    solver_sweep(state.solver, state.intervals, rows, m, False, state.boundary + 1,
                 state.left_cost, state.left_value)
    for k in range(1, m):
        if state.boundary[k]:
            total = state.left_cost[k - 1] + state.right_cost[k]
            if total < best.cost - tolerance:
                best.feature = feature
                best.position = k
                best.cost = total
                best.left_value = state.left_value[k - 1]
                best.right_value = state.right_value[k]


cdef bint find_split(BuildState* state, const NodeRecord* node,
                     SplitRecord* split) noexcept nogil:
    """Best split of the node over features drawn in a random order.

    At least ``max_features`` non-constant features are evaluated, more
    while none gives a valid split. Returns False when there is no valid
    split lowering the cost by more than the tolerance and ``min_decrease``.
    """
    cdef intp_t m = node.end - node.start, n_drawn = 0, n_visited = 0, j, feature
    cdef intp_t n_slots = assign_slots(state, node)
    cdef double tolerance = SPLIT_RTOL * node.cost
    cdef const int32_t* rows
    cdef const double* column
    cdef double left_x, right_x
    split.cost = INFINITY
    while n_drawn < state.n_features:
        if n_visited >= state.max_features and split.cost < INFINITY:
            break
        j = n_drawn + random_below(&state.random_state, state.n_features - n_drawn)
        feature = state.features[j]
        state.features[j] = state.features[n_drawn]
        state.features[n_drawn] = feature
        n_drawn += 1
        rows = state.samples + feature * state.n_active + node.start
        column = state.X + feature * state.n_samples
        if column[rows[0]] >= column[rows[m - 1]]:
            continue  # constant in this node
        n_visited += 1
        evaluate_feature(state, feature, node, n_slots, tolerance, split)
    if not (split.cost < INFINITY):
        return False
    if node.cost - split.cost <= tolerance or node.cost - split.cost < state.min_decrease:
        return False
    rows = state.samples + split.feature * state.n_active + node.start
    column = state.X + split.feature * state.n_samples
    left_x = column[rows[split.position - 1]]
    right_x = column[rows[split.position]]
    split.threshold = left_x / 2.0 + right_x / 2.0
    if split.threshold == right_x or not isfinite(split.threshold):
        split.threshold = left_x
    return True


cdef intp_t partition(int32_t* rows, intp_t count, const unsigned char* goes_left,
                      int32_t* scratch, int shift, intp_t n_rows) noexcept nogil:
    """Stable partition: entries whose row (``entry >> shift``, below
    ``n_rows``) goes left first. Returns how many go left. O(count)."""
    cdef intp_t k, n_left = 0, n_right = 0
    cdef int32_t entry
    for k in range(count):
        entry = rows[k]
        check_index(entry >> shift, n_rows)
        if goes_left[entry >> shift]:
            rows[n_left] = entry
            n_left += 1
        else:
            scratch[n_right] = entry
            n_right += 1
    memcpy(rows + n_left, scratch, n_right * sizeof(int32_t))
    return n_left


cdef int split_node(BuildState* state, Tree tree, const NodeRecord* node,
                    const SplitRecord* split, NodeRecord* left,
                    NodeRecord* right) except -1 nogil:
    """Partition the node's lists, add its children to the tree and describe
    them in ``left`` and ``right``. O(n_features * m)."""
    cdef intp_t m = node.end - node.start, k, j, n_left_hinges
    cdef int32_t* rows = state.samples + split.feature * state.n_active + node.start
    for k in range(m):
        state.goes_left[rows[k]] = k < split.position
    for j in range(state.n_features):
        if j != split.feature:
            partition(state.samples + j * state.n_active + node.start, m,
                      state.goes_left, state.scratch, 0, state.n_samples)
    n_left_hinges = partition(state.hinges + node.hinge_start,
                              node.hinge_end - node.hinge_start, state.goes_left,
                              state.scratch, 1, state.n_samples)
    tree.set_split(node.node_id, split.feature, split.threshold)
    left.start = node.start
    left.end = node.start + split.position
    left.hinge_start = node.hinge_start
    left.hinge_end = node.hinge_start + n_left_hinges
    right.start = left.end
    right.end = node.end
    right.hinge_start = left.hinge_end
    right.hinge_end = node.hinge_end
    add_child(state, tree, node, rows, left, split.left_value, True)
    add_child(state, tree, node, rows, right, split.right_value, False)
    return 0


cdef int add_child(const BuildState* state, Tree tree, const NodeRecord* parent,
                   const int32_t* rows, NodeRecord* child, double value,
                   bint is_left) except -1 nogil:
    """Complete a child's record (ranges set) and add it to the tree.

    A child without a finite bound keeps its parent's prediction. ``rows``
    are the parent's samples in the order of the split feature.
    """
    cdef double weight
    child.value = value if child.hinge_end > child.hinge_start else parent.value
    child.depth = parent.depth + 1
    child.cost = exact_cost(state, rows + (child.start - parent.start),
                            child.end - child.start, child.value, &weight)
    child.node_id = tree.add_node(parent.node_id, is_left, child.value, child.cost,
                                  child.end - child.start, weight, child.depth)
    return 0


cdef bint can_split(const BuildState* state, const NodeRecord* node) noexcept nogil:
    cdef intp_t m = node.end - node.start
    return (node.depth < state.max_depth and m >= state.min_samples_split
            and m >= 2 * state.min_samples_leaf and node.cost > 0.0)


cdef int grow_depth_first(BuildState* state, Tree tree, NodeRecord* root) except -1 nogil:
    cdef NodeRecord* stack = NULL
    cdef intp_t size = 0, capacity = 0
    cdef NodeRecord node
    cdef SplitRecord split
    try:
        stack = push_record(stack, &size, &capacity, root)
        while size > 0:
            size -= 1
            node = stack[size]
            if not (can_split(state, &node) and find_split(state, &node, &split)):
                continue
            stack = reserve_records(stack, size + 2, &capacity)
            # push the right child below the left one: left subtrees first
            split_node(state, tree, &node, &split, &stack[size + 1], &stack[size])
            size += 2
    finally:
        free(stack)
    return 0


cdef NodeRecord* reserve_records(NodeRecord* stack, intp_t size,
                                 intp_t* capacity) except NULL nogil:
    cdef NodeRecord* grown
    if size <= capacity[0]:
        return stack
    capacity[0] = max(2 * capacity[0], size, 64)
    grown = <NodeRecord*> realloc(stack, capacity[0] * sizeof(NodeRecord))
    if grown == NULL:
        with gil:
            raise MemoryError("cannot grow the tree builder's stack")
    return grown


cdef NodeRecord* push_record(NodeRecord* stack, intp_t* size, intp_t* capacity,
                             const NodeRecord* record) except NULL nogil:
    stack = reserve_records(stack, size[0] + 1, capacity)
    stack[size[0]] = record[0]
    size[0] += 1
    return stack


cdef void examine(BuildState* state, const NodeRecord* node, Frontier* leaf) noexcept nogil:
    leaf.node = node[0]
    leaf.splittable = can_split(state, node) and find_split(state, node, &leaf.split)
    leaf.improvement = node.cost - leaf.split.cost if leaf.splittable else -INFINITY


cdef int grow_best_first(BuildState* state, Tree tree, NodeRecord* root,
                         intp_t max_leaf_nodes) except -1 nogil:
    """Split the leaf whose best split lowers the cost most, until
    ``max_leaf_nodes`` leaves (a binary max-heap of candidate leaves)."""
    cdef Frontier* heap = <Frontier*> malloc(max_leaf_nodes * sizeof(Frontier))
    cdef intp_t size = 0, n_leaves = 1
    cdef Frontier best
    cdef NodeRecord left, right
    if heap == NULL:
        with gil:
            raise MemoryError("cannot allocate the tree builder's frontier")
    try:
        examine(state, root, &heap[0])
        size = 1
        while size > 0 and n_leaves < max_leaf_nodes:
            best = heap[0]
            size -= 1
            heap[0] = heap[size]
            sift_down(heap, size, 0)
            if not best.splittable:
                continue
            split_node(state, tree, &best.node, &best.split, &left, &right)
            n_leaves += 1
            examine(state, &left, &heap[size])
            sift_up(heap, size)
            examine(state, &right, &heap[size + 1])
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
    """Grows a Tree on TrainingData (all inputs already validated).

    Parameters
    ----------
    squared : bool
        Squared hinge loss if True, linear hinge otherwise.
    max_depth : int
        Maximum depth (use a large number for no limit).
    min_samples_split, min_samples_leaf : int
        Minimum (positive-weight) samples to split a node / in each leaf.
    max_features : int
        Features evaluated per node (at least; more while no split is valid).
    max_leaf_nodes : int
        Grow best-first up to this many leaves; -1 grows depth-first.
    min_decrease : float
        A split must lower the node's cost by at least this much (in the
        units of the costs, i.e. weighted total loss).
    seed : int
        Seed of the feature order (ties between splits), in [1, 2**32).
    """

    cdef bint squared
    cdef intp_t max_depth, min_samples_split, min_samples_leaf, max_features
    cdef intp_t max_leaf_nodes
    cdef double min_decrease
    cdef uint32_t seed

    def __cinit__(self, bint squared, intp_t max_depth, intp_t min_samples_split,
                  intp_t min_samples_leaf, intp_t max_features, intp_t max_leaf_nodes,
                  double min_decrease, uint32_t seed):
        self.squared = squared
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_decrease = min_decrease
        self.seed = seed if seed != 0 else 1

    def build(self, Tree tree, TrainingData data, const double[::1] sample_weight):
        """Grow ``tree`` on the samples of ``data`` with positive weight."""
        cdef intp_t n = data.n_samples, p = data.n_features
        cdef intp_t n_all_hinges = data.hinge_order.shape[0]
        # working memory, allocated with the GIL (sized for all samples:
        # pages beyond the positive-weight ones are never touched)
        samples_array = np.empty(max(n * p, 1), dtype=np.int32)
        hinges_array = np.empty(max(n_all_hinges, 1), dtype=np.int32)
        intervals_array = np.empty(max(n, 1), dtype=np.dtype([
            ("lower_position", np.float64), ("upper_position", np.float64),
            ("weight", np.float64), ("lower_slot", np.int32), ("upper_slot", np.int32)]))
        goes_left_array = np.empty(max(n, 1), dtype=np.uint8)
        scratch_array = np.empty(max(n, n_all_hinges, 1), dtype=np.int32)
        slot_pos_array = np.empty(max(n_all_hinges, 1))
        boundary_array = np.empty(n + 1, dtype=np.uint8)
        sweeps_array = np.empty((4, max(n, 1)))
        features_array = np.arange(max(p, 1), dtype=np.intp)
        workspace = SolverWorkspace(max(n_all_hinges, 1), self.squared)

        cdef int32_t[::1] samples = samples_array
        cdef int32_t[::1] hinges = hinges_array
        cdef Interval[::1] intervals = intervals_array
        cdef unsigned char[::1] goes_left = goes_left_array
        cdef int32_t[::1] scratch = scratch_array
        cdef double[::1] slot_pos = slot_pos_array
        cdef unsigned char[::1] boundary = boundary_array
        cdef double[:, ::1] sweeps = sweeps_array
        cdef intp_t[::1] features = features_array
        cdef BuildState state
        state.squared = self.squared
        state.max_depth = self.max_depth
        state.min_samples_split = self.min_samples_split
        state.min_samples_leaf = self.min_samples_leaf
        state.max_features = self.max_features
        state.min_decrease = self.min_decrease
        state.random_state = self.seed
        state.X = &data.X[0, 0] if n > 0 and p > 0 else NULL
        state.n_samples = n
        state.n_features = p
        state.samples = &samples[0]
        state.hinges = &hinges[0]
        state.intervals = &intervals[0]
        state.goes_left = &goes_left[0]
        state.scratch = &scratch[0]
        state.slot_pos = &slot_pos[0]
        state.boundary = &boundary[0]
        state.left_cost = &sweeps[0, 0]
        state.left_value = &sweeps[1, 0]
        state.right_cost = &sweeps[2, 0]
        state.right_value = &sweeps[3, 0]
        state.features = &features[0]
        state.solver = &workspace.state

        cdef NodeRecord root
        cdef double weight
        with nogil:
            prepare_samples(&state, data, &sample_weight[0] if n > 0 else NULL, &root)
            root.value = root_value(&state, &root)
            root.cost = exact_cost(&state, state.samples, root.end, root.value, &weight)
            root.node_id = tree.add_node(-1, False, root.value, root.cost, root.end,
                                         weight, 0)
            if self.max_leaf_nodes > 0:
                grow_best_first(&state, tree, &root, self.max_leaf_nodes)
            else:
                grow_depth_first(&state, tree, &root)
        tree._resize(tree.node_count)
        return tree


cdef void prepare_samples(BuildState* state, TrainingData data, const double* weight,
                          NodeRecord* root) noexcept nogil:
    """Keep the samples of positive weight in every sorted list, fill their
    interval records, and describe the root. O(p n)."""
    cdef intp_t n = state.n_samples, i, j, k, m = 0, n_hinges = 0
    cdef int32_t row, hinge
    cdef Interval* interval
    for i in range(n):
        interval = &state.intervals[i]
        interval.lower_position = data.lower_position[i]
        interval.upper_position = data.upper_position[i]
        interval.weight = weight[i]
        interval.lower_slot = NO_SLOT
        interval.upper_slot = NO_SLOT
        m += weight[i] > 0.0
    for j in range(state.n_features):
        k = 0
        for i in range(n):
            row = data.order[j, i]
            if weight[row] > 0.0:
                state.samples[j * m + k] = row
                k += 1
    for i in range(data.hinge_order.shape[0]):
        hinge = data.hinge_order[i]
        if weight[hinge >> 1] > 0.0:
            state.hinges[n_hinges] = hinge
            n_hinges += 1
    state.n_active = m
    root.start = 0
    root.end = m
    root.hinge_start = 0
    root.hinge_end = n_hinges
    root.depth = 0


cdef double root_value(BuildState* state, const NodeRecord* root) noexcept nogil:
    """Optimal prediction for all samples of the root (0.0 without a finite bound)."""
    cdef intp_t m = root.end - root.start, n_slots
    cdef double value = 0.0, cost
    if m == 0:
        return value
    n_slots = assign_slots(state, root)
    solver_reset(state.solver, state.slot_pos, n_slots)
    memset(state.boundary, 0, m)  # no reports: read the optimum after the sweep
    solver_sweep(state.solver, state.intervals, state.samples, m, False, state.boundary,
                 state.left_cost, state.left_value)
    solver_minimum(state.solver, &value, &cost)
    return value


# ---------------------------------------------------------------------------
# Minimal cost-complexity pruning
# ---------------------------------------------------------------------------

ctypedef pair[double, pair[intp_t, intp_t]] HeapEntry  # (alpha, (node, version))


def pruning_sequence(Tree tree, double total_weight):
    """Weakest-link pruning (Breiman et al. 1984) of a tree.

    The cost of a node is divided by ``total_weight``. Repeatedly the
    internal node whose subtree buys the least cost decrease per extra leaf,
    ``alpha = (cost(t) - cost(leaves of t)) / (n_leaves(t) - 1)``, becomes a
    leaf, until only the root is left. O(n log n + n * depth) with a heap
    whose stale entries are skipped.

    Returns
    -------
    pruned : ndarray of shape (n_steps,), dtype intp
        The nodes that become leaves, in order (the root last); their
        internal descendants go with them.
    alphas : ndarray of shape (n_steps,)
        Effective alpha of each step, made non-decreasing.
    costs : ndarray of shape (n_steps,)
        Total leaf cost of the tree after each step.
    full_cost : float
        Total leaf cost of the unpruned tree.
    """
    cdef intp_t n = tree.node_count, node, child, ancestor, k, n_steps = 0
    cdef intp_t left, right, n_internal = n - tree.n_leaves
    parent_array = np.full(n, -1, dtype=np.intp)
    cdef intp_t[::1] parent = parent_array
    cdef double[::1] cost = np.asarray(tree.cost) / total_weight
    cdef double[::1] subtree_cost = np.array(cost)
    cdef intp_t[::1] n_leaves = np.ones(n, dtype=np.intp)
    cdef intp_t[::1] version = np.zeros(n, dtype=np.intp)
    cdef unsigned char[::1] removed = np.zeros(n, dtype=np.uint8)
    cdef intp_t[::1] stack = np.empty(max(n, 1), dtype=np.intp)
    pruned_array = np.empty(n_internal, dtype=np.intp)
    alphas_array = np.empty(n_internal)
    costs_array = np.empty(n_internal)
    cdef intp_t[::1] pruned = pruned_array
    cdef double[::1] alphas = alphas_array
    cdef double[::1] costs = costs_array
    cdef priority_queue[HeapEntry] heap  # max-heap: alphas enter negated
    cdef HeapEntry top
    cdef double alpha, last_alpha = 0.0, cost_gain
    cdef intp_t leaves_gone
    cdef Node* nodes = tree.nodes
    with nogil:
        # children have larger ids than parents: one backward pass aggregates
        for node in range(n - 1, -1, -1):
            left = nodes[node].left_child
            right = nodes[node].right_child
            if left == TREE_LEAF:
                continue
            parent[left] = node
            parent[right] = node
            n_leaves[node] = n_leaves[left] + n_leaves[right]
            subtree_cost[node] = subtree_cost[left] + subtree_cost[right]
            heap.push(HeapEntry(-weakest_link(cost[node], subtree_cost[node],
                                              n_leaves[node]),
                                pair[intp_t, intp_t](node, 0)))
        while not heap.empty():
            top = heap.top()
            heap.pop()
            node = top.second.first
            if removed[node] or top.second.second != version[node]:
                continue
            alpha = -top.first
            last_alpha = alpha if alpha > last_alpha else last_alpha
            # the node becomes a leaf; its internal descendants are gone
            cost_gain = cost[node] - subtree_cost[node]
            leaves_gone = n_leaves[node] - 1
            removed[node] = 1
            stack[0] = nodes[node].left_child
            stack[1] = nodes[node].right_child
            k = 2
            while k > 0:
                k -= 1
                child = stack[k]
                if nodes[child].left_child != TREE_LEAF and not removed[child]:
                    removed[child] = 1
                    stack[k] = nodes[child].left_child
                    stack[k + 1] = nodes[child].right_child
                    k += 2
            ancestor = parent[node]
            while ancestor != -1:
                subtree_cost[ancestor] += cost_gain
                n_leaves[ancestor] -= leaves_gone
                version[ancestor] += 1
                heap.push(HeapEntry(-weakest_link(cost[ancestor],
                                                  subtree_cost[ancestor],
                                                  n_leaves[ancestor]),
                                    pair[intp_t, intp_t](ancestor, version[ancestor])))
                ancestor = parent[ancestor]
            pruned[n_steps] = node
            alphas[n_steps] = last_alpha
            costs[n_steps] = subtree_cost[0] if node != 0 else cost[0]
            n_steps += 1
    full_cost = float(np.sum(np.asarray(tree.cost)[np.asarray(tree.children_left)
                                                   == TREE_LEAF]) / total_weight)
    return (pruned_array[:n_steps], alphas_array[:n_steps], costs_array[:n_steps],
            full_cost)


cdef inline double weakest_link(double cost, double subtree_cost,
                                intp_t n_leaves) noexcept nogil:
    return (cost - subtree_cost) / (n_leaves - 1)


def prune(Tree tree, const intp_t[::1] pruned):
    """The subtree in which the nodes in ``pruned`` (and nothing below them)
    are leaves, as a new Tree. O(node_count)."""
    cdef intp_t n = tree.node_count, node, k, left, right, child
    cdef Tree subtree = Tree(tree.n_features)
    cdef unsigned char[::1] cut = np.zeros(n, dtype=np.uint8)
    cdef intp_t[::1] new_id = np.full(n, -1, dtype=np.intp)
    cdef intp_t[::1] depth = np.zeros(n, dtype=np.intp)
    cdef Node* nodes = tree.nodes
    for k in range(pruned.shape[0]):
        cut[pruned[k]] = 1
    with nogil:
        if n > 0:
            new_id[0] = subtree.add_node(-1, False, tree.values[0], nodes[0].cost,
                                         nodes[0].n_node_samples,
                                         nodes[0].weighted_n_node_samples, 0)
        for node in range(n):
            left = nodes[node].left_child
            right = nodes[node].right_child
            if new_id[node] == -1 or left == TREE_LEAF or cut[node]:
                continue
            subtree.set_split(new_id[node], nodes[node].feature, nodes[node].threshold)
            for k in range(2):
                child = left if k == 0 else right
                depth[child] = depth[node] + 1
                new_id[child] = subtree.add_node(
                    new_id[node], k == 0, tree.values[child], nodes[child].cost,
                    nodes[child].n_node_samples, nodes[child].weighted_n_node_samples,
                    depth[child])
    subtree._resize(subtree.node_count)
    return subtree


def subtree_predictions(Tree tree, const double[:, ::1] X, const double[::1] leaf_alpha,
                        const double[::1] alphas):
    """Predictions of the pruned subtrees of ``tree`` for each alpha, without refitting.

    ``leaf_alpha[t]`` is the alpha from which node t is a leaf of the pruned
    subtree (0 for a leaf, +inf for a node only ever removed with an
    ancestor). For ``alphas`` in increasing order, row i's prediction for
    ``alphas[k]`` is the value of the shallowest node on its path whose
    ``leaf_alpha <= alphas[k]``. O(n_rows * (depth + n_alphas)).

    Returns
    -------
    predictions : ndarray of shape (n_rows, n_alphas)
    """
    cdef intp_t n = X.shape[0], n_alphas = alphas.shape[0], i, k, depth
    cdef int64_t node
    cdef const Node* nodes = tree.nodes
    predictions_array = np.empty((n, n_alphas))
    cdef double[:, ::1] predictions = predictions_array
    cdef intp_t[::1] path = np.empty(tree.max_depth + 1, dtype=np.intp)
    cdef double[::1] prefix_min = np.empty(tree.max_depth + 1)
    with nogil:
        for i in range(n):
            node = 0
            depth = 0
            path[0] = 0
            prefix_min[0] = leaf_alpha[0]
            while nodes[node].left_child != TREE_LEAF:
                if X[i, nodes[node].feature] <= nodes[node].threshold:
                    node = nodes[node].left_child
                else:
                    node = nodes[node].right_child
                depth += 1
                path[depth] = node
                prefix_min[depth] = min(prefix_min[depth - 1], leaf_alpha[node])
            # the shallowest node with leaf_alpha <= alpha rises as alpha grows
            for k in range(n_alphas):
                while depth > 0 and prefix_min[depth - 1] <= alphas[k]:
                    depth -= 1
                predictions[i, k] = tree.values[path[depth]]
    return predictions_array
