# The penalised squared-hinge problem and its generalised Newton solver (see
# _newton.pyx): what the node models (mmit/tree/_node_models.pyx) cimport.

from .._utils._typedefs cimport intp_t


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


cdef class RidgeNewton:
    # Minimises a HingeProblem plus shrinkage * |theta|^2 (the node models);
    # its working memory sized for up to max_rows rows of n_features
    cdef intp_t max_rows
    cdef intp_t n_features
    cdef double[::1] work                 # 5 max_rows + 5 q + q * q, q = n_features + 1
    cdef intp_t[::1] active               # the rows with an active hinge
    cdef unsigned char[::1] sides         # this step's and the last full step's

    cdef void solve(self, const HingeProblem* problem, const double* offset,
                    double shrinkage, double* theta) noexcept nogil
