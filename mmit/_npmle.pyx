"""The nonparametric maximum-likelihood estimate (NPMLE) of a distribution
from weighted interval-censored values (Turnbull 1976).

Each observation is a closed interval ``[lower, upper]`` known to hold the
value (``lower == upper``: an exact value; an infinite bound: censored) with
a weight. The likelihood of a distribution is the weighted product of the
probabilities of the intervals; it depends on the distribution only through
the masses of the *Turnbull intervals*, the maximal intersections of the
observations: every left end immediately followed, among all ends sorted
(a left end before a right end of the same value), by a right end. The
NPMLE puts all its mass on them. The likelihood sees an observation only
through ``A_i``, the Turnbull intervals inside it (a contiguous range), so
observations of one range are pooled first (``group_observations``: g <= m
groups of m observations). From every group's weight spread evenly over
its intervals, self-consistency (EM) steps

    p_j <- sum_i (w_i / W) [j in A_i] p_j / sum_{k in A_i} p_k

(``W``: the total weight) alternate with steps of the iterative convex
minorant algorithm (``self_consistency``), each O(g + J) with prefix sums
(J <= m Turnbull intervals), until the likelihood is within a tolerance of
its maximum. With exact values only, every ``A_i`` is one interval and the
estimate is the weighted empirical distribution.

Within a Turnbull interval the likelihood cannot tell where the mass lies:
the cumulative distribution spreads it evenly over a bounded one, and puts
that of an unbounded one at its infinite end (quantiles there are
infinite: the data cannot place that mass). Sorting the ends costs
O(m log m).
"""

from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, NAN, log
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
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
    work.indices = <intp_t*> malloc((8 * capacity + 1) * sizeof(intp_t))
    work.share = <double*> malloc((11 * capacity + 1) * sizeof(double))
    if work.endpoints == NULL or work.indices == NULL or work.share == NULL:
        work_free(work)
        return -1
    work.row_first = work.indices
    work.row_last = work.row_first + capacity
    work.first = work.row_last + capacity
    work.last = work.first + capacity
    work.order = work.last + capacity
    work.size = work.order + 2 * capacity
    work.counts = work.size + capacity
    work.weight = work.share + capacity
    work.left = work.weight + capacity
    work.right = work.left + capacity
    work.mass = work.right + capacity
    work.steps = work.mass + capacity
    work.flow = work.steps + 5 * capacity
    return 0


cdef void work_free(NpmleWork* work) noexcept nogil:
    free(work.endpoints)
    free(work.indices)
    free(work.share)
    work.endpoints = NULL
    work.indices = NULL
    work.share = NULL


