# The criterion: what the tree builder asks of a loss, in the manner of
# scikit-learn's Criterion. A node's value, the forward and backward sweeps
# that give the cost of every split, the exact cost of a node. See
# _criterion.pyx for the hinge criterion that implements it.

from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from .._loss._loss cimport LossTag
from .._loss._pieces cimport HingeSolver
from .._loss._solver cimport HingeEntry, Interval, SolverWorkspace
from ._stages cimport TargetRange
from .._utils._typedefs cimport intp_t


cdef class HingeTargets:
    cdef readonly intp_t n_samples           # rows
    cdef readonly double margin               # margin the breakpoints were moved by
    cdef readonly bint single_build           # one criterion takes the breakpoints
    cdef readonly bint taken                  # that criterion has: the arrays are gone
    cdef const double[::1] lower_position     # each lower hinge's breakpoint (-inf: none)
    cdef const double[::1] upper_position     # each upper hinge's breakpoint (+inf: none)
    cdef const int32_t[::1] hinge_order       # finite hinges 2 * row + is_upper, sorted
    cdef const double[::1] hinge_position     # their breakpoints, increasing
    cdef object _bounds                       # (lower, upper) arrays, for pickling

    cdef void let_go(self)


cdef class Criterion:
    # The interface. One criterion serves one tree build: it keeps the
    # training rows of positive weight and, for each node, whatever the node's
    # split search needs ("targets": for the hinge losses, the node's
    # breakpoints in increasing order, in [target_start, target_end) of a
    # list the builder partitions through `partition_targets`).
    cdef readonly intp_t n_samples            # rows of the training data
    cdef readonly intp_t n_targets            # target entries of the root

    cdef void node_init(self, intp_t target_start, intp_t target_end) noexcept nogil
    cdef void reset(self) noexcept nogil
    cdef void add(self, const int32_t* rows, intp_t count) noexcept nogil
    cdef void sweep(self, const int32_t* rows, intp_t count, bint reverse,
                    const unsigned char* report, double* costs,
                    double* values) noexcept nogil
    cdef bint minimum(self, double* value, double* cost) noexcept nogil
    cdef double node_cost(self, const int32_t* rows, intp_t count, double value,
                          double* weight) noexcept nogil
    cdef void row_costs(self, const int32_t* rows, intp_t count, double value,
                        double* costs) noexcept nogil
    cdef intp_t partition_targets(self, intp_t target_start, intp_t target_end,
                                  const unsigned char* goes_left,
                                  int n_threads) noexcept nogil
    cdef bint targets_minimum(self, intp_t target_start, intp_t target_end,
                              double* value, double* cost) noexcept nogil
    cdef void gradients(self, double* gradient, double* curvature,
                        int n_threads) noexcept nogil
    cdef void settle(self, intp_t target_start, intp_t target_end) noexcept nogil


cdef class HingeCriterion(Criterion):
    # The criterion of every hinge loss: per-row breakpoints and weights, the
    # node's breakpoints as dense solver slots, the interval solver.
    cdef readonly LossTag loss                # the loss's tag (see _loss.pxd)
    cdef Interval* intervals                  # per row: breakpoints, weight, node's slots
    cdef HingeEntry* hinges                   # positive-weight rows' finite hinges, by node
    cdef HingeEntry* scratch                  # partition buffer
    cdef double* slot_pos                     # positions of the current node's slots
    cdef intp_t n_slots                       # slots of the current node
    cdef HingeSolver* solver                  # the solver (inside `_workspace`)
    cdef SolverWorkspace _workspace           # owns the solver's buffers
    cdef readonly bint sweeps                 # rows are swept (slots allocated)
    cdef readonly bint keeps_leaves           # kept from build to build (`advance`):
    cdef vector[TargetRange] leaves           # the last build's leaves' targets
    cdef object _buffers                      # ndarrays holding the arrays above
