# Declarations of the exact split search: a node's rows in the order of a
# feature (presorted lists, sorted on demand, or sparse columns) and the
# criterion's sweeps over them. See _exact_splitter.pyx.

cimport cython
from libc.stdint cimport int32_t, int64_t, uint64_t

from ._features cimport Features
from ._splitter cimport CategoryGroup, NodeRecord, SplitRecord, Splitter
from .._utils._typedefs cimport intp_t


@cython.final
cdef class ExactSplitter(Splitter):
    # the split search on the values: presorted or sorted-on-demand rows and
    # the criterion's sweeps
    cdef Features features              # the data (kept alive)
    cdef intp_t presort_min_rows        # a node this large keeps its children presorted
    cdef const double* X                # dense features (NULL: sparse): row i of feature
    cdef intp_t row_step                # j at X[i * row_step + j * column_step];
    cdef intp_t column_step             # sparse: row_step 1 in `values`
    cdef const int64_t* indptr          # sparse features (NULL: dense): compressed columns
    cdef const int32_t* indices         # (see _features)
    cdef const double* data
    cdef double* values                 # sparse: per row, the value of the feature read
    #                                     last (read_stored): 0 but at
    cdef int32_t* written_rows          # the rows of its stored values
    cdef intp_t n_written
    cdef int32_t* found_positions       # sparse: the node positions and the indices
    cdef int64_t* found_entries         # in data of the feature's stored values
    cdef int32_t* samples               # per feature: n_active rows, node-partitioned
    cdef uint64_t* keys                 # sort keys of an unsorted node's present values
    cdef int32_t* dropped               # bits of their values the keys drop, by position
    cdef int32_t* feature_rows          # an unsorted node's rows by a feature, missing last
    cdef unsigned char* change          # change[k]: the k-th and (k-1)-th values differ
    cdef double* forward_cost           # sweep outputs: cost of every left part
    cdef double* forward_value          # and its prediction
    cdef double* backward_cost          # cost of every right part
    cdef double* backward_value         # and its prediction
    cdef double* missing_cost           # sweeps that start with the missing rows
    cdef double* missing_value          # and their predictions (NULL: no NaN in X)
    cdef double* lower_losses           # a bounded node: per row, its loss at the
    cdef double* upper_losses           # node's lower / upper bound
    cdef double* lower_costs            # the loss of its first k rows in a feature's
    cdef double* upper_costs            # order at each bound (prefix sums)
    cdef bint costs_ready               # the prefix sums are the feature's
    cdef int32_t* category_rows         # a node's present rows, categories reordered
    cdef CategoryGroup* groups          # the node's categories, as ordered
    cdef object _buffers                # ndarrays holding the working memory

    cdef const int32_t* feature_order(self, const NodeRecord* node, intp_t feature,
                                      intp_t* n_present) noexcept nogil
    cdef inline const double* column_of(self, intp_t feature) noexcept nogil
    cdef intp_t find_stored(self, const NodeRecord* node, intp_t feature) noexcept nogil
    cdef intp_t read_stored(self, const NodeRecord* node, intp_t feature) noexcept nogil
    cdef const int32_t* sparse_order(self, const NodeRecord* node, intp_t feature,
                                     intp_t* n_present) noexcept nogil
    cdef inline void offer(self, const NodeRecord* node, SplitRecord* best,
                           double tolerance, intp_t feature, const double* column,
                           const int32_t* rows, intp_t k, intp_t n_present,
                           bint has_missing, bint missing_go_to_left, double left_cost,
                           double left_value, double right_cost,
                           double right_value) noexcept nogil
    cdef void offer_bounded(self, const NodeRecord* node, SplitRecord* best,
                            double tolerance, intp_t feature, const double* column,
                            const int32_t* rows, intp_t k, intp_t n_present,
                            bint has_missing, bint missing_go_to_left, double left_cost,
                            double left_value, double right_cost,
                            double right_value) noexcept nogil
    cdef void bound_costs(self, const NodeRecord* node, const int32_t* rows) noexcept nogil
    cdef void consider(self, SplitRecord* best, double total, double tolerance,
                       intp_t feature, const double* column, const int32_t* rows,
                       intp_t k, intp_t n_present, bint has_missing,
                       bint missing_go_to_left, double left_value,
                       double right_value) noexcept nogil
    cdef void evaluate_feature(self, const NodeRecord* node, intp_t feature,
                               const int32_t* rows, intp_t n_present,
                               double tolerance, SplitRecord* best) noexcept nogil
    cdef int evaluate_categories(self, const NodeRecord* node, intp_t feature,
                                 const int32_t* rows, intp_t n_present,
                                 double tolerance, SplitRecord* best) except -1 nogil
    cdef int keep_categories(self, SplitRecord* best, intp_t feature,
                             const int32_t* rows, intp_t n_present) except -1 nogil
