# Declarations of the interval solver: a sum of hinge losses kept as a
# convex piecewise function (_pieces.pxd), with a pointer on the piece
# holding its minimum. See _solver.pyx for the algorithm.

from libc.stdint cimport int32_t

from ._loss cimport LossTag
from ._pieces cimport HingeSolver
from .._utils._typedefs cimport intp_t


ctypedef struct Interval:
    double lower_position     # breakpoint of the lower hinge (-inf for an infinite bound)
    double upper_position     # breakpoint of the upper hinge (+inf for an infinite bound)
    double weight             # sample weight, > 0
    int32_t lower_slot        # slot of the lower breakpoint in the solver, NO_SLOT if none
    int32_t upper_slot        # slot of the upper breakpoint in the solver, NO_SLOT if none


ctypedef struct HingeEntry:
    double position           # breakpoint of the hinge
    double weight             # weight of its row, > 0
    int32_t hinge             # 2 * row + is_upper


cdef inline intp_t first_hinge_past(const HingeEntry* hinges, intp_t start, intp_t end,
                                    double shift, double value,
                                    bint strictly) noexcept nogil:
    """The first of ``hinges[start:end]``, in increasing order of breakpoint,
    whose breakpoint moved down by ``shift`` is at least ``value`` (above it
    when ``strictly``); ``end`` when none is."""
    cdef intp_t middle
    cdef double moved
    while start < end:
        middle = start + (end - start) // 2
        moved = hinges[middle].position - shift
        if moved < value or (strictly and moved == value):
            start = middle + 1
        else:
            end = middle
    return start


cdef class SolverWorkspace:
    cdef HingeSolver state    # the solver; its buffers live in the arrays below
    cdef object _buffer       # ndarray holding state.slots and state.active


cdef void solver_reset(HingeSolver* solver, const double* slot_pos,
                       intp_t n_slots) noexcept nogil
# The loss is chosen at run time by its tag (see _loss.pxd), once per call
# (_solver_dispatch.pxi, generated from the list of losses).
cdef void solver_insert(HingeSolver* solver, const Interval* intervals,
                        const int32_t* order, intp_t count,
                        LossTag loss) noexcept nogil
cdef void solver_sweep(HingeSolver* solver, const Interval* intervals,
                       const int32_t* order, intp_t count, bint reverse,
                       const unsigned char* report, double* costs,
                       double* predictions, LossTag loss) noexcept nogil
cdef bint solver_minimum(const HingeSolver* solver, double* prediction,
                         double* cost, LossTag loss) noexcept nogil
# The optimum of hinges given in breakpoint order, in one sequential pass.
cdef bint sorted_minimum(const HingeEntry* entries, intp_t count, double* prediction,
                         double* cost, LossTag loss) noexcept nogil
