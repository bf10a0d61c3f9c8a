"""Dynamic-programming solver for sums of interval hinge losses.

This is the kernel of Maximum Margin Interval Trees (Drouin, Hocking and
Laviolette, NIPS 2017, section 4). Each finite interval bound contributes
one hinge with a breakpoint: a lower bound ``l`` at ``l + margin`` (loss to
its left), an upper bound ``u`` at ``u - margin`` (loss to its right); an
exact value (``l == u``) uses margin 0. Their weighted sum ``P`` is convex
and piecewise linear (linear hinge) or piecewise quadratic (squared hinge).

Data structure
--------------
The positions of all breakpoints are known in advance, so they are ranked
once: each distinct position is a *slot* (equal breakpoints share a slot,
which makes the results independent of insertion order). Inserting a hinge
activates its slot in a bitset and adds its weight to the slot's *jump*, the
change of the piece coefficient when crossing the slot rightwards. A pointer
stays on the piece holding the minimum together with that piece's
coefficients; after an insertion the pointer moves to a neighbouring active
slot (count-trailing-zeros scan of the bitset) until the minimum is back in
its piece. Every operation is O(1) amortised and allocation free.

Numerics
--------
The coefficients are expanded around the last breakpoint the pointer crossed,
so values stay on the scale of the costs rather than of the squared
positions, and consecutive moves read bit-identical derivatives (the pointer
never oscillates). An exact integer count of the hinges that are non-zero on
the current piece detects zero-cost pieces exactly and resets the drifting
coefficients there. Flat pieces are recognised with a tolerance derived
from the rounding-error bound of the running sums: a linear piece whose
slope, or a quadratic piece whose curvature, is within that bound of zero is
flat. (Weights of very different magnitudes cancel in the running curvature:
after ``1 + 1e-45 - 1`` it is 0, or even slightly negative after ``0.3 - 0.1
- 0.2``, while hinges are still active; dividing by it gave infinite or
arbitrary minimisers.)

Losses
------
The function's state (slots, bitset, current piece) and the walk between
pieces are in ``_pieces.pxd``, with no loss in them; what a loss does to a
piece (a hinge's terms, the restore step after an insertion, the
minimiser, the flatness test) is in its own module (``_linear_hinge.pxd``,
``_squared_hinge.pxd``), reached through the fused functions of
``_loss.pxd``: every function here taking a ``const Loss*`` is compiled
once per loss. The entry points callers use (``solver_insert``,
``solver_sweep``, ``solver_minimum``, ``sorted_minimum``,
``optimal_costs``) take the loss's tag (``LossTag``) and dispatch once per
call to the variant compiled for it; those dispatchers are generated from
the list of losses (``_solver_dispatch.pxi``, included at the end).

Minimiser conventions
---------------------
A unique minimum is reported as is; a flat minimum between two breakpoints by
their midpoint; a minimum flat to the right of all breakpoints by the
rightmost one, flat to the left by the leftmost one. Without any hinge the
cost is 0 and there is no minimiser (the caller chooses a fallback).

Length
------
About 800 lines, kept in one module: the inline kernels (insertions,
minima, sweeps) are compiled once per loss into each entry point that
calls them, so the entry points must sit beside them; moved to another
module they would call the kernels through function pointers in the
innermost loops.
"""

from cython.parallel cimport prange
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, NAN, isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memset

import numpy as np

from .._utils._buffers import empty
from .._utils._checks import check_row_count, check_same_length

from ._loss cimport Loss, check_loss_tag, piece_add_terms, piece_is_flat, piece_minimiser
from ._loss cimport piece_restore, piece_slot_jump, piece_track_insert, unknown_loss_tag
from ._loss cimport walk_cross_right, walk_moves_right
from .._utils._parallel cimport PARALLEL_MIN_ROWS, threads_for
from ._pieces cimport MAY_MOVE_LEFT, MAY_MOVE_RIGHT, NO_SLOT, HingeSolver, Slot
from .._utils._sorting cimport dropped_bits, index_mask_for, key_index, order_keys, pack_key
from .._utils._sorting cimport rank_keys, sort_key_array, sortable_bits
from .._utils._typedefs cimport check_index

cdef extern from *:
    """
    #ifdef MMIT_DEBUG
    #define MMIT_DEBUG_BUILD 1
    #else
    #define MMIT_DEBUG_BUILD 0
    #endif
    #if !defined(__GNUC__) && !defined(__clang__)
    #define __builtin_prefetch(address, rw, locality) ((void)0)
    #endif
    """
    void __builtin_prefetch(const void* address, int rw, int locality) noexcept nogil
    bint MMIT_DEBUG_BUILD


#: True when compiled with MMIT_DEBUG=1 (bounds and index checks on).
DEBUG_BUILD = MMIT_DEBUG_BUILD

