# Declarations of the training features: the data every tree of a fit
# reads, with each feature's rows presorted once. See _features.pyx.

from libc.stdint cimport int32_t

from ._solver cimport intp_t


cdef class Features:
    cdef readonly intp_t n_samples             # rows of X
    cdef readonly intp_t n_features            # columns of X
    cdef readonly bint presorted               # whether `order` is filled
    cdef const double[::1, :] X                # features, column-major (NaN: missing)
    cdef const int32_t[:, ::1] order           # order[j]: rows by X[:, j], NaN last
    cdef const unsigned char[::1] has_missing  # per feature: any NaN in the column
    cdef object _rows                          # X in row-major order, made on first use
