"""Minimal cost-complexity pruning (Breiman et al. 1984, CART's weakest link).

``pruning_sequence`` finds the order in which internal nodes become leaves
as the complexity parameter alpha grows, ``prune`` cuts a tree down to a
subtree of that sequence, and ``subtree_predictions`` predicts with every
subtree of the sequence at once (each row walks down the tree once, through
``next_node``), which is how MMITCV scores every ``ccp_alpha`` of a fold
without refitting. The growth of a monotone tree is a sequence of
subtrees too (``growth_alphas``): the tree after each split of its
best-first growth, every one of them monotone, which MMITCV scores in the
same way for ``max_leaf_nodes``.
"""

from libc.stdint cimport int64_t
from libcpp.queue cimport priority_queue
from libcpp.utility cimport pair

import numpy as np

from .._utils._typedefs cimport intp_t
from ._tree cimport TREE_LEAF, Node, Tree, next_node


def prune_at(Tree tree, double ccp_alpha):
    """The subtree of ``tree`` for the complexity parameter ``ccp_alpha``
    (costs divided by the root's weight); ``tree`` itself when it is 0."""
    if ccp_alpha <= 0.0:
        return tree
    pruned, alphas, _, _ = pruning_sequence(tree, tree.weighted_n_node_samples[0])
    return prune(tree, pruned[alphas <= ccp_alpha])


def leaf_alphas(Tree tree):
    """Alpha from which each node is a leaf of the pruned subtree, and the
    pruning path's alphas (0 first).

    Returns
    -------
    leaf_alpha : ndarray of shape (node_count,)
        0 for a leaf, +inf for a node only ever removed with an ancestor.
    ccp_alphas : ndarray
        ``0`` and the alphas of :func:`pruning_sequence`.
    """
    pruned, alphas, _, _ = pruning_sequence(tree, tree.weighted_n_node_samples[0])
    leaf_alpha = np.where(tree.children_left == TREE_LEAF, 0.0, np.inf)
    leaf_alpha[pruned] = alphas
    return leaf_alpha, np.r_[0.0, alphas]


def growth_alphas(Tree tree):
    """The prefixes of a best-first growth as a sequence of subtrees, in the
    form of :func:`leaf_alphas`.

    A tree grown best-first numbers its nodes in the order they appear: the
    children of its s-th split are nodes 2s - 1 and 2s, so the node split at
    step s is the parent of node 2s. The tree after its first k - 1 splits
    (the ``max_leaf_nodes=k`` tree of the same growth) has as leaves the
    leaves and the nodes split at a step s >= k: node t gets
    ``leaf_alpha[t] = 1 / s`` (0 for a leaf), and the prefix of k leaves is
    the subtree at alpha :func:`prefix_alpha` (k), for
    :func:`subtree_predictions`.

    Returns
    -------
    leaf_alpha : ndarray of shape (node_count,)
    """
    left = np.asarray(tree.children_left)
    internal = left != TREE_LEAF
    leaf_alpha = np.zeros(tree.node_count)
    leaf_alpha[internal] = 2.0 / (left[internal] + 1)  # left child 2s - 1: 1 / s
    return leaf_alpha


def prefix_alpha(n_leaves):
    """The alpha of :func:`growth_alphas` whose subtree is the growth's prefix
    of ``n_leaves`` leaves (array-like)."""
    return 1.0 / (np.asarray(n_leaves, dtype=np.float64) - 0.5)


def growth_prefix(Tree tree, intp_t n_leaves):
    """The tree of a best-first growth after its first ``n_leaves - 1``
    splits, as a new Tree (see :func:`growth_alphas`)."""
    leaf_alpha = growth_alphas(tree)
    pruned = np.flatnonzero((leaf_alpha > 0.0) & (leaf_alpha <= prefix_alpha(n_leaves)))
    return prune(tree, pruned)


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
    if not total_weight > 0.0:
        raise ValueError(f"total_weight must be positive, got {total_weight}.")
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
        if not 0 <= pruned[k] < n:
            raise ValueError(f"node {pruned[k]} is not a node of the tree.")
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
            subtree.copy_split(new_id[node], tree, node)
            for k in range(2):
                child = left if k == 0 else right
                depth[child] = depth[node] + 1
                new_id[child] = subtree.add_node(
                    new_id[node], k == 0, tree.values[child], nodes[child].cost,
                    nodes[child].n_node_samples, nodes[child].weighted_n_node_samples,
                    depth[child])
    subtree.resize(subtree.node_count)
    if tree.node_models is None:
        return subtree
    kept = np.flatnonzero(np.asarray(new_id) >= 0)
    old_id = np.empty(subtree.node_count, dtype=np.intp)
    old_id[np.asarray(new_id)[kept]] = kept
    return subtree.with_node_models(tree.node_models.take(old_id), subtree.value,
                                    subtree.cost)


def subtree_predictions(Tree tree, const double[:, ::1] X, const double[::1] leaf_alpha,
                        const double[::1] alphas):
    """Predictions of the pruned subtrees of ``tree`` for each alpha, without refitting.

    ``leaf_alpha[t]`` is the alpha from which node t is a leaf of the pruned
    subtree (0 for a leaf, +inf for a node only ever removed with an
    ancestor). For ``alphas`` in increasing order, row i's prediction for
    ``alphas[k]`` is the value of the shallowest node on its path whose
    ``leaf_alpha <= alphas[k]`` (its value, or its linear model's
    prediction). O(n_rows * (depth + n_alphas)).

    Returns
    -------
    predictions : ndarray of shape (n_rows, n_alphas)
    """
    if X.shape[1] != tree.n_features:
        raise ValueError(f"X has {X.shape[1]} features, the tree was grown on "
                         f"{tree.n_features}.")
    if leaf_alpha.shape[0] != tree.node_count:
        raise ValueError(f"leaf_alpha has {leaf_alpha.shape[0]} entries for "
                         f"{tree.node_count} nodes.")
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
                node = next_node(tree, &nodes[node], &X[i, 0])
                depth += 1
                path[depth] = node
                prefix_min[depth] = min(prefix_min[depth - 1], leaf_alpha[node])
            # the shallowest node with leaf_alpha <= alpha rises as alpha grows
            for k in range(n_alphas):
                while depth > 0 and prefix_min[depth - 1] <= alphas[k]:
                    depth -= 1
                predictions[i, k] = tree.node_prediction(path[depth], &X[i, 0])
    return predictions_array
