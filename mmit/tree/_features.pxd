# Declarations of the training features: the data every tree of a fit
# reads, with each feature's rows presorted once, or binned once. See
# _features.pyx.

from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from .._utils._typedefs cimport intp_t


cdef class Features:
    cdef readonly intp_t n_samples             # rows of X
    cdef readonly intp_t n_features            # columns of X
    cdef readonly bint presorted               # whether `order` is filled
    cdef readonly bint sparse                  # X held as compressed columns (CSC)
    cdef readonly bint single_build            # one tree grows on them (see Features)
    cdef const double* values                  # dense: X (NaN: missing) as given, row i
    cdef readonly intp_t row_step              # and feature j at values[i * row_step
    cdef readonly intp_t column_step           # + j * column_step]
    cdef const int64_t[::1] indptr             # sparse: column j's stored values are
    cdef const int32_t[::1] indices            # data[indptr[j]:indptr[j + 1]], in rows
    cdef const double[::1] data                # indices[...] (increasing); others are 0
    cdef int32_t[:, ::1] order                 # order[j]: rows by X[:, j], NaN last
    cdef readonly bint ranked                  # presorted when made: `ranks` is known
    cdef vector[const int32_t*] ranks          # ranked, per feature with ties: each row's
    #                                            dense rank (NULL: its present values
    #                                            all differ, or not ranked)
    cdef object _ranks                         # the arrays `ranks` point into
    cdef readonly const uint8_t[::1] missing   # per feature: whether a value is NaN
    cdef readonly const int32_t[::1] n_categories  # per feature: categories (0: numeric)
    cdef object _matrix                        # X as kept (ndarray or CSC matrix)
    cdef object _rows                          # X in row-major order, made on first use

    cdef int bind(self, const double[:, :] X) except -1
    cdef int32_t[:, ::1] take_order(self) except *


cdef enum:
    MISSING_BIN = 255                          # the bin of a missing value (NaN)


cdef class BinnedFeatures:
    cdef readonly intp_t n_samples             # rows
    cdef readonly intp_t n_features            # features
    cdef readonly bint sparse                  # codes held as compressed rows (CSR)
    cdef readonly const uint8_t[:, ::1] codes  # dense: (rows, features), bin of each value
    cdef const int64_t[::1] row_starts         # sparse: row i's codes other than its
    cdef const int32_t[::1] entry_features     # features' bins of 0 are entry_codes[
    cdef const uint8_t[::1] entry_codes        # row_starts[i]:row_starts[i + 1]], of the
    cdef readonly const uint8_t[::1] zero_bins  # features entry_features[...] (increasing)
    # zero_bins: per feature, the bin of 0 (sparse: the code of a value not stored)
    cdef readonly const double[:, ::1] thresholds  # (features, 255): bin b: x <= [j, b]
    cdef readonly const int32_t[::1] n_bins    # per feature: bins of present values
    cdef readonly const int32_t[::1] n_categories  # per feature: categories (0: numeric)


cdef inline double midpoint(double low, double high) noexcept nogil:
    """The threshold between two consecutive distinct values, ``low <= t <
    high``: their midpoint, else ``low`` (the split searches' thresholds and
    the bin edges)."""
    cdef double threshold = low / 2.0 + high / 2.0
    return threshold if threshold != high and isfinite(threshold) else low