# A linear piece is flat when |slope|, a quadratic piece when its curvature,
# is within this many rounding errors of the running sum (each bounded by one
# unit roundoff of the largest weight per update) times the updates.
cdef double FLAT_TOLERANCE_FACTOR = 16.0 * DBL_EPSILON

cdef enum:
    PREFETCH_ROWS = 8       # rows looked ahead when prefetching slot records


# ---------------------------------------------------------------------------
# Solver
# ---------------------------------------------------------------------------

cdef void solver_init(HingeSolver* solver, Slot* slots, uint64_t* active,
                      intp_t capacity) noexcept nogil:
    """Set up a solver over caller-owned buffers for ``capacity`` slots.

    ``slots`` holds ``capacity`` records (any content); ``active`` holds
    ``(capacity + 63) // 64`` words, which must be zero.
    """
    solver.capacity = capacity
    solver.slots = slots
    solver.active = active
    solver.n_slots = 0
    solver_reset(solver, NULL, 0)


cdef class SolverWorkspace:
    """An interval solver for up to ``capacity`` slots, with its buffers.

    The slot records and the bitset share one numpy buffer, allocated with
    the GIL held; the solver itself, ``state``, is used without the GIL
    through the ``solver_*`` functions.
    """

    def __cinit__(self, intp_t capacity):
        capacity = max(capacity, 1)
        cdef intp_t n_words = (capacity + 63) >> 6
        # 2 words per Slot record, then the bitset; only the bitset needs zeros
        self._buffer = np.empty(2 * capacity + n_words, dtype=np.uint64)
        cdef uint64_t[::1] words = self._buffer
        memset(&words[2 * capacity], 0, n_words * sizeof(uint64_t))
        solver_init(&self.state, <Slot*> &words[0], &words[2 * capacity], capacity)


cdef void solver_reset(HingeSolver* solver, const double* slot_pos,
                       intp_t n_slots) noexcept nogil:
    """Empty the solver and give it the increasing positions of its slots.

    ``n_slots`` must not exceed the capacity. Only the bitset is cleared (a
    slot record is overwritten when its slot is first activated), and only
    as far as the previous use reached: O(previous n_slots / 64).
    """
    memset(solver.active, 0, ((solver.n_slots + 63) >> 6) * sizeof(uint64_t))
    solver.slot_pos = slot_pos
    solver.n_slots = n_slots
    solver.ptr = NO_SLOT
    solver.nxt = NO_SLOT
    solver.left_pos = -INFINITY
    solver.right_pos = INFINITY
    solver.center = 0.0
    solver.a = 0.0
    solver.b = 0.0
    solver.c = 0.0
    solver.slope_left = 0.0
    solver.n_active = 0
    solver.max_weight = 0.0
    solver.tolerance = 0.0
    solver.n_hinges = 0


cdef inline bint insert_hinge(HingeSolver* solver, intp_t slot, double position,
                              double weight, bint upper, const Loss* loss) noexcept nogil:
    """Add one hinge to the function, leaving the pointer where it is.

    Returns whether the hinge's breakpoint split the current piece.

    ``position`` is ``slot_pos[slot]``, passed by the caller, which reads it
    sequentially: the only random memory access is the slot record. Whether
    the hinge is non-zero on the current piece is a coin flip, so the piece
    update is written without branches. ``upper`` is a literal at every
    call, so each variant compiles to straight-line code.
    """
    check_index(slot, solver.n_slots)
    cdef Slot* record = &solver.slots[slot]
    cdef uint64_t* word = &solver.active[slot >> 6]
    cdef uint64_t bit = (<uint64_t>1) << (slot & 63)
    cdef int sign = 1 if upper else -1
    # an upper hinge is non-zero right of its slot, a lower hinge left of it
    cdef int on_piece = (slot <= solver.ptr) if upper else (slot > solver.ptr)
    cdef double on_weight = on_piece * weight
    cdef double offset = position - solver.center
    cdef double jump = piece_slot_jump(weight, sign, loss)
    # a breakpoint inside the current piece becomes its right end; one
    # unsigned comparison tests ptr < slot < nxt (NO_SLOT wraps to the top)
    cdef bint split = (<size_t>(slot - solver.ptr - 1)
                       < <size_t>(solver.nxt - solver.ptr - 1))

    if split:
        solver.nxt = slot
        solver.right_pos = position
    if word[0] & bit:
        record.jump += jump
        record.count_jump += sign
    else:
        # first hinge in this slot: records of inactive slots are stale
        word[0] |= bit
        record.jump = jump
        record.count_jump = sign
    solver.n_active += on_piece
    piece_add_terms(&solver.a, &solver.b, &solver.c, on_weight, offset, sign, loss)
    piece_track_insert(solver, slot, weight, upper, loss)
    return split


