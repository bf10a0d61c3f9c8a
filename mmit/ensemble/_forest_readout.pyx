"""The predictive distributions of a forest read out: quantiles, CDF values
and weighted sums of CDF values of the average over the trees of the
estimates of a query's leaves (each leaf's Turnbull intervals and masses,
made once by ``_turnbull.leaf_estimates``).

``forest_readout`` gives quantiles or CDF values: a query costs one sweep
over its leaves' Turnbull intervals, put in order by the ranks of their
ends (``mixture_query``: O(intervals + distinct values / 64 + points)). A
functional linear in the distribution, a weighted sum of its CDF at many
thresholds (``forest_cdf_sums``: the area under a survival step function),
is the sum of each Turnbull interval's own share, found by bisection among
the thresholds, without the CDF at every threshold (``mixture_cdf_sum``:
O(intervals * log(thresholds))). Queries run on threads, each with
O(distinct values) working memory.

Conventions: within a Turnbull interval the likelihood cannot tell where
the mass lies: the cumulative distribution spreads it evenly over a
bounded one, and puts that of an unbounded one at its infinite end
(quantiles there are infinite: the data cannot place that mass).
"""

from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, NAN
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from .._utils._sorting cimport count_trailing_zeros, prefetch
from .._utils._typedefs cimport intp_t

import numpy as np

from .._utils._checks import check_same_length

# A quantile's level is reached when the CDF is within this of it (the
# masses are sums of weights over totals: equal weights may round either way)
cdef double LEVEL_TOLERANCE = 1e-12


ctypedef struct MixtureWork:
    # What one thread needs for the average of a query's leaves' estimates:
    # per distinct end value (its rank), what starts and stops there
    double* step                # point masses
    double* rise                # slopes starting (a bounded interval's mass spread evenly)
    double* fall                # slopes stopping
    int32_t* opened             # bounded intervals starting
    int32_t* closed             # and stopping
    uint64_t* marked            # the ranks in use (a bitset)


