# Declarations of the growth of a tree: depth-first or best-first, through
# a Splitter. See _builder.pyx.

from .._utils._typedefs cimport intp_t
from ._splitter cimport NodeRecord, SplitRecord


ctypedef struct Frontier:
    NodeRecord node             # a leaf that may be split (best-first growth)
    SplitRecord split           # its best split
    bint splittable             # whether `split` is a valid split
    double improvement          # cost decrease of that split


ctypedef struct GrowthLimits:
    intp_t max_depth            # depth limit
    intp_t min_samples_split    # rows to split a node (at least)
    intp_t min_samples_leaf     # rows in each leaf (at least)
    double min_decrease         # a split must lower the cost by at least this much


cdef class TreeBuilder:
    cdef readonly object loss               # IntervalLoss: makes each build's criterion
    cdef readonly intp_t max_depth          # depth limit
    cdef readonly intp_t min_samples_split  # rows to split a node (at least)
    cdef readonly intp_t min_samples_leaf   # rows in each leaf (at least)
    cdef readonly intp_t max_features       # features evaluated per node (at least)
    cdef readonly intp_t max_leaf_nodes     # leaves of best-first growth; -1: depth-first
    cdef readonly double min_cost_decrease  # split: cost decrease >= this * root weight
    cdef readonly intp_t presort_min_rows   # nodes this large keep presorted lists
    cdef readonly double category_penalty   # the bar of ordered categorical splits
    cdef readonly object monotonic_cst      # int8 per feature: -1, 0, +1 (None: none)
    cdef readonly object interaction_groups  # uint64 bitsets per feature (None: none)
    cdef readonly bint prunable             # monotone trees: every subtree monotone too
    cdef readonly object buffers            # Buffers: working arrays kept between builds
    cdef bint building                      # a build is running (one at a time)

    cdef GrowthLimits limits(self, double root_weight) noexcept nogil
