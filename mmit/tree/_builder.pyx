"""Growing Maximum Margin Interval Trees.

The builder grows a regression tree whose leaves predict the constant that
minimises a loss (a :class:`~mmit.tree._criterion.Criterion`) over their rows,
on training features shared by every tree
(:class:`~mmit.tree._features.Features`), splitting nodes through a
:class:`~mmit.tree._splitter.Splitter` (the split search and the partitions).

Growth is depth-first (left subtrees first) until no node can split, or,
with ``max_leaf_nodes``, best-first: the leaf whose best split lowers the
cost most splits next (a binary max-heap of candidate leaves), until that
many leaves. With ``monotonic_cst``, the splitter keeps every node's value
within bounds that make the tree monotone in the constrained features
(``_splitter``). Those bounds come from the values of the leaves a node is
compared with when it appears, so the order of growth matters: a monotone
tree grows best-first (without a leaf limit unless ``max_leaf_nodes``), the
coarse regions that bound others refined first (with categorical
features, whose bounds are the splits' midpoints, growth is as without
constraints). A split must lower the node's cost by at least
``min_cost_decrease`` times the total weight of the training rows. How
much a split lowers the cost is the splitter's measure
(``SplitRecord.improvement``): exact for the exact search, the Newton
estimate for the histogram search. The builder tells the splitter which
nodes stay leaves (``settle_leaf``).

The whole build runs without the GIL, so trees of a forest grow in parallel
threads, each with its own builder. A builder keeps its working arrays from
one build to the next (``buffers``): a booster's stages reuse them.
"""

from libc.math cimport INFINITY
from libc.stdint cimport PTRDIFF_MAX, uint32_t
from libc.stdlib cimport free, realloc

import numpy as np

from .._loss._loss import IntervalLoss
from .._utils._buffers import Buffers

from ._criterion cimport HingeCriterion
from ._exact_splitter cimport ExactSplitter
from ._features cimport BinnedFeatures, Features
from ._histogram_splitter cimport HistogramSplitter
from ._monotone cimport BOUNDS_LEAVES, BOUNDS_MIDPOINTS, BOUNDS_NODES
from ._splitter cimport Splitter
from ._tree cimport Tree


def bounded_by_other_nodes(features):
    """Whether monotone trees grown on ``features`` (``Features`` or
    ``BinnedFeatures``) take their bounds from the values of the other nodes
    they are compared with: their regions need ordered features. With
    categorical ones (regions of sets of categories) the bounds are the
    midpoints of the splits above (``_splitter``). Bounded by the other
    leaves, a tree is monotone after each split of its best-first growth
    (``_pruning.growth_alphas``)."""
    return not np.asarray(features.n_categories).any()


cdef inline bint may_split(const GrowthLimits* limits, intp_t depth, intp_t n_rows,
                           bint has_cost) noexcept nogil:
    """Whether a node at ``depth`` of ``n_rows`` rows, with a positive cost
    or not, may split: the rule of every grower (the fit on a cluster's
    too, through ``TreeBuilder.may_split``)."""
    return (depth < limits.max_depth and n_rows >= limits.min_samples_split
            and n_rows >= 2 * limits.min_samples_leaf and has_cost)


cdef bint can_split(const GrowthLimits* limits, const NodeRecord* node) noexcept nogil:
    return may_split(limits, node.depth, node.end - node.start, node.cost > 0.0)


cdef bint split_found(Splitter splitter, const GrowthLimits* limits,
                      const NodeRecord* node, SplitRecord* split) noexcept nogil:
    """Whether the node may split and has a split lowering its cost enough."""
    return (can_split(limits, node) and splitter.find_split(node, split)
            and split.improvement >= limits.min_decrease)


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
                splitter.settle_leaf(&node)
                continue
            stack = <NodeRecord*> grow_buffer(stack, size + 2, &capacity,
                                              sizeof(NodeRecord))
            # push the right child below the left one: left subtrees first
            splitter.split_node(tree, &node, &split, &stack[size + 1], &stack[size])
            size += 2
    finally:
        free(stack)
    return 0


