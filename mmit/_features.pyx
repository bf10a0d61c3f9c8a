"""Training features of Maximum Margin Interval Trees, presorted once per fit.

:class:`Features` holds the validated features (column-major, NaN for a
missing value), shared read-only by every tree grown on them, so that the
trees of a forest grow in parallel threads on one copy. When the trees keep
their large nodes' rows presorted (``presort_min_rows`` in ``_splitter``),
every feature is sorted once here (:func:`presort`): the rows by increasing
value, ties by row, missing values last, the order of a stable argsort.
"""

from libc.math cimport isnan
from libc.stdint cimport int32_t, uint64_t

import numpy as np

from ._solver import check_row_count

from ._sorting cimport index_mask_for, order_close_values, sortable_bits


def presort(const double[::1, :] X):
    """Rows of X by increasing value of each feature, ties by row, NaN last.

    Returns ``order`` of shape (n_features, n_samples), int32: the order of
    ``numpy.argsort(X[:, j], kind="stable")`` for each feature j. One
    vectorised ``numpy.sort`` of packed keys (the value's high bits and the
    row) orders the values up to ties in the kept bits, which a linear pass
    then orders exactly; about three times faster than a stable argsort.
    """
    cdef intp_t n = X.shape[0], p = X.shape[1], i, j
    cdef uint64_t index_mask = index_mask_for(n)
    cdef uint64_t missing_key = ~index_mask
    keys_array = np.empty((p, n), dtype=np.uint64)
    cdef uint64_t[:, ::1] keys = keys_array
    with nogil:
        for j in range(p):
            for i in range(n):
                keys[j, i] = ((missing_key if isnan(X[i, j])
                               else sortable_bits(X[i, j]) & ~index_mask) | <uint64_t>i)
    keys_array.sort(axis=1)
    order_array = np.empty((p, n), dtype=np.int32)
    cdef int32_t[:, ::1] order = order_array
    with nogil:
        for j in range(p):
            if n > 0:
                order_close_values(&keys[j, 0], n, index_mask, &X[0, j], NULL, missing_key)
            for i in range(n):
                order[j, i] = <int32_t>(keys[j, i] & index_mask)
    return order_array


cdef class Features:
    """Training features, possibly presorted, shared read-only by all trees.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Validated features: finite or NaN (missing).
    presorted : bool
        Sort every feature now (see :func:`presort`), for trees whose large
        nodes keep their rows presorted.
    """

    def __cinit__(self, X, bint presorted):
        X = np.asfortranarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {X.shape}.")
        check_row_count(X.shape[0])
        self.X = X
        self.n_samples = X.shape[0]
        self.n_features = X.shape[1]
        self.presorted = presorted
        self.order = presort(X) if presorted else np.empty((0, 0), dtype=np.int32)
        self.has_missing = np.isnan(X).any(axis=0).view(np.uint8)

    @property
    def rows(self):
        """The features in row-major order (made once, read-only), for walks
        down the trees grown on them."""
        if self._rows is None:
            rows = np.ascontiguousarray(self.X)
            rows.flags.writeable = False
            self._rows = rows
        return self._rows

    def __reduce__(self):
        return (Features, (np.asarray(self.X), self.presorted))