cdef int mixture_work_init(MixtureWork* work, intp_t n_values) noexcept nogil:
    """Allocate (zeroed) a thread's working memory; -1 (nothing held) when
    memory runs out."""
    n_values = max(n_values, 1)
    work.step = <double*> calloc(3 * n_values, sizeof(double))
    work.opened = <int32_t*> calloc(2 * n_values, sizeof(int32_t))
    work.marked = <uint64_t*> calloc((n_values + 63) // 64, sizeof(uint64_t))
    if work.step == NULL or work.opened == NULL or work.marked == NULL:
        mixture_work_free(work)
        return -1
    work.rise = work.step + n_values
    work.fall = work.rise + n_values
    work.closed = work.opened + n_values
    return 0


cdef void mixture_work_free(MixtureWork* work) noexcept nogil:
    free(work.step)
    free(work.opened)
    free(work.marked)
    work.step = NULL
    work.opened = NULL
    work.marked = NULL


cdef inline void mark(MixtureWork* work, int32_t rank, intp_t* first_word,
                      intp_t* last_word) noexcept nogil:
    """Mark ``rank`` in use, widening the span of words in use (-1: none)."""
    work.marked[rank >> 6] |= (<uint64_t> 1) << (rank & 63)
    if first_word[0] < 0 or (rank >> 6) < first_word[0]:
        first_word[0] = rank >> 6
    last_word[0] = max(last_word[0], <intp_t> (rank >> 6))


cdef inline intp_t trees_used(const int64_t* leaves, intp_t n_trees,
                              const int64_t* tree_offsets,
                              const int64_t* indptr) noexcept nogil:
    """How many trees give a query a leaf holding an item (``leaves[t]``, -1
    to leave tree t out)."""
    cdef intp_t t, segment, used = 0
    for t in range(n_trees):
        if leaves[t] >= 0:
            segment = tree_offsets[t] + leaves[t]
            used += indptr[segment + 1] > indptr[segment]
    return used


cdef void mixture_query(const int64_t* leaves, intp_t n_trees, const int64_t* tree_offsets,
                        const int64_t* indptr, const int32_t* left_rank,
                        const int32_t* right_rank, const double* mass, const double* values,
                        const double* points, const intp_t* order, intp_t n_points,
                        bint quantiles, double shift, MixtureWork* work,
                        double* out) noexcept nogil:
    """Quantiles at the levels ``points`` (or CDF values at the thresholds
    ``points``), visited in increasing order ``order``, of the average over
    the trees of the estimates of a query's leaves (``leaves[t]``, -1 to
    leave tree t out; a leaf's items: ``indptr[tree_offsets[t] + leaf]`` on),
    moved by ``shift``; NaN without any item. An item's ends are ranks among
    the distinct ``values``: the items are scattered by rank and swept once
    in order. Conventions (module doc): a bounded interval's mass is spread
    evenly over it, an unbounded one's lies at its infinite end. A quantile
    is the smallest value whose CDF reaches the level to within
    ``LEVEL_TOLERANCE`` (-inf when the mass at -inf does, +inf when no
    finite value does). O(items + span of their ranks / 64 + points)."""
    cdef intp_t t, k, segment, used, p = 0, first_word = -1, last_word = -1, word
    cdef int32_t rank
    cdef int open_ramps = 0
    cdef uint64_t bits
    cdef double share, item, low, high, below = 0.0, cumulative, reach, slope = 0.0
    cdef double previous = 0.0, value
    used = trees_used(leaves, n_trees, tree_offsets, indptr)
    if used == 0:
        for p in range(n_points):
            out[p] = NAN
        return
    share = 1.0 / used
    for t in range(n_trees):
        if leaves[t] < 0:
            continue
        segment = tree_offsets[t] + leaves[t]
        for k in range(indptr[segment], indptr[segment + 1]):
            item = mass[k] * share
            low = values[left_rank[k]]
            high = values[right_rank[k]]
            if low == -INFINITY:
                below += item               # mass at -inf
            elif high == INFINITY:
                continue                    # mass above every finite value
            elif low == high:
                work.step[left_rank[k]] += item
                mark(work, left_rank[k], &first_word, &last_word)
            else:
                work.rise[left_rank[k]] += item / (high - low)
                work.opened[left_rank[k]] += 1
                work.fall[right_rank[k]] += item / (high - low)
                work.closed[right_rank[k]] += 1
                mark(work, left_rank[k], &first_word, &last_word)
                mark(work, right_rank[k], &first_word, &last_word)
    cumulative = below
    if quantiles:
        while p < n_points and below > 0.0 and points[order[p]] - LEVEL_TOLERANCE <= below:
            out[order[p]] = -INFINITY
            p += 1
    for word in range(max(first_word, 0), last_word + 1):
        bits = work.marked[word]
        work.marked[word] = 0
        while bits:
            rank = <int32_t> ((word << 6) + count_trailing_zeros(bits))
            bits &= bits - 1
            value = values[rank]
            reach = cumulative + (slope * (value - previous) if open_ramps > 0 else 0.0)
            if quantiles:
                # levels reached on the way from the previous value (a level
                # not yet reached is above `cumulative`)
                while (slope > 0.0 and p < n_points
                       and reach >= points[order[p]] - LEVEL_TOLERANCE):
                    out[order[p]] = shift + previous + min(
                        max(points[order[p]] - cumulative, 0.0) / slope, value - previous)
                    p += 1
                cumulative = reach + work.step[rank]
                while p < n_points and cumulative >= points[order[p]] - LEVEL_TOLERANCE:
                    out[order[p]] = shift + value
                    p += 1
            else:
                while p < n_points and points[order[p]] - shift < value:
                    out[order[p]] = min(cumulative + (
                        slope * (points[order[p]] - shift - previous) if open_ramps > 0
                        else 0.0), 1.0)
                    p += 1
                cumulative = reach + work.step[rank]
            open_ramps += work.opened[rank] - work.closed[rank]
            # (rounding may leave a trace of a closed interval's slope: none
            # once all are closed, never below 0)
            slope = (max(slope + work.rise[rank] - work.fall[rank], 0.0) if open_ramps > 0
                     else 0.0)
            previous = value
            work.step[rank] = 0.0
            work.rise[rank] = 0.0
            work.fall[rank] = 0.0
            work.opened[rank] = 0
            work.closed[rank] = 0
    for p in range(p, n_points):
        out[order[p]] = INFINITY if quantiles else min(cumulative, 1.0)


def forest_readout(const int64_t[:, ::1] leaves, const int64_t[::1] tree_offsets,
                   const int64_t[::1] indptr, const int32_t[::1] left_rank,
                   const int32_t[::1] right_rank, const double[::1] mass,
                   const double[::1] values, const double[::1] shift,
                   const double[::1] points, bint quantiles, int n_threads):
    """Quantiles (at the levels ``points``, with ``quantiles``) or CDF values
    (at the thresholds ``points``) of every query's predictive distribution:
    the average over the trees of the estimates of its leaves (the items
    of leaf s: ``indptr[s]`` to ``indptr[s + 1]``, their ends ranks among
    ``values``; ``mixture_query``), moved by the query's ``shift``; NaN for
    a query without any. Queries on ``n_threads`` threads, each with
    O(distinct values) working memory.

    Returns
    -------
    out : ndarray of shape (n_queries, n_points)
    """
    cdef intp_t n_queries = leaves.shape[0], n_trees = leaves.shape[1], q
    cdef intp_t n_points = points.shape[0], n_values = values.shape[0]
    check_same_length("shift", shift, "leaves", n_queries)
    check_same_length("right_rank", right_rank, "left_rank", left_rank.shape[0])
    check_same_length("mass", mass, "left_rank", left_rank.shape[0])
    if tree_offsets.shape[0] != n_trees:
        raise ValueError("the leaves' estimates do not describe the trees.")
    order_array = np.argsort(np.asarray(points), kind="stable").astype(np.intp)
    cdef const intp_t[::1] order = order_array
    out_array = np.empty((n_queries, n_points))
    cdef double[:, ::1] out = out_array
    cdef MixtureWork* work       # each thread's own (assigned in the block: private)
    cdef bint ready
    cdef int status = 0
    cdef int* failed = &status   # shared by the threads (a pointer)
    if n_queries == 0 or n_points == 0:
        return out_array
    if mass.shape[0] == 0:          # no leaf holds anything
        out_array.fill(np.nan)
        return out_array
    with nogil, parallel(num_threads=max(n_threads, 1)):
        work = <MixtureWork*> malloc(sizeof(MixtureWork))
        ready = work != NULL and mixture_work_init(work, n_values) == 0
        if not ready:
            failed[0] = 1
        # every thread takes part in the loop (a worksharing construct)
        for q in prange(n_queries, schedule="dynamic", chunksize=64):
            if not ready:
                continue
            mixture_query(&leaves[q, 0], n_trees, &tree_offsets[0], &indptr[0],
                          &left_rank[0], &right_rank[0], &mass[0], &values[0],
                          &points[0], &order[0], n_points, quantiles, shift[q], work,
                          &out[q, 0])
        if ready:
            mixture_work_free(work)
        free(work)
    if status:
        raise MemoryError("cannot allocate a predictive distribution's memory")
    return out_array


cdef struct ThresholdIndex:
    # increasing thresholds, and where each of n_buckets equal buckets of
    # [thresholds[0], thresholds[n - 1]] starts among them (n_buckets + 1
    # entries, the last n): a search looks in one bucket, not among all
    const double* thresholds
    intp_t n
    const intp_t* bucket_start
    intp_t n_buckets
    double origin
    double inverse_width


cdef inline bint reaches(const ThresholdIndex* index, intp_t k, double shift, double value,
                         bint strictly) noexcept nogil:
    """Whether ``thresholds[k] - shift`` is above ``value`` (``strictly``) or at
    least ``value``."""
    if strictly:
        return index.thresholds[k] - shift > value
    return index.thresholds[k] - shift >= value


# a search among at most this many thresholds looks at them one by one
cdef intp_t SCANNED_THRESHOLDS = 4


cdef inline intp_t first_reaching(const ThresholdIndex* index, double shift, double value,
                                  bint strictly) noexcept nogil:
    """The first k that ``reaches`` (the thresholds increase), ``n`` when none
    does: searched in the bucket of ``value + shift`` (one threshold either
    side for rounding), among all when the bucket does not hold it; a few
    thresholds one by one, more by bisection."""
    cdef double position = (value + shift - index.origin) * index.inverse_width
    cdef intp_t bucket, low, high, middle
    if not position >= 0.0:
        bucket = 0
    elif position >= index.n_buckets:
        bucket = index.n_buckets - 1
    else:
        bucket = <intp_t> position
    low = max(index.bucket_start[bucket] - 1, 0)
    high = min(index.bucket_start[bucket + 1] + 1, index.n)
    if ((low > 0 and reaches(index, low - 1, shift, value, strictly))
            or (high < index.n and not reaches(index, high, shift, value, strictly))):
        low, high = 0, index.n
    if high - low <= SCANNED_THRESHOLDS:
        while low < high and not reaches(index, low, shift, value, strictly):
            low += 1
        return low
    while low < high:
        middle = (low + high) // 2
        if reaches(index, middle, shift, value, strictly):
            high = middle
        else:
            low = middle + 1
    return low


# a query's leaves' items are fetched this many trees ahead, a cache line
# (of this many doubles) at a time
cdef enum:
    PREFETCH_TREES = 4
    DOUBLES_A_LINE = 8

# how finely the thresholds' range is bucketed for the searches
cdef intp_t BUCKETS_PER_THRESHOLD = 16
cdef intp_t MAX_BUCKETS = 1 << 16

# a ramp over at most this many thresholds is summed term by term, a wider one
# from prefix sums
cdef intp_t RAMP_TERMS = 32


cdef double mixture_cdf_sum(const int64_t* leaves, intp_t n_trees,
                            const int64_t* tree_offsets, const int64_t* indptr,
                            const double* items, const ThresholdIndex* index,
                            const double* spans, const double* span_prefix,
                            const double* moment_prefix, double shift) noexcept nogil:
    """``sum_k spans[k] * F(thresholds[k])`` for the CDF F of a query's mixture
    (as ``mixture_query`` reads it, moved by ``shift``); NaN without any item.
    Each item adds its own share in O(log n_thresholds): its CDF is a step,
    a ramp or a constant. ``span_prefix[k]`` is the sum of the first k spans,
    ``moment_prefix[k]`` of the first k ``spans * thresholds``."""
    cdef intp_t t, k, j, segment, used, first, last, ahead
    cdef double share, low, high, total = 0.0, ramp, item
    cdef double all_spans = span_prefix[index.n]
    used = trees_used(leaves, n_trees, tree_offsets, indptr)
    if used == 0:
        return NAN
    share = 1.0 / used
    for t in range(-PREFETCH_TREES, n_trees):
        ahead = t + PREFETCH_TREES   # its leaf's items on their way to the cache
        if ahead < n_trees and leaves[ahead] >= 0:
            segment = tree_offsets[ahead] + leaves[ahead]
            k = 3 * indptr[segment]
            while k < 3 * indptr[segment + 1]:
                prefetch(&items[k], 0, 3)
                k += DOUBLES_A_LINE
        if t < 0 or leaves[t] < 0:
            continue
        segment = tree_offsets[t] + leaves[t]
        for k in range(indptr[segment], indptr[segment + 1]):
            item = items[3 * k + 2] * share
            low = items[3 * k]
            high = items[3 * k + 1]
            if low == -INFINITY:
                total += item * all_spans     # below every threshold
            elif high == INFINITY:
                continue                      # above every threshold
            elif low == high:                 # a step at low
                first = first_reaching(index, shift, low, False)
                total += item * (all_spans - span_prefix[first])
            else:                             # a ramp from low to high
                first = first_reaching(index, shift, low, True)
                last = first_reaching(index, shift, high, False)
                if last - first <= RAMP_TERMS:
                    ramp = 0.0
                    for j in range(first, last):
                        ramp += spans[j] * (index.thresholds[j] - shift - low)
                else:
                    ramp = (moment_prefix[last] - moment_prefix[first]
                            - (shift + low) * (span_prefix[last] - span_prefix[first]))
                total += item * (ramp / (high - low) + all_spans - span_prefix[last])
    return total


def forest_cdf_sums(const int64_t[:, ::1] leaves, const int64_t[::1] tree_offsets,
                    const int64_t[::1] indptr, const double[:, ::1] items,
                    const double[::1] shift,
                    const double[::1] thresholds, const double[::1] spans,
                    int n_threads):
    """``sum_k spans[k] * F_q(thresholds[k])`` for the CDF F_q of every query's
    predictive distribution (see ``forest_readout``, whose items are here
    rows of ``items``: their ends' values rather than ranks and their mass,
    so that a leaf's items are read in one sweep; ``thresholds``
    increasing): a functional linear in the distribution, such as the area
    under a survival step function, without the (queries, thresholds) array
    of CDF values. O(items * log(thresholds)) a query, on ``n_threads``
    threads.

    Returns
    -------
    out : ndarray of shape (n_queries,)
        NaN for a query without any item.
    """
    cdef intp_t n_queries = leaves.shape[0], n_trees = leaves.shape[1], q
    cdef intp_t n_thresholds = thresholds.shape[0]
    check_same_length("shift", shift, "leaves", n_queries)
    check_same_length("spans", spans, "thresholds", n_thresholds)
    if items.shape[1] != 3:
        raise ValueError("items must have 3 columns: low, high, mass.")
    if tree_offsets.shape[0] != n_trees:
        raise ValueError("the leaves' estimates do not describe the trees.")
    span_prefix_array = np.concatenate([[0.0], np.cumsum(spans)])
    moment_prefix_array = np.concatenate([[0.0], np.cumsum(np.multiply(spans, thresholds))])
    cdef const double[::1] span_prefix = span_prefix_array
    cdef const double[::1] moment_prefix = moment_prefix_array
    out_array = np.full(n_queries, np.nan)
    cdef double[::1] out = out_array
    if n_queries == 0 or items.shape[0] == 0 or n_thresholds == 0:
        return out_array if items.shape[0] == 0 else np.zeros(n_queries)
    # BUCKETS_PER_THRESHOLD buckets a threshold, at most MAX_BUCKETS unless
    # there are more thresholds (one bucket, when they span nothing): most
    # buckets hold at most one, also where the thresholds crowd
    cdef intp_t n_buckets = min(BUCKETS_PER_THRESHOLD * n_thresholds,
                                max(MAX_BUCKETS, n_thresholds))
    cdef double width = (thresholds[n_thresholds - 1] - thresholds[0]) / n_buckets
    if not width > 0.0:
        n_buckets = 1
    edges = thresholds[0] + width * np.arange(n_buckets + 1)
    bucket_start_array = np.searchsorted(thresholds, edges).astype(np.intp)
    bucket_start_array[n_buckets] = n_thresholds
    cdef const intp_t[::1] bucket_start = bucket_start_array
    cdef ThresholdIndex index
    index.thresholds = &thresholds[0]
    index.n = n_thresholds
    index.bucket_start = &bucket_start[0]
    index.n_buckets = n_buckets
    index.origin = thresholds[0]
    index.inverse_width = 1.0 / width if width > 0.0 else 0.0
    with nogil:
        for q in prange(n_queries, schedule="dynamic", chunksize=64,
                        num_threads=max(n_threads, 1)):
            out[q] = mixture_cdf_sum(&leaves[q, 0], n_trees, &tree_offsets[0], &indptr[0],
                                     &items[0, 0], &index, &spans[0], &span_prefix[0],
                                     &moment_prefix[0], shift[q])
    return out_array
