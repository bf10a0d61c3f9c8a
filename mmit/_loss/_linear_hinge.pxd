# The linear hinge, h(d) = max(d, 0), all in one place: its value, slope,
# curvature and change at a distance beyond a breakpoint, and its algebra on
# the interval solver's pieces (_pieces.pxd), which are linear:
# P(x) = b*(x - center) + c (the coefficient a stays 0). A slot's jump is
# the change of the slope b when crossing it rightwards.
#
# The generic kernels reach these functions through the fused functions of
# _loss.pxd (generated from _loss.pxd.tp, one per name below).

from libc.math cimport INFINITY
from libc.stdint cimport int64_t

from ._pieces cimport MAY_MOVE_LEFT, MAY_MOVE_RIGHT, NO_SLOT, HingeSolver
from ._pieces cimport clear_if_zero_piece, step_left, step_right
from .._utils._typedefs cimport check_index, intp_t


cdef inline double value(double distance) noexcept nogil:
    return distance if distance > 0.0 else 0.0


cdef inline double slope(double distance) noexcept nogil:
    return 1.0 if distance > 0.0 else 0.0


cdef inline double curvature(double distance) noexcept nogil:
    return 0.0


cdef inline double change(double distance, double new_distance) noexcept nogil:
    distance = distance if distance > 0.0 else 0.0
    new_distance = new_distance if new_distance > 0.0 else 0.0
    return new_distance - distance


cdef inline double slot_jump(double weight, int sign) noexcept nogil:
    # a hinge's slope rises by its weight across its breakpoint, either side
    return weight


cdef inline void add_terms(double* a, double* b, double* c, double weight, double offset,
                           int sign) noexcept nogil:
    # sign * weight * (x - position), expanded at center (position - center = offset)
    b[0] += sign * weight
    c[0] -= sign * weight * offset


cdef inline void track_insert(HingeSolver* solver, intp_t slot, double weight,
                              bint upper) noexcept nogil:
    # the piece left of ptr sees upper hinges left of ptr, lower ones from ptr on
    if upper:
        solver.slope_left += weight * (slot < solver.ptr)
    else:
        solver.slope_left -= weight * (slot >= solver.ptr)


cdef inline intp_t restore(HingeSolver* solver, int sides) noexcept nogil:
    """Move to the leftmost piece whose slope is >= 0 (within tolerance).

    Both sides are always checked. A right move leaves ``slope_left`` equal
    to the slope that triggered it and a left move leaves ``b`` equal to the
    slope that triggered it, so the pointer never moves back within one call.
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


cdef inline bint is_flat(double a, double b, int64_t n_active,
                         double tolerance) noexcept nogil:
    # a slope within the rounding error of the running sums is 0
    return -tolerance <= b <= tolerance


cdef inline double minimiser(double left, double right, double center, double a,
                             double b) noexcept nogil:
    # slope > 0 on the leftmost piece with slope >= 0: minimum at its left end
    return left if left != -INFINITY else right


cdef inline bint moves_right(double a, double b, double offset, int64_t n_active_beyond,
                             double tolerance) noexcept nogil:
    # the walk in breakpoint order: the slope is still negative
    return b < -tolerance


cdef inline void cross_right(double* a, double* b, double offset, double curvature_change,
                             double slope_change) noexcept nogil:
    b[0] += slope_change
