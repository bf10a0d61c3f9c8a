"""Binning the features once per fit, for the histogram split search.

Each feature gets at most ``max_bins`` bins of present values, bounded by
thresholds between consecutive distinct values of the rows of positive
weight (the midpoints the exact split search uses): every distinct value
its own bin when there are at most ``max_bins`` of them, else bins of about
equal weight (weighted quantiles) of a subsample of the rows. Rows of
weight 0 take no part, and an integer weight counts as repeated rows. A
missing value (NaN) goes to bin 255. Codes are uint8, row-major: 1 byte per
value.

The edges come from a stable radix sort of at most ``SUBSAMPLE`` values
per feature, the features shared between threads; a categorical feature's
codes are its bins (at most ``max_bins`` categories, as scikit-learn's
histogram gradient boosting takes). The codes of all rows come from a
compiled pass, blocks of rows shared between threads, each value placed
by a branch-free binary search of its feature's edges (8 steps): O(n p) in
all. A sparse X (compressed columns) is binned a column at a time, its
stored values only: its codes are kept sparse (compressed rows), the
codes other than each feature's bin of 0, so that they take memory in
proportion to the stored values; they are the dense X's codes.
"""

from cython.parallel cimport prange, threadid
from libc.math cimport INFINITY, isnan
from libc.stdint cimport int32_t, uint8_t, uint64_t

import numpy as np
import scipy.sparse as sp

from .._utils._checks import canonical_sparse
from ._features import BinnedFeatures, checked_categories, stored_values, zero_bins_of

from ._features cimport MISSING_BIN as MISSING_CODE, midpoint
from .._utils._parallel cimport PARALLEL_MIN_WORK, threads_for
from .._utils._sorting cimport KEY_DIGITS, RADIX, radix_sort_with
from .._utils._sorting cimport sortable_bits, value_of_bits
from .._utils._typedefs cimport intp_t

MISSING_BIN = MISSING_CODE
# rows the quantiles of a feature are taken from
SUBSAMPLE = 200_000


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
    weight = (np.ones(n_samples) if sample_weight is None
              else np.ascontiguousarray(sample_weight, dtype=np.float64))
    sample = binning_sample(n_samples).astype(np.intp)
    thresholds = np.full((n_features, MISSING_BIN), np.inf)
    n_bins = np.ones(n_features, dtype=np.int32)
    for j in np.flatnonzero(n_categories):  # bin c holds category c
        thresholds[j, :n_categories[j] - 1] = np.arange(n_categories[j] - 1) + 0.5
        n_bins[j] = n_categories[j]
    numeric = np.flatnonzero(n_categories == 0).astype(np.intp)
    n_threads = max(int(n_threads), 1)
    if sp.issparse(X):
        for j in numeric:
            numeric_edges(column(X, j)[:, None], sample, weight, max_bins,
                          np.zeros(1, dtype=np.intp), thresholds[j:j + 1],
                          n_bins[j:j + 1], n_threads)
        return BinnedFeatures(sparse_codes(X, thresholds), thresholds, n_bins,
                              n_categories)
    numeric_edges(X, sample, weight, max_bins, numeric, thresholds, n_bins, n_threads)
    codes = np.empty((n_samples, n_features), dtype=np.uint8)
    place_values(np.ascontiguousarray(X), thresholds, codes, n_threads)
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