cdef intp_t turnbull_intervals(const Endpoint* ends, intp_t count,
                               NpmleWork* work) noexcept nogil:
    """From the ``2 * count`` ends of ``count`` observations in order
    (``endpoint_before``), write the Turnbull intervals to ``work.left`` and
    ``work.right`` (increasing, disjoint) and each observation's range of
    them to ``work.row_first`` and ``work.row_last``; return their number. An
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
            work.row_last[observation] = n_intervals - 1
        else:
            after_left = True
            left_value = ends[k].value
            work.row_first[observation] = n_intervals
    return n_intervals


cdef void stable_counting_sort(const intp_t* key, const intp_t* items, intp_t count,
                               intp_t n_keys, intp_t* counts, intp_t* out) noexcept nogil:
    """``items`` (the indices 0..count-1 when NULL) into ``out``, stably
    ordered by ``key[item]`` in [0, n_keys) (``counts``: n_keys + 1 of
    scratch). O(count + n_keys)."""
    cdef intp_t k, item
    for k in range(n_keys + 1):
        counts[k] = 0
    for k in range(count):
        counts[key[items[k] if items != NULL else k] + 1] += 1
    for k in range(n_keys):
        counts[k + 1] += counts[k]
    for k in range(count):
        item = items[k] if items != NULL else k
        out[counts[key[item]]] = item
        counts[key[item]] += 1


cdef intp_t group_observations(const double* weight, intp_t count, intp_t n_intervals,
                               NpmleWork* work) noexcept nogil:
    """Pool the observations that hold the same range of Turnbull intervals
    (the likelihood sees only the range): each group's range to
    ``work.first`` and ``work.last``, its summed weight to ``work.weight``,
    ordered by range; returns the number of groups. A counting sort by last
    interval, then stably by first: O(count + n_intervals)."""
    cdef intp_t i, k, groups = 0
    cdef intp_t* by_last = work.order
    cdef intp_t* by_range = work.order + work.capacity
    stable_counting_sort(work.row_last, NULL, count, n_intervals, work.counts, by_last)
    stable_counting_sort(work.row_first, by_last, count, n_intervals, work.counts,
                         by_range)
    for k in range(count):
        i = by_range[k]
        if (groups > 0 and work.first[groups - 1] == work.row_first[i]
                and work.last[groups - 1] == work.row_last[i]):
            work.weight[groups - 1] += weight[i]
        else:
            work.first[groups] = work.row_first[i]
            work.last[groups] = work.row_last[i]
            work.weight[groups] = weight[i]
            groups += 1
    return groups


cdef intp_t estimate(const Endpoint* ends, const double* weight, intp_t count,
                     NpmleWork* work, double tolerance, intp_t max_iter) noexcept nogil:
    """The NPMLE of ``count`` observations of positive ``weight`` whose ends
    are ``ends``, in order (``endpoint_before``): their Turnbull intervals,
    the observations pooled by range, then ``self_consistency``. Returns the
    number of Turnbull intervals."""
    cdef intp_t n_intervals = turnbull_intervals(ends, count, work)
    cdef intp_t groups = group_observations(weight, count, n_intervals, work)
    return self_consistency(work.weight, groups, n_intervals, work, tolerance, max_iter)


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
    return estimate(ends, weight, count, work, tolerance, max_iter)


cdef void em_step(const double* weight, intp_t count, intp_t n_intervals,
                  NpmleWork* work, const double* mass, double* next_mass, double total,
                  double* gap) noexcept nogil:
    """One self-consistency step from the masses ``mass`` into ``next_mass``
    (summing to 1): each multiplied by ``d_j``, the weighted mean over the
    observations holding interval j of 1 / (their probability). Writes the
    duality gap of ``mass``, ``max_j d_j - 1``, to ``gap``: its mean
    weighted log-likelihood is at most that much below the maximum.
    O(count + n_intervals)."""
    cdef intp_t i, j
    cdef double running = 0.0, probability, kept = 0.0
    cdef double* flow = work.flow
    # flow[j]: the mass before interval j (prefix sums)
    for j in range(n_intervals):
        flow[j] = running
        running += mass[j]
    flow[n_intervals] = running
    for i in range(count):
        probability = flow[work.last[i] + 1] - flow[work.first[i]]
        work.share[i] = weight[i] / (total * probability) if probability > 0.0 else 0.0
    for j in range(n_intervals + 1):
        flow[j] = 0.0
    for i in range(count):
        flow[work.first[i]] += work.share[i]
        flow[work.last[i] + 1] -= work.share[i]
    running = 0.0
    gap[0] = 0.0
    for j in range(n_intervals):
        running += flow[j]  # d_j
        gap[0] = max(gap[0], running - 1.0)
        next_mass[j] = mass[j] * running
        kept += next_mass[j]
    for j in range(n_intervals):  # against rounding drift
        next_mass[j] /= kept


cdef inline double range_probability(const double* cumulative, intp_t first,
                                     intp_t last) noexcept nogil:
    """The mass of the intervals first..last from the cumulative masses."""
    return cumulative[last] - (cumulative[first - 1] if first > 0 else 0.0)


cdef double likelihood_of(const double* weight, intp_t count, const NpmleWork* work,
                          const double* cumulative, double total) noexcept nogil:
    """The mean weighted log-likelihood of the masses whose cumulative sums
    are ``cumulative`` (-inf when an observation gets no mass)."""
    cdef intp_t i
    cdef double probability, likelihood = 0.0
    for i in range(count):
        probability = range_probability(cumulative, work.first[i], work.last[i])
        if probability <= 0.0:
            return -INFINITY
        likelihood += weight[i] / total * log(probability)
    return likelihood


cdef void pool_adjacent_violators(double* value, double* weight, intp_t count,
                                  intp_t* size) noexcept nogil:
    """Replace ``value`` by its weighted least-squares non-decreasing fit
    (the pool-adjacent-violators algorithm; ``weight`` > 0 is overwritten,
    ``size`` is scratch). O(count)."""
    cdef intp_t k, blocks = 0, _repeat, at = 0
    for k in range(count):
        value[blocks] = value[k]
        weight[blocks] = weight[k]
        size[blocks] = 1
        blocks += 1
        while blocks > 1 and value[blocks - 2] > value[blocks - 1]:
            value[blocks - 2] = ((value[blocks - 2] * weight[blocks - 2]
                                  + value[blocks - 1] * weight[blocks - 1])
                                 / (weight[blocks - 2] + weight[blocks - 1]))
            weight[blocks - 2] += weight[blocks - 1]
            size[blocks - 2] += size[blocks - 1]
            blocks -= 1
    # expand the blocks, from the last (each block's start is at or after its index)
    at = count
    for k in range(blocks - 1, -1, -1):
        for _repeat in range(size[k]):
            at -= 1
            value[at] = value[k]


cdef bint convex_minorant_step(const double* weight, intp_t count, intp_t n_intervals,
                               NpmleWork* work, double total) noexcept nogil:
    """One step of the iterative convex minorant algorithm (Groeneboom and
    Wellner 1992, with Jongbloed's 1998 line search) on the cumulative
    masses F_0 <= ... <= F_{J-2} (F_{J-1} = 1): each moves to ``F_j + g_j /
    h_j`` (the log-likelihood's gradient over its negative second
    derivative), the whole made non-decreasing in [0, 1] by weighted pool
    adjacent violators, then halved toward the current point until the
    likelihood does not fall. Updates ``work.mass``; False when no step
    helps. O(count + n_intervals) per try."""
    cdef intp_t i, j, _try, n_free = n_intervals - 1
    cdef double* cumulative = work.steps
    cdef double* gradient = work.steps + work.capacity
    cdef double* curvature = work.steps + 2 * work.capacity
    cdef double* target = work.steps + 3 * work.capacity
    cdef double* trial = work.steps + 4 * work.capacity
    cdef intp_t* size = work.size
    cdef double running = 0.0, probability, share, likelihood, step = 1.0
    if n_free <= 0:
        return False
    for j in range(n_intervals):
        running += work.mass[j]
        cumulative[j] = running
    for j in range(n_intervals):
        gradient[j] = 0.0
        curvature[j] = 0.0
    for i in range(count):
        probability = range_probability(cumulative, work.first[i], work.last[i])
        if probability <= 0.0:
            return False
        share = weight[i] / (total * probability)
        # P_i = F[last] - F[first - 1]: F[last] raises it, F[first - 1] lowers it
        gradient[work.last[i]] += share
        curvature[work.last[i]] += share / probability
        if work.first[i] > 0:
            gradient[work.first[i] - 1] -= share
            curvature[work.first[i] - 1] += share / probability
    likelihood = likelihood_of(weight, count, work, cumulative, total)
    for j in range(n_free):
        if curvature[j] > 0.0:
            target[j] = cumulative[j] + gradient[j] / curvature[j]
        else:
            target[j] = cumulative[j]
            curvature[j] = 1e-300
    pool_adjacent_violators(target, curvature, n_free, size)
    for j in range(n_free):
        target[j] = min(max(target[j], 0.0), 1.0)
    for _try in range(20):
        for j in range(n_free):
            trial[j] = cumulative[j] + step * (target[j] - cumulative[j])
        trial[n_free] = 1.0
        if likelihood_of(weight, count, work, trial, total) >= likelihood:
            running = 0.0
            for j in range(n_intervals):
                work.mass[j] = max(trial[j] - running, 0.0)
                running = trial[j]
            return True
        step *= 0.5
    return False


cdef intp_t self_consistency(const double* weight, intp_t count, intp_t n_intervals,
                             NpmleWork* work, double tolerance,
                             intp_t max_iter) noexcept nogil:
    """The masses of the Turnbull intervals (``work``, with each observation's
    range) that maximise the likelihood; returns ``n_intervals``.

    The EM-ICM hybrid (Wellner and Zhan 1997): a self-consistency (EM) step
    (``em_step``), then a step of the iterative convex minorant algorithm
    (``convex_minorant_step``), in turn, from every observation's weight
    spread evenly over its intervals, until the mean weighted
    log-likelihood is within ``tolerance`` of its maximum, which the duality
    gap of the EM step certifies, or after ``max_iter`` rounds. EM alone
    needs thousands of steps where many intervals overlap (its convergence
    is sublinear near masses that vanish); the convex minorant steps move
    every cumulative mass at once. O(rounds * (count + n_intervals))."""
    cdef intp_t i, j, _round
    cdef double total = 0.0, share, gap
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
    share = 0.0
    for j in range(n_intervals):
        share += flow[j]
        work.mass[j] = share
    for _round in range(max_iter):
        em_step(weight, count, n_intervals, work, work.mass, work.steps, total, &gap)
        if gap <= tolerance:
            break
        memcpy(work.mass, work.steps, n_intervals * sizeof(double))
        convex_minorant_step(weight, count, n_intervals, work, total)
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
    work.npmle.indices = NULL
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
    return estimate(ends, work.weight, n_held, &work.npmle, tolerance, max_iter)


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
