# The ridge solver of the penalised squared-hinge problem (see
# _ridge_newton.pyx): what the node models (mmit/tree/_node_models.pyx) cimport.

from .._utils._typedefs cimport intp_t

from ._hinge_problem cimport HingeProblem


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
