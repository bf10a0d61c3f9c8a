"""The nonparametric maximum-likelihood estimate (NPMLE) of a distribution
from weighted interval-censored values (Turnbull 1976), of one sample
(``weighted_npmle``) or of every leaf of a forest at once
(``leaf_estimates``).

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
estimate is the weighted empirical distribution. Sorting the ends costs
O(m log m).

Within a Turnbull interval the likelihood cannot tell where the mass lies:
the reader of a forest's estimates (``_forest_readout``) spreads it evenly
over a bounded one and puts that of an unbounded one at its infinite end.
"""

from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, log
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from libcpp.algorithm cimport sort as std_sort

import numpy as np

from .._utils._checks import check_same_length


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


cdef intp_t npmle(const double* lower, const double* upper, const double* weight,
                  intp_t count, NpmleWork* work, double tolerance,
                  intp_t max_iter) noexcept nogil:
    """The NPMLE of ``count`` observations of positive weight: the Turnbull
    intervals in ``work.left`` and ``work.right``, their masses (summing to
    1) in ``work.mass``; returns how many there are. The ends sorted
    (``endpoint_before``: O(count log count)), the Turnbull intervals, the
    observations pooled by range, then ``self_consistency``."""
    cdef intp_t i, n_intervals, groups
    cdef Endpoint* ends = work.endpoints
    for i in range(count):
        ends[2 * i].value = lower[i]
        ends[2 * i].code = <int32_t> (2 * i)
        ends[2 * i + 1].value = upper[i]
        ends[2 * i + 1].code = <int32_t> (2 * i + 1)
    std_sort(ends, ends + 2 * count, &endpoint_before)
    n_intervals = turnbull_intervals(ends, count, work)
    groups = group_observations(weight, count, n_intervals, work)
    return self_consistency(work.weight, groups, n_intervals, work, tolerance, max_iter)


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


# ---------------------------------------------------------------------------
# Forests' distributions: every leaf's estimate, on threads
# ---------------------------------------------------------------------------

def leaf_estimates(const int64_t[::1] indptr, const int32_t[::1] rows,
                   const double[::1] weights, const double[::1] lower,
                   const double[::1] upper, double tolerance, intp_t max_iter,
                   int n_threads):
    """The NPMLE of every leaf's rows under their weights: leaf ``s`` holds
    ``rows[indptr[s]:indptr[s + 1]]``; its Turnbull intervals of positive
    mass are written from ``indptr[s]`` on (never more than its rows).
    Leaves on ``n_threads`` threads, each with O(widest leaf) memory.
    O(sum over leaves of m log m + iterations * m).

    Returns
    -------
    left, right, mass : ndarray of shape (rows.shape[0],)
        The intervals and masses, leaf by leaf (0 past a leaf's count).
    count : ndarray of shape (indptr.shape[0] - 1,), int64
        How many each leaf has.
    """
    cdef intp_t n_leaves = max(indptr.shape[0] - 1, 0), s, i, j, start, size, n_intervals
    cdef intp_t widest = 0
    for s in range(n_leaves):
        if indptr[s + 1] < indptr[s] or indptr[s + 1] > rows.shape[0]:
            raise ValueError("indptr does not describe the leaves' rows.")
        widest = max(widest, indptr[s + 1] - indptr[s])
    check_same_length("weights", weights, "rows", rows.shape[0])
    check_same_length("upper", upper, "lower", lower.shape[0])
    left_array = np.zeros(rows.shape[0])
    right_array = np.zeros(rows.shape[0])
    mass_array = np.zeros(rows.shape[0])
    count_array = np.zeros(n_leaves, dtype=np.int64)
    cdef double[::1] left = left_array, right = right_array, mass = mass_array
    cdef int64_t[::1] count = count_array
    cdef NpmleWork* work         # each thread's own (assigned in the block: private)
    cdef double* gathered        # and its leaf's bounds and weights
    cdef bint ready
    cdef int status = 0
    cdef int* failed = &status   # shared by the threads (a pointer)
    if widest == 0:
        return left_array, right_array, mass_array, count_array
    with nogil, parallel(num_threads=max(n_threads, 1)):
        work = <NpmleWork*> malloc(sizeof(NpmleWork))
        gathered = <double*> malloc(3 * widest * sizeof(double))
        ready = work != NULL and gathered != NULL and work_init(work, widest) == 0
        if not ready:
            failed[0] = 1
        # every thread takes part in the loop (a worksharing construct)
        for s in prange(n_leaves, schedule="dynamic", chunksize=64):
            start = indptr[s]
            size = indptr[s + 1] - start
            if not ready or size == 0:
                continue
            for i in range(size):
                gathered[i] = lower[rows[start + i]]
                gathered[widest + i] = upper[rows[start + i]]
                gathered[2 * widest + i] = weights[start + i]
            n_intervals = npmle(gathered, gathered + widest, gathered + 2 * widest, size,
                                work, tolerance, max_iter)
            i = 0
            for j in range(n_intervals):
                if work.mass[j] > 0.0:
                    left[start + i] = work.left[j]
                    right[start + i] = work.right[j]
                    mass[start + i] = work.mass[j]
                    i = i + 1
            count[s] = i
        if ready:
            work_free(work)
        free(work)
        free(gathered)
    if status:
        raise MemoryError("cannot allocate the leaves' estimates' memory")
    return left_array, right_array, mass_array, count_array


# ---------------------------------------------------------------------------
# Python entry (tests, single distributions)
# ---------------------------------------------------------------------------

def weighted_npmle(const double[::1] lower, const double[::1] upper,
                   const double[::1] weight, double tolerance=1e-9,
                   intp_t max_iter=100_000):
    """The Turnbull intervals and NPMLE masses of weighted observations.

    Parameters
    ----------
    lower, upper : ndarray of shape (n,)
        Validated bounds (``lower <= upper``, no NaN).
    weight : ndarray of shape (n,)
        Non-negative weights; observations of weight 0 take no part.
    tolerance : float
        How far below its maximum the mean log-likelihood may stay.
    max_iter : int
        Iterations at most.

    Returns
    -------
    left, right, mass : ndarray of shape (J,)
        The Turnbull intervals and their probabilities (summing to 1).
    """
    cdef intp_t n = lower.shape[0], count = 0, n_intervals = 0
    check_same_length("upper", upper, "lower", n)
    check_same_length("weight", weight, "lower", n)
    kept = np.flatnonzero(np.asarray(weight) > 0)
    cdef const double[::1] low = np.ascontiguousarray(np.asarray(lower)[kept])
    cdef const double[::1] high = np.ascontiguousarray(np.asarray(upper)[kept])
    cdef const double[::1] kept_weight = np.ascontiguousarray(np.asarray(weight)[kept])
    count = kept.shape[0]
    cdef NpmleWork work
    if work_init(&work, count) < 0:
        raise MemoryError("cannot allocate the NPMLE's working memory")
    try:
        with nogil:
            if count > 0:
                n_intervals = npmle(&low[0], &high[0], &kept_weight[0], count, &work,
                                    tolerance, max_iter)
        left = np.array(<double[:n_intervals]> work.left) if n_intervals else np.empty(0)
        right = np.array(<double[:n_intervals]> work.right) if n_intervals else np.empty(0)
        mass = np.array(<double[:n_intervals]> work.mass) if n_intervals else np.empty(0)
    finally:
        work_free(&work)
    return left, right, mass
