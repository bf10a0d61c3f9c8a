"""The nonparametric maximum-likelihood estimate (NPMLE) of a distribution
from weighted interval-censored values (Turnbull 1976).

Each observation is a closed interval ``[lower, upper]`` known to hold the
value (``lower == upper``: an exact value; an infinite bound: censored) with
a weight. The likelihood of a distribution is the weighted product of the
probabilities of the intervals; it depends on the distribution only through
the masses of the *Turnbull intervals*, the maximal intersections of the
observations: every left end immediately followed, among all ends sorted
(a left end before a right end of the same value), by a right end. The
NPMLE puts all its mass on them; it is found by self-consistency (EM)
iterations from every observation's weight spread evenly over the Turnbull
intervals it holds (``W``: the total weight):

    p_j <- sum_i (w_i / W) [j in A_i] p_j / sum_{k in A_i} p_k

(``A_i``: the Turnbull intervals inside observation ``i``, a contiguous
range, so that one iteration costs O(m + J) with prefix sums: m
observations, J <= m Turnbull intervals), until the likelihood is within a
tolerance of its maximum. With exact values only, every ``A_i`` is one
interval and the estimate is the weighted empirical distribution.

Within a Turnbull interval the likelihood cannot tell where the mass lies:
the cumulative distribution spreads it evenly over a bounded one, and puts
that of an unbounded one at its infinite end (quantiles there are
infinite: the data cannot place that mass). Sorting the ends costs
O(m log m).
"""

from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, NAN
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libcpp.algorithm cimport sort as std_sort

import numpy as np

