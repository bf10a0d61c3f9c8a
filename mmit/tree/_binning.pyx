"""Binning the features once per fit, for the histogram split search.

Each feature gets at most ``max_bins`` bins of present values, bounded by
thresholds between consecutive distinct values of the rows of positive
weight (the midpoints the exact split search uses): every distinct value
its own bin when there are at most ``max_bins`` of them, else bins of about
equal weight (weighted quantiles) of a subsample of the rows. Rows of
weight 0 take no part, and an integer weight counts as repeated rows. A
missing value (NaN) goes to bin 255. Codes are uint8, row-major: 1 byte per
value.

The edges come from numpy (a sort of at most ``SUBSAMPLE`` values per
feature); a categorical feature's codes are its bins (at most ``max_bins``
categories, as scikit-learn's histogram gradient boosting takes). The codes
of all rows come from a compiled pass, blocks of rows shared
between threads, each value placed by a branch-free binary search of its
feature's edges (8 steps): O(n p) in all. A sparse X (compressed
columns) is binned a column at a time, its stored values only: its codes
are kept sparse (compressed rows), the codes other than each feature's bin
of 0, so that they take memory in proportion to the stored values; they
are the dense X's codes.
"""

from cython.parallel cimport prange
from libc.math cimport isnan
from libc.stdint cimport uint8_t

import numpy as np
import scipy.sparse as sp

from .._utils._checks import canonical_sparse
from ._features import BinnedFeatures, checked_categories, stored_values, zero_bins_of

from ._features cimport MISSING_BIN as MISSING_CODE
from .._utils._parallel cimport PARALLEL_MIN_WORK, threads_for
from .._utils._typedefs cimport intp_t

MISSING_BIN = MISSING_CODE
# rows the quantiles of a feature are taken from
SUBSAMPLE = 200_000


def midpoints(low, high):
    """Thresholds ``low <= t < high`` between consecutive distinct values (as
    the exact split search places them)."""
    threshold = low / 2.0 + high / 2.0
    keep = (threshold != high) & np.isfinite(threshold)
    return np.where(keep, threshold, low)


def bin_thresholds(values, weight, max_bins):
    """Upper edges of at most ``max_bins`` bins of the present ``values`` of
    positive ``weight`` (the last one +inf)."""
    present = ~np.isnan(values) & (weight > 0.0)
    distinct, inverse = np.unique(values[present], return_inverse=True)
    if distinct.size <= max_bins:
        cut = np.arange(distinct.size - 1)
    else:
        cumulative = np.cumsum(np.bincount(inverse, weights=weight[present]))
        targets = cumulative[-1] * np.arange(1, max_bins) / max_bins
        cut = np.unique(np.searchsorted(cumulative, targets))
        cut = cut[cut < distinct.size - 1]
    return np.r_[midpoints(distinct[cut], distinct[cut + 1]), np.inf]


def binning_sample(n_samples):
    """The rows whose quantiles give the bins of ``n_samples`` rows: every
    row up to ``SUBSAMPLE``, else a uniform sample of that many drawn
    without replacement (the same for every fit of that many rows), in
    increasing order."""
    if n_samples <= SUBSAMPLE:
        return np.arange(n_samples)
    return np.sort(np.random.RandomState(0).choice(n_samples, SUBSAMPLE, replace=False))


