"""Maximum Margin Interval Trees: the fitted tree as flat arrays, and its walks.

A :class:`Tree` stores its nodes in one growable array of ``Node`` records
and its predictions in a parallel array (scikit-learn's layout). Every walk
from the root to a leaf routes a row by ``goes_right`` (``_tree.pxd``):
``x <= threshold`` goes left, a missing value (NaN) goes to the side stored
in the node. A categorical split sends the categories of a set left (a
bitset per split, ``CategorySet``), other codes, missing values and
categories unseen in training to the node's missing side
(``category_goes_right``). ``decision_path`` and the pruned-subtree
predictions of
``_pruning`` step through the node records (``next_node``); ``predict``,
``apply`` and the forests' ``add_predictions`` through a compact copy of
them (``WalkNode``), laid out on a tree's first prediction.

A walk costs O(depth) per row and tree; laying out the copy, O(node_count)
time and 16 bytes per node, once per tree (not pickled).
"""

from cpython.ref cimport PyObject
from libc.math cimport NAN
from libc.stdint cimport int64_t, uint32_t
from libcpp.vector cimport vector

import numpy as np
from scipy.sparse import csr_matrix

from ._node_models import node_models_from_state

from ._node_models cimport NodeModels
from .._utils._typedefs cimport check_index

cdef enum:
    MAX_WALK_NODES = 1 << 30      # nodes (and features) of a tree prediction walks
    TRAVERSAL_BLOCK = 16          # rows walked down a tree together
    ROW_BLOCK_BYTES = 1 << 18     # rows walked down a group of trees: they stay in L2
    GROUP_BYTES = 12 << 20        # nodes of a group of trees: two threads' stay in L3


# ---------------------------------------------------------------------------
# Tree storage
# ---------------------------------------------------------------------------

cdef Node _dummy
NODE_DTYPE = np.dtype({
    "names": ["left_child", "right_child", "feature", "threshold", "cost",
              "n_node_samples", "weighted_n_node_samples", "missing_go_to_left",
              "category_set"],
    "formats": [np.int64, np.int64, np.int64, np.float64, np.float64, np.int64,
                np.float64, np.uint8, np.int32],
    "offsets": [
        <Py_ssize_t>(<char*>&_dummy.left_child - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.right_child - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.feature - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.threshold - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.cost - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.n_node_samples - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.weighted_n_node_samples - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.missing_go_to_left - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.category_set - <char*>&_dummy),
    ],
    "itemsize": sizeof(Node),
})

# Nodes of mmit < 0.2 (model files of format version 1, older pickles): no
# missing-value side, the trees were grown without missing values.
_LEGACY_FIELDS = ["left_child", "right_child", "feature", "threshold", "cost",
                  "n_node_samples", "weighted_n_node_samples"]
LEGACY_NODE_DTYPE = np.dtype({
    "names": _LEGACY_FIELDS,
    "formats": [NODE_DTYPE.fields[name][0] for name in _LEGACY_FIELDS],
    "offsets": [8 * k for k in range(7)],
    "itemsize": 56,
})


# Nodes of mmit < 0.3 (model files of format versions 2 to 6): no categorical
# splits.
_NUMERIC_FIELDS = [name for name in NODE_DTYPE.names if name != "category_set"]
NUMERIC_NODE_DTYPE = np.dtype({
    "names": _NUMERIC_FIELDS,
    "formats": [NODE_DTYPE.fields[name][0] for name in _NUMERIC_FIELDS],
    "offsets": [NODE_DTYPE.fields[name][1] for name in _NUMERIC_FIELDS],
    "itemsize": NODE_DTYPE.itemsize,
})


def upgrade_nodes(nodes):
    """Nodes of NODE_DTYPE from an array of NODE_DTYPE, NUMERIC_NODE_DTYPE or
    LEGACY_NODE_DTYPE.

    Earlier trees have no categorical split. Legacy trees were grown without
    missing values: as for a feature that had no missing value in a node,
    NaN goes to the heavier child (the left one on a tie).
    """
    nodes = np.asarray(nodes)
    if nodes.dtype not in (LEGACY_NODE_DTYPE, NUMERIC_NODE_DTYPE):
        return nodes
    upgraded = np.zeros(nodes.shape, dtype=NODE_DTYPE)
    for name in nodes.dtype.names:
        upgraded[name] = nodes[name]
    upgraded["category_set"] = -1
    if nodes.dtype == NUMERIC_NODE_DTYPE:
        return upgraded
    weight = nodes["weighted_n_node_samples"]
    left, right = nodes["left_child"], nodes["right_child"]
    internal = np.flatnonzero((left >= 0) & (left < len(nodes)) & (right >= 0)
                              & (right < len(nodes)))
    upgraded["missing_go_to_left"][internal] = (weight[left[internal]]
                                                >= weight[right[internal]])
    return upgraded