def numeric_edges(const double[:, :] X, const intp_t[::1] rows, const double[::1] weight,
                  int max_bins, const intp_t[::1] features, double[:, ::1] thresholds,
                  int32_t[::1] n_bins, int n_threads):
    """The edges of the numeric ``features`` of ``X`` from its ``rows``
    (increasing): ``thresholds[j]`` and ``n_bins[j]`` of each feature ``j``,
    the features shared between threads.

    A feature's present values of positive weight are sorted with their
    weights, stably (ties in row order), by a radix sort of their bits; the
    weight of each distinct value is the sum of its rows' weights in row
    order, so the edges are those of a weighted quantile search by
    ``numpy.unique`` and ``numpy.bincount``, bit for bit."""
    cdef intp_t n_rows = rows.shape[0], n_features = features.shape[0], f
    cdef int threads = threads_for(n_rows * n_features, PARALLEL_MIN_WORK, n_threads)
    if max_bins < 2 or max_bins > thresholds.shape[1]:
        raise ValueError(f"max_bins must be in [2, {thresholds.shape[1]}], got {max_bins}.")
    if n_bins.shape[0] != thresholds.shape[0] or (
            n_features and (np.min(features) < 0 or np.max(features) >= X.shape[1]
                            or np.max(features) >= thresholds.shape[0])):
        raise ValueError("features must be columns of X with rows of thresholds.")
    if n_rows and (rows[0] < 0 or np.any(np.diff(rows) <= 0)
                   or rows[n_rows - 1] >= X.shape[0] or X.shape[0] > weight.shape[0]):
        raise ValueError("rows must be increasing rows of X, with weights.")
    # per thread: keys and weights and their sorted copies, the digits' counts
    cdef double[:, ::1] scratch = np.empty((threads, 4 * n_rows + 1))
    cdef intp_t[:, ::1] counts = np.empty((threads, KEY_DIGITS * RADIX), dtype=np.intp)
    for f in prange(n_features, nogil=True, num_threads=threads, schedule="dynamic"):
        n_bins[features[f]] = feature_edges(X, rows, weight, features[f], max_bins,
                                            &thresholds[features[f], 0],
                                            thresholds.shape[1], &scratch[threadid(), 0],
                                            &counts[threadid(), 0])


cdef int32_t feature_edges(const double[:, :] X, const intp_t[::1] rows,
                           const double[::1] weight, intp_t j, int max_bins,
                           double* edges, intp_t n_edges, double* scratch,
                           intp_t* counts) noexcept nogil:
    """Writes the edges of feature ``j`` to ``edges`` (+inf past the last
    used one) and returns their number: every distinct value its own bin up
    to ``max_bins`` of them, else bins of about equal weight."""
    cdef intp_t n_rows = rows.shape[0], m = 0, i, d, cut, last_cut, k
    cdef uint64_t* keys = <uint64_t*> scratch
    cdef double* weights = scratch + n_rows
    cdef uint64_t* distinct = <uint64_t*> (scratch + 2 * n_rows)
    cdef double* sums = scratch + 3 * n_rows
    cdef double x, w, total, target
    cdef int32_t used = 0
    for i in range(n_rows):
        x = X[rows[i], j]
        w = weight[rows[i]]
        if not isnan(x) and w > 0.0:
            keys[m] = sortable_bits(x)
            weights[m] = w
            m += 1
    if radix_sort_with(keys, weights, m, distinct, sums, counts):
        keys, distinct = distinct, keys
        weights, sums = sums, weights
    # the distinct values and their weights (summed in row order)
    d = 0
    for i in range(m):
        if d == 0 or keys[i] != distinct[d - 1]:
            distinct[d] = keys[i]
            sums[d] = 0.0
            d += 1
        sums[d - 1] += weights[i]
    if d <= max_bins:
        for k in range(d - 1):
            edges[k] = midpoint(value_of_bits(distinct[k]), value_of_bits(distinct[k + 1]))
        used = max(d - 1, 0)
    else:  # cuts where the cumulative weight reaches each k / max_bins of the total
        for k in range(1, d):
            sums[k] = sums[k - 1] + sums[k]
        total = sums[d - 1]
        cut = 0
        last_cut = -1
        for k in range(1, max_bins):
            target = total * k / max_bins
            while cut < d and sums[cut] < target:
                cut += 1
            if cut != last_cut and cut < d - 1:
                edges[used] = midpoint(value_of_bits(distinct[cut]),
                                       value_of_bits(distinct[cut + 1]))
                used += 1
                last_cut = cut
    for k in range(used, n_edges):
        edges[k] = INFINITY
    return used + 1
