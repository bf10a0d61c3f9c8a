# cython: language_level=3
"""Exact path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2).

For one row and one tree, a single recursion from the root carries the
path of distinct split features met so far, each with the share of the
training weight that follows the path when the feature is unknown (its
``zero fraction``: the ratio of the child's cover to the node's) and
whether the row itself follows it (``one fraction``), and the weights of
the subsets of the path's features by size (``pweight``). Entering a
node extends the path by its feature (a feature met again is first
unwound from it); at a leaf, every feature on the path gets its share of
the leaf's value, the path's weights summed with that feature unwound. A
row then costs O(L D^2) per tree of L leaves and depth D, in O(D^2)
memory: the path of each level is a copy of its parent's.

The row follows the tree's own routing (``goes_right`` and
``category_goes_right``): missing values and codes a categorical split
does not hold go to the node's learned side. Covers are the nodes'
training weights (``weighted_n_node_samples``; a forest's tree: its
bootstrap counts). Rows run on threads, each with its own path buffer.
"""

from cython.parallel cimport parallel, prange
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport free, malloc

from ._tree cimport CategorySet, Node, Tree, category_goes_right, goes_right


ctypedef struct PathElement:
    int64_t feature           # the split feature (-1: the root's placeholder)
    double zero_fraction      # share of the cover that follows the path
    double one_fraction       # 1 when the row follows it, else 0
    double pweight            # weight of the subsets of this size


ctypedef struct TreeView:
    const Node* nodes
    const double* values
    const CategorySet* category_sets
    const uint32_t* category_words
    double scale              # the tree's weight in the model
    const double* reciprocals  # 1 / k for k = 0 .. the longest path + 1


cdef inline int64_t child_of(const TreeView* tree, const Node* node,
                             const double* row) noexcept nogil:
    """The child of internal ``node`` that ``row`` goes to."""
    cdef bint right
    if node.category_set >= 0:
        right = category_goes_right(row[node.feature],
                                    &tree.category_sets[node.category_set],
                                    tree.category_words, node.missing_go_to_left == 0)
    else:
        right = goes_right(row[node.feature], node.threshold,
                           node.missing_go_to_left == 0)
    return node.right_child if right else node.left_child


cdef void extend_path(PathElement* path, int64_t depth, double zero_fraction,
                      double one_fraction, int64_t feature,
                      const double* reciprocals) noexcept nogil:
    """Add ``feature`` at position ``depth`` and update the weights."""
    cdef int64_t i
    cdef double share = reciprocals[depth + 1]
    path[depth].feature = feature
    path[depth].zero_fraction = zero_fraction
    path[depth].one_fraction = one_fraction
    path[depth].pweight = 1.0 if depth == 0 else 0.0
    i = depth - 1
    while i >= 0:
        path[i + 1].pweight += one_fraction * path[i].pweight * ((i + 1) * share)
        path[i].pweight = zero_fraction * path[i].pweight * ((depth - i) * share)
        i -= 1


cdef void unwind_path(PathElement* path, int64_t depth, int64_t index) noexcept nogil:
    """Remove the element at ``index`` (undo its extension)."""
    cdef double one_fraction = path[index].one_fraction
    cdef double zero_fraction = path[index].zero_fraction
    cdef double next_one_portion = path[depth].pweight
    cdef double previous
    cdef int64_t i = depth - 1
    while i >= 0:
        if one_fraction != 0.0:
            previous = path[i].pweight
            path[i].pweight = next_one_portion * (depth + 1) / ((i + 1) * one_fraction)
            next_one_portion = (previous - path[i].pweight * zero_fraction * (depth - i)
                                / (depth + 1))
        else:
            path[i].pweight = path[i].pweight * (depth + 1) / (zero_fraction * (depth - i))
        i -= 1
    for i in range(index, depth):
        path[i].feature = path[i + 1].feature
        path[i].zero_fraction = path[i + 1].zero_fraction
        path[i].one_fraction = path[i + 1].one_fraction


cdef double unwound_path_sum(const PathElement* path, int64_t depth, int64_t index,
                             const double* reciprocals) noexcept nogil:
    """The total weight of the path with the element at ``index`` unwound
    (without changing it). Its one fraction is 0 or 1 (the row's path goes
    through all of the feature's splits on the path, or not)."""
    cdef double zero_fraction = path[index].zero_fraction
    cdef double next_one_portion = path[depth].pweight
    cdef double total = 0.0, weight, removal, length = depth + 1
    cdef int64_t i = depth - 1
    if path[index].one_fraction != 0.0:
        removal = zero_fraction * reciprocals[depth + 1]
        while i >= 0:
            weight = next_one_portion * (length * reciprocals[i + 1])
            total += weight
            next_one_portion = path[i].pweight - weight * (removal * (depth - i))
            i -= 1
    else:
        removal = length / zero_fraction
        while i >= 0:
            total += path[i].pweight * (removal * reciprocals[depth - i])
            i -= 1
    return total


