# Declarations of the tree: flat node arrays, the builder over presorted
# features, and minimal cost-complexity pruning. See _tree.pyx.

from libc.stdint cimport int32_t, int64_t, uint32_t

from ._solver cimport intp_t

cpdef enum:
    TREE_LEAF = -1            # child id of a leaf
    TREE_UNDEFINED = -2       # feature (and threshold) of a leaf


ctypedef struct Node:
    int64_t left_child        # id of the left child, TREE_LEAF for a leaf
    int64_t right_child       # id of the right child, TREE_LEAF for a leaf
    int64_t feature           # feature of the split, TREE_UNDEFINED for a leaf
    double threshold          # samples with x[feature] <= threshold go left
    double cost               # minimal total weighted loss of the node's samples
    int64_t n_node_samples    # training samples (with weight > 0) in the node
    double weighted_n_node_samples  # their total weight


cdef class Tree:
    cdef readonly intp_t n_features   # number of features the tree splits on
    cdef public intp_t max_depth      # depth of the deepest leaf
    cdef readonly intp_t node_count   # nodes in use
    cdef readonly intp_t capacity     # nodes the arrays can hold
    cdef Node* nodes                  # node records (inside _node_array)
    cdef double* values               # prediction of each node (inside _value_array)
    cdef object _node_array           # ndarray of NODE_DTYPE holding the nodes
    cdef object _value_array          # ndarray holding the values

    cdef intp_t add_node(self, intp_t parent, bint is_left, double value, double cost,
                         intp_t n_node_samples, double weighted_n_node_samples,
                         intp_t depth) except -1 nogil
    cdef void set_split(self, intp_t node_id, intp_t feature,
                        double threshold) noexcept nogil
    cdef int _resize(self, intp_t capacity) except -1
    cdef void _descend(self, const double[:, ::1] X, int64_t* leaves,
                       double* values) noexcept nogil


cdef class TrainingData:
    cdef readonly intp_t n_samples    # rows of X
    cdef readonly intp_t n_features   # columns of X
    cdef const double[::1, :] X       # features, column-major
    cdef const int32_t[:, ::1] order  # order[j]: rows sorted by X[:, j] (stable)
    cdef const double[::1] lower_position  # breakpoint of each lower hinge (-inf if none)
    cdef const double[::1] upper_position  # breakpoint of each upper hinge (+inf if none)
    cdef const int32_t[::1] hinge_order  # finite hinges 2 * row + is_upper by breakpoint
