# Declarations of the histograms of binned features: per feature and bin,
# the sums of the rows' gradients, curvatures and counts, added up from the
# rows' codes (dense or sparse), and the scan of a feature's histogram for
# its best split. See _histogram.pyx.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

from ._features cimport MISSING_BIN
from .._utils._sorting cimport first_at_least
from .._utils._typedefs cimport intp_t
from ._splitter cimport CategoryGroup

cdef enum:
    N_BINS = MISSING_BIN + 1    # bins per feature: present values, then missing


cdef inline intp_t set_words(intp_t n_bins) noexcept nogil:
    """Words of 32 bits that hold a set of the ``n_bins`` categories of a
    categorical feature (one bin each)."""
    return (n_bins + 31) // 32


ctypedef struct BinSums:
    double gradient             # sum of the rows' gradients
    double hessian              # sum of their curvatures (or weights)
    double count                # number of rows


ctypedef struct FeatureSplit:
    double gain                 # Newton gain of the feature's best split (0: none)
    intp_t bin                  # codes <= bin go left
    bint missing_go_to_left     # where missing rows go
    bint can_split              # the node's rows lie in two bins or more
    bint by_ratio               # categorical: bins by gradient / curvature, bin a position


cdef inline double newton_score(double g, double h, double h_floor) noexcept nogil:
    """``g^2 / h``: twice the loss decrease of a Newton step; 0 without
    curvature, or with less than ``h_floor`` (a side whose curvature is the
    rounding left by a subtraction of sums)."""
    return g * g / h if h > h_floor else 0.0

cdef inline void accumulate(const int32_t* rows, intp_t count, const uint8_t* codes,
                            intp_t n_features, intp_t first, intp_t last,
                            const double* gradient, const double* hessian,
                            BinSums* out) noexcept nogil:
    """Add the rows' gradient, curvature and count to the bins of features
    ``first .. last - 1`` of ``out`` (a histogram of every feature). O(count
    * (last - first))."""
    cdef intp_t k, j, row
    cdef double g, h
    cdef const uint8_t* row_codes
    cdef BinSums* bin_sums
    for k in range(count):
        row = rows[k]
        g = gradient[row]
        h = hessian[row]
        row_codes = codes + row * n_features
        for j in range(first, last):
            bin_sums = out + j * N_BINS + row_codes[j]
            bin_sums.gradient += g
            bin_sums.hessian += h
            bin_sums.count += 1.0


cdef inline uint8_t stored_code(const int64_t* row_starts, const int32_t* entry_features,
                                const uint8_t* entry_codes, uint8_t zero_bin, intp_t row,
                                intp_t feature) noexcept nogil:
    """The bin of a row's value of a feature from sparse codes: its stored
    code, else ``zero_bin``."""
    cdef int64_t end = row_starts[row + 1]
    cdef int64_t entry = first_at_least(entry_features, row_starts[row], end,
                                        <int32_t>feature)
    if entry < end and entry_features[entry] == feature:
        return entry_codes[entry]
    return zero_bin


cdef inline void accumulate_entries(const int32_t* rows, intp_t count,
                                    const int64_t* row_starts,
                                    const int32_t* entry_features,
                                    const uint8_t* entry_codes, const uint8_t* zero_bins,
                                    intp_t first, intp_t last, const double* gradient,
                                    const double* hessian, BinSums* out) noexcept nogil:
    """``accumulate`` from sparse codes: each row's stored codes of features
    ``first .. last - 1`` to their bins, then to each feature's bin of 0 the
    rows' sums less those of its other bins (exact for the counts; 0 when
    every row has a stored code). O(count log(stored codes per row) + their
    stored codes of those features + 256 * (last - first))."""
    cdef intp_t k, j, row, b
    cdef int64_t entry, end
    cdef double g, h, total_g = 0.0, total_h = 0.0, total_n = 0.0
    cdef BinSums* bin_sums
    cdef BinSums* zero
    for k in range(count):
        row = rows[k]
        g = gradient[row]
        h = hessian[row]
        total_g += g
        total_h += h
        end = row_starts[row + 1]
        entry = first_at_least(entry_features, row_starts[row], end, <int32_t>first)
        while entry < end and entry_features[entry] < last:
            bin_sums = out + entry_features[entry] * N_BINS + entry_codes[entry]
            bin_sums.gradient += g
            bin_sums.hessian += h
            bin_sums.count += 1.0
            entry += 1
    total_n = <double> count
    for j in range(first, last):
        zero = out + j * N_BINS + zero_bins[j]
        zero.gradient = total_g
        zero.hessian = total_h
        zero.count = total_n
        for b in range(N_BINS):
            if b != zero_bins[j]:
                bin_sums = out + j * N_BINS + b
                zero.gradient -= bin_sums.gradient
                zero.hessian -= bin_sums.hessian
                zero.count -= bin_sums.count
        if zero.count == 0.0:  # no rounding left in an empty bin
            zero.gradient = 0.0
            zero.hessian = 0.0


cdef void best_split_of(const BinSums* sums, intp_t n_bins, bint categorical,
                        signed char sign, double total_g, double total_h, double m,
                        double min_leaf, double category_penalty,
                        FeatureSplit* best) noexcept nogil

cdef intp_t ratio_order(const BinSums* sums, intp_t n_bins, double total_h,
                        CategoryGroup* order) noexcept nogil

cdef void scan_bins(const BinSums* sums, const CategoryGroup* order, intp_t n_bins,
                    signed char sign, double total_g, double total_h, double m,
                    double min_leaf, FeatureSplit* best) noexcept nogil

cdef void category_sets(const BinSums* sums, intp_t n_bins, intp_t split_bin,
                        double total_h, bint by_ratio, uint32_t* words,
                        intp_t n_words) noexcept nogil
