# Declarations of the split search's interface and what every search
# shares: the records of nodes and splits, the node rows and their
# partitions, the constraints, the sets of categorical splits. See
# _splitter.pyx.

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ._criterion cimport Criterion
from ._monotone cimport MonotoneBounds
from .._utils._typedefs cimport intp_t
from ._tree cimport Tree


cdef extern from *:
    """
    #define MMIT_SPLIT_RTOL 1e-10
    """
    # Splits whose costs (or gains) differ by less than this, relative to
    # the node's, are ties; a split must lower the node's cost by more than
    # this: rounding in running sums never decides between equal splits.
    const double SPLIT_RTOL "MMIT_SPLIT_RTOL"


cdef inline uint32_t random_below(uint32_t* state, uint32_t bound) noexcept nogil:
    """Pseudo-random integer in [0, bound) (xorshift32)."""
    cdef uint32_t x = state[0]
    x ^= x << 13
    x ^= x >> 17
    x ^= x << 5
    state[0] = x
    return x % bound


cdef inline intp_t draw_next(intp_t* ids, intp_t n_ids, intp_t n_drawn,
                             uint32_t* state) noexcept nogil:
    """The next of ``ids`` in a random order, ``n_drawn`` drawn so far (a
    Fisher-Yates step: the drawn ones lead ``ids``): the features' order at
    a node."""
    cdef intp_t j = n_drawn + random_below(state, n_ids - n_drawn)
    cdef intp_t drawn = ids[j]
    ids[j] = ids[n_drawn]
    ids[n_drawn] = drawn
    return drawn


ctypedef struct NodeRecord:
    intp_t node_id              # id in the tree
    intp_t start                # rows: [start, end) of node_rows and presorted lists
    intp_t end                  # (one past the last row)
    intp_t target_start         # the criterion's targets: [target_start, target_end)
    intp_t target_end           # (one past the last target)
    intp_t depth                # depth in the tree (root: 0)
    bint presorted              # rows also kept in the presorted lists
    double value                # prediction of the node
    double cost                 # exact optimal cost of the node
    double weight               # total weight of its rows
    double value_lower          # monotone constraints: its subtree's values lie in
    double value_upper          # [value_lower, value_upper] (-inf, +inf: unconstrained)
    double optimum              # monotone constraints: its value without them
    intp_t groups               # interaction constraints: Splitter.group_sets[groups:]
    #                             holds the bitset of its groups (-1: unconstrained)


ctypedef struct CategoryGroup:
    double value                # its sort key: its rows' optimal constant (or ratio)
    intp_t code                 # the category's code (its bin)
    intp_t start                # its rows: [start, start + count) of the node's
    intp_t count                # present rows in code order (exact splitter)


cdef void sort_categories(CategoryGroup* groups, intp_t count) noexcept nogil


ctypedef struct SplitRecord:
    intp_t feature              # feature to split on
    double threshold            # x <= threshold goes left (+inf: every present value)
    intp_t bin                  # binned features: codes <= bin go left
    bint has_missing            # the node has rows missing the feature
    bint missing_go_to_left     # where those go (when has_missing)
    double cost                 # optimal cost of left plus right (from the sweeps)
    double improvement          # the cost decrease the split search measured
    double left_value           # prediction of the left child (if it has a finite bound)
    double right_value          # prediction of the right child (if it has a finite bound)
    intp_t categories           # categorical: its sets in category_words (-1: threshold)
    int64_t category_first      # the category code of the sets' first bit
    intp_t category_n_words     # words of each set
    intp_t boundary             # a scan's split: rows before this position go left


cdef class Splitter:
    # The interface the builder grows a tree through (abstract), and what
    # every split search shares: the criterion, the node rows, partitions.
    cdef Criterion criterion            # the loss
    cdef intp_t max_features            # features evaluated per node (at least)
    cdef intp_t min_samples_leaf        # rows of positive weight in each child (at least)
    cdef uint32_t random_state          # xorshift state (never 0)
    cdef intp_t n_samples               # rows of the training data
    cdef intp_t n_features              # its features
    cdef intp_t n_active                # rows with weight > 0 (the root's rows)
    cdef const double* sample_weight    # per row: its weight
    cdef int32_t* node_rows             # every node's rows, increasing within a node
    cdef unsigned char* goes_left       # per row, during a partition
    cdef int32_t* scratch               # partition buffer
    cdef intp_t* feature_ids            # features, drawn in a random order
    cdef double* row_values             # output: each row's leaf value (NULL: none)
    cdef const signed char* monotonic   # per feature: -1, 0, +1 (NULL: no constraint)
    cdef int bounds_from                # monotone: BOUNDS_MIDPOINTS, _LEAVES or _NODES
    cdef MonotoneBounds monotone_bounds  # monotone, bounds from other nodes (else None)
    # pending categorical splits: per split, the categories going left, then
    # those present in the node
    cdef vector[uint32_t] category_words
    cdef intp_t categories_start        # its words in use before the current search
    cdef double category_penalty        # ordered splits' bar (per category, x mean loss)
    cdef object _shared_buffers         # ndarrays holding the arrays above
    cdef object _constraints            # arrays `monotonic`, `feature_groups` point into
    cdef const uint64_t* feature_groups  # per feature: bitset of the interaction groups
    cdef intp_t n_group_words           # holding it (NULL: no interaction constraint)
    cdef vector[uint64_t] group_sets    # per node: bitset of the groups it may use

    cdef int setup(self, Criterion criterion, const double[::1] sample_weight,
                   intp_t n_samples, intp_t n_features, intp_t max_features,
                   intp_t min_samples_leaf, uint32_t seed, object buffers) except -1
    cdef intp_t draw_feature(self, intp_t n_drawn) noexcept nogil
    cdef void describe_root(self, NodeRecord* root) noexcept nogil
    cdef int init_root(self, NodeRecord* root) except -1 nogil
    cdef bint find_split(self, const NodeRecord* node, SplitRecord* split) noexcept nogil
    cdef int split_node(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                        NodeRecord* left, NodeRecord* right) except -1 nogil
    cdef void settle_leaf(self, const NodeRecord* node) noexcept nogil
    cdef void partition(self, const NodeRecord* node, intp_t n_left, NodeRecord* left,
                        NodeRecord* right, int n_threads) noexcept nogil
    cdef void evaluate_child(self, const NodeRecord* parent, NodeRecord* child,
                             double value) noexcept nogil
    cdef int constrain(self, const signed char[::1] monotonic, int bounds_from) except -1
    cdef int bound_node(self, Tree tree, NodeRecord* node) except -1 nogil
    cdef signed char sign_of(self, intp_t feature) noexcept nogil
    cdef int restrict_interactions(self, const uint64_t[:, ::1] feature_groups) except -1
    cdef bint allows(self, const NodeRecord* node, intp_t feature) noexcept nogil
    cdef signed char direction(self, const SplitRecord* split) noexcept nogil
    cdef void revalue(self, NodeRecord* child, double value) noexcept nogil
    cdef void bound_children(self, const NodeRecord* node, const SplitRecord* split,
                             NodeRecord* left, NodeRecord* right) noexcept nogil
    cdef int add_children(self, Tree tree, const NodeRecord* node, const SplitRecord* split,
                          NodeRecord* left, NodeRecord* right) except -1 nogil
    cdef uint32_t* new_categories(self, SplitRecord* split, int64_t first,
                                  intp_t n_words) except NULL nogil
    cdef bint category_goes_left(self, const SplitRecord* split,
                                 double code) noexcept nogil
