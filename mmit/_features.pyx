"""Training features of Maximum Margin Interval Trees, presorted once per fit.

:class:`Features` holds the validated features (column-major, NaN for a
missing value), shared read-only by every tree grown on them, so that the
trees of a forest grow in parallel threads on one copy. When the trees keep
their large nodes' rows presorted (``presort_min_rows`` in ``_splitter``),
every feature is sorted once here (:func:`presort`): the rows by increasing
value, ties by row, missing values last, the order of a stable argsort.
"""

from libc.stdint cimport int32_t, uint64_t

import numpy as np

from ._validation import check_row_count

from ._sorting cimport (
    dropped_bits,
    index_mask_for,
    key_index,
    order_keys,
    pack_key,
    sort_key_array,
    sortable_bits_nan_last,
)


def presort(const double[::1, :] X):
    """Rows of X by increasing value of each feature, ties by row, NaN last.

    Returns ``order`` of shape (n_features, n_samples), int32: the order of
    ``numpy.argsort(X[:, j], kind="stable")`` for each feature j. One
    vectorised ``numpy.sort`` of packed keys (the value's high bits and the
    row, see ``_sorting``) orders the values up to ties in the kept bits,
    which a linear pass then orders exactly: 2.4 times faster than a stable
    argsort on continuous values, 1.2 times on values rounded to one decimal
    (2e5 x 20).
    """
    cdef intp_t n = X.shape[0], p = X.shape[1], i, j
    cdef uint64_t index_mask = index_mask_for(n), bits
    keys_array = np.empty((p, n), dtype=np.uint64)
    order_array = np.empty((p, n), dtype=np.int32)
    cdef uint64_t[:, ::1] keys = keys_array
    cdef int32_t[:, ::1] order = order_array
    with nogil:
        for j in range(p):
            for i in range(n):
                bits = sortable_bits_nan_last(X[i, j])
                keys[j, i] = pack_key(bits, i, index_mask)
                # order[j] holds the dropped bits until the keys are ordered
                order[j, i] = dropped_bits(bits, index_mask)
    sort_key_array(keys_array)
    with nogil:
        for j in range(p):
            if n > 0:
                order_keys(&keys[j, 0], n, index_mask, &order[j, 0], n)
            for i in range(n):
                order[j, i] = <int32_t>key_index(keys[j, i], index_mask)
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
