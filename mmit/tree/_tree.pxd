# Declarations of the tree: flat node arrays, the step that sends a row from
# a node to its child, and the compact copy of the nodes that prediction
# walks. See _tree.pyx.

from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from ._node_models cimport NodeModels
from .._utils._typedefs cimport intp_t

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
    int32_t category_set      # a categorical split's set of left categories (-1: none)


# The categories a categorical split sends left: bit k of the words set for
# category code first + k. Codes outside [first, first + n_bits) (categories
# absent from the node or unseen in training), non-integer values and NaN
# follow the node's missing side.
ctypedef struct CategorySet:
    int64_t first             # code of the first bit
    int64_t n_bits            # bits held, a multiple of 32
    int64_t offset            # index of the first word in the tree's words


cdef inline bint goes_right(double x, double threshold,
                            bint missing_goes_right) noexcept nogil:
    """Whether a row whose split feature is ``x`` goes to the right child:
    when ``x > threshold``, or when ``x`` is missing (NaN) and missing values
    go right. Written without branches (the comparison is a coin flip);
    every walk down a tree routes its rows through here."""
    return (x > threshold) | ((x != x) & missing_goes_right)


cdef inline bint category_goes_right(double x, const CategorySet* categories,
                                     const uint32_t* words,
                                     bint missing_goes_right) noexcept nogil:
    """Whether a row whose categorical split feature is ``x`` (a category
    code) goes to the right child: when its bit is clear; when ``x`` is not
    a code of the set's range (NaN included), where missing values go."""
    cdef double bit = x - categories.first
    cdef int64_t k
    if not (bit >= 0.0 and bit < categories.n_bits):
        return missing_goes_right
    k = <int64_t>bit
    if k != bit:
        return missing_goes_right
    return ((words[categories.offset + (k >> 5)] >> (k & 31)) & 1) == 0


cdef inline int64_t child_toward(const Node* node, const double* row,
                                 const CategorySet* category_sets,
                                 const uint32_t* category_words) noexcept nogil:
    """The child of internal ``node`` that ``row`` goes to, the tree's
    categorical sets given: the step of every walk on node records."""
    cdef bint right
    if node.category_set >= 0:
        right = category_goes_right(row[node.feature], &category_sets[node.category_set],
                                    category_words, node.missing_go_to_left == 0)
    else:
        right = goes_right(row[node.feature], node.threshold,
                           node.missing_go_to_left == 0)
    return node.left_child + right * (node.right_child - node.left_child)


# A node as prediction walks it: 16 bytes (a Node takes 64), so four share a
# cache line, the two children side by side, a leaf's value in place.
ctypedef struct WalkNode:
    # threshold: x[feature] <= threshold goes left; a leaf: its value; a
    # categorical split: the index of its CategorySet. children: 4 * slot of
    # the left child (right: next) + 2 * categorical split + NaN goes right.
    double threshold
    int32_t feature           # feature of the split; a leaf: -1 - its id in Tree.nodes
    uint32_t children


# What a walk down one tree reads (pointers into the tree, which must live
# and stay unchanged while the walk runs).
ctypedef struct TreeWalk:
    const WalkNode* nodes             # the tree's compact nodes
    intp_t n_nodes                    # their number
    bint categorical                  # whether it has categorical splits
    const CategorySet* category_sets  # their sets
    const uint32_t* category_words    # and bits
    PyObject* node_models             # its node_models, None or NodeModels (borrowed)


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
    cdef const WalkNode* walk         # nodes as predict walks them (_walk_array), or NULL
    cdef object _walk_array           # ndarray holding the WalkNode records
    cdef vector[CategorySet] category_sets  # the categorical splits' sets
    cdef vector[uint32_t] category_words    # their bits

    cdef intp_t add_node(self, intp_t parent, bint is_left, double value, double cost,
                         intp_t n_node_samples, double weighted_n_node_samples,
                         intp_t depth) except -1 nogil
    cdef void set_split(self, intp_t node_id, intp_t feature, double threshold,
                        bint missing_go_to_left) noexcept nogil
    cdef int set_categorical_split(self, intp_t node_id, intp_t feature, int64_t first,
                                   const uint32_t* words, intp_t n_words,
                                   bint missing_go_to_left) except -1 nogil
    cdef int copy_split(self, intp_t node_id, Tree source,
                        intp_t source_node) except -1 nogil
    cdef int resize(self, intp_t capacity) except -1
    cdef int check_rows(self, X) except -1
    cdef double node_prediction(self, int64_t node, const double* row) noexcept nogil
    cdef const WalkNode* walk_nodes(self) except NULL
    cdef TreeWalk tree_walk(self) except *


cdef inline int64_t next_node(Tree tree, const Node* node,
                              const double* row) noexcept nogil:
    """The child of internal ``node`` of ``tree`` that ``row`` goes to (a step
    of the walks on the node records: ``decision_path`` and pruning)."""
    return child_toward(node, row, tree.category_sets.data(), tree.category_words.data())
