"""Boosting stages on a criterion kept from stage to stage: the k-way merge
of the last stage's leaves' hinge lists into the next stage's sorted list.

After a stage's build the criterion's hinges lie leaf by leaf, each
leaf's in increasing order of breakpoint; adding the stage's tree moves
every row of a leaf by the same amount (the leaf's shrunk value), which
keeps each leaf's list in order. :func:`merge_moved_leaves` moves each
list and merges them into one increasing list: the merged list is cut
into parts of about equal size at breakpoints of the largest list
(binary searches in every list), and each part is merged on its own
thread by rounds of two-way merges of neighbouring lists (the first round
moving the breakpoints; ``merge_two``, ties to the list of the lower
leaves), back and forth between the hinges and the scratch buffer, so that
the result is the same whatever the number of threads. A two-way merge
takes one comparison per entry without a branch, where a tournament of k
lists replays log2(k) dependent matches: O(H log k) for H hinges and k
leaves either way, the rounds' entries independent of each other
(``HingeCriterion.advance``, ``_criterion``).
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY
from libc.stdint cimport int32_t

import numpy as np

from .._loss._solver cimport HingeEntry, first_hinge_past
from .._utils._typedefs cimport check_index, intp_t
from ._stages cimport TargetRange


ctypedef struct Run:
    # a leaf's hinges, in increasing order once moved by its shift
    const HingeEntry* next      # its first entry
    const HingeEntry* end
    double shift                # what its breakpoints move down by


cdef inline void merge_two(const HingeEntry* first, intp_t n_first, double first_shift,
                           const HingeEntry* second, intp_t n_second, double second_shift,
                           HingeEntry* out) noexcept nogil:
    """Write the entries of two lists, each in increasing order once its
    breakpoints move down by its shift, to ``out`` in increasing order, each
    moved; ties to ``first``. Two merges at once: of the smallest half from
    the front and of the largest half from the back (ties to ``second``
    there), each one comparison per entry without a branch, so that their
    chains of loads and comparisons overlap."""
    cdef intp_t total = n_first + n_second, step, k
    cdef intp_t i = 0, j = 0, back_i = n_first - 1, back_j = n_second - 1
    cdef int take
    # a step's two candidates, indexed by the comparison: a load, not a branch
    cdef const HingeEntry* heads[2]
    cdef double moved[2]
    cdef const HingeEntry* tails[2]
    cdef double moved_tails[2]
    if n_first == 0 or n_second == 0:
        for k in range(n_first):
            out[k] = first[k]
            out[k].position = first[k].position - first_shift
        for k in range(n_second):
            out[k] = second[k]
            out[k].position = second[k].position - second_shift
        return
    for step in range((total + 1) // 2):
        # the front: the next smallest (a list used up compares as +inf)
        heads[0] = first + min(i, n_first - 1)
        heads[1] = second + min(j, n_second - 1)
        moved[0] = heads[0].position - first_shift if i < n_first else INFINITY
        moved[1] = heads[1].position - second_shift if j < n_second else INFINITY
        take = moved[1] < moved[0]
        out[step] = heads[take][0]
        out[step].position = moved[take]
        j += take
        i += 1 - take
        if step == total - 1 - step:  # the middle entry of an odd count
            break
        # the back: the next largest (a list used up compares as -inf)
        tails[0] = first + max(back_i, 0)
        tails[1] = second + max(back_j, 0)
        moved_tails[0] = tails[0].position - first_shift if back_i >= 0 else -INFINITY
        moved_tails[1] = tails[1].position - second_shift if back_j >= 0 else -INFINITY
        take = moved_tails[1] >= moved_tails[0]
        out[total - 1 - step] = tails[take][0]
        out[total - 1 - step].position = moved_tails[take]
        back_j -= take
        back_i -= 1 - take


cdef inline intp_t merge_rounds(intp_t count) noexcept nogil:
    """The rounds of two-way merges that make one list of ``count``."""
    cdef intp_t rounds = 0, size = 1
    while size < count:
        size <<= 1
        rounds += 1
    return rounds


cdef void merge_first_round(const Run* runs, intp_t count, HingeEntry* out,
                            intp_t* lengths) noexcept nogil:
    """The first round of a part's merge: runs ``2g`` and ``2g + 1`` moved and
    merged into ``out`` one after another (a last odd one moved alone), the
    lengths of the merged lists in ``lengths``."""
    cdef intp_t g, at = 0, n_first, n_second
    for g in range(0, count, 2):
        n_first = runs[g].end - runs[g].next
        n_second = runs[g + 1].end - runs[g + 1].next if g + 1 < count else 0
        merge_two(runs[g].next, n_first, runs[g].shift,
                  runs[g + 1].next if g + 1 < count else NULL, n_second,
                  runs[g + 1].shift if g + 1 < count else 0.0, out + at)
        lengths[g // 2] = n_first + n_second
        at += n_first + n_second


cdef void merge_later_rounds(HingeEntry* lists, HingeEntry* other, intp_t count,
                             intp_t* lengths) noexcept nogil:
    """The rounds after the first of a part's merge: ``count`` lists of
    ``lengths``, one after another in ``lists``, merged two by two into
    ``other`` and back until one is left (in ``lists`` after an even number of
    rounds, else in ``other``)."""
    cdef intp_t g, at, n_first, n_second
    cdef HingeEntry* swapped
    while count > 1:
        at = 0
        for g in range(0, count, 2):
            n_first = lengths[g]
            n_second = lengths[g + 1] if g + 1 < count else 0
            merge_two(lists + at, n_first, 0.0, lists + at + n_first, n_second, 0.0,
                      other + at)
            lengths[g // 2] = n_first + n_second
            at += n_first + n_second
        count = (count + 1) // 2
        swapped = lists
        lists = other
        other = swapped


cdef intp_t count_below(const Run* runs, intp_t k, double value) noexcept nogil:
    """The entries of the runs whose moved breakpoint is below ``value``."""
    cdef intp_t r, total = 0
    for r in range(k):
        total += first_hinge_past(runs[r].next, 0, runs[r].end - runs[r].next,
                                  runs[r].shift, value, False)
    return total


cdef double part_boundary(const Run* runs, intp_t k, intp_t largest,
                          intp_t wanted) noexcept nogil:
    """A moved breakpoint of the largest run below which about ``wanted`` of
    the runs' entries lie (the first of its breakpoints with at least that
    many below it; +inf when none has)."""
    cdef const Run* run = &runs[largest]
    cdef intp_t low = 0, high = run.end - run.next, middle
    while low < high:
        middle = (low + high) // 2
        if count_below(runs, k, run.next[middle].position - run.shift) < wanted:
            low = middle + 1
        else:
            high = middle
    if low == run.end - run.next:
        return INFINITY
    return run.next[low].position - run.shift


cdef int merge_moved_leaves(HingeEntry* hinges, HingeEntry* scratch,
                            const TargetRange* leaves, intp_t n_leaves, intp_t n_targets,
                            const double* row_shifts, intp_t n, int n_parts) except -1:
    """Move each leaf's hinges (``hinges[leaves[k].start:leaves[k].end]``,
    each in increasing order, the leaves covering ``n_targets`` entries) by
    its rows' shift (``row_shifts``, per row of the ``n``), and merge them
    in increasing order (ties by leaf), in ``n_parts`` parts each on its own
    thread: into ``scratch`` (returns 1) after an odd number of rounds of
    two-way merges, else in ``hinges`` (returns 0; none when one leaf holds
    them all)."""
    cdef intp_t k, r, n_runs = 0, largest = 0, part, low, high, count
    cdef double shift
    cdef const HingeEntry* first
    n_parts = max(n_parts, 1)
    # the working memory, in one array of 8-byte words: the leaves' runs and
    # each part's share of every run (maybe empty), the parts' offsets and
    # bounds, and each part's lengths of its merged lists
    cdef intp_t n_run_slots = (n_parts + 1) * max(n_leaves, 1)
    work = np.empty(n_run_slots * (sizeof(Run) // 8) + 2 * n_parts + 2
                    + n_parts * max(n_leaves, 1), dtype=np.float64)
    cdef double[::1] work_view = work
    cdef Run* runs = <Run*> &work_view[0]
    cdef intp_t* offsets = <intp_t*> (runs + n_run_slots)
    cdef double* bounds = <double*> (offsets + n_parts + 1)
    cdef intp_t* lengths = <intp_t*> (bounds + n_parts + 1)
    cdef intp_t rounds
    cdef Run* share
    with nogil:
        # each leaf's hinges, moved by its rows' shift, stay in order
        for k in range(n_leaves):
            if leaves[k].end == leaves[k].start:
                continue
            first = hinges + leaves[k].start
            check_index(first.hinge >> 1, n)
            shift = row_shifts[first.hinge >> 1]
            runs[n_runs].next = first
            runs[n_runs].end = hinges + leaves[k].end
            runs[n_runs].shift = shift
            if runs[n_runs].end - first > runs[largest].end - runs[largest].next:
                largest = n_runs
            n_runs += 1
        rounds = merge_rounds(n_runs)
        if n_runs == 1:  # a tree of one leaf: nothing to merge
            for k in range(n_targets):
                hinges[k].position = hinges[k].position - runs[0].shift
        elif n_runs > 1:
            # part p of the merged list holds the moved breakpoints in
            # [bounds[p], bounds[p + 1]): about a share n_parts of them each
            bounds[0] = -INFINITY
            bounds[n_parts] = INFINITY
            for part in range(1, n_parts):
                bounds[part] = part_boundary(runs, n_runs, largest,
                                             part * n_targets // n_parts)
            offsets[0] = 0
            for part in range(n_parts):
                share = runs + (part + 1) * n_runs
                count = 0
                for r in range(n_runs):
                    low = first_hinge_past(runs[r].next, 0, runs[r].end - runs[r].next,
                                           runs[r].shift, bounds[part], False)
                    high = first_hinge_past(runs[r].next, 0, runs[r].end - runs[r].next,
                                            runs[r].shift, bounds[part + 1], False)
                    share[r] = runs[r]
                    share[r].next = runs[r].next + low
                    share[r].end = runs[r].next + high
                    count = count + high - low
                offsets[part + 1] = offsets[part] + count
            # every part's first round reads the leaves' hinges before any
            # part writes there: the later rounds go back and forth within
            # each part's own span of the two buffers
            for part in prange(n_parts, num_threads=n_parts, schedule="static"):
                merge_first_round(runs + (part + 1) * n_runs, n_runs,
                                  scratch + offsets[part], lengths + part * n_runs)
            for part in prange(n_parts, num_threads=n_parts, schedule="static"):
                merge_later_rounds(scratch + offsets[part], hinges + offsets[part],
                                   (n_runs + 1) // 2, lengths + part * n_runs)
    return rounds % 2


def merge_moved_lists(const double[::1] positions, const int32_t[::1] hinges,
                      const intp_t[::1] leaf_ends, const double[::1] row_shifts,
                      int n_parts):
    """The boosting stages' merge, for its tests: the leaves' lists of
    breakpoints (leaf k's the entries from ``leaf_ends[k - 1]`` to
    ``leaf_ends[k]`` of ``positions``, in increasing order, of ``hinges``:
    ``2 * row + is_upper``, each row's shift in ``row_shifts``, alike within
    a leaf) moved and merged in ``n_parts`` parts. Returns the merged
    positions and hinges."""
    cdef intp_t count = positions.shape[0], n_rows = row_shifts.shape[0], k
    cdef intp_t n_leaves = leaf_ends.shape[0]
    if n_parts < 1:
        raise ValueError(f"n_parts must be at least 1, got {n_parts}.")
    if hinges.shape[0] != count:
        raise ValueError(f"{hinges.shape[0]} hinges for {count} positions.")
    if n_leaves == 0 or leaf_ends[n_leaves - 1] != count or np.any(np.diff(leaf_ends) < 0):
        raise ValueError("leaf_ends must increase to the number of positions.")
    for k in range(count):
        if hinges[k] < 0 or hinges[k] >> 1 >= n_rows:
            raise ValueError(f"hinge {hinges[k]} is not one of the rows' hinges.")
    for k in range(n_leaves):
        span = slice(leaf_ends[k - 1] if k else 0, leaf_ends[k])
        shifts = np.asarray(row_shifts)[np.asarray(hinges)[span] >> 1]
        if (np.any(np.diff(np.asarray(positions)[span]) < 0)
                or np.any(shifts != shifts[:1])):
            raise ValueError(f"leaf {k}'s positions must increase, its rows' shifts "
                             "be alike.")
    entries = np.zeros(2 * max(count, 1), dtype=np.dtype(
        [("position", np.float64), ("weight", np.float64), ("hinge", np.int32)],
        align=True))
    if entries.itemsize != sizeof(HingeEntry):
        raise RuntimeError("the hinge entries' layout is not HingeEntry's.")
    entries["position"][:count] = positions
    entries["hinge"][:count] = hinges
    leaves = np.empty((n_leaves, 2), dtype=np.intp)
    leaves[:, 1] = leaf_ends
    leaves[0, 0] = 0
    leaves[1:, 0] = leaf_ends[:-1]
    cdef intp_t[:, ::1] leaves_view = leaves
    cdef unsigned char[::1] bytes_view = entries.view(np.uint8)
    cdef HingeEntry* buffer = <HingeEntry*> &bytes_view[0]
    cdef int into_scratch = merge_moved_leaves(
        buffer, buffer + count, <TargetRange*> &leaves_view[0, 0], n_leaves, count,
        &row_shifts[0] if n_rows else NULL, n_rows, n_parts)
    merged = entries[count:2 * count] if into_scratch else entries[:count]
    return merged["position"].copy(), merged["hinge"].copy()
