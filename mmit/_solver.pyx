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
The loss is a type (``Loss``, ``_loss.pxd``): every function taking a
``const Loss*`` is compiled once per loss. The entry points callers use
(``solver_insert``, ``solver_sweep``, ``solver_minimum``, ``optimal_costs``)
take the loss's tag (``LossTag``) and dispatch once per call to the
variant compiled for it.

Minimiser conventions
---------------------
A unique minimum is reported as is; a flat minimum between two breakpoints by
their midpoint; a minimum flat to the right of all breakpoints by the
rightmost one, flat to the left by the leftmost one. Without any hinge the
cost is 0 and there is no minimiser (the caller chooses a fallback).
"""

from cython.parallel cimport prange
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, isfinite
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memset

import numpy as np

from ._buffers import empty
from ._validation import check_row_count, check_same_length

from ._loss cimport (
    N_LOSS_TAGS,
    SQUARED_HINGE_TAG,
    LinearHinge,
    Loss,
    LossTag,
    SquaredHinge,
)
from ._parallel cimport PARALLEL_MIN_ROWS, threads_for
from ._sorting cimport (
    count_leading_zeros,
    count_trailing_zeros,
    dropped_bits,
    index_mask_for,
    key_index,
    order_keys,
    pack_key,
    rank_keys,
    sort_key_array,
    sortable_bits,
)
from ._typedefs cimport check_index

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


cdef const LinearHinge* LINEAR_HINGE = NULL
cdef const SquaredHinge* SQUARED_HINGE = NULL

cdef enum:
    PREFETCH_ROWS = 8       # rows looked ahead when prefetching slot records


# ---------------------------------------------------------------------------
# Bitset of active slots
# ---------------------------------------------------------------------------

cdef inline intp_t next_active(const uint64_t* bits, intp_t slot,
                               intp_t n_slots) noexcept nogil:
    """Smallest active slot greater than ``slot``, or NO_SLOT."""
    cdef intp_t start = slot + 1
    if start >= n_slots:
        return NO_SLOT
    cdef intp_t word = start >> 6
    cdef intp_t last_word = (n_slots - 1) >> 6
    cdef uint64_t bits_here = bits[word] & (~(<uint64_t>0) << (start & 63))
    while bits_here == 0:
        word += 1
        if word > last_word:
            return NO_SLOT
        bits_here = bits[word]
    return (word << 6) + count_trailing_zeros(bits_here)


cdef inline intp_t previous_active(const uint64_t* bits, intp_t slot) noexcept nogil:
    """Largest active slot smaller than ``slot``, or NO_SLOT."""
    if slot <= 0:
        return NO_SLOT
    cdef intp_t end = slot - 1
    cdef intp_t word = end >> 6
    cdef uint64_t bits_here = bits[word] & (~(<uint64_t>0) >> (63 - (end & 63)))
    while bits_here == 0:
        word -= 1
        if word < 0:
            return NO_SLOT
        bits_here = bits[word]
    return (word << 6) + 63 - count_leading_zeros(bits_here)


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
    cdef double jump = weight
    if Loss is SquaredHinge:
        jump = sign * weight
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
    if Loss is SquaredHinge:
        solver.a += on_weight
        solver.b -= 2.0 * on_weight * offset
        solver.c += on_weight * offset * offset
    else:
        solver.b += sign * on_weight
        solver.c -= sign * on_weight * offset
        # the piece left of ptr sees upper hinges left of ptr, lower ones from ptr on
        if upper:
            solver.slope_left += weight * (slot < solver.ptr)
        else:
            solver.slope_left -= weight * (slot >= solver.ptr)
    return split


cdef inline bint insert_interval(HingeSolver* solver,
                                 intp_t lower_slot, double lower_position,
                                 intp_t upper_slot, double upper_position,
                                 double weight, const Loss* loss) noexcept nogil:
    """Insert both hinges of an interval; return whether the upper one split
    the current piece."""
    cdef bint upper_split = False
    if solver.n_hinges == 0:
        solver.center = lower_position if lower_slot != NO_SLOT else upper_position
    if lower_slot != NO_SLOT:
        insert_hinge(solver, lower_slot, lower_position, weight, False, loss)
        solver.n_hinges += 1
    if upper_slot != NO_SLOT:
        upper_split = insert_hinge(solver, upper_slot, upper_position, weight, True,
                                   loss)
        solver.n_hinges += 1
    solver.max_weight = weight if weight > solver.max_weight else solver.max_weight
    if Loss is LinearHinge:
        solver.tolerance = FLAT_TOLERANCE_FACTOR * solver.n_hinges * solver.max_weight
    return upper_split


cdef inline void step_right(HingeSolver* solver) noexcept nogil:
    """Make the right neighbour of the current piece current (positions only)."""
    solver.ptr = solver.nxt
    solver.left_pos = solver.right_pos
    solver.nxt = next_active(solver.active, solver.ptr, solver.n_slots)
    solver.right_pos = solver.slot_pos[solver.nxt] if solver.nxt != NO_SLOT else INFINITY


cdef inline void step_left(HingeSolver* solver) noexcept nogil:
    """Make the left neighbour of the current piece current (positions only)."""
    solver.nxt = solver.ptr
    solver.right_pos = solver.left_pos
    solver.ptr = previous_active(solver.active, solver.ptr)
    solver.left_pos = solver.slot_pos[solver.ptr] if solver.ptr != NO_SLOT else -INFINITY


cdef inline void clear_if_zero_piece(HingeSolver* solver) noexcept nogil:
    """No hinge is non-zero on the piece: its coefficients are exactly 0."""
    if solver.n_active == 0:
        solver.a = 0.0
        solver.b = 0.0
        solver.c = 0.0


cdef inline intp_t restore_linear(HingeSolver* solver) noexcept nogil:
    """Move to the leftmost piece whose slope is >= 0 (within tolerance).

    A right move leaves ``slope_left`` equal to the slope that triggered it
    and a left move leaves ``b`` equal to the slope that triggered it, so
    the pointer never moves back within one call.
    """
    cdef double tolerance = solver.tolerance
    cdef intp_t moves = 0
    while True:
        if solver.b < -tolerance and solver.nxt != NO_SLOT:
            check_index(solver.nxt, solver.n_slots)
            solver.c += solver.b * (solver.right_pos - solver.center)
            solver.center = solver.right_pos
            solver.slope_left = solver.b
            solver.b += solver.slots[solver.nxt].jump
            solver.n_active += solver.slots[solver.nxt].count_jump
            step_right(solver)
        elif solver.ptr != NO_SLOT and solver.slope_left >= -tolerance:
            check_index(solver.ptr, solver.n_slots)
            solver.c += solver.b * (solver.left_pos - solver.center)
            solver.center = solver.left_pos
            solver.b = solver.slope_left
            solver.n_active -= solver.slots[solver.ptr].count_jump
            step_left(solver)
        else:
            return moves
        moves += 1
        clear_if_zero_piece(solver)
        if solver.ptr != NO_SLOT:
            solver.slope_left = solver.b - solver.slots[solver.ptr].jump


cdef inline intp_t restore_squared(HingeSolver* solver, bint check_right,
                                   bint check_left) noexcept nogil:
    """Move until the derivative changes sign within the current piece.

    A piece next to a zero-cost piece is left for it (the zero-cost piece is
    the whole set of minimisers). A lower hinge only lowers derivatives, so
    the minimum can only move right; an upper hinge only raises them, so it
    can only move left, or right when its breakpoint split the piece: the
    caller says which sides need a check. After a move the
    coefficients are expanded around the crossed breakpoint, so the
    derivative there is the very value that triggered the move and the
    pointer never moves back.
    """
    cdef double offset, derivative
    cdef intp_t moves = 0
    # common case first, with a single branch: no move on either side
    cdef bint right = check_right & (solver.nxt != NO_SLOT)
    cdef bint left = check_left & (solver.ptr != NO_SLOT)
    cdef intp_t nxt = solver.nxt if right else 0
    cdef intp_t ptr = solver.ptr if left else 0
    cdef double right_derivative = (solver.b + 2.0 * solver.a
                                    * (solver.right_pos - solver.center))
    cdef double left_derivative = (solver.b + 2.0 * solver.a
                                   * (solver.left_pos - solver.center))
    if not ((right & ((right_derivative < 0.0)
                      | (solver.n_active + solver.slots[nxt].count_jump == 0)))
            | (left & ((left_derivative > 0.0)
                       | (solver.n_active - solver.slots[ptr].count_jump == 0)))):
        return 0
    while check_right and solver.nxt != NO_SLOT:
        check_index(solver.nxt, solver.n_slots)
        offset = solver.right_pos - solver.center
        derivative = solver.b + 2.0 * solver.a * offset
        if not (derivative < 0.0 or
                solver.n_active + solver.slots[solver.nxt].count_jump == 0):
            break
        solver.c += (solver.b + solver.a * offset) * offset
        solver.b = derivative
        solver.center += offset
        solver.a += solver.slots[solver.nxt].jump
        solver.n_active += solver.slots[solver.nxt].count_jump
        step_right(solver)
        clear_if_zero_piece(solver)
        moves += 1
    if moves > 0:
        return moves
    while check_left and solver.ptr != NO_SLOT:
        check_index(solver.ptr, solver.n_slots)
        offset = solver.left_pos - solver.center
        derivative = solver.b + 2.0 * solver.a * offset
        if not (derivative > 0.0 or
                solver.n_active - solver.slots[solver.ptr].count_jump == 0):
            break
        solver.c += (solver.b + solver.a * offset) * offset
        solver.b = derivative
        solver.center += offset
        solver.a -= solver.slots[solver.ptr].jump
        solver.n_active -= solver.slots[solver.ptr].count_jump
        step_left(solver)
        clear_if_zero_piece(solver)
        moves += 1
    return moves


cdef inline intp_t add_interval(HingeSolver* solver,
                                intp_t lower_slot, double lower_position,
                                intp_t upper_slot, double upper_position,
                                double weight, const Loss* loss) noexcept nogil:
    """solver_add for a loss known at compile time."""
    cdef bint upper_split
    cdef intp_t moves = 0
    if lower_slot != NO_SLOT or upper_slot != NO_SLOT:
        upper_split = insert_interval(solver, lower_slot, lower_position, upper_slot,
                                      upper_position, weight, loss)
        if Loss is SquaredHinge:
            moves = restore_squared(solver, lower_slot != NO_SLOT or upper_split,
                                    upper_slot != NO_SLOT)
        else:
            moves = restore_linear(solver)
    return moves


cdef inline bint piece_is_flat(double a, double b, int64_t n_active, intp_t n_hinges,
                               double max_weight, const Loss* loss) noexcept nogil:
    """Whether the piece with curvature ``a`` and slope ``b`` is flat: no
    hinge is non-zero on it, or (squared hinge) its curvature or (linear
    hinge) its slope is within the rounding error of the running sums of
    ``n_hinges`` weights up to ``max_weight`` (the true value is below what
    the sums resolve)."""
    cdef double tolerance = FLAT_TOLERANCE_FACTOR * n_hinges * max_weight
    if Loss is SquaredHinge:
        return n_active == 0 or a <= tolerance
    else:
        return -tolerance <= b <= tolerance


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
    elif Loss is SquaredHinge:
        x = center - b / (2.0 * a)
        if x < left:
            x = left
        elif x > right:
            x = right
    else:
        # slope > 0 on the leftmost piece with slope >= 0: minimum at its left end
        x = left if left != -INFINITY else right
    offset = x - center
    value = c + (b + a * offset) * offset
    prediction[0] = x
    return value if value > 0.0 else 0.0


cdef inline bint minimum_of(const HingeSolver* solver, double* prediction,
                            double* cost, const Loss* loss) noexcept nogil:
    """solver_minimum for a loss known at compile time."""
    if solver.n_hinges == 0:
        cost[0] = 0.0
        return False
    cost[0] = piece_minimum(
        solver.left_pos, solver.right_pos, solver.center, solver.a, solver.b, solver.c,
        piece_is_flat(solver.a, solver.b, solver.n_active, solver.n_hinges,
                      solver.max_weight, loss),
        prediction, loss)
    return True


# ---------------------------------------------------------------------------
# Hinges given in breakpoint order
# ---------------------------------------------------------------------------

cdef bint sorted_minimum(const HingeEntry* entries, intp_t count, double* prediction,
                         double* cost, LossTag loss) noexcept nogil:
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
    if loss == SQUARED_HINGE_TAG:
        return minimum_in_order(entries, count, prediction, cost, SQUARED_HINGE)
    return minimum_in_order(entries, count, prediction, cost, LINEAR_HINGE)


cdef inline bint minimum_in_order(const HingeEntry* entries, intp_t count,
                                  double* prediction, double* cost,
                                  const Loss* loss) noexcept nogil:
    """sorted_minimum for a loss known at compile time."""
    cdef intp_t k = 0, group_end
    cdef int64_t n_active = 0, count_change, upper
    cdef double a = 0.0, b = 0.0, c = 0.0, max_weight = 0.0
    cdef double left = -INFINITY, right, weight, offset, derivative = 0.0
    cdef double curvature_change, slope_change, lower_weight
    cdef bint move
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
        if Loss is SquaredHinge:
            a += lower_weight
            b -= 2.0 * lower_weight * offset
            c += lower_weight * offset * offset
        else:
            b -= lower_weight
            c += lower_weight * offset
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
        if Loss is SquaredHinge:
            # the minimum lies right of the breakpoint when the derivative is
            # still negative there, or when the piece beyond costs nothing
            derivative = b + 2.0 * a * offset
            move = derivative < 0.0 or n_active + count_change == 0
        else:
            move = b < -FLAT_TOLERANCE_FACTOR * count * max_weight
        if not move:
            break
        c += (b + a * offset) * offset
        center = right
        n_active += count_change
        if Loss is SquaredHinge:
            b = derivative
            a += curvature_change
        else:
            b += slope_change
        if n_active == 0:  # no hinge is non-zero on the piece: exactly 0
            a = b = c = 0.0
        left = right
        k = group_end
    right = entries[k].position if k < count else INFINITY
    cost[0] = piece_minimum(left, right, center, a, b, c,
                            piece_is_flat(a, b, n_active, count, max_weight, loss),
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


cdef void solver_sweep(HingeSolver* solver, const Interval* intervals,
                       const int32_t* order, intp_t count, bint reverse,
                       const unsigned char* report, double* costs,
                       double* predictions, LossTag loss) noexcept nogil:
    """Insert ``intervals[order[t]]`` for t = 0 .. count-1 (or back from
    count-1 when ``reverse``), and after each insertion with ``report[t]``
    write the optimum to ``costs[t]`` and ``predictions[t]`` (left untouched
    while no hinge has been inserted). The intervals' slots must belong to
    this solver's slots. O(count) amortised.
    """
    if loss == SQUARED_HINGE_TAG:
        sweep(solver, intervals, order, count, reverse, report, costs, predictions,
              SQUARED_HINGE)
    else:
        sweep(solver, intervals, order, count, reverse, report, costs, predictions,
              LINEAR_HINGE)


cdef inline void sweep(HingeSolver* solver, const Interval* intervals,
                       const int32_t* order, intp_t count, bint reverse,
                       const unsigned char* report, double* costs,
                       double* predictions, const Loss* loss) noexcept nogil:
    """solver_sweep for a loss known at compile time."""
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


cdef void solver_insert(HingeSolver* solver, const Interval* intervals,
                        const int32_t* order, intp_t count,
                        LossTag loss) noexcept nogil:
    """Insert ``intervals[order[t]]`` for t = 0 .. count-1, reporting nothing."""
    if loss == SQUARED_HINGE_TAG:
        insert(solver, intervals, order, count, SQUARED_HINGE)
    else:
        insert(solver, intervals, order, count, LINEAR_HINGE)


cdef inline void insert(HingeSolver* solver, const Interval* intervals,
                        const int32_t* order, intp_t count,
                        const Loss* loss) noexcept nogil:
    """solver_insert for a loss known at compile time."""
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


cdef bint solver_minimum(const HingeSolver* solver, double* prediction,
                         double* cost, LossTag loss) noexcept nogil:
    """Write the minimal value of the function and its conventional minimiser.

    Returns False (and a cost of 0, no prediction) when no hinge has been
    inserted. O(1).
    """
    if loss == SQUARED_HINGE_TAG:
        return minimum_of(solver, prediction, cost, SQUARED_HINGE)
    return minimum_of(solver, prediction, cost, LINEAR_HINGE)


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
    of packed keys and a linear pass (``_sorting``): about 3 times faster
    than ``argsort``; the breakpoints are read back on ``n_threads``
    threads.
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
    if not 0 <= loss < N_LOSS_TAGS:
        raise ValueError(f"unknown loss tag {loss!r}")
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


def optimal_costs(const double[::1] lower, const double[::1] upper, double margin,
                  int loss, const double[::1] sample_weight, double fallback=0.0):
    """Optimal prediction and cost after each insertion, and pointer moves.

    Rows are inserted in order; rows with zero weight change nothing. Before
    the first finite bound the prediction is ``fallback`` and the cost 0.
    ``loss`` is the loss's solver tag (``mmit._loss.LOSSES[name].tag``).
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
    if not 0 <= loss < N_LOSS_TAGS:
        raise ValueError(f"unknown loss tag {loss!r}")
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
        if loss == SQUARED_HINGE_TAG:
            insert_rows(solver, &lower[0], &upper[0], &sample_weight[0], n, margin,
                        &ranks[0], fallback, &predictions[0], &costs[0], &moves[0],
                        SQUARED_HINGE)
        else:
            insert_rows(solver, &lower[0], &upper[0], &sample_weight[0], n, margin,
                        &ranks[0], fallback, &predictions[0], &costs[0], &moves[0],
                        LINEAR_HINGE)
    return predictions_array, costs_array, moves_array
