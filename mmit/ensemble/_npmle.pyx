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

A forest's predictive distribution (``forest_readout``) is the average
over its trees of the estimates of the query's leaves, each leaf's made
once (``leaf_estimates``): a query then costs one sweep over its leaves'
Turnbull intervals, put in order by the ranks of their ends. A functional
linear in the distribution, a weighted sum of its CDF at many thresholds
(``forest_cdf_sums``: the area under a survival step function), is the sum
of each Turnbull interval's own share, found by bisection among the
thresholds, without the CDF at every threshold.
"""

from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, NAN, log
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from libcpp.algorithm cimport sort as std_sort

from .._utils._sorting cimport count_trailing_zeros, prefetch

import numpy as np

from .._utils._checks import check_same_length

# A quantile's level is reached when the CDF is within this of it (the
# masses are sums of weights over totals: equal weights may round either way)
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
# Forests' distributions: every leaf's estimate, averaged over the trees
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
