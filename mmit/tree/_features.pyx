"""Training features of Maximum Margin Interval Trees, presorted once per fit.

:class:`Features` holds the validated features (NaN for a missing value,
read where they are: row-major or column-major), shared read-only by every
tree grown on them, so that the trees of a forest grow in parallel threads
on one copy. When the trees keep
their large nodes' rows presorted (``presort_min_rows`` in ``_splitter``),
every feature is sorted once here (:func:`presort`): the rows by increasing
value, ties by row, missing values last, the order of a stable argsort.

Sparse features (a ``scipy.sparse`` matrix) are kept as compressed columns
(CSC: each column's stored values and their rows, the other values 0) and
never densified nor presorted: the exact split search reads a node's
values of a feature from them (``_splitter``).

A categorical feature holds category codes: the integers ``0 .. K - 1``
of its ``K`` categories (``n_categories``), NaN for a missing value; its
order is the order of the codes, each category's rows together.
"""

from libc.math cimport isnan
from libc.stdint cimport int32_t, uint8_t, uint64_t

import numpy as np
import scipy.sparse as sp

from .._utils._checks import canonical_sparse, check_row_count

from .._utils._sorting cimport dropped_bits, index_mask_for, key_index, order_keys, pack_key
from .._utils._sorting cimport rank_keys, sort_key_array, sortable_bits_nan_last


def presort(const double[:, :] X):
    """Rows of X by increasing value of each feature, ties by row, NaN last.

    Returns ``order`` of shape (n_features, n_samples), int32: the order of
    ``numpy.argsort(X[:, j], kind="stable")`` for each feature j; and
    ``ranks``: per feature, None when its present values all differ, else
    the dense rank of each row's value (int32 per row; NaN's past the
    values'). One feature at a time, a vectorised ``numpy.sort`` of packed
    keys (the value's high bits and the row, see ``_sorting``) orders the
    values up to ties in the kept bits, which a linear pass then orders
    exactly: faster than a stable argsort, most on continuous values.
    """
    cdef intp_t n = X.shape[0], p = X.shape[1], i, j
    cdef uint64_t index_mask = index_mask_for(n), bits
    keys_array = np.empty(n, dtype=np.uint64)
    order_array = np.empty((p, n), dtype=np.int32)
    cdef uint64_t[::1] keys = keys_array
    cdef int32_t[:, ::1] order = order_array
    cdef int32_t[::1] rank_view
    cdef bint tied
    ranks = []
    for j in range(p):
        with nogil:
            for i in range(n):
                bits = sortable_bits_nan_last(X[i, j])
                keys[i] = pack_key(bits, i, index_mask)
                # order[j] holds the dropped bits until the keys are ordered
                order[j, i] = dropped_bits(bits, index_mask)
        sort_key_array(keys_array)
        tied = False
        with nogil:
            if n > 0:
                order_keys(&keys[0], n, index_mask, &order[j, 0], n)
                tied = has_ties(&keys[0], n, index_mask, &order[j, 0])
        # a tied feature's ranks start as the dropped bits (rank_keys)
        rank_array = np.array(order_array[j]) if tied else None
        ranks.append(rank_array)
        with nogil:
            for i in range(n):
                order[j, i] = <int32_t>key_index(keys[i], index_mask)
        if tied:
            rank_view = rank_array
            with nogil:
                rank_keys(&keys[0], n, index_mask, &rank_view[0], n)
    return order_array, ranks


cdef bint has_ties(const uint64_t* keys, intp_t count, uint64_t index_mask,
                   const int32_t* dropped) noexcept nogil:
    """Whether two of the exactly ordered ``keys`` hold the same present
    value (the same high bits and dropped bits; NaN's bits are all set)."""
    cdef intp_t k
    cdef uint64_t high_mask = ~index_mask
    for k in range(1, count):
        if ((keys[k] ^ keys[k - 1]) & high_mask) == 0 and (
                keys[k] & high_mask) != high_mask and (
                dropped[key_index(keys[k], index_mask)]
                == dropped[key_index(keys[k - 1], index_mask)]):
            return True
    return False


cdef const int32_t* rank_start(const int32_t[::1] ranks):
    return &ranks[0]


def missing_features(X):
    """Per feature of X (dense or compressed columns), whether a value it
    stores is NaN (uint8)."""
    if sp.issparse(X):
        return np.array([np.isnan(stored_values(X, j)).any() for j in range(X.shape[1])],
                        dtype=np.uint8)
    cdef const double[:, :] values = X
    cdef intp_t n = X.shape[0], p = X.shape[1], i, j
    missing_array = np.zeros(p, dtype=np.uint8)
    cdef uint8_t[::1] missing = missing_array
    with nogil:
        for i in range(n):
            for j in range(p):
                if isnan(values[i, j]):
                    missing[j] = 1
    return missing_array


