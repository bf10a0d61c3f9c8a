"""The bounds of a monotone tree's nodes, from the values of the nodes they
are comparable with (``BOUNDS_LEAVES``, ``BOUNDS_NODES``; see ``_splitter``
for monotone constraints and the third source, ``BOUNDS_MIDPOINTS``).

The tree is monotone when every two leaves whose regions (a range of
present values per feature, and whether missing values reach it) meet
along every feature but a constrained one j, and lie one below the other
along j, have values in j's direction: a point and the point above it
along j lie in two such leaves. So a leaf's bounds are the largest value
of the leaves below it and the smallest of those above
(:meth:`MonotoneBounds.node_bounds`), read by walks of the tree restricted
to those regions (``extreme_value``: each node's subtree keeps its
smallest and largest leaf value, so subtrees that cannot change the result
are skipped). With ``BOUNDS_NODES`` (a tree that will be pruned) the
internal nodes count too, but the node's own ancestors: any pruned
subtree's leaves are then ordered as its regions are.

The splitter asks for a node's bounds once, when the node appears, and
tells of every split (``add_children``) and of every value it changes
(``update_extremes``).
"""

from libc.math cimport INFINITY

from ._tree cimport TREE_LEAF, Node, Tree


cdef class MonotoneBounds:
    """The bounds of a monotone tree's nodes read from the values of the
    nodes they are comparable with (see the module doc).

    Parameters
    ----------
    monotonic : ndarray of int8 of shape (n_features,)
        Each feature's direction: -1, 0 or +1.
    bounds_from : int
        ``BOUNDS_LEAVES`` (the leaves) or ``BOUNDS_NODES`` (every node).
    """

    def __cinit__(self, const signed char[::1] monotonic, int bounds_from):
        if bounds_from not in (BOUNDS_LEAVES, BOUNDS_NODES):
            raise ValueError(f"bounds_from must be BOUNDS_LEAVES or BOUNDS_NODES, "
                             f"got {bounds_from}.")
        self._monotonic = monotonic
        self.n_features = monotonic.shape[0]
        self.monotonic = &monotonic[0] if self.n_features > 0 else NULL
        self.bounds_from = bounds_from
        self.region_lower.assign(self.n_features, -INFINITY)
        self.region_upper.assign(self.n_features, INFINITY)
        self.region_missing.assign(self.n_features, True)
        self.walk_lower.assign(self.n_features, -INFINITY)
        self.walk_upper.assign(self.n_features, INFINITY)
        self.walk_missing.assign(self.n_features, True)

    cdef void node_bounds(self, Tree tree, intp_t node_id, double* lower,
                          double* upper) noexcept nogil:
        """The bounds of node ``node_id``'s value: the values of the tree's
        leaves (or nodes) below and above its region along a constrained
        feature. O(depth + the nodes whose regions meet those it is
        compared with)."""
        self.load_region(tree, node_id)
        self.region_bounds(tree, lower, upper)
        self.clear_region()

    cdef void add_children(self, Tree tree, intp_t node_id, intp_t left_id,
                           intp_t right_id) noexcept nogil:
        """Node ``node_id`` has split into ``left_id`` and ``right_id`` (their
        values in ``tree.values``)."""
        self.parents.resize(right_id + 1, -1)
        self.parents[left_id] = self.parents[right_id] = node_id
        self.smallest_below.resize(right_id + 1)
        self.largest_below.resize(right_id + 1)
        self.smallest_below[left_id] = self.largest_below[left_id] = tree.values[left_id]
        self.smallest_below[right_id] = self.largest_below[right_id] = tree.values[right_id]
        self.update_extremes(tree, node_id)

    cdef void load_region(self, Tree tree, intp_t node_id) noexcept nogil:
        """Hold the node's region in ``region_*``: the sides of its
        ancestors' splits it lies on (``clear_region`` undoes it)."""
        cdef intp_t child = node_id, parent, f
        cdef const Node* split
        if <intp_t>self.on_path.size() < tree.node_count:
            self.on_path.resize(tree.node_count, False)
        self.region_path.push_back(node_id)
        self.on_path[node_id] = True
        if node_id == 0:  # the root
            return
        parent = self.parents[node_id]
        while parent >= 0:
            self.region_path.push_back(parent)
            self.on_path[parent] = True
            split = &tree.nodes[parent]
            f = split.feature
            self.region_features.push_back(f)
            if split.left_child == child:
                self.region_upper[f] = min(self.region_upper[f], split.threshold)
                self.region_missing[f] = self.region_missing[f] and split.missing_go_to_left
            else:
                self.region_lower[f] = max(self.region_lower[f], split.threshold)
                self.region_missing[f] = (self.region_missing[f]
                                          and not split.missing_go_to_left)
            child = parent
            parent = self.parents[child]

    cdef void clear_region(self) noexcept nogil:
        """Back to the whole feature space."""
        cdef intp_t f, k
        for f in self.region_features:
            self.region_lower[f] = -INFINITY
            self.region_upper[f] = INFINITY
            self.region_missing[f] = True
        self.region_features.clear()
        for k in self.region_path:
            self.on_path[k] = False
        self.region_path.clear()

    cdef void region_bounds(self, Tree tree, double* lower, double* upper) noexcept nogil:
        """The bounds the values of the region held in ``region_*`` must keep:
        the values of the tree's leaves (or nodes) below and above it along a
        constrained feature (module doc)."""
        cdef intp_t j
        cdef double own_lower, own_upper
        cdef unsigned char own_missing
        cdef signed char sign
        lower[0] = -INFINITY
        upper[0] = INFINITY
        for j in range(self.n_features):
            sign = self.monotonic[j]
            own_lower = self.region_lower[j]
            own_upper = self.region_upper[j]
            own_missing = self.region_missing[j]
            if sign == 0 or not own_lower < own_upper:
                continue
            # the leaves below the region along feature j (present values
            # only; a walk needs a region that is empty along no feature)
            self.region_missing[j] = False
            if own_lower > -INFINITY:
                self.region_lower[j] = -INFINITY
                self.region_upper[j] = own_lower
                if sign > 0:
                    lower[0] = max(lower[0], self.extreme_value(tree, True))
                else:
                    upper[0] = min(upper[0], self.extreme_value(tree, False))
            # and above it
            if own_upper < INFINITY:
                self.region_lower[j] = own_upper
                self.region_upper[j] = INFINITY
                if sign > 0:
                    upper[0] = min(upper[0], self.extreme_value(tree, False))
                else:
                    lower[0] = max(lower[0], self.extreme_value(tree, True))
            self.region_lower[j] = own_lower
            self.region_upper[j] = own_upper
            self.region_missing[j] = own_missing

    cdef double extreme_value(self, Tree tree, bint largest) noexcept nogil:
        """The largest (or smallest) value of the tree's leaves (all its nodes,
        with ``BOUNDS_NODES``) but those of ``region_path`` whose regions meet
        the region held in ``region_*`` (-inf, or +inf, when none do).

        A walk from the root into the children whose regions meet it: the
        walk holds the range of every feature in the region of the node it
        is at (``walk_*``, restored on the way back), so that a child's
        region meets it exactly, present values or missing ones, feature by
        feature. Subtrees whose extremes cannot change the result are
        skipped, the more promising child is visited first."""
        cdef const Node* split
        cdef WalkStep step
        cdef double extreme = -INFINITY if largest else INFINITY
        cdef double lower, upper, threshold
        cdef bint missing, missing_left, to_left, to_right, left_first
        cdef intp_t k, f
        self.push_step(0, -1, 0.0, 0.0, False)
        while self.walk_stack.size() > 0:
            step = self.walk_stack.back()
            self.walk_stack.pop_back()
            if step.feature >= 0:
                self.walk_lower[step.feature] = step.lower
                self.walk_upper[step.feature] = step.upper
                self.walk_missing[step.feature] = step.missing
            k = step.node
            if k < 0:  # back from a subtree
                continue
            split = &tree.nodes[k]
            if (split.left_child == TREE_LEAF or self.bounds_from == BOUNDS_NODES) and (
                    not self.on_path[k]):
                extreme = (max(extreme, tree.values[k]) if largest
                           else min(extreme, tree.values[k]))
            if split.left_child == TREE_LEAF:
                continue
            # a subtree none of whose nodes can change the extreme is skipped
            if (self.largest_below[k] <= extreme if largest
                    else self.smallest_below[k] >= extreme):
                continue
            f = split.feature
            threshold = split.threshold
            missing_left = split.missing_go_to_left
            lower = self.walk_lower[f]
            upper = self.walk_upper[f]
            missing = self.walk_missing[f]
            to_left = self.meets(f, lower, min(upper, threshold), missing and missing_left)
            to_right = self.meets(f, max(lower, threshold), upper,
                                  missing and not missing_left)
            self.push_step(-1, f, lower, upper, missing)  # back to it after its children
            # the more promising child visited first (pushed last)
            left_first = (
                self.largest_below[split.left_child] > self.largest_below[split.right_child]
                if largest else
                self.smallest_below[split.left_child]
                < self.smallest_below[split.right_child])
            if to_right and left_first:
                self.push_step(split.right_child, f, max(lower, threshold), upper,
                               missing and not missing_left)
            if to_left:
                self.push_step(split.left_child, f, lower, min(upper, threshold),
                               missing and missing_left)
            if to_right and not left_first:
                self.push_step(split.right_child, f, max(lower, threshold), upper,
                               missing and not missing_left)
        return extreme

    cdef inline void push_step(self, intp_t node, intp_t feature, double lower,
                               double upper, bint missing) noexcept nogil:
        """Walk to ``node`` next (-1: back from a subtree), where ``feature``
        (-1: none) has the range given."""
        cdef WalkStep step
        step.node = node
        step.feature = feature
        step.lower = lower
        step.upper = upper
        step.missing = missing
        self.walk_stack.push_back(step)

    cdef inline bint meets(self, intp_t feature, double lower, double upper,
                           bint missing) noexcept nogil:
        """Whether values of ``feature`` in (lower, upper] (and missing ones,
        if ``missing``) meet the region held in ``region_*``."""
        return (max(lower, self.region_lower[feature])
                < min(upper, self.region_upper[feature])
                or (missing and self.region_missing[feature]))

    cdef void update_extremes(self, Tree tree, intp_t node_id) noexcept nogil:
        """The extremes of the subtrees holding a leaf whose value is new (or
        a node that has just split), from it up to the root."""
        cdef intp_t k = node_id, left, right
        cdef double smallest, largest
        while k >= 0:
            left = tree.nodes[k].left_child
            right = tree.nodes[k].right_child
            smallest = largest = tree.values[k]
            if left != TREE_LEAF:
                if self.bounds_from == BOUNDS_LEAVES:
                    smallest, largest = INFINITY, -INFINITY
                smallest = min(smallest, self.smallest_below[left],
                               self.smallest_below[right])
                largest = max(largest, self.largest_below[left], self.largest_below[right])
            self.smallest_below[k] = smallest
            self.largest_below[k] = largest
            k = self.parents[k] if k > 0 else -1
