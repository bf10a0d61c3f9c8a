# Declarations of the interval solver: a sum of hinge losses kept as a
# convex piecewise function, with a pointer on the piece holding its minimum.
# See _solver.pyx for the algorithm.

from libc.stdint cimport int32_t, int64_t, uint64_t

from ._loss cimport LossTag
from ._typedefs cimport intp_t


cdef enum:
    NO_SLOT = -1            # "no such slot": no piece to that side, infinite bound

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
    double tolerance          # linear hinge: slopes within +-tolerance count as flat
    intp_t n_hinges           # hinges inserted since the last reset


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


cdef class SolverWorkspace:
    cdef HingeSolver state    # the solver; its buffers live in the arrays below
    cdef object _buffer       # ndarray holding state.slots and state.active


cdef void solver_reset(HingeSolver* solver, const double* slot_pos,
                       intp_t n_slots) noexcept nogil
# The loss is chosen at run time by its tag (see _loss.pxd), once per call.
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