def checked_categories(X, n_categories):
    """``n_categories`` as int32 per feature of X (zeros when None) after
    checking that each categorical feature holds only its codes (integers in
    ``[0, K)``) or NaN: the split searches index by them."""
    p = X.shape[1]
    if n_categories is None:
        return np.zeros(p, dtype=np.int32)
    n_categories = np.asarray(n_categories)
    if n_categories.shape != (p,) or n_categories.dtype.kind not in "iu":
        raise ValueError(f"n_categories must hold one integer per feature ({p}).")
    if np.any(n_categories < 0) or np.any(n_categories > np.iinfo(np.int32).max):
        raise ValueError("n_categories must be in [0, 2**31 - 1].")
    for j in np.flatnonzero(n_categories):
        codes = stored_values(X, j)
        codes = codes[~np.isnan(codes)]
        if codes.size and (codes.min() < 0 or codes.max() >= n_categories[j]
                           or np.any(codes != np.floor(codes))):
            raise ValueError(f"categorical feature {j} must hold integer codes in "
                             f"[0, {n_categories[j]}) or NaN.")
    return np.ascontiguousarray(n_categories, dtype=np.int32)


def stored_values(X, j):
    """The values of column j of X that it stores: all of a dense X's, the
    explicit ones of compressed columns (the others are 0)."""
    if sp.issparse(X):
        return X.data[X.indptr[j]:X.indptr[j + 1]]
    return X[:, j]


cdef class Features:
    """Training features, possibly presorted, shared read-only by all trees.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features), float64
        Validated features: finite or NaN (missing); a categorical feature's
        category codes. A dense X in row-major or column-major order is read
        where it is (other layouts are copied, column-major); a sparse
        matrix is kept as compressed columns.
    presorted : bool
        Sort every feature now (see :func:`presort`), for trees whose large
        nodes keep their rows presorted (ignored for sparse X).
    n_categories : array-like of int of shape (n_features,), default=None
        Categories of each categorical feature, 0 for a numeric one (None:
        every feature numeric).
    single_build : bool, default=False
        One tree grows on these features, on all their rows: its split
        search may take the presorted order and partition it in place
        (:meth:`take_order`) rather than copy it.
    """

    def __cinit__(self, X, bint presorted, n_categories=None, bint single_build=False):
        self.sparse = sp.issparse(X)
        self.values = NULL
        self.row_step = self.column_step = 0
        if self.sparse:
            X = canonical_sparse(X, "csc")
            presorted = False
            self.indptr = X.indptr.astype(np.int64)
            self.indices = X.indices.astype(np.int32, copy=False)
            self.data = X.data
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D, got shape {X.shape}.")
            if not (X.flags.c_contiguous or X.flags.f_contiguous):
                X = np.asfortranarray(X)
            self.bind(X)
        check_row_count(X.shape[0])
        self.n_categories = checked_categories(X, n_categories)
        self.n_samples = X.shape[0]
        self.n_features = X.shape[1]
        self.presorted = presorted
        self.single_build = single_build
        self.order = np.empty((0, 0), dtype=np.int32)
        ranks = [None] * X.shape[1]
        if presorted:
            self.order, ranks = presort(X)
        self.ranked = presorted
        self.ranks.assign(X.shape[1], NULL)
        for j, rank in enumerate(ranks):
            if rank is not None:
                self.ranks[j] = rank_start(rank)
        self._ranks = ranks
        self.missing = missing_features(X)
        self._matrix = X

    cdef int bind(self, const double[:, :] X) except -1:
        """Read the values of X (kept alive by ``_matrix``) where they are."""
        if X.shape[0] and X.shape[1]:
            self.values = &X[0, 0]
            self.row_step = X.strides[0] // sizeof(double)
            self.column_step = X.strides[1] // sizeof(double)
        return 0

    cdef int32_t[:, ::1] take_order(self) except *:
        """The presorted order, for the split search of the one tree built on
        these features (``single_build``) to partition in place: the
        features are no longer presorted."""
        order = self.order
        self.presorted = False
        self.order = np.empty((0, 0), dtype=np.int32)
        return order

    @property
    def rows(self):
        """The features in row-major order (made once, read-only), for walks
        down the trees grown on them."""
        if self._rows is None:
            rows = (self._matrix.toarray(order="C") if self.sparse
                    else np.ascontiguousarray(self._matrix))
            rows.flags.writeable = False
            self._rows = rows
        return self._rows

    def __reduce__(self):
        return (Features, (self._matrix, self.presorted, np.asarray(self.n_categories),
                           self.single_build))


