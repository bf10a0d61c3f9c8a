# Declarations of the bounds of a monotone tree's nodes read from the
# values of the other nodes they are comparable with. See _monotone.pyx.

from libcpp.vector cimport vector

from .._utils._typedefs cimport intp_t
from ._tree cimport Tree


cpdef enum:  # what the bounds of a monotone tree's nodes come from
    BOUNDS_MIDPOINTS = 0  # the midpoints of the children's values of each split
    BOUNDS_LEAVES = 1     # the values of the leaves they are comparable with
    BOUNDS_NODES = 2      # the values of the nodes (ancestors but) they are comparable with


ctypedef struct WalkStep:
    intp_t node                 # the node to visit (-1: back from a subtree)
    intp_t feature              # the feature whose range the step sets (-1: none)
    double lower                # that range: present values in (lower, upper],
    double upper
    bint missing                # and whether missing values are in it


cdef class MonotoneBounds:
    cdef const signed char* monotonic   # per feature: -1, 0, +1
    cdef intp_t n_features
    cdef int bounds_from                # BOUNDS_LEAVES or BOUNDS_NODES
    cdef object _monotonic              # the array `monotonic` points into
    cdef vector[intp_t] parents         # per node id, its parent's (-1: the root)
    cdef vector[double] region_lower    # the region of a node, per feature:
    cdef vector[double] region_upper    # present values in (lower, upper], and whether
    cdef vector[unsigned char] region_missing  # missing values reach it
    cdef vector[intp_t] region_features  # the features its ancestors split on
    cdef vector[intp_t] region_path     # the node and its ancestors
    cdef vector[unsigned char] on_path  # per node id: in region_path
    cdef vector[WalkStep] walk_stack    # steps of a walk of a region
    cdef vector[double] walk_lower      # during a walk: the region of the node it is
    cdef vector[double] walk_upper      # at, per feature (as region_*)
    cdef vector[unsigned char] walk_missing
    cdef vector[double] smallest_below  # per node id, the smallest and
    cdef vector[double] largest_below   # largest value of the leaves of its subtree

    cdef void node_bounds(self, Tree tree, intp_t node_id, double* lower,
                          double* upper) noexcept nogil
    cdef void add_children(self, Tree tree, intp_t node_id, intp_t left_id,
                           intp_t right_id) noexcept nogil
    cdef void update_extremes(self, Tree tree, intp_t node_id) noexcept nogil
    cdef void load_region(self, Tree tree, intp_t node_id) noexcept nogil
    cdef void clear_region(self) noexcept nogil
    cdef void region_bounds(self, Tree tree, double* lower, double* upper) noexcept nogil
    cdef double extreme_value(self, Tree tree, bint largest) noexcept nogil
    cdef void push_step(self, intp_t node, intp_t feature, double lower, double upper,
                        bint missing) noexcept nogil
    cdef bint meets(self, intp_t feature, double lower, double upper,
                    bint missing) noexcept nogil