cdef inline int insert_interval(HingeSolver* solver,
                                intp_t lower_slot, double lower_position,
                                intp_t upper_slot, double upper_position,
                                double weight, const Loss* loss) noexcept nogil:
    """Insert both hinges of an interval; return the sides the minimum may
    have moved to (``MAY_MOVE_RIGHT``, ``MAY_MOVE_LEFT``): a lower hinge only
    lowers derivatives, so the minimum can only move right; an upper hinge
    only raises them, so it can only move left, or right when its
    breakpoint split the current piece."""
    cdef int sides = 0
    if solver.n_hinges == 0:
        solver.center = lower_position if lower_slot != NO_SLOT else upper_position
    if lower_slot != NO_SLOT:
        insert_hinge(solver, lower_slot, lower_position, weight, False, loss)
        solver.n_hinges += 1
        sides = MAY_MOVE_RIGHT
    if upper_slot != NO_SLOT:
        if insert_hinge(solver, upper_slot, upper_position, weight, True, loss):
            sides = MAY_MOVE_RIGHT
        sides |= MAY_MOVE_LEFT
        solver.n_hinges += 1
    solver.max_weight = weight if weight > solver.max_weight else solver.max_weight
    solver.tolerance = flat_tolerance(solver.n_hinges, solver.max_weight)
    return sides


cdef inline intp_t add_interval(HingeSolver* solver,
                                intp_t lower_slot, double lower_position,
                                intp_t upper_slot, double upper_position,
                                double weight, const Loss* loss) noexcept nogil:
    """Insert an interval's hinges and move the pointer back to the piece
    holding the minimum; return the moves."""
    cdef intp_t moves = 0
    if lower_slot != NO_SLOT or upper_slot != NO_SLOT:
        moves = piece_restore(solver, insert_interval(solver, lower_slot, lower_position,
                                                      upper_slot, upper_position, weight,
                                                      loss),
                              loss)
    return moves


cdef inline double flat_tolerance(intp_t n_hinges, double max_weight) noexcept nogil:
    """The rounding error of running sums of ``n_hinges`` weights up to
    ``max_weight``: slopes (linear pieces) or curvatures (quadratic ones)
    within it are flat."""
    return FLAT_TOLERANCE_FACTOR * n_hinges * max_weight


cdef inline double piece_minimum(double left, double right, double center, double a,
                                 double b, double c, bint flat, double* prediction,
                                 const Loss* loss) noexcept nogil:
    """Write the conventional minimiser (module doc) of ``P(x) = a*(x -
    center)**2 + b*(x - center) + c`` on the piece [left, right] holding the
    minimum (``left`` -inf for the leftmost piece, ``right`` +inf for the
    last one) to ``prediction``; return the value there (at least 0)."""
    cdef double x, offset, value
    if flat:
        if left == -INFINITY:
            x = right
        elif right == INFINITY:
            x = left
        else:
            x = 0.5 * (left + right)
    else:
        x = piece_minimiser(left, right, center, a, b, loss)
    offset = x - center
    value = c + (b + a * offset) * offset
    prediction[0] = x
    return value if value > 0.0 else 0.0


cdef inline bint minimum_of(const HingeSolver* solver, double* prediction,
                            double* cost, const Loss* loss) noexcept nogil:
    """Write the minimal value of the function and its conventional minimiser.

    Returns False (and a cost of 0, no prediction) when no hinge has been
    inserted. O(1).
    """
    if solver.n_hinges == 0:
        cost[0] = 0.0
        return False
    cost[0] = piece_minimum(
        solver.left_pos, solver.right_pos, solver.center, solver.a, solver.b, solver.c,
        piece_is_flat(solver.a, solver.b, solver.n_active, solver.tolerance, loss),
        prediction, loss)
    return True


# ---------------------------------------------------------------------------
# Hinges given in breakpoint order
# ---------------------------------------------------------------------------