def zero_bins_of(thresholds):
    """Each feature's bin of 0 (uint8): the number of its bins' upper edges
    below 0 (the last used edge is +inf, the unused ones too)."""
    return np.count_nonzero(thresholds < 0.0, axis=1).astype(np.uint8)


cdef class BinnedFeatures:
    """Training features binned once (``mmit.tree._binning``), for the histogram
    split search of every tree of a fit.

    Parameters
    ----------
    codes : ndarray of shape (n_samples, n_features), uint8, or sparse matrix
        The bin of each value: ``b`` when ``thresholds[j, b - 1] < x <=
        thresholds[j, b]``, ``MISSING_BIN`` (255) for a missing value. A
        sparse matrix of uint8 (binned sparse features) holds the codes that
        differ from their feature's bin of 0 (``zero_bins``, from the
        thresholds), the others left out; it is kept as compressed rows
        (CSR), each row's features increasing: memory in proportion to the
        stored codes.
    thresholds : ndarray of shape (n_features, 255), float64
        The upper edge of each bin of present values, increasing (the last
        used one +inf).
    n_bins : ndarray of shape (n_features,), int32
        Bins of present values of each feature (at most 255).
    n_categories : ndarray of shape (n_features,), default=None
        Categories of each categorical feature (its bins: bin ``c`` holds
        category ``c``), 0 for a numeric one (None: every feature numeric).
    """

    def __cinit__(self, codes, thresholds, n_bins, n_categories=None):
        thresholds = np.ascontiguousarray(thresholds, dtype=np.float64)
        n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        self.sparse = sp.issparse(codes)
        if not self.sparse:
            codes = np.ascontiguousarray(codes, dtype=np.uint8)
        if codes.ndim != 2:
            raise ValueError(f"codes must be 2-D, got shape {codes.shape}.")
        n, p = codes.shape
        check_row_count(n)
        if thresholds.shape != (p, MISSING_BIN) or n_bins.shape != (p,):
            raise ValueError("thresholds and n_bins must describe every feature.")
        if p and (n_bins.min() < 1 or n_bins.max() > MISSING_BIN):
            raise ValueError("each feature needs 1 to 255 bins.")
        self.zero_bins = zero_bins_of(thresholds)
        if self.sparse:
            codes = sp.csr_matrix(codes, dtype=np.uint8)
            if not codes.has_canonical_format:
                codes = codes.copy()
                codes.sum_duplicates()
            present, features = codes.data, codes.indices
        else:
            present = codes
            features = np.broadcast_to(np.arange(p), codes.shape)
        missing = present == MISSING_BIN
        if np.any(~missing & (present >= n_bins[features])):
            raise ValueError("a code is outside its feature's bins.")
        n_categories = (np.zeros(p, dtype=np.int32) if n_categories is None
                        else np.ascontiguousarray(n_categories, dtype=np.int32))
        if n_categories.shape != (p,):
            raise ValueError("n_categories must describe every feature.")
        categorical = n_categories > 0
        if np.any(n_bins[categorical] != n_categories[categorical]):
            raise ValueError("a categorical feature has one bin per category.")
        self.n_categories = n_categories
        if self.sparse:
            self.codes = np.empty((0, p), dtype=np.uint8)
            self.row_starts = codes.indptr.astype(np.int64)
            self.entry_features = codes.indices.astype(np.int32, copy=False)
            self.entry_codes = codes.data
        else:
            self.codes = codes
        self.thresholds = thresholds
        self.n_bins = n_bins
        self.n_samples = n
        self.n_features = p

    @property
    def n_stored(self):
        """Codes held: every value's when dense, the stored ones when sparse."""
        if self.sparse:
            return self.entry_codes.shape[0]
        return self.n_samples * self.n_features

    def __reduce__(self):
        codes = np.asarray(self.codes)
        if self.sparse:
            codes = sp.csr_matrix((np.asarray(self.entry_codes),
                                   np.asarray(self.entry_features),
                                   np.asarray(self.row_starts)),
                                  shape=(self.n_samples, self.n_features))
        return (BinnedFeatures, (codes, np.asarray(self.thresholds),
                                 np.asarray(self.n_bins), np.asarray(self.n_categories)))

    def toarray(self):
        """The codes as an ndarray of shape (n_samples, n_features), uint8."""
        if not self.sparse:
            return np.asarray(self.codes)
        codes = np.empty((self.n_samples, self.n_features), dtype=np.uint8)
        codes[:] = self.zero_bins
        rows = np.repeat(np.arange(self.n_samples), np.diff(self.row_starts))
        codes[rows, self.entry_features] = self.entry_codes
        return codes