cdef class Tree:
    """A fitted interval-regression tree stored as flat arrays.

    Node ``i`` has children ``children_left[i]`` and ``children_right[i]``
    (``-1`` for a leaf), splits on ``feature[i]`` at ``threshold[i]``
    (samples with ``x[feature] <= threshold`` go left; ``-2`` for a leaf;
    a threshold of ``+inf`` splits present from missing values), sends a
    missing value (NaN) left where ``missing_go_to_left[i]``, predicts
    ``value[i]`` and has total cost ``cost[i]`` (the loss of its prediction)
    over its ``n_node_samples[i]`` training samples of total weight
    ``weighted_n_node_samples[i]``. A categorical split
    (``is_categorical[i]``, threshold NaN) sends the category codes of
    :meth:`categories_left` left, and the other codes, missing values and
    categories unseen in training where missing values go. A child's id is
    always larger than its parent's. The attributes are read-only views of
    the tree's arrays.

    A tree whose leaves hold models (``leaf_model="linear"``) carries them
    as ``node_models`` (see ``mmit.tree._node_models``), which turn a node's
    value and a row into the node's prediction; None for a tree of
    constants.

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
        self.node_models = None
        self.walk = NULL
        self._walk_array = None

    cdef int resize(self, intp_t capacity) except -1:
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
        self.walk = NULL
        return 0

    cdef intp_t add_node(self, intp_t parent, bint is_left, double value, double cost,
                         intp_t n_node_samples, double weighted_n_node_samples,
                         intp_t depth) except -1 nogil:
        """Append a leaf (a child of ``parent`` unless it is -1); return its id."""
        if self.node_count >= self.capacity:
            with gil:
                self.resize(max(2 * self.capacity, 15))
        cdef intp_t node_id = self.node_count
        cdef Node* node = &self.nodes[node_id]
        self.walk = NULL
        node.left_child = TREE_LEAF
        node.right_child = TREE_LEAF
        node.feature = TREE_UNDEFINED
        node.threshold = TREE_UNDEFINED
        node.cost = cost
        node.n_node_samples = n_node_samples
        node.weighted_n_node_samples = weighted_n_node_samples
        node.missing_go_to_left = 0
        node.category_set = -1
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

    cdef void set_split(self, intp_t node_id, intp_t feature, double threshold,
                        bint missing_go_to_left) noexcept nogil:
        self.walk = NULL
        self.nodes[node_id].feature = feature
        self.nodes[node_id].threshold = threshold
        self.nodes[node_id].missing_go_to_left = missing_go_to_left
        self.nodes[node_id].category_set = -1

    cdef int set_categorical_split(self, intp_t node_id, intp_t feature, int64_t first,
                                   const uint32_t* words, intp_t n_words,
                                   bint missing_go_to_left) except -1 nogil:
        """Split ``node_id`` on categorical ``feature``: the codes ``first + k``
        whose bit ``k`` of ``words`` (``n_words`` of them) is set go left."""
        cdef CategorySet categories
        cdef intp_t k
        categories.first = first
        categories.n_bits = 32 * n_words
        categories.offset = self.category_words.size()
        for k in range(n_words):
            self.category_words.push_back(words[k])
        self.set_split(node_id, feature, NAN, missing_go_to_left)
        self.nodes[node_id].category_set = <int32_t>self.category_sets.size()
        self.category_sets.push_back(categories)
        return 0

    cdef int copy_split(self, intp_t node_id, Tree source,
                        intp_t source_node) except -1 nogil:
        """Give ``node_id`` the split of node ``source_node`` of ``source``."""
        cdef const Node* node = &source.nodes[source_node]
        cdef const CategorySet* categories
        if node.category_set < 0:
            self.set_split(node_id, node.feature, node.threshold, node.missing_go_to_left)
            return 0
        categories = &source.category_sets[node.category_set]
        return self.set_categorical_split(
            node_id, node.feature, categories.first,
            source.category_words.data() + categories.offset, categories.n_bits // 32,
            node.missing_go_to_left)

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
    def missing_go_to_left(self):
        return self._field("missing_go_to_left").view(np.bool_)

    @property
    def is_categorical(self):
        """Whether each node's split is categorical (False for a leaf)."""
        return self._field("category_set") >= 0

    def categories_left(self, intp_t node, intp_t n_categories):
        """The codes in ``[0, n_categories)`` that a categorical split sends to
        its left child, increasing (those of its set, and the others when
        missing values go left)."""
        if not (0 <= node < self.node_count and self.nodes[node].category_set >= 0):
            raise ValueError(f"node {node} has no categorical split.")
        cdef CategorySet categories = self.category_sets[self.nodes[node].category_set]
        words = np.asarray(<const uint32_t[:categories.n_bits // 32]>
                           (self.category_words.data() + categories.offset))
        bits = np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool)
        # as category_goes_right: a code outside the set's bits goes with NaN
        goes_left = np.full(n_categories, bool(self.nodes[node].missing_go_to_left))
        held = np.arange(max(0, categories.first),
                         min(n_categories, categories.first + categories.n_bits))
        goes_left[held] = bits[held - categories.first]
        return np.flatnonzero(goes_left)

    @property
    def value(self):
        view = self._value_array[:self.node_count]
        view.flags.writeable = False
        return view

    def with_node_models(self, NodeModels node_models, values, cost):
        """A copy of the tree whose nodes predict with ``node_models`` (their
        values and costs replaced: each node's value at the models' zero and
        its models' loss)."""
        state = self.__getstate__()
        state["nodes"]["cost"] = cost
        state["values"] = np.asarray(values, dtype=np.float64)
        state["node_models"] = node_models.state()
        tree = Tree(self.n_features)
        tree.__setstate__(state)
        return tree

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    cdef int check_rows(self, X) except -1:
        """Raise ValueError unless the rows ``X`` have the tree's features and the
        tree has nodes: the walks read both without bounds checks."""
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, the tree was grown on "
                             f"{self.n_features}.")
        if self.node_count == 0:
            raise ValueError("the tree has no nodes.")
        return 0

    cdef const WalkNode* walk_nodes(self) except NULL:
        """The compact nodes that ``predict`` and ``apply`` walk, laid out on
        first use (and again after the tree has changed)."""
        if self.walk != NULL:
            return self.walk
        if self.node_count == 0:
            raise ValueError("the tree has no nodes.")
        if self.node_count > MAX_WALK_NODES or self.n_features > MAX_WALK_NODES:
            raise ValueError("the tree has too many nodes or features to predict.")
        walk_array = np.empty(self.node_count * sizeof(WalkNode), dtype=np.uint8)
        cdef unsigned char[::1] walk = walk_array
        lay_out_walk(self.nodes, self.values, self.node_count, <WalkNode*> &walk[0])
        # another thread predicting with this tree may have laid it out since
        # the test above: the first layout stays, its walks may be running
        if self.walk == NULL:
            self._walk_array = walk_array
            self.walk = <const WalkNode*> &walk[0]
        return self.walk

    def apply(self, const double[:, ::1] X):
        """Id of the leaf each row of X (float64, C-contiguous) falls in."""
        self.check_rows(X)
        cdef intp_t n = X.shape[0], block, start, size, k
        cdef const WalkNode* leaves[TRAVERSAL_BLOCK]
        cdef TreeWalk tree_walk = self.tree_walk()
        leaves_array = np.empty(n, dtype=np.intp)
        cdef intp_t[::1] out = leaves_array
        with nogil:
            for block in range((n + TRAVERSAL_BLOCK - 1) // TRAVERSAL_BLOCK):
                start = block * TRAVERSAL_BLOCK
                size = min(TRAVERSAL_BLOCK, n - start)
                find_tree_leaves(&tree_walk, &X[start, 0], X.shape[1], size, leaves)
                for k in range(size):
                    out[start + k] = -1 - leaves[k].feature
        return leaves_array

    def predict(self, const double[:, ::1] X):
        """Prediction of the leaf of each row of X (float64, C-contiguous)."""
        self.check_rows(X)
        cdef TreeWalk tree_walk = self.tree_walk()
        predictions = np.empty(X.shape[0])
        cdef double[::1] out = predictions
        if X.shape[0] > 0:
            with nogil:
                predict_rows(&tree_walk, self.node_models, &X[0, 0], X.shape[0],
                             X.shape[1], &out[0], False, 1.0)
        return predictions

    cdef TreeWalk tree_walk(self) except *:
        """What a walk down the tree reads: its compact nodes (laid out on
        first use), its category sets, its node models."""
        cdef TreeWalk walk
        walk.nodes = self.walk_nodes()
        walk.n_nodes = self.node_count
        walk.categorical = not self.category_sets.empty()
        walk.category_sets = self.category_sets.data()
        walk.category_words = self.category_words.data()
        walk.node_models = <PyObject*> self.node_models
        return walk

    cdef double node_prediction(self, int64_t node, const double* row) noexcept nogil:
        """Prediction of ``node`` (a valid id) for ``row``: its value, or its
        node model's prediction."""
        if self.node_models is None:
            return self.values[node]
        return self.node_models.predict(node, self.values[node], row)

    def decision_path(self, const double[:, ::1] X):
        """Sparse (n_samples, node_count) indicator of the nodes each row visits."""
        self.check_rows(X)
        cdef intp_t n = X.shape[0], i, k
        cdef int64_t node
        indptr_array = np.zeros(n + 1, dtype=np.intp)
        cdef intp_t[::1] indptr = indptr_array
        with nogil:
            for i in range(n):
                node = 0
                k = 1
                while self.nodes[node].left_child != TREE_LEAF:
                    node = next_node(self, &self.nodes[node], &X[i, 0])
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
                    node = next_node(self, &self.nodes[node], &X[i, 0])
                    k += 1
                    indices[k] = node
        data = np.ones(indptr[n], dtype=np.int64)
        return csr_matrix((data, indices_array, indptr_array), shape=(n, self.node_count))

    def compute_feature_importances(self):
        """Cost decrease of every split, summed per feature, normalised to sum 1."""
        left = self.children_left
        internal = np.flatnonzero(left != TREE_LEAF)
        cost = self.cost
        right = self.children_right
        decrease = cost[internal] - cost[left[internal]] - cost[right[internal]]
        importances = np.bincount(self.feature[internal], weights=decrease,
                                  minlength=self.n_features)
        total = importances.sum()
        return importances / total if total > 0 else importances

    def __reduce__(self):
        return (Tree, (self.n_features,), self.__getstate__())

    def __getstate__(self):
        # copied field by field into zeroed memory: numpy's copy of a record
        # array leaves the padding after missing_go_to_left uninitialised,
        # which would make pickles and model files differ from run to run
        nodes = np.zeros(self.node_count, dtype=NODE_DTYPE)
        nodes[:] = self._node_array[:self.node_count]
        cdef intp_t k, n_sets = self.category_sets.size()
        category_sets = np.empty((n_sets, 3), dtype=np.int64)
        for k in range(n_sets):
            category_sets[k] = (self.category_sets[k].first, self.category_sets[k].n_bits,
                                self.category_sets[k].offset)
        category_words = np.array(self.category_words, dtype=np.uint32)
        return {
            "max_depth": self.max_depth,
            "nodes": nodes,
            "values": self._value_array[:self.node_count].copy(),
            "node_models": None if self.node_models is None else self.node_models.state(),
            "category_sets": category_sets,
            "category_words": category_words,
        }

    def __setstate__(self, state):
        """Restore a tree after checking it is one: the arrays may come from a
        file, and prediction indexes nodes without bounds checks. The node
        models' state is nested under ``"node_models"``; earlier pickles'
        flat arrays of linear models are read too; a state without category
        sets has no categorical split."""
        nodes = upgrade_nodes(state["nodes"])
        values = np.asarray(state["values"])
        if nodes.dtype != NODE_DTYPE or nodes.ndim != 1 or nodes.shape[0] == 0:
            raise ValueError("Tree state has nodes of the wrong layout.")
        if values.dtype != np.float64 or values.shape != nodes.shape:
            raise ValueError("Tree state has values of the wrong shape or type.")
        category_sets = np.asarray(state.get("category_sets", np.empty((0, 3), np.int64)))
        category_words = np.asarray(state.get("category_words", np.empty(0, np.uint32)))
        check_category_sets(nodes, category_sets, category_words)
        depth = checked_depth(nodes, self.n_features)
        node_models = node_models_from_state(state, nodes.shape[0], self.n_features)
        self.node_count = 0
        self.resize(nodes.shape[0])
        self._node_array[:] = nodes
        self._value_array[:] = values
        self.node_count = nodes.shape[0]
        self.max_depth = depth
        self.node_models = node_models
        self.category_sets.clear()
        cdef CategorySet categories
        for first, n_bits, offset in category_sets:
            categories.first = first
            categories.n_bits = n_bits
            categories.offset = offset
            self.category_sets.push_back(categories)
        self.category_words = category_words.tolist()


cdef void lay_out_walk(const Node* nodes, const double* values, intp_t n_nodes,
                       WalkNode* walk) noexcept nogil:
    """Write the compact copy of a tree's ``n_nodes`` nodes into ``walk``.

    The root takes slot 0 and the two children of a node the next two free
    slots, depth first, left subtree first: a row that goes left finds the
    next pair of children beside the last one, and the nodes of a subtree
    lie together (faster than breadth first on forests of deep trees).
    O(n_nodes).
    """
    cdef intp_t slot, node_id, free = 1
    cdef const Node* node
    cdef vector[intp_t] pending      # slots given a node, not yet written
    cdef vector[intp_t] node_of_slot = vector[intp_t](n_nodes)
    node_of_slot[0] = 0
    pending.push_back(0)
    while not pending.empty():
        slot = pending.back()
        pending.pop_back()
        node_id = node_of_slot[slot]
        node = &nodes[node_id]
        if node.left_child == TREE_LEAF:
            walk[slot].threshold = values[node_id]
            walk[slot].feature = -1 - node_id
            walk[slot].children = 0
        else:
            check_index(free + 1, n_nodes)
            walk[slot].feature = node.feature
            walk[slot].children = 4 * free + (node.missing_go_to_left == 0)
            if node.category_set >= 0:
                walk[slot].threshold = node.category_set
                walk[slot].children += 2
            else:
                walk[slot].threshold = node.threshold
            node_of_slot[free] = node.left_child
            node_of_slot[free + 1] = node.right_child
            pending.push_back(free + 1)
            pending.push_back(free)
            free += 2


cdef inline void find_leaves(const TreeWalk* tree, const double* rows, intp_t n_features,
                             intp_t size, const WalkNode** leaves,
                             bint categorical) noexcept nogil:
    """Leaf of each of the ``size`` (<= TRAVERSAL_BLOCK) consecutive rows
    that start at ``rows``; ``categorical``: the tree may hold categorical
    splits (a constant, so that trees without them walk without the test).

    The rows descend level by level together, so that the loads of
    different rows overlap.
    """
    cdef intp_t k, child
    cdef const WalkNode* nodes = tree.nodes
    cdef const WalkNode* node
    cdef bint moved = True, right
    for k in range(size):
        leaves[k] = nodes
    while moved:
        moved = False
        for k in range(size):
            node = leaves[k]
            if node.feature >= 0:
                moved = True
                if categorical and node.children & 2:
                    right = category_goes_right(
                        rows[k * n_features + node.feature],
                        &tree.category_sets[<intp_t>node.threshold],
                        tree.category_words, node.children & 1)
                else:
                    right = goes_right(rows[k * n_features + node.feature],
                                       node.threshold, node.children & 1)
                child = (node.children >> 2) + right
                check_index(child, tree.n_nodes)
                leaves[k] = &nodes[child]


cdef inline void find_tree_leaves(const TreeWalk* tree, const double* rows,
                                  intp_t n_features, intp_t size,
                                  const WalkNode** leaves) noexcept nogil:
    """:func:`find_leaves` for a tree with or without categorical splits."""
    if tree.categorical:
        find_leaves(tree, rows, n_features, size, leaves, True)
    else:
        find_leaves(tree, rows, n_features, size, leaves, False)


cdef void predict_rows(const TreeWalk* tree, NodeModels node_models, const double* rows,
                       intp_t n_rows, intp_t n_features, double* out, bint add,
                       double scale) noexcept nogil:
    """Write a tree's predictions (``node_models``: its node models) for
    ``n_rows`` consecutive rows to ``out``, or, if ``add``, add them times
    ``scale`` to it."""
    cdef intp_t block, start, size, k
    cdef const WalkNode* leaves[TRAVERSAL_BLOCK]
    cdef double prediction
    for block in range((n_rows + TRAVERSAL_BLOCK - 1) // TRAVERSAL_BLOCK):
        start = block * TRAVERSAL_BLOCK
        size = min(TRAVERSAL_BLOCK, n_rows - start)
        find_tree_leaves(tree, rows + start * n_features, n_features, size, leaves)
        for k in range(size):
            if node_models is None:
                prediction = leaves[k].threshold
            else:
                prediction = node_models.predict(-1 - leaves[k].feature,
                                                 leaves[k].threshold,
                                                 rows + (start + k) * n_features)
            if add:
                out[start + k] += scale * prediction
            else:
                out[start + k] = prediction


cdef vector[TreeWalk] checked_walks(trees, const double[:, ::1] X) except *:
    """The walks of ``trees`` (Tree objects), each checked to take the rows
    of X."""
    cdef vector[TreeWalk] walks
    cdef Tree tree
    for tree in trees:
        tree.check_rows(X)
        walks.push_back(tree.tree_walk())
    return walks


cdef intp_t group_end(const vector[TreeWalk]& walks, intp_t first,
                      intp_t group_bytes) noexcept nogil:
    """The end of the group of trees from ``first`` whose compact nodes fill
    at most ``group_bytes`` (or that holds one tree)."""
    cdef intp_t stop = first + 1, size = walks[first].n_nodes * sizeof(WalkNode)
    while (stop < <intp_t> walks.size()
           and size + walks[stop].n_nodes * sizeof(WalkNode) <= group_bytes):
        size += walks[stop].n_nodes * sizeof(WalkNode)
        stop += 1
    return stop


cdef intp_t row_block_size(intp_t n_features, intp_t row_block_bytes) noexcept nogil:
    """Rows of a block of about ``row_block_bytes`` (whole traversal blocks)."""
    cdef intp_t row_bytes = max(1, n_features) * sizeof(double)
    return max(1, row_block_bytes // row_bytes // TRAVERSAL_BLOCK) * TRAVERSAL_BLOCK


# what walk_by_blocks does with a block of ``size`` rows from row ``start``
# (at ``rows``) and tree t
ctypedef void (*BlockVisit)(const TreeWalk* tree, intp_t t, const double* rows,
                            intp_t start, intp_t size, intp_t n_features,
                            void* context) noexcept nogil


cdef void walk_by_blocks(const vector[TreeWalk]& walks, const double* X, intp_t n,
                         intp_t n_features, intp_t group_bytes, intp_t row_block_bytes,
                         BlockVisit visit, void* context) noexcept nogil:
    """Visit every (block of rows, tree) pair of the n rows of X and the trees
    of ``walks``: the trees by groups whose compact nodes fill at most
    ``group_bytes`` (or hold one tree), the rows by blocks of about
    ``row_block_bytes``, each block going down all trees of a group, in
    order, before the next: the rows stay in cache from one tree to the next
    instead of being read again for every tree, and a group's nodes from one
    block to the next (faster than a tree at a time once the rows outgrow
    the cache)."""
    cdef intp_t first = 0, stop, block, start, t
    cdef intp_t n_trees = walks.size()
    cdef intp_t row_block = row_block_size(n_features, row_block_bytes)
    while first < n_trees:
        stop = group_end(walks, first, group_bytes)
        for block in range((n + row_block - 1) // row_block):
            start = block * row_block
            for t in range(first, stop):
                visit(&walks[t], t, X + start * n_features, start,
                      min(row_block, n - start), n_features, context)
        first = stop


cdef struct SumTarget:
    double* total
    const double* scales


cdef void add_block(const TreeWalk* tree, intp_t t, const double* rows, intp_t start,
                    intp_t size, intp_t n_features, void* context) noexcept nogil:
    """Add tree t's predictions of the block, times its scale, to the sums."""
    cdef SumTarget* target = <SumTarget*> context
    predict_rows(tree, <NodeModels> tree.node_models, rows, size, n_features,
                 target.total + start, True, target.scales[t])


def add_predictions(trees, const double[::1] scales, const double[:, ::1] X,
                    double[::1] total, intp_t group_bytes=GROUP_BYTES,
                    intp_t row_block_bytes=ROW_BLOCK_BYTES):
    """Add the predictions of ``trees`` (Tree objects) for the rows of X
    (float64, C-contiguous), each times its entry of ``scales``, to
    ``total``, tree after tree in every entry: the sums do not depend on how
    a caller splits the rows between calls. The rows go down the trees by
    blocks (``walk_by_blocks``: groups of trees of at most ``group_bytes``
    of nodes, blocks of about ``row_block_bytes`` of rows). O(n_rows *
    n_trees * depth).
    """
    cdef intp_t n = X.shape[0]
    if total.shape[0] != n:
        raise ValueError(f"total has {total.shape[0]} entries for {n} rows.")
    if scales.shape[0] != len(trees):
        raise ValueError(f"scales has {scales.shape[0]} entries for {len(trees)} trees.")
    cdef vector[TreeWalk] walks = checked_walks(trees, X)
    cdef SumTarget target
    if n == 0 or walks.empty():
        return
    target.total = &total[0]
    target.scales = &scales[0]
    with nogil:
        walk_by_blocks(walks, &X[0, 0], n, X.shape[1], group_bytes, row_block_bytes,
                       add_block, &target)


cdef struct LeafTarget:
    int64_t* leaves
    intp_t n_trees


cdef void leaves_of_block(const TreeWalk* tree, intp_t t, const double* rows,
                          intp_t start, intp_t size, intp_t n_features,
                          void* context) noexcept nogil:
    """Write the leaves of the block in tree t to its column of the leaves."""
    cdef LeafTarget* target = <LeafTarget*> context
    cdef const WalkNode* leaves[TRAVERSAL_BLOCK]
    cdef intp_t done = 0, part, k
    while done < size:
        part = min(TRAVERSAL_BLOCK, size - done)
        find_tree_leaves(tree, rows + done * n_features, n_features, part, leaves)
        for k in range(part):
            target.leaves[(start + done + k) * target.n_trees + t] = -1 - leaves[k].feature
        done += part


def apply_trees(trees, const double[:, ::1] X, int64_t[:, ::1] out,
                intp_t group_bytes=GROUP_BYTES, intp_t row_block_bytes=ROW_BLOCK_BYTES):
    """Write the leaf of each row of X (float64, C-contiguous) in each of
    ``trees`` (Tree objects) to ``out[:, t]``: their ``apply``, the rows
    going down the trees by blocks as in :func:`add_predictions`.
    O(n_rows * n_trees * depth)."""
    cdef intp_t n = X.shape[0]
    if out.shape[0] != n or out.shape[1] != len(trees):
        raise ValueError(f"out has shape ({out.shape[0]}, {out.shape[1]}) for {n} rows "
                         f"and {len(trees)} trees.")
    cdef vector[TreeWalk] walks = checked_walks(trees, X)
    cdef LeafTarget target
    if n == 0 or walks.empty():
        return
    target.leaves = &out[0, 0]
    target.n_trees = walks.size()
    with nogil:
        walk_by_blocks(walks, &X[0, 0], n, X.shape[1], group_bytes, row_block_bytes,
                       leaves_of_block, &target)


def check_category_sets(nodes, category_sets, category_words):
    """Raise ValueError unless the categorical splits of ``nodes`` (an array
    of NODE_DTYPE) index sets of ``category_sets`` ((n_sets, 3) int64: first
    code, bits, first word) whose bits lie in ``category_words`` (uint32):
    the walks read them without bounds checks."""
    if (category_sets.dtype != np.int64 or category_sets.ndim != 2
            or category_sets.shape[1] != 3 or category_words.dtype != np.uint32
            or category_words.ndim != 1):
        raise ValueError("Tree state has category sets of the wrong layout.")
    first, n_bits, offset = category_sets.T
    used = nodes["category_set"]
    if not (np.all((used >= -1) & (used < category_sets.shape[0]))
            and np.all(first >= 0) and np.all(n_bits > 0) and np.all(n_bits % 32 == 0)
            and np.all(offset >= 0)
            and np.all(offset + n_bits // 32 <= category_words.shape[0])):
        raise ValueError("Tree state does not describe valid category sets.")


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
            and np.all(nodes["category_set"][~internal] == -1)
            and not np.isnan(nodes["threshold"][internal
                                                & (nodes["category_set"] < 0)]).any()
            and np.all(nodes["missing_go_to_left"] <= 1)):
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