cdef inline bint minimum_in_order(const HingeEntry* entries, intp_t count,
                                  double* prediction, double* cost,
                                  const Loss* loss) noexcept nogil:
    """The optimum of the hinges ``entries[0 .. count-1]``, listed by
    increasing breakpoint, with the conventions of ``solver_minimum``: the
    minimiser in ``prediction``, the minimal value in ``cost``; False (cost
    0) without any hinge.

    The sum is built as the incremental solver keeps it (a piece's
    coefficients expanded around the last breakpoint crossed, an exact count
    of the hinges non-zero on it), but from the left end: a first pass sums
    the lower hinges, all non-zero left of the first breakpoint; a second
    one walks the breakpoints rightwards until the minimum's piece. Both
    read the entries in order (no slot records, no random access), so that
    a node's optimum costs two sequential passes over its sorted hinges:
    O(count).
    """

    cdef intp_t k = 0, group_end
    cdef int64_t n_active = 0, count_change, upper
    cdef double a = 0.0, b = 0.0, c = 0.0, max_weight = 0.0
    cdef double left = -INFINITY, right, weight, offset
    cdef double curvature_change, slope_change, lower_weight, tolerance
    if count == 0:
        cost[0] = 0.0
        return False
    cdef double center = entries[0].position
    # the lower hinges, non-zero left of the first breakpoint, expanded there
    # (branch-free: lower and upper hinges alternate at random)
    for k in range(count):
        weight = entries[k].weight
        max_weight = weight if weight > max_weight else max_weight
        upper = entries[k].hinge & 1
        lower_weight = weight * (1 - upper)
        offset = entries[k].position - center
        n_active += 1 - upper
        piece_add_terms(&a, &b, &c, lower_weight, offset, -1, loss)
    tolerance = flat_tolerance(count, max_weight)
    k = 0
    while k < count:
        # the breakpoint right of the current piece, and what crossing it changes
        right = entries[k].position
        count_change = 0
        curvature_change = 0.0
        slope_change = 0.0
        group_end = k
        while group_end < count and entries[group_end].position == right:
            weight = entries[group_end].weight
            upper = entries[group_end].hinge & 1
            count_change += 2 * upper - 1
            curvature_change += (2 * upper - 1) * weight
            slope_change += weight
            group_end += 1
        offset = right - center
        if not walk_moves_right(a, b, offset, n_active + count_change, tolerance, loss):
            break
        c += (b + a * offset) * offset
        center = right
        n_active += count_change
        walk_cross_right(&a, &b, offset, curvature_change, slope_change, loss)
        if n_active == 0:  # no hinge is non-zero on the piece: exactly 0
            a = b = c = 0.0
        left = right
        k = group_end
    right = entries[k].position if k < count else INFINITY
    cost[0] = piece_minimum(left, right, center, a, b, c,
                            piece_is_flat(a, b, n_active, tolerance, loss),
                            prediction, loss)
    return True


# ---------------------------------------------------------------------------
# Breakpoints and their ranks
# ---------------------------------------------------------------------------

cdef inline double breakpoint(double lower, double upper, intp_t is_upper,
                              double margin) noexcept nogil:
    """Breakpoint of the lower (``is_upper == 0``) or upper hinge of an interval.

    ``lower + margin`` or ``upper - margin``; an exact value (``lower ==
    upper``) uses margin 0. Written without a branch on ``is_upper``, which
    is random when hinges are visited in breakpoint order.
    """
    cdef double bounds[2]
    bounds[0] = lower
    bounds[1] = upper
    return bounds[is_upper] + (1 - 2 * is_upper) * (margin if lower != upper else 0.0)


cdef intp_t pack_hinge_keys(const double* lower, const double* upper,
                            const double* weight, intp_t n, double margin,
                            uint64_t index_mask, uint64_t* keys,
                            int32_t* low_bits) noexcept nogil:
    """Write one key per finite bound of a positive-weight row (of every row
    when ``weight`` is NULL); return the count.

    A key packs the bound's breakpoint with the hinge index ``2 * row +
    is_upper`` (``_sorting.pack_key``); the breakpoint's bits the key drops
    go to ``low_bits[hinge]`` (0 for bounds that get no key), as
    ``_sorting.rank_keys`` takes them.
    """
    cdef intp_t i, t, hinge, n_hinges = 0
    cdef uint64_t bits, keep
    for i in range(n):
        for t in range(2):
            # branch-free: censoring patterns are random; a key that is not
            # kept is overwritten by the next one
            hinge = 2 * i + t
            keep = ((weight == NULL or weight[i] > 0.0)
                    & (isfinite(upper[i] if t else lower[i]) != 0))
            bits = sortable_bits(breakpoint(lower[i], upper[i], t, margin))
            keys[n_hinges] = pack_key(bits, hinge, index_mask)
            low_bits[hinge] = dropped_bits(bits & (0 - keep), index_mask)
            n_hinges += keep
    return n_hinges