cdef void recurse(const TreeView* tree, int64_t node_id, const double* row, double* phi,
                  PathElement* parent_path, int64_t depth, double zero_fraction,
                  double one_fraction, int64_t feature) noexcept nogil:
    """Add the contributions of the subtree of ``node_id`` to ``phi``, the
    path so far in ``parent_path`` (``depth`` elements before this one)."""
    cdef PathElement* path = parent_path + depth + 1
    cdef const Node* node = &tree.nodes[node_id]
    cdef int64_t i, hot, cold, found
    cdef double weight, value, incoming_zero = 1.0, incoming_one = 1.0, cover
    for i in range(depth + 1):
        path[i] = parent_path[i]
    extend_path(path, depth, zero_fraction, one_fraction, feature, tree.reciprocals)
    if node.left_child < 0:
        value = tree.values[node_id] * tree.scale
        for i in range(1, depth + 1):
            weight = unwound_path_sum(path, depth, i, tree.reciprocals)
            phi[path[i].feature] += (weight * (path[i].one_fraction - path[i].zero_fraction)
                                     * value)
        return
    hot = child_of(tree, node, row)
    cold = node.right_child if hot == node.left_child else node.left_child
    found = 0
    for i in range(1, depth + 1):
        if path[i].feature == node.feature:
            found = i
            break
    if found > 0:
        incoming_zero = path[found].zero_fraction
        incoming_one = path[found].one_fraction
        unwind_path(path, depth, found)
        depth -= 1
    cover = node.weighted_n_node_samples
    recurse(tree, hot, row, phi, path, depth + 1,
            incoming_zero * tree.nodes[hot].weighted_n_node_samples / cover,
            incoming_one, node.feature)
    recurse(tree, cold, row, phi, path, depth + 1,
            incoming_zero * tree.nodes[cold].weighted_n_node_samples / cover,
            0.0, node.feature)


def tree_shap(list trees, const double[::1] scales, const double[:, ::1] X,
              double[:, ::1] out, int n_threads):
    """Add to ``out`` (n_samples, n_features) the SHAP values of every row of
    ``X`` under the sum over ``trees`` (constant leaves) of ``scales[t]``
    times tree t's prediction. Rows on ``n_threads`` threads."""
    cdef Py_ssize_t n_trees = len(trees), n_samples = X.shape[0], t, row
    cdef Tree tree
    cdef int64_t max_depth = 0, buffer_size
    cdef TreeView* views = <TreeView*> malloc(max(n_trees, 1) * sizeof(TreeView))
    cdef PathElement* buffer
    cdef double* reciprocals = NULL
    cdef int status = 0
    cdef int* failed = &status
    if views == NULL:
        raise MemoryError()
    try:
        for t in range(n_trees):
            tree = trees[t]
            if tree.node_models is not None:
                raise ValueError("TreeSHAP takes trees of constant leaves only.")
            views[t].nodes = tree.nodes
            views[t].values = tree.values
            views[t].category_sets = tree.category_sets.data()
            views[t].category_words = tree.category_words.data()
            views[t].scale = scales[t]
            max_depth = max(max_depth, tree.max_depth)
        reciprocals = <double*> malloc((max_depth + 3) * sizeof(double))
        if reciprocals == NULL:
            raise MemoryError()
        reciprocals[0] = 0.0
        for t in range(1, max_depth + 3):
            reciprocals[t] = 1.0 / t
        for t in range(n_trees):
            views[t].reciprocals = reciprocals
        buffer_size = (max_depth + 2) * (max_depth + 3) // 2
        with nogil, parallel(num_threads=max(n_threads, 1)):
            buffer = <PathElement*> malloc(buffer_size * sizeof(PathElement))
            if buffer == NULL:
                failed[0] = 1
            for t in range(n_trees):
                for row in prange(n_samples, schedule="static"):
                    if buffer != NULL:
                        recurse(&views[t], 0, &X[row, 0], &out[row, 0], buffer, 0,
                                1.0, 1.0, -1)
            free(buffer)
        if status:
            raise MemoryError()
    finally:
        free(reciprocals)
        free(views)
