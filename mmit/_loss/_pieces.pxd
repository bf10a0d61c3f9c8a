# The piecewise function the interval solver keeps (a sum of hinges), with
# no loss in it: its slots, the bitset of active slots, the piece holding
# the minimum and the walk from a piece to its neighbours. Each loss's
# algebra on a piece (_linear_hinge.pxd, _squared_hinge.pxd) works on this
# state; the solver (_solver.pyx) drives both. Everything is inline.

from libc.math cimport INFINITY
from libc.stdint cimport int64_t, uint64_t

from .._utils._sorting cimport count_leading_zeros, count_trailing_zeros
from .._utils._typedefs cimport intp_t


cdef enum:
    NO_SLOT = -1            # "no such slot": no piece to that side, infinite bound

cdef enum:                  # sides the minimum may have moved to after an insertion
    MAY_MOVE_RIGHT = 1
    MAY_MOVE_LEFT = 2

ctypedef struct Slot:
    double jump               # change of the piece coefficient when crossing rightwards
    int64_t count_jump        # change of the count of non-zero hinges, crossing rightwards


ctypedef struct HingeSolver:
    # Buffers (owned by a SolverWorkspace)
    intp_t capacity           # number of slots the buffers hold
    Slot* slots               # per-slot jumps, valid for active slots
    uint64_t* active          # bitset: slots holding at least one inserted hinge
    # Slots in use: one per distinct breakpoint position
    const double* slot_pos    # increasing position of each slot (borrowed from the caller)
    intp_t n_slots            # slots in use since the last reset
    # The piece holding the minimum, P(x) = a*(x - center)**2 + b*(x - center) + c
    intp_t ptr                # active slot at its left end, NO_SLOT for the leftmost piece
    intp_t nxt                # active slot at its right end, NO_SLOT for the last piece
    double left_pos           # position of ptr (-inf for NO_SLOT)
    double right_pos          # position of nxt (+inf for NO_SLOT)
    double center             # expansion point of the coefficients
    double a                  # curvature (squared hinge; 0 for the linear hinge)
    double b                  # slope at `center`
    double c                  # value at `center`
    double slope_left         # linear hinge: slope of the piece left of `ptr`
    int64_t n_active          # hinges that are non-zero on the current piece
    double max_weight         # largest weight inserted (scale of rounding errors)
    double tolerance          # slopes (linear) or curvatures (squared) within it are flat
    intp_t n_hinges           # hinges inserted since the last reset


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