cdef inline void sweep(HingeSolver* solver, const Interval* intervals,
                       const int32_t* order, intp_t count, bint reverse,
                       const unsigned char* report, double* costs,
                       double* predictions, const Loss* loss) noexcept nogil:
    """Insert ``intervals[order[t]]`` for t = 0 .. count-1 (or back from
    count-1 when ``reverse``), and after each insertion with ``report[t]``
    write the optimum to ``costs[t]`` and ``predictions[t]`` (left untouched
    while no hinge has been inserted). The intervals' slots must belong to
    this solver's slots. O(count) amortised.
    """
    cdef intp_t i, t, ahead, step = -1 if reverse else 1
    cdef intp_t first = count - 1 if reverse else 0
    cdef const Interval* interval
    cdef HingeSolver state = solver[0]  # a local copy the compiler can keep in registers
    for i in range(count):
        t = first + step * i
        ahead = t + step * PREFETCH_ROWS
        if 0 <= ahead < count:
            __builtin_prefetch(&intervals[order[ahead]], 0, 3)
        interval = &intervals[order[t]]
        add_interval(&state, interval.lower_slot, interval.lower_position,
                     interval.upper_slot, interval.upper_position, interval.weight,
                     loss)
        if report[t]:
            minimum_of(&state, &predictions[t], &costs[t], loss)
    solver[0] = state


cdef inline void insert(HingeSolver* solver, const Interval* intervals,
                        const int32_t* order, intp_t count,
                        const Loss* loss) noexcept nogil:
    """Insert ``intervals[order[t]]`` for t = 0 .. count-1, reporting nothing."""
    cdef intp_t t
    cdef const Interval* interval
    cdef HingeSolver state = solver[0]
    for t in range(count):
        if t + PREFETCH_ROWS < count:
            __builtin_prefetch(&intervals[order[t + PREFETCH_ROWS]], 0, 3)
        interval = &intervals[order[t]]
        add_interval(&state, interval.lower_slot, interval.lower_position,
                     interval.upper_slot, interval.upper_position, interval.weight,
                     loss)
    solver[0] = state


cdef inline void insert_rows(HingeSolver* solver, const double* lower,
                             const double* upper, const double* weight, intp_t n,
                             double margin, const int32_t* ranks, double fallback,
                             double* predictions, double* costs, intp_t* moves,
                             const Loss* loss) noexcept nogil:
    """Insert the rows in order, recording the optimum after each.

    ``ranks[2 * row + is_upper]`` is the slot of each finite bound (and 0,
    for prefetching, past the last row). The solver's state is copied into a
    local variable for the loop, so that the compiler can keep it in
    registers (it cannot prove that the outputs do not alias ``*solver``).
    """
    cdef intp_t i, lower_slot, upper_slot
    cdef double prediction = fallback
    cdef HingeSolver state = solver[0]
    for i in range(n):
        __builtin_prefetch(&state.slots[ranks[2 * (i + PREFETCH_ROWS)]], 1, 3)
        __builtin_prefetch(&state.slots[ranks[2 * (i + PREFETCH_ROWS) + 1]], 1, 3)
        moves[i] = 0
        if weight[i] > 0.0:
            lower_slot = ranks[2 * i] if isfinite(lower[i]) else NO_SLOT
            upper_slot = ranks[2 * i + 1] if isfinite(upper[i]) else NO_SLOT
            moves[i] = add_interval(
                &state,
                lower_slot, breakpoint(lower[i], upper[i], 0, margin),
                upper_slot, breakpoint(lower[i], upper[i], 1, margin),
                weight[i], loss)
        minimum_of(&state, &prediction, &costs[i], loss)
        predictions[i] = prediction
    solver[0] = state


# ---------------------------------------------------------------------------
# Python entry points (inputs are validated by the callers in mmit)
# ---------------------------------------------------------------------------

def hinge_positions(const double[::1] lower, const double[::1] upper, double margin,
                    buffers=None, int n_threads=1):
    """Breakpoints of the lower and upper hinges (infinite bounds stay infinite).

    A lower bound ``l`` has its breakpoint at ``l + margin``, an upper bound
    ``u`` at ``u - margin``; an exact value (``l == u``) uses margin 0. The
    arrays come from ``buffers`` (a ``_buffers.Buffers``) when given; the
    rows are shared between ``n_threads`` threads.
    """
    cdef intp_t n = lower.shape[0], i
    check_same_length("upper", upper, "lower", n)
    lower_pos_array = empty(buffers, "hinges.lower_position", n)
    upper_pos_array = empty(buffers, "hinges.upper_position", n)
    cdef double[::1] lower_pos = lower_pos_array
    cdef double[::1] upper_pos = upper_pos_array
    for i in prange(n, nogil=True, num_threads=threads_for(n, PARALLEL_MIN_ROWS, n_threads),
                    schedule="static"):
        lower_pos[i] = breakpoint(lower[i], upper[i], 0, margin)
        upper_pos[i] = breakpoint(lower[i], upper[i], 1, margin)
    return lower_pos_array, upper_pos_array