cdef int examine(Splitter splitter, const GrowthLimits* limits, Tree tree,
                 const NodeRecord* node, Frontier* leaf) except -1 nogil:
    """The leaf's entry of the frontier: its bounds and value (monotone trees,
    ``Splitter.bound_node``: set once, when the leaf appears) and its best
    split."""
    leaf.node = node[0]
    splitter.bound_node(tree, &leaf.node)
    leaf.splittable = split_found(splitter, limits, &leaf.node, &leaf.split)
    leaf.improvement = leaf.split.improvement if leaf.splittable else -INFINITY
    return 0


cdef int grow_best_first(Splitter splitter, const GrowthLimits* limits, Tree tree,
                         NodeRecord* root, intp_t max_leaf_nodes) except -1 nogil:
    """Split the leaf whose best split lowers the cost most, until
    ``max_leaf_nodes`` leaves (a binary max-heap of candidate leaves, grown
    as leaves appear: at most one entry per leaf of the tree)."""
    cdef Frontier* heap = NULL
    cdef intp_t size = 0, capacity = 0, n_leaves = 1
    cdef Frontier best
    cdef NodeRecord left, right
    cdef intp_t k
    try:
        heap = <Frontier*> grow_buffer(heap, 1, &capacity, sizeof(Frontier))
        examine(splitter, limits, tree, root, &heap[0])
        size = 1
        while size > 0 and n_leaves < max_leaf_nodes:
            best = heap[0]
            size -= 1
            heap[0] = heap[size]
            sift_down(heap, size, 0)
            if not best.splittable:
                splitter.settle_leaf(&best.node)
                continue
            splitter.split_node(tree, &best.node, &best.split, &left, &right)
            n_leaves += 1
            heap = <Frontier*> grow_buffer(heap, size + 2, &capacity, sizeof(Frontier))
            examine(splitter, limits, tree, &left, &heap[size])
            sift_up(heap, size)
            examine(splitter, limits, tree, &right, &heap[size + 1])
            sift_up(heap, size + 1)
            size += 2
        for k in range(size):  # the leaves left when the tree has enough
            splitter.settle_leaf(&heap[k].node)
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
        The loss (an entry of ``mmit._loss._loss.LOSSES``): each build's split
        criterion is the ``HingeCriterion`` of its tag.
    max_depth : int
        Maximum depth (a large number for no limit).
    min_samples_split, min_samples_leaf : int
        Minimum (positive-weight) rows to split a node / in each leaf.
    max_features : int
        Features evaluated per node (at least; more while no split is valid).
    max_leaf_nodes : int
        Grow best-first up to this many leaves; -1 grows depth-first.
    min_cost_decrease : float
        A split must lower the node's cost (by the splitter's measure) by at
        least this much times the total weight of the training rows.
    presort_min_rows : int
        Nodes with at least this many rows keep their children's rows in
        presorted lists; smaller ones sort on demand (see the module doc).
    category_penalty : float, default=0.0
        What a split of a node's categories in an order they were sorted into
        must gain beyond the best split otherwise found, per category of the
        node beyond two, in units of the node's mean loss (``cost / weight``).
    monotonic_cst : ndarray of shape (n_features,), int8, default=None
        Each feature's constraint: the tree's values increase (+1), decrease
        (-1) or are free (0) along it (``_splitter``); None: no constraint.
    interaction_groups : ndarray of shape (n_features, n_words), uint64, default=None
        Interaction constraints: row j is the bitset of the groups holding
        feature j; a branch splits only on the features of the groups that
        hold every feature split on above it. None: no constraint.
    prunable : bool, default=False
        Monotone trees that will be pruned: every subtree of the tree is
        monotone too (its nodes' bounds come from every node they are
        comparable with, not only the leaves, see ``_splitter``).
    """

    def __cinit__(self, loss, intp_t max_depth, intp_t min_samples_split,
                  intp_t min_samples_leaf, intp_t max_features, intp_t max_leaf_nodes,
                  double min_cost_decrease, intp_t presort_min_rows,
                  double category_penalty=0.0, monotonic_cst=None,
                  interaction_groups=None, bint prunable=False):
        if not isinstance(loss, IntervalLoss):
            raise TypeError(f"loss must be an IntervalLoss, got {loss!r}.")
        if (max_depth < 0 or min_samples_split < 1 or min_samples_leaf < 1
                or max_features < 1 or not (max_leaf_nodes == -1 or max_leaf_nodes >= 2)
                or not min_cost_decrease >= 0.0 or presort_min_rows < 0
                or not category_penalty >= 0.0):
            raise ValueError("invalid tree builder parameters.")
        self.loss = loss
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_cost_decrease = min_cost_decrease
        self.presort_min_rows = presort_min_rows
        self.category_penalty = category_penalty
        if monotonic_cst is not None:
            monotonic_cst = np.ascontiguousarray(monotonic_cst, dtype=np.int8)
            if monotonic_cst.ndim != 1 or not np.isin(monotonic_cst, (-1, 0, 1)).all():
                raise ValueError("monotonic_cst must hold -1, 0 or 1 per feature.")
        self.monotonic_cst = monotonic_cst
        if interaction_groups is not None:
            interaction_groups = np.ascontiguousarray(interaction_groups, dtype=np.uint64)
            if interaction_groups.ndim != 2 or interaction_groups.shape[1] == 0:
                raise ValueError("interaction_groups must be a 2-D array of bitsets.")
        self.interaction_groups = interaction_groups
        self.prunable = prunable
        self.buffers = Buffers()
        self.building = False

    def may_split(self, intp_t depth, intp_t n_rows, bint has_cost):
        """Whether a node at ``depth`` of ``n_rows`` rows, whose cost is
        positive (``has_cost``) or not, may split: the rule a build applies
        before it searches a node's splits, for a grower outside the builder
        (the booster's fit on a cluster grows its trees a level at a time)."""
        cdef GrowthLimits limits = self.limits(0.0)
        return may_split(&limits, depth, n_rows, has_cost)

    def keeps_split(self, double improvement, double root_weight):
        """Whether a split lowering its node's cost by ``improvement`` (the
        splitter's measure) lowers it enough, in a tree whose root weighs
        ``root_weight``: the rule a build applies to a node's best split."""
        return improvement >= self.limits(root_weight).min_decrease

    cdef GrowthLimits limits(self, double root_weight) noexcept nogil:
        """The limits of a build whose root weighs ``root_weight``."""
        cdef GrowthLimits limits
        limits.max_depth = self.max_depth
        limits.min_samples_split = self.min_samples_split
        limits.min_samples_leaf = self.min_samples_leaf
        limits.min_decrease = self.min_cost_decrease * root_weight
        return limits

    def build(self, features, targets, const double[::1] sample_weight, uint32_t seed,
              double[::1] row_values=None, int n_threads=1):
        """Grow a Tree on the rows of positive weight.

        Parameters
        ----------
        features : Features or BinnedFeatures
            Features (presorted or not): the exact split search on the
            values; BinnedFeatures: the histogram split search.
        targets : object
            The criterion's targets (HingeTargets for the hinge losses), one
            per row of ``features``; or a criterion kept from build to build
            (:meth:`stage_criterion`), of these rows and weights.
        sample_weight : ndarray of shape (n_samples,)
            Non-negative weights, at least one positive.
        seed : int
            Seed of the feature order (ties between splits), in [0, 2**32).
        row_values : ndarray of shape (n_samples,), default=None
            If given, each row of positive weight gets its leaf's value (the
            tree's prediction of a training row without walking it).
        n_threads : int, default=1
            Threads of the histogram split search (BinnedFeatures only).

        Returns
        -------
        tree : Tree
        """
        if not isinstance(features, (Features, BinnedFeatures)):
            raise TypeError(f"features must be Features or BinnedFeatures, got "
                            f"{type(features).__name__}.")
        if self.max_features > features.n_features:
            raise ValueError(f"max_features={self.max_features} exceeds the number of "
                             f"features ({features.n_features}).")
        if (self.monotonic_cst is not None
                and self.monotonic_cst.shape[0] != features.n_features):
            raise ValueError(f"monotonic_cst has {self.monotonic_cst.shape[0]} entries for "
                             f"{features.n_features} features.")
        if (self.interaction_groups is not None
                and self.interaction_groups.shape[0] != features.n_features):
            raise ValueError(f"interaction_groups has {self.interaction_groups.shape[0]} "
                             f"rows for {features.n_features} features.")
        if row_values is not None and row_values.shape[0] != features.n_samples:
            raise ValueError(f"row_values has {row_values.shape[0]} entries for "
                             f"{features.n_samples} rows.")
        if n_threads < 1:
            raise ValueError(f"n_threads must be at least 1, got {n_threads}.")
        if self.building:
            raise RuntimeError("a TreeBuilder grows one tree at a time (its working "
                               "arrays are shared between its builds).")
        self.building = True
        try:
            return self._build(features, targets, sample_weight, seed, row_values,
                               n_threads)
        finally:
            self.building = False

    def stage_criterion(self, features, targets, const double[::1] sample_weight,
                        int n_threads=1):
        """A criterion of ``targets`` for the trees that :meth:`build` grows
        one after another on ``features`` with ``sample_weight``, each on the
        residuals of the ones before (boosting stages): pass it to ``build``
        as the targets, then move it by each tree's predictions
        (``HingeCriterion.advance``), which keeps its hinges sorted from one
        stage to the next (``_criterion``). Its arrays are its own, not the
        builder's."""
        cdef bint binned = isinstance(features, BinnedFeatures)
        return HingeCriterion(targets, sample_weight, self.loss.tag, not binned, None,
                              n_threads if binned else 1, keep_leaves=True)

    def _build(self, features, targets, const double[::1] sample_weight, uint32_t seed,
               double[::1] row_values, int n_threads):
        cdef bint binned = isinstance(features, BinnedFeatures)
        cdef HingeCriterion criterion
        if isinstance(targets, HingeCriterion):  # kept from build to build
            criterion = targets
            if (criterion.n_samples != features.n_samples or criterion.sweeps == binned
                    or criterion.loss != self.loss.tag
                    or not criterion.weighs_alike(sample_weight)):
                raise ValueError("a criterion kept from build to build serves the "
                                 "features and weights it was made for.")
            criterion.leaves.clear()
        else:
            # without sweeps for a split search that does not sweep rows through
            # the solver (the histogram's: the node optima and the gradients)
            criterion = HingeCriterion(targets, sample_weight, self.loss.tag, not binned,
                                       self.buffers, n_threads if binned else 1)
        cdef Splitter splitter
        if binned:
            splitter = HistogramSplitter(criterion, features, sample_weight,
                                         self.max_features, self.min_samples_leaf, seed,
                                         n_threads, self.buffers)
        else:
            splitter = ExactSplitter(criterion, features, sample_weight, self.max_features,
                                     self.min_samples_leaf, self.presort_min_rows, seed,
                                     self.buffers)
        if splitter.n_active == 0:
            raise ValueError("no sample has a positive weight.")
        splitter.category_penalty = self.category_penalty
        if self.monotonic_cst is not None:
            splitter.constrain(
                self.monotonic_cst,
                (BOUNDS_NODES if self.prunable else BOUNDS_LEAVES)
                if bounded_by_other_nodes(features) else BOUNDS_MIDPOINTS)
        if self.interaction_groups is not None:
            splitter.restrict_interactions(self.interaction_groups)
        if row_values is not None and features.n_samples > 0:
            splitter.row_values = &row_values[0]
        cdef Tree tree = Tree(features.n_features)
        cdef GrowthLimits limits
        cdef NodeRecord root
        with nogil:
            splitter.init_root(&root)
            limits = self.limits(root.weight)
            root.node_id = tree.add_node(-1, False, root.value, root.cost, root.end,
                                         root.weight, 0)
            if self.max_leaf_nodes > 0:
                grow_best_first(splitter, &limits, tree, &root, self.max_leaf_nodes)
            elif splitter.monotone_bounds is not None:
                grow_best_first(splitter, &limits, tree, &root, PTRDIFF_MAX)
            else:
                grow_depth_first(splitter, &limits, tree, &root)
        tree.resize(tree.node_count)
        return tree
