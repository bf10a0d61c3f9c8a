# The penalised squared-hinge problem of the generalised Newton solvers (see
# _newton.pyx) and the rows' hinges: what the ridge solver, the elastic-net
# path and the node models (mmit/tree/_node_models.pyx) cimport. Inline code
# only: no module at run time.

from .._loss._loss cimport SquaredHinge, hinge_change
from .._utils._typedefs cimport check_index, intp_t


ctypedef struct HingeProblem:
    # sum_i weight[i] * h(prediction_i), h the squared hinge of hinges
    # breaking at lower[i] and upper[i], prediction_i = offset + b + rows[i] . w
    # for coefficients theta = (b, w) (the intercept first, an implicit
    # column of ones)
    const double* rows          # (n_rows, n_features), row-major
    const double* lower         # per row: the lower hinge's breakpoint (-inf: none)
    const double* upper         # per row: the upper hinge's breakpoint (+inf: none)
    const double* weight        # per row: non-negative
    intp_t n_rows
    intp_t n_features


cdef enum:
    BELOW = 1   # a row's side: its lower hinge is active (below its interval)
    ABOVE = 2   # its upper hinge is active


cdef inline unsigned char hinge_sides(double f, double lower,
                                      double upper) noexcept nogil:
    """The active hinges (ABOVE, BELOW or both) of a row predicted ``f``."""
    return ABOVE * (f > upper) + BELOW * (f < lower)


cdef inline double hinges_change(double f, double new_f, double lower,
                                 double upper) noexcept nogil:
    """The loss at ``new_f`` minus the loss at ``f`` of a row whose hinges
    break at ``lower`` and ``upper``."""
    return (hinge_change(f - upper, new_f - upper, <const SquaredHinge*> NULL)
            + hinge_change(lower - f, lower - new_f, <const SquaredHinge*> NULL))


cdef inline const double* problem_row(const HingeProblem* problem,
                                      intp_t i) noexcept nogil:
    """The features of row ``i``."""
    check_index(i, problem.n_rows)
    return problem.rows + i * problem.n_features