def bin_features(X, sample_weight=None, max_bins=255, n_threads=1, n_categories=None):
    """BinnedFeatures of validated ``X`` (float64, NaN for missing values).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights (ones if None).
    max_bins : int, default=255
        Bins of present values per feature, 2 to 255.
    n_threads : int, default=1
        Threads placing the values in their bins.
    n_categories : array-like of int of shape (n_features,), default=None
        Categories of each categorical feature (codes ``0 .. K - 1`` in X,
        at most ``max_bins``), 0 for a numeric one (None: every feature
        numeric).

    Returns
    -------
    features : BinnedFeatures
    """
    if not 2 <= max_bins <= MISSING_BIN:
        raise ValueError(f"max_bins must be in [2, 255], got {max_bins}.")
    n_samples, n_features = X.shape
    if sp.issparse(X):
        X = canonical_sparse(X, "csc")
    n_categories = checked_categories(X, n_categories)
    too_many = np.flatnonzero(n_categories > max_bins)
    if too_many.size:
        j = too_many[0]
        raise ValueError(f"categorical feature {j} has {n_categories[j]} categories; "
                         f"the histogram splitter takes at most max_bins={max_bins} "
                         "(raise max_bins up to 255, or use splitter='exact', which "
                         "takes any number).")
    weight = np.ones(n_samples) if sample_weight is None else sample_weight
    sample = binning_sample(n_samples)
    thresholds = np.full((n_features, MISSING_BIN), np.inf)
    n_bins = np.ones(n_features, dtype=np.int32)
    for j in range(n_features):
        if n_categories[j]:  # bin c holds category c
            edges = np.arange(n_categories[j], dtype=np.float64) + 0.5
            edges[-1] = np.inf
        else:
            edges = bin_thresholds(column(X, j)[sample], weight[sample], max_bins)
        thresholds[j, :edges.size] = edges
        n_bins[j] = edges.size
    if sp.issparse(X):
        return BinnedFeatures(sparse_codes(X, thresholds), thresholds, n_bins,
                              n_categories)
    codes = np.empty((n_samples, n_features), dtype=np.uint8)
    place_values(np.ascontiguousarray(X), thresholds, codes, max(int(n_threads), 1))
    return BinnedFeatures(codes, thresholds, n_bins, n_categories)


def column(X, j):
    """Feature j of X (dense, or compressed columns) as a dense array."""
    if sp.issparse(X):
        values = np.zeros(X.shape[0])
        values[X.indices[X.indptr[j]:X.indptr[j + 1]]] = stored_values(X, j)
        return values
    return X[:, j]


def sparse_codes(X, thresholds):
    """The codes of compressed columns X, as compressed rows of the codes
    that differ from their feature's bin of 0 (the search of
    ``place_values``, as ``numpy.searchsorted``: the number of edges below
    the value). O(nnz + n) time and memory."""
    zero_bins = zero_bins_of(thresholds)
    codes = np.empty(X.nnz, dtype=np.uint8)
    for j in range(X.shape[1]):
        stored = slice(X.indptr[j], X.indptr[j + 1])
        values = X.data[stored]
        codes[stored] = np.where(np.isnan(values), MISSING_CODE,
                                 np.searchsorted(thresholds[j], values))
    kept = codes != np.repeat(zero_bins, np.diff(X.indptr))
    kept_before = np.r_[0, np.cumsum(kept)]
    columns = sp.csc_matrix((codes[kept], X.indices[kept], kept_before[X.indptr]),
                            shape=X.shape)
    return columns.tocsr()


cdef enum:
    ROWS_PER_BLOCK = 4096       # rows a thread places in a row


def place_values(const double[:, ::1] X, const double[:, ::1] thresholds,
                 uint8_t[:, ::1] codes, int n_threads):
    """``codes[i, j]``: the first bin ``b`` with ``X[i, j] <= thresholds[j, b]``
    (``MISSING_BIN`` for NaN); a feature's unused edges are +inf, so the
    search runs over 256 edges with a virtual +inf at 255 and lands on a
    used bin."""
    cdef intp_t n = X.shape[0], p = X.shape[1], n_blocks, block, i, j, end
    cdef intp_t position, step
    cdef const double* edges
    cdef double x
    n_blocks = (n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    for block in prange(n_blocks, nogil=True,
                        num_threads=threads_for(n * p, PARALLEL_MIN_WORK, n_threads),
                        schedule="static"):
        end = min(n, (block + 1) * ROWS_PER_BLOCK)
        for i in range(block * ROWS_PER_BLOCK, end):
            for j in range(p):
                x = X[i, j]
                if isnan(x):
                    codes[i, j] = MISSING_CODE
                    continue
                edges = &thresholds[j, 0]
                # the number of edges below x, among 255 (+inf beyond)
                position = 0
                step = 128
                while step > 0:
                    if position + step <= MISSING_CODE and edges[position + step - 1] < x:
                        position = position + step
                    step = step >> 1
                codes[i, j] = <uint8_t> position
