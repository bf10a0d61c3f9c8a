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

The row follows the tree's own routing (``_tree.child_toward``): missing
values and codes a categorical split does not hold go to the node's
learned side. Covers are the nodes'
training weights (``weighted_n_node_samples``; a forest's tree: its
bootstrap counts). Rows run on threads, each with its own path buffer.
"""

from cython.parallel cimport parallel, prange
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport free, malloc

from ._node_models cimport LinearNodeModels
from ._tree cimport CategorySet, Node, Tree, child_toward

import numpy as np


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
    const double* reciprocals  # 1 / k for k = 0 .. the longest path + 2
    # linear leaves (NULL for constant leaves): leaf i adds
    # slopes[leaf_models[i]] . (x - center), a missing x_j at center[j]
    const int64_t* leaf_models
    const double* slopes
    const double* center
    int64_t n_features
    const int64_t* used_features  # the features of its splits and linear leaves
    int64_t n_used


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


cdef void add_path_shares(const PathElement* path, int64_t depth, double value,
                          double* phi, const double* reciprocals) noexcept nogil:
    """Add to ``phi`` each path feature's share of ``value``, a leaf's term
    reached along ``path``."""
    cdef int64_t i
    for i in range(1, depth + 1):
        phi[path[i].feature] += (unwound_path_sum(path, depth, i, reciprocals)
                                 * (path[i].one_fraction - path[i].zero_fraction) * value)


cdef void add_linear_leaf_shares(const TreeView* tree, int64_t leaf, const double* row,
                                 double* phi, PathElement* path, int64_t depth,
                                 int condition, int64_t condition_feature,
                                 double condition_fraction) noexcept nogil:
    """Add the shares of a linear leaf's terms ``slope_j (x_j - center_j)``.

    Feature j's term is worth its value when j is known and nothing when it
    is not (an unknown feature sits at the center, as a missing one does):
    the leaf's path extended by j with a zero fraction of 0 and a one
    fraction of 1 (merged with j's splits on the path), in the scratch space
    after ``path``."""
    cdef int64_t model = tree.leaf_models[leaf], j, i, found, length
    cdef const double* slope
    cdef PathElement* scratch = path + depth + 1
    cdef double x, term, one_fraction
    if model < 0:
        return
    slope = tree.slopes + model * tree.n_features
    for j in range(tree.n_features):
        x = row[j]
        if slope[j] == 0.0 or x != x:
            continue
        term = slope[j] * (x - tree.center[j]) * tree.scale * condition_fraction
        if term == 0.0:
            continue
        if condition != 0 and j == condition_feature:
            if condition > 0:  # j always known: the term as a constant
                add_path_shares(path, depth, term, phi, tree.reciprocals)
            continue
        for i in range(depth + 1):
            scratch[i] = path[i]
        length = depth
        one_fraction = 1.0
        found = 0
        for i in range(1, depth + 1):
            if scratch[i].feature == j:
                found = i
                break
        if found > 0:
            one_fraction = scratch[found].one_fraction
            if one_fraction == 0.0:  # known, j sends the row elsewhere
                continue
            unwind_path(scratch, length, found)
            length -= 1
        extend_path(scratch, length + 1, 0.0, one_fraction, j, tree.reciprocals)
        add_path_shares(scratch, length + 1, term, phi, tree.reciprocals)


cdef void recurse(const TreeView* tree, int64_t node_id, const double* row, double* phi,
                  PathElement* parent_path, int64_t depth, double zero_fraction,
                  double one_fraction, int64_t feature, int condition,
                  int64_t condition_feature, double condition_fraction) noexcept nogil:
    """Add the contributions of the subtree of ``node_id`` to ``phi``, the
    path so far in ``parent_path`` (``depth`` elements before this one).

    With ``condition`` 1 (-1), ``condition_feature`` is always known
    (unknown) and stays off the path; ``condition_fraction`` is the share
    of the contributions that reaches this node under that condition."""
    cdef PathElement* path = parent_path + depth + 1
    cdef const Node* node = &tree.nodes[node_id]
    cdef int64_t i, hot, cold, found
    cdef double incoming_zero = 1.0, incoming_one = 1.0, cover
    cdef double hot_fraction, cold_fraction, hot_condition, cold_condition
    if condition_fraction == 0.0:
        return
    for i in range(depth + 1):
        path[i] = parent_path[i]
    if condition == 0 or feature != condition_feature:
        extend_path(path, depth, zero_fraction, one_fraction, feature, tree.reciprocals)
    if node.left_child < 0:
        add_path_shares(path, depth, tree.values[node_id] * tree.scale * condition_fraction,
                        phi, tree.reciprocals)
        if tree.leaf_models != NULL:
            add_linear_leaf_shares(tree, node_id, row, phi, path, depth, condition,
                                   condition_feature, condition_fraction)
        return
    hot = child_toward(node, row, tree.category_sets, tree.category_words)
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
    hot_fraction = tree.nodes[hot].weighted_n_node_samples / cover
    cold_fraction = tree.nodes[cold].weighted_n_node_samples / cover
    hot_condition = condition_fraction
    cold_condition = condition_fraction
    if condition != 0 and node.feature == condition_feature:
        # the condition's feature stays off the path: the children keep it
        depth -= 1
        if condition > 0:
            cold_condition = 0.0
        else:
            hot_condition *= hot_fraction
            cold_condition *= cold_fraction
    recurse(tree, hot, row, phi, path, depth + 1, incoming_zero * hot_fraction,
            incoming_one, node.feature, condition, condition_feature, hot_condition)
    recurse(tree, cold, row, phi, path, depth + 1, incoming_zero * cold_fraction,
            0.0, node.feature, condition, condition_feature, cold_condition)


cdef TreeView* tree_views(list trees, const double[::1] scales, list keep) except NULL:
    """The trees as the recursion reads them (freed by the caller), with a
    shared table of reciprocals; ``keep`` holds the arrays they point to."""
    cdef Py_ssize_t n_trees = len(trees), t
    cdef Tree tree
    cdef LinearNodeModels linear
    cdef int64_t max_depth = 0
    cdef double[::1] reciprocals
    cdef const int64_t[::1] used
    if scales.shape[0] != n_trees:
        raise ValueError("one scale per tree")
    for t in range(n_trees):
        max_depth = max(max_depth, (<Tree> trees[t]).max_depth)
    reciprocals = np.concatenate([[0.0], 1.0 / np.arange(1, max_depth + 4)])
    keep.append(reciprocals)
    cdef TreeView* views = <TreeView*> malloc(max(n_trees, 1) * sizeof(TreeView))
    if views == NULL:
        raise MemoryError()
    for t in range(n_trees):
        tree = trees[t]
        views[t].nodes = tree.nodes
        views[t].values = tree.values
        views[t].category_sets = tree.category_sets.data()
        views[t].category_words = tree.category_words.data()
        views[t].scale = scales[t]
        views[t].reciprocals = &reciprocals[0]
        views[t].leaf_models = NULL
        views[t].slopes = NULL
        views[t].center = NULL
        views[t].n_features = 0
        if tree.node_models is not None:
            if not isinstance(tree.node_models, LinearNodeModels):
                free(views)
                raise ValueError("TreeSHAP takes constant and linear leaves only.")
            linear = tree.node_models
            views[t].leaf_models = linear.model_of_node
            views[t].slopes = linear.slope_table
            views[t].center = linear.model_center
            views[t].n_features = linear.n_features
        used = np.asarray(tree.feature)[np.asarray(tree.children_left) >= 0]
        if tree.node_models is not None:  # and the features of linear leaves
            used = np.concatenate([used, np.flatnonzero(
                np.any(np.asarray(tree.node_models.slopes) != 0.0, axis=0))])
        used = np.unique(used).astype(np.int64)
        keep.append(used)
        views[t].used_features = &used[0] if used.shape[0] > 0 else NULL
        views[t].n_used = used.shape[0]
    return views


def tree_shap(list trees, const double[::1] scales, const double[:, ::1] X,
              double[:, ::1] out, bint interactions, int n_threads):
    """Add to ``out`` the SHAP values of every row of ``X`` under the sum
    over ``trees`` of ``scales[t]`` times tree t's prediction: (n_samples,
    n_features), or with ``interactions`` the interaction values off the
    diagonal, (n_samples, n_features * n_features) row-major. Trees in turn,
    each over the rows on ``n_threads`` threads.

    Interaction (j, k): for each feature j a tree uses, half the difference
    between feature k's SHAP values with j always known and with j always
    unknown (Lundberg et al. 2020). The diagonal is left to the caller
    (each feature's SHAP value minus the rest of its row)."""
    cdef list keep = []
    cdef TreeView* views = tree_views(trees, scales, keep)
    cdef Py_ssize_t n_trees = len(trees), n_samples = X.shape[0], t, row
    cdef int64_t buffer_size = path_buffer_size(trees), k, j
    cdef int64_t n_features = X.shape[1]
    cdef PathElement* buffer
    cdef int status = 0
    cdef int* failed = &status
    if out.shape[0] != n_samples or out.shape[1] != (
            n_features * n_features if interactions else n_features):
        free(views)
        raise ValueError("out has the wrong shape")
    try:
        with nogil, parallel(num_threads=max(n_threads, 1)):
            buffer = <PathElement*> malloc(buffer_size * sizeof(PathElement))
            if buffer == NULL:
                failed[0] = 1
            for t in range(n_trees):
                for row in prange(n_samples, schedule="static"):
                    if buffer == NULL:
                        continue
                    if not interactions:
                        recurse(&views[t], 0, &X[row, 0], &out[row, 0], buffer, 0,
                                1.0, 1.0, -1, 0, -1, 1.0)
                        continue
                    for k in range(views[t].n_used):
                        j = views[t].used_features[k]
                        recurse(&views[t], 0, &X[row, 0], &out[row, j * n_features], buffer,
                                0, 1.0, 1.0, -1, 1, j, 0.5)
                        recurse(&views[t], 0, &X[row, 0], &out[row, j * n_features], buffer,
                                0, 1.0, 1.0, -1, -1, j, -0.5)
            free(buffer)
        if status:
            raise MemoryError()
    finally:
        free(views)


cdef int64_t path_buffer_size(list trees):
    """Path elements a thread needs: every level's copy of the path, and a
    linear leaf's scratch path one longer."""
    cdef int64_t depth = 0
    for tree in trees:
        depth = max(depth, (<Tree> tree).max_depth)
    return (depth + 3) * (depth + 4) // 2
