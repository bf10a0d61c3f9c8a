"""Boosting stages on a criterion kept from stage to stage: the k-way merge
of the last stage's leaves' hinge lists into the next stage's sorted list.

After a stage's build the criterion's hinges lie leaf by leaf, each
leaf's in increasing order of breakpoint; adding the stage's tree moves
every row of a leaf by the same amount (the leaf's shrunk value), which
keeps each leaf's list in order. :func:`merge_moved_leaves` moves each
list and merges them into one increasing list: the merged list is cut
into parts of about equal size at breakpoints of the largest list
(binary searches in every list), and each part is merged on its own
thread by a tournament of losers (``merge_runs``), so that the result is
the same whatever the number of threads. O(H log k) for H hinges and k
leaves (``HingeCriterion.advance``, ``_criterion``).
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY

import numpy as np

from .._loss._solver cimport HingeEntry, first_hinge_past
from .._utils._parallel cimport PARALLEL_MIN_ROWS, threads_for
from .._utils._typedefs cimport check_index, intp_t
from ._stages cimport TargetRange


ctypedef struct Run:
    # a leaf's hinges, in increasing order once moved by its shift
    const HingeEntry* next      # its next entry (``end``: none left)
    const HingeEntry* end
    double shift                # what its breakpoints move down by
    double head                 # the next entry's breakpoint, moved (+inf: none left)


cdef inline intp_t tree_size(intp_t count) noexcept nogil:
    """The leaves of a tournament of ``count`` runs: a power of two."""
    cdef intp_t size = 1
    while size < count:
        size <<= 1
    return size


cdef inline bint comes_before(double head, intp_t run, double other_head,
                              intp_t other) noexcept nogil:
    """Whether the next entry of ``run`` comes before that of ``other``: by
    moved breakpoint, ties by run."""
    return (head < other_head) | ((head == other_head) & (run < other))


cdef void merge_runs(Run* runs, intp_t count, intp_t* tournament, double* heads,
                     HingeEntry* out) noexcept nogil:
    """Write the entries of the ``count`` non-empty runs to ``out`` in
    increasing order of their moved breakpoints, each moved; ties by run.
    A tournament of losers (``tournament``: ``3 * tree_size(count)`` slots;
    ``heads``: ``tree_size(count)``, each run's next moved breakpoint, +inf
    past the runs) replays log2(count) matches per entry, each between the
    running winner and the loser kept at a node, without a branch."""
    cdef intp_t size = tree_size(count), k, node, winner, loser, at, total = 0
    cdef intp_t* losers = tournament                  # per internal node 1 .. size - 1
    cdef intp_t* winners = tournament + size          # the build's, per node
    cdef double head
    cdef bint swap
    cdef const HingeEntry* entry
    cdef Run* run
    for k in range(size):
        heads[k] = runs[k].head if k < count else INFINITY
        winners[size + k] = k
        if k < count:
            total += runs[k].end - runs[k].next
    for node in range(size - 1, 0, -1):
        winner = winners[2 * node]
        loser = winners[2 * node + 1]
        if comes_before(heads[loser], loser, heads[winner], winner):
            winner, loser = loser, winner
        winners[node] = winner
        losers[node] = loser
    winner = winners[1]
    for at in range(total):
        run = &runs[winner]
        entry = run.next
        out[at] = entry[0]
        out[at].position = heads[winner]
        entry += 1
        run.next = entry
        head = entry.position - run.shift if entry < run.end else INFINITY
        heads[winner] = head
        node = (size + winner) >> 1
        while node > 0:
            loser = losers[node]
            swap = comes_before(heads[loser], loser, head, winner)
            losers[node] = winner if swap else loser
            head = heads[loser] if swap else head
            winner = loser if swap else winner
            node >>= 1


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
                            const double* row_shifts, intp_t n, int n_threads) except -1:
    """Move each leaf's hinges (``hinges[leaves[k].start:leaves[k].end]``,
    each in increasing order, the leaves covering ``n_targets`` entries) by
    its rows' shift (``row_shifts``, per row of the ``n``), and merge them
    in increasing order (ties by leaf): into ``scratch`` (returns 1), or in
    place when one leaf holds them all (returns 0)."""
    cdef intp_t k, r, n_runs = 0, largest = 0, n_parts, part, low, high, count
    cdef double shift
    cdef const HingeEntry* first
    n_parts = threads_for(n_targets, PARALLEL_MIN_ROWS, n_threads)
    # the leaves' runs, then each part's share of them
    # the working memory, in one array of 8-byte words: the leaves' runs and
    # each part's share of them, the parts' offsets, sizes and bounds, and
    # each part's tournament and heads
    cdef intp_t n_run_slots = (n_parts + 1) * max(n_leaves, 1)
    cdef intp_t matches = 3 * tree_size(max(n_leaves, 1))
    work = np.empty(n_run_slots * (sizeof(Run) // 8) + 3 * n_parts + 2
                    + 2 * n_parts * matches, dtype=np.float64)
    cdef double[::1] work_view = work
    cdef Run* runs = <Run*> &work_view[0]
    cdef intp_t* offsets = <intp_t*> (runs + n_run_slots)
    cdef intp_t* sizes = offsets + n_parts + 1
    cdef double* bounds = <double*> (sizes + n_parts)
    cdef intp_t* tournaments = <intp_t*> (bounds + n_parts + 1)
    cdef double* heads = <double*> (tournaments + n_parts * matches)
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
            runs[n_runs].head = first.position - shift
            if runs[n_runs].end - first > runs[largest].end - runs[largest].next:
                largest = n_runs
            n_runs += 1
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
                sizes[part] = 0
                count = 0
                for r in range(n_runs):
                    low = first_hinge_past(runs[r].next, 0, runs[r].end - runs[r].next,
                                           runs[r].shift, bounds[part], False)
                    high = first_hinge_past(runs[r].next, 0, runs[r].end - runs[r].next,
                                            runs[r].shift, bounds[part + 1], False)
                    if high > low:
                        share[sizes[part]] = runs[r]
                        share[sizes[part]].next = runs[r].next + low
                        share[sizes[part]].end = runs[r].next + high
                        share[sizes[part]].head = (runs[r].next[low].position
                                                   - runs[r].shift)
                        sizes[part] += 1
                        count = count + high - low
                offsets[part + 1] = offsets[part] + count
            for part in prange(n_parts, num_threads=n_parts, schedule="static"):
                merge_runs(runs + (part + 1) * n_runs, sizes[part],
                           tournaments + part * matches, heads + part * matches,
                           scratch + offsets[part])
    return 1 if n_runs > 1 else 0
