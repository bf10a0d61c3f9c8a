# The squared hinge, h(d) = max(d, 0)**2, all in one place: its value,
# slope, curvature and change at a distance beyond a breakpoint, and its
# algebra on the interval solver's pieces (_pieces.pxd), which are
# quadratic: P(x) = a*(x - center)**2 + b*(x - center) + c. A slot's jump is
# the change of the curvature a when crossing it rightwards.
#
# The generic kernels reach these functions through the fused functions of
# _loss.pxd (generated from _loss.pxd.tp, one per name below).

from libc.stdint cimport int64_t

from ._pieces cimport MAY_MOVE_LEFT, MAY_MOVE_RIGHT, NO_SLOT, HingeSolver
from ._pieces cimport clear_if_zero_piece, step_left, step_right
from .._utils._typedefs cimport check_index, intp_t


cdef inline double value(double distance) noexcept nogil:
    distance = distance if distance > 0.0 else 0.0
    return distance * distance


cdef inline double slope(double distance) noexcept nogil:
    return 2.0 * distance if distance > 0.0 else 0.0


cdef inline double curvature(double distance) noexcept nogil:
    return 2.0 if distance > 0.0 else 0.0


cdef inline double change(double distance, double new_distance) noexcept nogil:
    # as a product of differences: no cancellation of nearly equal squares
    # for small steps
    distance = distance if distance > 0.0 else 0.0
    new_distance = new_distance if new_distance > 0.0 else 0.0
    return (new_distance - distance) * (new_distance + distance)


cdef inline double slot_jump(double weight, int sign) noexcept nogil:
    # an upper hinge starts curving right of its breakpoint, a lower one stops
    return sign * weight


cdef inline void add_terms(double* a, double* b, double* c, double weight, double offset,
                           int sign) noexcept nogil:
    # weight * (x - position)**2, expanded at center (position - center = offset)
    a[0] += weight
    b[0] -= 2.0 * weight * offset
    c[0] += weight * offset * offset


cdef inline void track_insert(HingeSolver* solver, intp_t slot, double weight,
                              bint upper) noexcept nogil:
    # nothing beyond the current piece's coefficients
    pass


cdef inline intp_t restore(HingeSolver* solver, int sides) noexcept nogil:
    """Move until the derivative changes sign within the current piece.

    A piece next to a zero-cost piece is left for it (the zero-cost piece is
    the whole set of minimisers). Only the ``sides`` the insertion may have
    moved the minimum to are checked. After a move the coefficients are
    expanded around the crossed breakpoint, so the derivative there is the
    very value that triggered the move and the pointer never moves back.
    """
    cdef double offset, derivative
    cdef intp_t moves = 0
    cdef bint check_right = (sides & MAY_MOVE_RIGHT) != 0
    cdef bint check_left = (sides & MAY_MOVE_LEFT) != 0
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


cdef inline bint is_flat(double a, double b, int64_t n_active,
                         double tolerance) noexcept nogil:
    # no hinge is non-zero on the piece, or its curvature is within the
    # rounding error of the running sums (weights of very different
    # magnitudes cancel: after 1 + 1e-45 - 1 it is 0, even slightly negative
    # after 0.3 - 0.1 - 0.2, while hinges are still active)
    return n_active == 0 or a <= tolerance


cdef inline double minimiser(double left, double right, double center, double a,
                             double b) noexcept nogil:
    # the stationary point, within the piece
    cdef double x = center - b / (2.0 * a)
    if x < left:
        x = left
    elif x > right:
        x = right
    return x


cdef inline bint moves_right(double a, double b, double offset, int64_t n_active_beyond,
                             double tolerance) noexcept nogil:
    # the walk in breakpoint order: the minimum lies right of the breakpoint
    # when the derivative is still negative there, or when the piece beyond
    # costs nothing
    return b + 2.0 * a * offset < 0.0 or n_active_beyond == 0


cdef inline void cross_right(double* a, double* b, double offset, double curvature_change,
                             double slope_change) noexcept nogil:
    b[0] = b[0] + 2.0 * a[0] * offset
    a[0] += curvature_change