def sorted_hinges(const double[::1] lower, const double[::1] upper, double margin,
                  buffers=None, int n_threads=1):
    """The finite hinges of interval bounds by increasing breakpoint.

    Returns ``hinge_order`` (int32: the hinge numbers ``2 * row +
    is_upper``, ties by number) and ``positions`` (their breakpoints, see
    :func:`hinge_positions`), from ``buffers`` when given. One ``numpy.sort``
    of packed keys and a linear pass (``_sorting``), faster than
    ``argsort``; the breakpoints are read back on ``n_threads`` threads.
    """
    cdef intp_t n = lower.shape[0], k, hinge, n_hinges = 0
    check_same_length("upper", upper, "lower", n)
    check_row_count(n)
    cdef uint64_t index_mask = index_mask_for(2 * n)
    keys_array = empty(buffers, "hinges.keys", 2 * n + 1, np.uint64)
    dropped_array = empty(buffers, "hinges.dropped", max(2 * n, 1), np.int32)
    cdef uint64_t[::1] keys = keys_array
    cdef int32_t[::1] dropped = dropped_array
    if n > 0:
        with nogil:
            n_hinges = pack_hinge_keys(&lower[0], &upper[0], NULL, n, margin, index_mask,
                                       &keys[0], &dropped[0])
    sort_key_array(keys_array[:n_hinges])
    order_array = empty(buffers, "hinges.order", n_hinges, np.int32)
    positions_array = empty(buffers, "hinges.position", n_hinges)
    cdef int32_t[::1] order = order_array
    cdef double[::1] positions = positions_array
    if n_hinges > 0:
        with nogil:
            order_keys(&keys[0], n_hinges, index_mask, &dropped[0], 2 * n)
    for k in prange(n_hinges, nogil=True,
                    num_threads=threads_for(n_hinges, PARALLEL_MIN_ROWS, n_threads),
                    schedule="static"):
        hinge = key_index(keys[k], index_mask)
        order[k] = <int32_t> hinge
        positions[k] = breakpoint(lower[hinge >> 1], upper[hinge >> 1], hinge & 1,
                                  margin)
    return order_array, positions_array


def optimal_constant(const double[::1] lower, const double[::1] upper, double margin,
                     int loss, const double[::1] sample_weight):
    """The optimal prediction and cost of all rows at once (0.0 and 0.0
    without a finite bound of positive weight).

    ``loss`` is the loss's solver tag. The hinges are sorted once
    (:func:`sorted_hinges`) and the optimum found in one pass over them
    (``sorted_minimum``), with the conventions of :func:`optimal_costs`:
    O(n log n) time for the sort, O(n) memory.
    """
    cdef intp_t n = lower.shape[0], k, n_hinges = 0
    check_same_length("sample_weight", sample_weight, "lower", n)
    check_loss_tag(loss)
    order_array, positions_array = sorted_hinges(lower, upper, margin)
    cdef const int32_t[::1] order = order_array
    cdef const double[::1] positions = positions_array
    buffer = np.empty(max(order.shape[0], 1) * sizeof(HingeEntry), dtype=np.uint8)
    cdef unsigned char[::1] bytes_view = buffer
    cdef HingeEntry* entries = <HingeEntry*> &bytes_view[0]
    cdef double prediction = 0.0, cost = 0.0
    with nogil:
        for k in range(order.shape[0]):
            if sample_weight[order[k] >> 1] > 0.0:
                entries[n_hinges].position = positions[k]
                entries[n_hinges].weight = sample_weight[order[k] >> 1]
                entries[n_hinges].hinge = order[k]
                n_hinges += 1
        if not sorted_minimum(entries, n_hinges, &prediction, &cost, <LossTag> loss):
            prediction = 0.0
    return prediction, cost


cdef intp_t longest_group(const double[::1] positions, const double[::1] weights,
                          const int32_t[::1] hinges, const intp_t[::1] starts) except -1:
    """Check groups of hinges (``starts``, n_groups + 1 increasing positions
    within the hinges, whose arrays have one length); the largest group."""
    cdef intp_t n = positions.shape[0], k, longest = 0
    check_same_length("weights", weights, "positions", n)
    check_same_length("hinges", hinges, "positions", n)
    if starts.shape[0] < 1:
        raise ValueError("starts must hold at least one position.")
    for k in range(starts.shape[0] - 1):
        if starts[k] < 0 or starts[k] > starts[k + 1] or starts[k + 1] > n:
            raise ValueError("starts must be increasing positions within the hinges.")
        longest = max(longest, starts[k + 1] - starts[k])
    return longest


cdef inline HingeEntry* entries_of(unsigned char[::1] scratch) noexcept:
    """The hinge entries in a scratch array of bytes (kept alive by the caller)."""
    return <HingeEntry*> &scratch[0]


cdef inline intp_t weighted_entries(const double[::1] positions, const double[::1] weights,
                                    const int32_t[::1] hinges, intp_t start, intp_t end,
                                    HingeEntry* entries) noexcept nogil:
    """The hinges ``start .. end - 1`` of positive weight as entries; how many."""
    cdef intp_t i, count = 0
    for i in range(start, end):
        if weights[i] > 0.0:
            entries[count].position = positions[i]
            entries[count].weight = weights[i]
            entries[count].hinge = hinges[i]
            count += 1
    return count


