# Declarations of the histogram split search: binned features and each
# row's gradient and curvature. See _histogram_splitter.pyx.

from libc.stdint cimport int32_t, uint8_t

from ._features cimport BinnedFeatures
from ._solver cimport intp_t
from ._splitter cimport NodeRecord, SplitRecord, Splitter


cdef class HistogramSplitter(Splitter):
    cdef BinnedFeatures features        # the binned data (kept alive)
    cdef const uint8_t* codes           # (n_samples, n_features) bins, row-major
    cdef const double* thresholds       # (n_features, 255) upper edges of the bins
    cdef const int32_t* n_bins          # per feature: bins of present values
    cdef double* gradient               # per row: weighted derivative of its loss
    cdef double* hessian                # per row: weighted curvature (or weight)
    cdef double* histogram              # per feature and bin: gradient, hessian, rows
    cdef int32_t* child_rows            # a candidate split's rows: left ones, then right
    cdef object _buffers                # ndarrays holding the working memory

    cdef void build_histogram(self, const int32_t* rows, intp_t count,
                              intp_t feature) noexcept nogil
    cdef double* histogram_of(self, intp_t feature) noexcept nogil
    cdef void scan_feature(self, const NodeRecord* node, intp_t feature, double total_g,
                           double total_h, double* best_gain,
                           SplitRecord* best) noexcept nogil
