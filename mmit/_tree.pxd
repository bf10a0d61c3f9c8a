# Declarations of the tree: flat node arrays and the one walk that sends a
# row from a node to its child. See _tree.pyx.

from libc.stdint cimport int64_t, uint8_t

from ._leaf_models cimport NodeModels
from ._solver cimport intp_t

cpdef enum:
    TREE_LEAF = -1            # child id of a leaf
    TREE_UNDEFINED = -2       # feature (and threshold) of a leaf


ctypedef struct Node:
    int64_t left_child        # id of the left child, TREE_LEAF for a leaf
    int64_t right_child       # id of the right child, TREE_LEAF for a leaf
    int64_t feature           # feature of the split, TREE_UNDEFINED for a leaf
    double threshold          # x[feature] <= threshold goes left (+inf: all present)
    double cost               # minimal total weighted loss of the node's samples
    int64_t n_node_samples    # training samples (with weight > 0) in the node
    double weighted_n_node_samples  # their total weight
    uint8_t missing_go_to_left  # whether a missing x[feature] (NaN) goes to the left child


cdef inline int64_t next_node(const Node* node, const double* row) noexcept nogil:
    """The child of internal ``node`` that ``row`` goes to: the left one when
    ``row[feature] <= threshold``, the right one when it is larger, the
    stored side when it is missing (NaN). Written without branches (the
    comparison is a coin flip); every walk down a tree goes through here."""
    cdef double x = row[node.feature]
    cdef bint right = (x > node.threshold) | ((x != x) & (node.missing_go_to_left == 0))
    return node.left_child + right * (node.right_child - node.left_child)


cdef class Tree:
    cdef readonly intp_t n_features   # number of features the tree splits on
    cdef readonly intp_t max_depth    # depth of the deepest leaf
    cdef readonly intp_t node_count   # nodes in use
    cdef readonly intp_t capacity     # nodes the arrays can hold
    cdef Node* nodes                  # node records (inside _node_array)
    cdef double* values               # prediction of each node (inside _value_array)
    cdef object _node_array           # ndarray of NODE_DTYPE holding the nodes
    cdef object _value_array          # ndarray holding the values
    cdef readonly NodeModels node_models  # what nodes predict beyond values (None: nothing)

    cdef intp_t add_node(self, intp_t parent, bint is_left, double value, double cost,
                         intp_t n_node_samples, double weighted_n_node_samples,
                         intp_t depth) except -1 nogil
    cdef void set_split(self, intp_t node_id, intp_t feature, double threshold,
                        bint missing_go_to_left) noexcept nogil
    cdef int _resize(self, intp_t capacity) except -1
    cdef double node_prediction(self, int64_t node, const double* row) noexcept nogil
    cdef void _descend(self, const double[:, ::1] X, int64_t* leaves,
                       double* values) noexcept nogil