def grouped_minima(const double[::1] positions, const double[::1] weights,
                   const int32_t[::1] hinges, const intp_t[::1] starts, int loss,
                   buffers=None):
    """The optimum of each group of hinges, the hinges ``starts[k]`` to
    ``starts[k + 1] - 1`` given by increasing breakpoint (``positions``, the
    ``weights`` of their rows, ``hinges``: odd for an upper hinge): one
    sequential pass over each group (``sorted_minimum``, the conventions of
    :func:`optimal_costs`), hinges of weight 0 left out; the entries' array
    from ``buffers`` when given.

    Returns ``values``, ``costs`` and ``found`` (whether the group has a
    hinge of positive weight; without, its value and cost are 0).
    """
    cdef intp_t longest = longest_group(positions, weights, hinges, starts)
    cdef intp_t n_groups = starts.shape[0] - 1, k, count
    check_loss_tag(loss)
    values_array = np.zeros(n_groups)
    costs_array = np.zeros(n_groups)
    found_array = np.zeros(n_groups, dtype=np.uint8)
    scratch = empty(buffers, "grouped_minima.entries", max(longest, 1) * sizeof(HingeEntry),
                    np.uint8)
    cdef HingeEntry* entries = entries_of(scratch)
    cdef double[::1] values = values_array
    cdef double[::1] costs = costs_array
    cdef unsigned char[::1] found = found_array
    with nogil:
        for k in range(n_groups):
            count = weighted_entries(positions, weights, hinges, starts[k], starts[k + 1],
                                     entries)
            found[k] = sorted_minimum(entries, count, &values[k], &costs[k],
                                      <LossTag> loss)
            if not found[k]:
                values[k] = 0.0
                costs[k] = 0.0
    return values_array, costs_array, found_array.astype(bool)


def optimal_costs(const double[::1] lower, const double[::1] upper, double margin,
                  int loss, const double[::1] sample_weight, double fallback=0.0):
    """Optimal prediction and cost after each insertion, and pointer moves.

    Rows are inserted in order; rows with zero weight change nothing. Before
    the first finite bound the prediction is ``fallback`` and the cost 0.
    ``loss`` is the loss's solver tag (``mmit._loss._loss.LOSSES[name].tag``).
    See :func:`mmit.compute_optimal_costs` for the validated public API.

    The breakpoints are ranked by one ``numpy.sort`` of packed keys (the
    breakpoint's high bits and the hinge index, see ``_sorting``), so
    ordering runs at the speed of numpy's vectorised sort rather than of
    ``argsort``; then each row costs O(1) amortised. Scratch memory: 8 bytes
    per finite bound for the keys (reused for the slot positions), 4 per
    bound for the ranks, 16 per slot.
    """
    cdef intp_t n = lower.shape[0], i, n_hinges = 0, n_slots = 0
    check_same_length("upper", upper, "lower", n)
    check_same_length("sample_weight", sample_weight, "lower", n)
    check_loss_tag(loss)
    check_row_count(n)
    if n == 0:
        return np.empty(0), np.empty(0), np.empty(0, dtype=np.intp)
    cdef uint64_t index_mask = index_mask_for(2 * n)
    with nogil:
        for i in range(n):
            n_hinges += (sample_weight[i] > 0.0) * (isfinite(lower[i]) + isfinite(upper[i]))
    # All scratch memory in one allocation, sized by what is used, so that
    # the allocator can recycle it from call to call (64-bit words): a packed
    # key per finite bound (plus one that packing may overwrite), an int32
    # rank per bound (plus zeros to prefetch past the end), a slot record
    # (two words) per possible slot, the bitset of active slots.
    cdef intp_t ranks_at = n_hinges + 1
    cdef intp_t slots_at = ranks_at + n + PREFETCH_ROWS
    cdef intp_t bitset_at = slots_at + 2 * max(n_hinges, 1)
    buffer = np.empty(bitset_at + ((max(n_hinges, 1) + 63) >> 6), dtype=np.uint64)
    buffer[bitset_at:] = 0
    keys_array = buffer[:ranks_at]
    ranks_array = buffer[ranks_at:slots_at].view(np.int32)
    ranks_array[2 * n:] = 0
    cdef uint64_t[::1] keys = keys_array
    cdef int32_t[::1] ranks = ranks_array
    cdef uint64_t[::1] words = buffer
    cdef HingeSolver solver_state
    cdef HingeSolver* solver = &solver_state
    with nogil:
        pack_hinge_keys(&lower[0], &upper[0], &sample_weight[0], n, margin, index_mask,
                        &keys[0], &ranks[0])
    sort_key_array(keys_array[:n_hinges])
    if n_hinges > 0:
        with nogil:
            # the slot positions go over the front of the keys
            n_slots = rank_keys(&keys[0], n_hinges, index_mask, &ranks[0], 2 * n)
    slot_pos_array = keys_array[:n_slots].view(np.float64)
    cdef const double[::1] slot_pos = slot_pos_array
    solver_init(solver, <Slot*> &words[slots_at], &words[bitset_at], max(n_hinges, 1))

    predictions_array = np.empty(n, dtype=np.float64)
    costs_array = np.empty(n, dtype=np.float64)
    moves_array = np.empty(n, dtype=np.intp)
    cdef double[::1] predictions = predictions_array
    cdef double[::1] costs = costs_array
    cdef intp_t[::1] moves = moves_array
    with nogil:
        solver_reset(solver, &slot_pos[0] if n_slots > 0 else NULL, n_slots)
        solver_insert_rows(solver, &lower[0], &upper[0], &sample_weight[0], n, margin,
                           &ranks[0], fallback, &predictions[0], &costs[0], &moves[0],
                           <LossTag> loss)
    return predictions_array, costs_array, moves_array