from ._validation import check_same_length

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int mmit_npmle_ctz64(unsigned long long x) {
        unsigned long i; _BitScanForward64(&i, x); return (int)i;
    }
    #else
    static inline int mmit_npmle_ctz64(unsigned long long x) { return __builtin_ctzll(x); }
    #endif
    """
    int count_trailing_zeros "mmit_npmle_ctz64"(uint64_t x) noexcept nogil

# A quantile's level is reached when the CDF is within this of it
cdef double LEVEL_TOLERANCE = 1e-12


cdef inline bint endpoint_before(const Endpoint& a, const Endpoint& b) noexcept nogil:
    """By value, a left end before a right end of the same value (closed
    intervals), then by observation (a total order)."""
    if a.value != b.value:
        return a.value < b.value
    return a.code < b.code if (a.code & 1) == (b.code & 1) else (a.code & 1) < (b.code & 1)


cdef int work_init(NpmleWork* work, intp_t capacity) noexcept nogil:
    """Allocate the working memory of estimates over up to ``capacity``
    observations; -1 (nothing held) when memory runs out."""
    capacity = max(capacity, 1)
    work.capacity = capacity
    work.endpoints = <Endpoint*> malloc(2 * capacity * sizeof(Endpoint))
    work.first = <intp_t*> malloc(2 * capacity * sizeof(intp_t))
    work.last = work.first + capacity if work.first != NULL else NULL
    work.share = <double*> malloc((6 * capacity + 1) * sizeof(double))
    if work.endpoints == NULL or work.first == NULL or work.share == NULL:
        work_free(work)
        return -1
    work.left = work.share + capacity
    work.right = work.left + capacity
    work.mass = work.right + capacity
    work.flow = work.mass + capacity
    return 0


cdef void work_free(NpmleWork* work) noexcept nogil:
    free(work.endpoints)
    free(work.first)
    free(work.share)
    work.endpoints = NULL
    work.first = NULL
    work.share = NULL


cdef intp_t turnbull_intervals(const Endpoint* ends, intp_t count,
                               NpmleWork* work) noexcept nogil:
    """From the ``2 * count`` ends of ``count`` observations in order
    (``endpoint_before``), write the Turnbull intervals to ``work.left`` and
    ``work.right`` (increasing, disjoint) and each observation's range of
    them to ``work.first`` and ``work.last``; return their number. An
    observation's first interval is the next one made after its left end,
    its last the last one made up to its right end. O(count)."""
    cdef intp_t k, n_intervals = 0, observation
    cdef bint after_left = False
    cdef double left_value = 0.0
    for k in range(2 * count):
        observation = ends[k].code >> 1
        if ends[k].code & 1:
            if after_left:
                work.left[n_intervals] = left_value
                work.right[n_intervals] = ends[k].value
                n_intervals += 1
            after_left = False
            work.last[observation] = n_intervals - 1
        else:
            after_left = True
            left_value = ends[k].value
            work.first[observation] = n_intervals
    return n_intervals


cdef intp_t npmle(const double* lower, const double* upper, const double* weight,
                  intp_t count, NpmleWork* work, double tolerance,
                  intp_t max_iter) noexcept nogil:
    """The NPMLE of ``count`` observations of positive weight: the Turnbull
    intervals in ``work.left`` and ``work.right``, their masses (summing to
    1) in ``work.mass``; returns how many there are (sorting the ends:
    O(count log count), then ``self_consistency``)."""
    cdef intp_t i
    cdef Endpoint* ends = work.endpoints
    for i in range(count):
        ends[2 * i].value = lower[i]
        ends[2 * i].code = <int32_t> (2 * i)
        ends[2 * i + 1].value = upper[i]
        ends[2 * i + 1].code = <int32_t> (2 * i + 1)
    std_sort(ends, ends + 2 * count, &endpoint_before)
    return self_consistency(weight, count, turnbull_intervals(ends, count, work), work,
                            tolerance, max_iter)


cdef intp_t self_consistency(const double* weight, intp_t count, intp_t n_intervals,
                             NpmleWork* work, double tolerance,
                             intp_t max_iter) noexcept nogil:
    """The masses of the Turnbull intervals (``work``, with each observation's
    range) that maximise the likelihood; returns ``n_intervals``.

    Self-consistency iterations (module doc), at most ``max_iter``, until
    the likelihood is within ``tolerance`` of its maximum: an iteration
    multiplies each mass by ``d_j``, the weighted mean over the observations
    holding interval j of 1 / (their probability), and the mean weighted
    log-likelihood is at most ``max_j d_j - 1`` below the maximum (the
    duality gap of the concave problem over the simplex). O(iterations *
    (count + n_intervals))."""
    cdef intp_t i, j
    cdef double total = 0.0, running, gap, mass, share
    cdef double* flow = work.flow
    for i in range(count):
        total += weight[i]
    # every observation's weight spread evenly over its intervals
    for j in range(n_intervals + 1):
        flow[j] = 0.0
    for i in range(count):
        share = weight[i] / (total * (work.last[i] - work.first[i] + 1))
        flow[work.first[i]] += share
        flow[work.last[i] + 1] -= share
    running = 0.0
    for j in range(n_intervals):
        running += flow[j]
        work.mass[j] = running
    for _ in range(max_iter):
        # flow[j]: the mass before interval j (prefix sums)
        running = 0.0
        for j in range(n_intervals):
            flow[j] = running
            running += work.mass[j]
        flow[n_intervals] = running
        for i in range(count):
            mass = flow[work.last[i] + 1] - flow[work.first[i]]
            work.share[i] = weight[i] / (total * mass) if mass > 0.0 else 0.0
        for j in range(n_intervals + 1):
            flow[j] = 0.0
        for i in range(count):
            flow[work.first[i]] += work.share[i]
            flow[work.last[i] + 1] -= work.share[i]
        # running: d_j of interval j
        running = 0.0
        gap = 0.0
        mass = 0.0
        for j in range(n_intervals):
            running += flow[j]
            gap = max(gap, running - 1.0)
            work.mass[j] *= running
            mass += work.mass[j]
        for j in range(n_intervals):  # against rounding drift
            work.mass[j] /= mass
        if gap <= tolerance:
            break
    return n_intervals


cdef double cdf_at(const NpmleWork* work, intp_t n_intervals, double value) noexcept nogil:
    """P(X <= value) under the estimate (module doc: even spread within a
    bounded Turnbull interval, an unbounded one's mass at its infinite
    end)."""
    cdef intp_t j
    cdef double total = 0.0, left, right
    for j in range(n_intervals):
        left = work.left[j]
        right = work.right[j]
        if left > value:
            break
        if left == -INFINITY or right <= value:
            total += work.mass[j] if right != INFINITY else 0.0
        elif right != INFINITY:
            total += work.mass[j] * (value - left) / (right - left)
    return min(total, 1.0)


cdef double quantile_at(const NpmleWork* work, intp_t n_intervals,
                        double level) noexcept nogil:
    """The smallest value whose CDF reaches ``level`` (in [0, 1], to within
    ``LEVEL_TOLERANCE``): +inf when the mass below does not (an unbounded
    upper interval's), -inf when an unbounded lower interval's mass reaches
    it."""
    cdef intp_t j
    cdef double below = 0.0, mass, left, right
    for j in range(n_intervals):
        mass = work.mass[j]
        left = work.left[j]
        right = work.right[j]
        # a level the CDF reaches to within rounding is reached (the masses are
        # sums of weights over totals: equal weights may round either way)
        if mass <= 0.0 or below + mass < level - LEVEL_TOLERANCE:
            below += mass
            continue
        if left == -INFINITY:
            return -INFINITY
        if right == INFINITY:
            return INFINITY
        if right == left:
            return left
        return left + (right - left) * min(max(level - below, 0.0) / mass, 1.0)
    return INFINITY if level > below + LEVEL_TOLERANCE else work.right[n_intervals - 1]


# ---------------------------------------------------------------------------
# Distributions of weights gathered from trees' leaves
# ---------------------------------------------------------------------------

ctypedef struct QueryWork:
    # What one thread needs for the distribution of one query after another
    double* row_weight          # n_train: each training row's weight (0 when not held)
    int32_t* held               # n_train: the rows of positive weight, in order found
    int32_t* local              # n_train: a held row's place among them
    uint64_t* ranks             # 2 * n_train bits: the held rows' ends, by global rank
    double* weight              # n_train: the held rows' weights
    NpmleWork npmle             # the estimate's working memory


cdef int query_work_init(QueryWork* work, intp_t n_train) noexcept nogil:
    """Allocate a thread's working memory; -1 (nothing held) when memory
    runs out."""
    n_train = max(n_train, 1)
    work.row_weight = <double*> calloc(n_train, sizeof(double))
    work.held = <int32_t*> malloc(2 * n_train * sizeof(int32_t))
    work.ranks = <uint64_t*> calloc((2 * n_train + 63) // 64, sizeof(uint64_t))
    work.weight = <double*> malloc(n_train * sizeof(double))
    work.npmle.endpoints = NULL
    work.npmle.first = NULL
    work.npmle.share = NULL
    if (work.row_weight == NULL or work.held == NULL or work.ranks == NULL
            or work.weight == NULL or work_init(&work.npmle, n_train) < 0):
        query_work_free(work)
        return -1
    work.local = work.held + n_train
    return 0


cdef void query_work_free(QueryWork* work) noexcept nogil:
    free(work.row_weight)
    free(work.held)
    free(work.ranks)
    free(work.weight)
    work.row_weight = NULL
    work.held = NULL
    work.ranks = NULL
    work.weight = NULL
    work_free(&work.npmle)


cdef intp_t query_distribution(const int64_t* leaves, intp_t n_trees,
                               const int64_t* tree_offsets, const int64_t* indptr,
                               const int32_t* rows, const double* weights,
                               const double* lower, const double* upper,
                               const int32_t* code_ranks, const int32_t* ranked_codes,
                               QueryWork* work, double tolerance,
                               intp_t max_iter) noexcept nogil:
    """The NPMLE of the training rows under the weights of a query's leaves
    (``leaves[t]``: its leaf in tree t, -1 to leave the tree out): each
    leaf's rows with their weights over the leaf's total (``weights``),
    summed over the trees. Returns the number of Turnbull intervals (in
    ``work.npmle``), -1 without any row.

    The held rows' ends are put in order without a sort: every training
    end has a global rank (``code_ranks[2 * row + is_upper]``, and
    ``ranked_codes`` the inverse), the held ones are marked in a bitset
    and read back in rank order. O(rows held + span of their ranks / 64 +
    iterations * rows held)."""
    cdef intp_t t, k, n_held = 0, start, end, rank, n_ends = 0
    cdef intp_t word, first_word = -1, last_word = -1
    cdef int32_t row, code
    cdef uint64_t bits
    cdef Endpoint* ends = work.npmle.endpoints
    for t in range(n_trees):
        if leaves[t] < 0:
            continue
        start = indptr[tree_offsets[t] + leaves[t]]
        end = indptr[tree_offsets[t] + leaves[t] + 1]
        for k in range(start, end):
            row = rows[k]
            if work.row_weight[row] == 0.0:
                work.held[n_held] = row
                n_held += 1
            work.row_weight[row] += weights[k]
    if n_held == 0:
        return -1
    for k in range(n_held):
        row = work.held[k]
        work.local[row] = <int32_t> k
        work.weight[k] = work.row_weight[row]
        work.row_weight[row] = 0.0
        for code in range(2 * row, 2 * row + 2):
            rank = code_ranks[code]
            work.ranks[rank >> 6] |= (<uint64_t> 1) << (rank & 63)
            if first_word < 0 or (rank >> 6) < first_word:
                first_word = rank >> 6
            if (rank >> 6) > last_word:
                last_word = rank >> 6
    for word in range(first_word, last_word + 1):
        bits = work.ranks[word]
        work.ranks[word] = 0
        while bits:
            rank = (word << 6) + count_trailing_zeros(bits)
            bits &= bits - 1
            code = ranked_codes[rank]
            row = code >> 1
            ends[n_ends].value = upper[row] if code & 1 else lower[row]
            ends[n_ends].code = 2 * work.local[row] + (code & 1)
            n_ends += 1
    return self_consistency(work.weight, n_held,
                            turnbull_intervals(ends, n_held, &work.npmle), &work.npmle,
                            tolerance, max_iter)


def forest_readout(const int64_t[:, ::1] leaves, const int64_t[::1] tree_offsets,
                   const int64_t[::1] indptr, const int32_t[::1] rows,
                   const double[::1] weights, const double[::1] lower,
                   const double[::1] upper, const int32_t[::1] code_ranks,
                   const int32_t[::1] ranked_codes, const double[::1] shift,
                   const double[::1] points, bint quantiles, double tolerance,
                   intp_t max_iter, int n_threads):
    """Quantiles (at the levels ``points``, with ``quantiles``) or CDF values
    (at the thresholds ``points``) of every query's predictive distribution:
    the NPMLE of the training intervals ``[lower, upper]`` under the
    weights of the query's leaves (see ``query_distribution``: the ends'
    global ranks; a query without any row gets NaN), moved by the query's
    ``shift``. Queries on ``n_threads`` threads, each with its own working
    memory (O(n_train)).

    Returns
    -------
    out : ndarray of shape (n_queries, n_points)
    """
    cdef intp_t n_queries = leaves.shape[0], n_trees = leaves.shape[1], q, k, n_intervals
    cdef intp_t n_points = points.shape[0], n_train = lower.shape[0]
    check_same_length("upper", upper, "lower", n_train)
    check_same_length("shift", shift, "leaves", n_queries)
    check_same_length("code_ranks", code_ranks, "2 * lower", 2 * n_train)
    check_same_length("ranked_codes", ranked_codes, "2 * lower", 2 * n_train)
    if tree_offsets.shape[0] != n_trees or weights.shape[0] != rows.shape[0]:
        raise ValueError("the leaves' rows do not describe the trees.")
    out_array = np.empty((n_queries, n_points))
    cdef double[:, ::1] out = out_array
    cdef QueryWork* work        # each thread's own (assigned in the block: private)
    cdef bint ready
    cdef int status = 0
    cdef int* failed = &status   # shared by the threads (a pointer)
    if n_queries == 0:
        return out_array
    with nogil, parallel(num_threads=max(n_threads, 1)):
        work = <QueryWork*> malloc(sizeof(QueryWork))
        ready = work != NULL and query_work_init(work, n_train) == 0
        if not ready:
            failed[0] = 1
        # every thread takes part in the loop (a worksharing construct)
        for q in prange(n_queries, schedule="dynamic", chunksize=16):
            if not ready:
                continue
            n_intervals = query_distribution(
                &leaves[q, 0], n_trees, &tree_offsets[0], &indptr[0], &rows[0],
                &weights[0], &lower[0], &upper[0], &code_ranks[0], &ranked_codes[0],
                work, tolerance, max_iter)
            for k in range(n_points):
                if n_intervals < 0:
                    out[q, k] = NAN
                elif quantiles:
                    out[q, k] = shift[q] + quantile_at(&work.npmle, n_intervals, points[k])
                else:
                    out[q, k] = cdf_at(&work.npmle, n_intervals, points[k] - shift[q])
        if ready:
            query_work_free(work)
        free(work)
    if status:
        raise MemoryError("cannot allocate a predictive distribution's memory")
    return out_array


# ---------------------------------------------------------------------------
# Python entry (tests, single distributions)
# ---------------------------------------------------------------------------

def weighted_npmle(const double[::1] lower, const double[::1] upper,
                   const double[::1] weight, const double[::1] levels=None,
                   double tolerance=1e-9, intp_t max_iter=100_000):
    """The Turnbull intervals and NPMLE masses of weighted observations, and
    the estimate's quantiles at ``levels``.

    Parameters
    ----------
    lower, upper : ndarray of shape (n,)
        Validated bounds (``lower <= upper``, no NaN).
    weight : ndarray of shape (n,)
        Non-negative weights; observations of weight 0 take no part.
    levels : ndarray of shape (k,), default=None
        Quantile levels in [0, 1] to read (module doc).
    tolerance : float
        How far below its maximum the mean log-likelihood may stay.
    max_iter : int
        Iterations at most.

    Returns
    -------
    left, right, mass : ndarray of shape (J,)
        The Turnbull intervals and their probabilities (summing to 1).
    quantiles : ndarray of shape (k,)
        With ``levels``.
    """
    cdef intp_t n = lower.shape[0], count = 0, n_intervals = 0, k
    check_same_length("upper", upper, "lower", n)
    check_same_length("weight", weight, "lower", n)
    kept = np.flatnonzero(np.asarray(weight) > 0)
    cdef const double[::1] low = np.ascontiguousarray(np.asarray(lower)[kept])
    cdef const double[::1] high = np.ascontiguousarray(np.asarray(upper)[kept])
    cdef const double[::1] kept_weight = np.ascontiguousarray(np.asarray(weight)[kept])
    count = kept.shape[0]
    quantiles_array = np.full(0 if levels is None else levels.shape[0], np.nan)
    cdef double[::1] quantiles = quantiles_array
    cdef NpmleWork work
    if work_init(&work, count) < 0:
        raise MemoryError("cannot allocate the NPMLE's working memory")
    try:
        with nogil:
            if count > 0:
                n_intervals = npmle(&low[0], &high[0], &kept_weight[0], count, &work,
                                    tolerance, max_iter)
                for k in range(quantiles.shape[0]):
                    quantiles[k] = quantile_at(&work, n_intervals, levels[k])
        left = np.array(<double[:n_intervals]> work.left) if n_intervals else np.empty(0)
        right = np.array(<double[:n_intervals]> work.right) if n_intervals else np.empty(0)
        mass = np.array(<double[:n_intervals]> work.mass) if n_intervals else np.empty(0)
    finally:
        work_free(&work)
    if levels is None:
        return left, right, mass
    return left, right, mass, quantiles_array
