# Declarations of the histogram split search: binned features, each row's
# gradient and curvature, per-node histograms (the larger child's by
# subtraction), the nodes' keys that order their features. See
# _histogram_splitter.pyx.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from ._features cimport BinnedFeatures
from .._utils._typedefs cimport intp_t
from ._histogram cimport BinSums, FeatureSplit
from ._splitter cimport NodeRecord, SplitRecord, Splitter


cdef extern from *:
    """
    /* splitmix64 of 2 * key + side: a child's key from its parent's */
    static inline unsigned long long mmit_child_key(unsigned long long key, int side) {
        unsigned long long z = 2 * key + (unsigned long long) side
                               + 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    """
    # the key of a node's left (side 0) or right (1) child
    uint64_t child_key "mmit_child_key"(uint64_t key, int side) noexcept nogil


cdef inline uint32_t order_state(uint64_t key) noexcept nogil:
    """The xorshift state that draws the features' order of a node of this
    key (never 0)."""
    cdef uint32_t state = <uint32_t>(key ^ (key >> 32))
    return state if state != 0 else 1


ctypedef struct HistogramLink:
    intp_t slot                 # pool slot of the node's histogram (-1: none yet)
    intp_t parent_slot          # its parent's, shared with the sibling (-1: none)
    intp_t sibling              # node id of the sibling
    intp_t sibling_start        # the sibling's rows: [sibling_start, sibling_end)
    intp_t sibling_end          # of node_rows


ctypedef struct BlockSums:
    intp_t n_left               # rows of the block going left
    double left_weight          # their weight
    double right_weight         # the weight of the others


cdef class HistogramSplitter(Splitter):
    cdef BinnedFeatures features        # the binned data (kept alive)
    cdef bint sparse                    # the codes as compressed rows (see BinnedFeatures)
    cdef const uint8_t* codes           # dense: (n_samples, n_features) bins, row-major
    cdef const int64_t* row_starts      # sparse: each row's stored codes, from here
    cdef const int32_t* entry_features  # their features (increasing in a row)
    cdef const uint8_t* entry_codes     # their bins
    cdef const uint8_t* zero_bins       # per feature: the bin of a code not stored
    cdef const double* thresholds       # (n_features, 255) upper edges of the bins
    cdef const int32_t* n_bins          # per feature: bins of present values
    cdef int n_threads                  # threads building a histogram or scanning
    cdef bint subtract                  # every feature evaluated: children by subtraction
    cdef bint curved                    # the second sums are the rows' curvatures (else
    #                                     their weights: no row has curvature)
    cdef double* gradient               # per row: weighted derivative of its loss
    cdef double* hessian                # per row: weighted curvature (or weight)
    cdef BinSums* pool                  # histograms: slots x features x 256 bins
    cdef intp_t* slot_users             # per slot: node records using it (0: free)
    cdef intp_t* slot_node              # per slot: node whose histogram it holds
    cdef intp_t n_slots                 # slots the pool holds
    cdef HistogramLink* links           # per node id: its histogram, its parent's
    cdef intp_t n_links                 # node ids the links hold
    cdef FeatureSplit* feature_splits   # per feature: its best split at the node
    cdef intp_t* drawn                  # the features in the order drawn at the node
    cdef vector[uint64_t] node_keys     # per node id: the key of its features' order
    cdef uint64_t root_key              # the root's: the build's seed
    cdef object _buffers                # ndarrays holding the per-row arrays

    cdef BinSums* histogram(self, intp_t slot) noexcept nogil
    cdef intp_t new_slot(self) except -1 nogil
    cdef int grow_links(self, intp_t count) except -1 nogil
    cdef void build(self, const int32_t* rows, intp_t count, intp_t feature,
                    BinSums* out) noexcept nogil
    cdef void sum_rows(self, const int32_t* rows, intp_t count, intp_t first,
                       intp_t last, BinSums* out) noexcept nogil
    cdef intp_t node_histogram(self, const NodeRecord* node) except -1 nogil
    cdef int use_curvature(self) except -1 nogil
    cdef int keep_categories(self, SplitRecord* split, const BinSums* sums,
                             double total_h, bint by_ratio) except -1 nogil
    cdef int take_categories(self, SplitRecord* split, const uint32_t* words,
                             intp_t n_words) except -1 nogil
    cdef void route_block(self, const NodeRecord* node, const SplitRecord* split,
                          intp_t block, BlockSums* sums) noexcept nogil