def incremental_optima(const double[::1] lower, const double[::1] upper, double margin,
                       int loss, const double[::1] sample_weight):
    """The optima of the rows through the entry points the criterion calls.

    A test hook: ``solver_sweep`` (reporting every row) gives the optimal
    prediction and cost after each row, ``solver_insert`` then
    ``solver_minimum`` on the emptied solver those of all rows. Returns
    ``(predictions, costs, prediction, cost)``; before the first finite bound
    of positive weight a prediction is NaN and a cost 0 (so are the last two
    without any). What :func:`optimal_costs` computes in its own loop, here
    through the run-time dispatch on ``loss``, the loss's tag.
    """
    cdef intp_t n = lower.shape[0], i, k, n_slots = 0
    cdef int32_t hinge
    check_same_length("upper", upper, "lower", n)
    check_same_length("sample_weight", sample_weight, "lower", n)
    check_loss_tag(loss)
    check_row_count(n)
    order_array, positions_array = sorted_hinges(lower, upper, margin)
    cdef const int32_t[::1] order = order_array
    cdef const double[::1] positions = positions_array
    record_array = np.empty(max(n, 1) * sizeof(Interval), dtype=np.uint8)
    cdef unsigned char[::1] record_bytes = record_array
    cdef Interval* intervals = <Interval*> &record_bytes[0]
    slot_pos_array = np.empty(max(order.shape[0], 1))
    cdef double[::1] slot_pos = slot_pos_array
    rows_array = np.arange(max(n, 1), dtype=np.int32)
    report_array = np.ones(max(n, 1), dtype=np.uint8)
    predictions_array = np.full(max(n, 1), np.nan)
    costs_array = np.zeros(max(n, 1))
    cdef const int32_t[::1] rows = rows_array
    cdef const unsigned char[::1] report = report_array
    cdef double[::1] predictions = predictions_array
    cdef double[::1] costs = costs_array
    cdef double prediction = np.nan, cost = 0.0
    for i in range(n):
        intervals[i].lower_position = breakpoint(lower[i], upper[i], 0, margin)
        intervals[i].upper_position = breakpoint(lower[i], upper[i], 1, margin)
        intervals[i].weight = sample_weight[i]
        intervals[i].lower_slot = NO_SLOT
        intervals[i].upper_slot = NO_SLOT
    # dense slots, one per distinct breakpoint, for the rows of positive weight
    for k in range(order.shape[0]):
        if n_slots == 0 or positions[k] != slot_pos[n_slots - 1]:
            slot_pos[n_slots] = positions[k]
            n_slots += 1
        hinge = order[k]
        if sample_weight[hinge >> 1] > 0.0:
            if hinge & 1:
                intervals[hinge >> 1].upper_slot = <int32_t> (n_slots - 1)
            else:
                intervals[hinge >> 1].lower_slot = <int32_t> (n_slots - 1)
    workspace = SolverWorkspace(n_slots)
    cdef HingeSolver* solver = &(<SolverWorkspace> workspace).state
    with nogil:
        solver_reset(solver, &slot_pos[0], n_slots)
        solver_sweep(solver, intervals, &rows[0], n, False, &report[0], &costs[0],
                     &predictions[0], <LossTag> loss)
        solver_reset(solver, &slot_pos[0], n_slots)
        solver_insert(solver, intervals, &rows[0], n, <LossTag> loss)
        solver_minimum(solver, &prediction, &cost, <LossTag> loss)
    return predictions_array[:n], costs_array[:n], prediction, cost


include "_solver_dispatch.pxi"
