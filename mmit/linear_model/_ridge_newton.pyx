"""The ridge-penalised squared-hinge problem by the generalised Newton
method (``_newton``): :class:`RidgeNewton`, the solver of the node models
of ``mmit.tree._node_models`` (the trees' linear leaves), minimising a
``HingeProblem`` plus ``shrinkage * |theta|^2``. The local model's minimum
is one Cholesky solve of the ridge system (through the rows' space,
Woodbury, when the active rows are fewer than the columns); the line
search evaluates every row.
"""

from libc.string cimport memcpy

import numpy as np

from scipy.linalg.cython_lapack cimport dposv

from .._loss._loss cimport SquaredHinge, hinge_curvature, hinge_slope, interval_loss
from .._utils._typedefs cimport check_index, intp_t

from ._hinge_problem cimport HingeProblem, hinge_sides, problem_row

# the loss the kernels below are compiled for (a type: see _loss.pxd)
cdef const SquaredHinge* SQUARED_HINGE = NULL


cdef enum:
    RIDGE_MAX_STEPS = 50     # Newton steps per problem; earlier when the hinges repeat
cdef double RIDGE_ARMIJO = 1e-4     # sufficient-decrease fraction of the line search
cdef double RIDGE_MIN_STEP = 1e-10  # the line search's smallest step


cdef double ridge_objective(const HingeProblem* problem, const double* prediction,
                            const double* theta, double shrinkage) noexcept nogil:
    """``sum_i weight_i h(prediction_i) + shrinkage |theta|^2``."""
    cdef intp_t i
    cdef double total = 0.0, norm = 0.0
    for i in range(problem.n_rows):
        total += problem.weight[i] * interval_loss(problem.lower[i], problem.upper[i],
                                                   prediction[i], SQUARED_HINGE)
    for i in range(problem.n_features + 1):
        norm += theta[i] * theta[i]
    return total + shrinkage * norm


cdef bint ridge_solve(const HingeProblem* problem, const intp_t* active,
                      intp_t n_active, const double* curvature, double shrinkage,
                      double* vector, double* system, double* rows_vector) noexcept nogil:
    """``vector`` := ``(D' C D + shrinkage I)^-1 vector``, ``D`` the rows
    ``active`` with their intercept's column of ones first, ``C`` their
    ``curvature``; through the rows' space (Woodbury) when they are fewer
    than the columns. ``system`` holds q * q doubles, ``rows_vector`` q
    (q = n_features + 1). Returns False when the Cholesky factorisation
    fails."""
    cdef intp_t a, b, j, k, q = problem.n_features + 1
    cdef int n, one = 1, info = 0
    cdef double total
    cdef const double* row_a
    cdef const double* row_b
    if n_active >= q:
        for a in range(q):
            for b in range(q):
                system[a * q + b] = 0.0
            system[a * q + a] = shrinkage
        for k in range(n_active):
            row_a = problem_row(problem, active[k])
            total = curvature[k]  # times the intercept's column of ones
            system[0] += total
            for b in range(1, q):
                system[b] += total * row_a[b - 1]
            for a in range(1, q):
                total = curvature[k] * row_a[a - 1]
                for b in range(a, q):
                    system[a * q + b] += total * row_a[b - 1]
        n = <int> q
        # LAPACK reads the column-major lower half: this upper half in C order
        dposv(b"L", &n, &one, system, &n, vector, &n, &info)
        return info == 0
    # (v - D' (D D' + shrinkage C^-1)^-1 D v) / shrinkage
    for a in range(n_active):
        row_a = problem_row(problem, active[a])
        total = 0.0
        total += vector[0]
        for j in range(1, q):
            total += row_a[j - 1] * vector[j]
        rows_vector[a] = total
        for b in range(a, n_active):
            row_b = problem_row(problem, active[b])
            total = 1.0
            for j in range(1, q):
                total += row_a[j - 1] * row_b[j - 1]
            system[a * n_active + b] = total
        system[a * n_active + a] += shrinkage / curvature[a]
    if n_active > 0:
        n = <int> n_active
        dposv(b"L", &n, &one, system, &n, rows_vector, &n, &info)
        if info != 0:
            return False
    for a in range(n_active):
        row_a = problem_row(problem, active[a])
        vector[0] -= rows_vector[a]
        for j in range(1, q):
            vector[j] -= row_a[j - 1] * rows_vector[a]
    for j in range(q):
        vector[j] /= shrinkage
    return True


cdef class RidgeNewton:
    """The generalised Newton method for a ``HingeProblem`` plus
    ``shrinkage * |theta|^2`` (the intercept penalised too), each local
    model solved exactly: Newton steps on the rows outside their interval
    with an Armijo backtracking line search, until the gradient is zero or
    a full step leaves the same hinges active (the exact minimum).
    O(m q^2) per step for m rows (O(m^2 q) when the active rows are fewer
    than the q = n_features + 1 coefficients).

    Parameters
    ----------
    max_rows : int
        The most rows of the problems it will solve.
    n_features : int
        Their features.
    """

    def __cinit__(self, intp_t max_rows, intp_t n_features):
        cdef intp_t q = n_features + 1
        self.max_rows = max_rows
        self.n_features = n_features
        self.work = np.empty(5 * max_rows + 5 * q + q * q + 1)
        self.active = np.empty(max(max_rows, 1), dtype=np.intp)
        self.sides = np.empty(2 * max(max_rows, 1), dtype=np.uint8)

    cdef void solve(self, const HingeProblem* problem, const double* offset,
                    double shrinkage, double* theta) noexcept nogil:
        """``theta`` (n_features + 1) := the minimum for predictions ``offset[i]
        + theta[0] + rows[i] . theta[1:]``, from ``theta = 0``; ``problem``
        of at most ``max_rows`` rows and ``n_features`` features."""
        cdef intp_t m = problem.n_rows, q = problem.n_features + 1
        cdef double* prediction = &self.work[0]
        cdef double* change = prediction + m
        cdef double* candidate = prediction + 2 * m
        cdef double* curvature = prediction + 3 * m
        cdef double* residual = prediction + 4 * m
        cdef double* gradient = prediction + 5 * m
        cdef double* direction = gradient + q
        cdef double* theta_candidate = direction + q
        cdef double* rows_vector = theta_candidate + q
        cdef double* system = rows_vector + 2 * q
        cdef intp_t* active = &self.active[0]
        cdef unsigned char* side = &self.sides[0]
        cdef unsigned char* previous_side = side + m
        cdef intp_t i, j, n_active
        cdef bint have_previous = False, same, nonzero
        cdef double value, slope, step, candidate_value, below, above, total
        cdef const double* row
        check_index(m, self.max_rows + 1)
        check_index(problem.n_features, self.n_features + 1)
        for j in range(q):
            theta[j] = 0.0
        for i in range(m):
            prediction[i] = offset[i]
        value = ridge_objective(problem, prediction, theta, shrinkage)
        for _ in range(RIDGE_MAX_STEPS):
            n_active = 0
            same = have_previous
            for i in range(m):
                below = problem.lower[i] - prediction[i]
                above = prediction[i] - problem.upper[i]
                # half the squared hinges' derivative and curvature
                residual[i] = 0.5 * (hinge_slope(above, SQUARED_HINGE)
                                     - hinge_slope(below, SQUARED_HINGE))
                total = 0.5 * (hinge_curvature(above, SQUARED_HINGE)
                               + hinge_curvature(below, SQUARED_HINGE))
                side[i] = hinge_sides(prediction[i], problem.lower[i], problem.upper[i])
                same = same and side[i] == previous_side[i]
                if total > 0.0:
                    curvature[n_active] = problem.weight[i] * total
                    active[n_active] = i
                    n_active += 1
            nonzero = False
            for j in range(q):
                gradient[j] = shrinkage * theta[j]
            for i in range(m):
                if residual[i] != 0.0:
                    row = problem_row(problem, i)
                    gradient[0] += problem.weight[i] * residual[i]
                    for j in range(1, q):
                        gradient[j] += row[j - 1] * problem.weight[i] * residual[i]
            for j in range(q):
                nonzero = nonzero or gradient[j] != 0.0
            if not nonzero or same:
                break  # the minimum, or a full step on these hinges' quadratic reached it
            memcpy(direction, gradient, q * sizeof(double))
            if not ridge_solve(problem, active, n_active, curvature, shrinkage, direction,
                               system, rows_vector):
                break
            slope = 0.0
            for j in range(q):
                direction[j] = -direction[j]
                slope += gradient[j] * direction[j]
            for i in range(m):
                row = problem_row(problem, i)
                total = 0.0
                total += direction[0]
                for j in range(1, q):
                    total += row[j - 1] * direction[j]
                change[i] = total
            step = 1.0
            while True:
                for i in range(m):
                    candidate[i] = prediction[i] + step * change[i]
                for j in range(q):
                    theta_candidate[j] = theta[j] + step * direction[j]
                candidate_value = ridge_objective(problem, candidate, theta_candidate,
                                                  shrinkage)
                if (candidate_value <= value + RIDGE_ARMIJO * step * slope
                        or step < RIDGE_MIN_STEP):
                    break
                step *= 0.5
            if candidate_value > value:
                break
            memcpy(theta, theta_candidate, q * sizeof(double))
            memcpy(prediction, candidate, m * sizeof(double))
            value = candidate_value
            have_previous = step == 1.0
            if have_previous:
                memcpy(previous_side, side, m * sizeof(unsigned char))


def ridge_newton(A, offset, lower, upper, weight, double shrinkage):
    """:class:`RidgeNewton` from Python (tests): minimise ``sum_i weight_i
    h(offset_i + b + A_i . w) + shrinkage (b^2 + |w|^2)``, ``h(f) = (lower -
    f)_+^2 + (f - upper)_+^2``.

    Parameters
    ----------
    A : ndarray of shape (n_rows, n_columns)
    offset, lower, upper, weight : ndarray of shape (n_rows,)
        ``lower``/``upper`` are the hinges' breakpoints (infinite ones
        inactive), ``weight`` positive.
    shrinkage : float
        Positive strength of the ridge penalty.

    Returns
    -------
    b : float
    w : ndarray of shape (n_columns,)
    """
    rows = np.ascontiguousarray(A, dtype=np.float64)
    if rows.ndim != 2:
        raise ValueError(f"A must be 2-D, got shape {rows.shape}.")
    cdef const double[:, ::1] row_view = rows
    cdef const double[::1] offset_view = np.ascontiguousarray(offset, dtype=np.float64)
    cdef const double[::1] lower_view = np.ascontiguousarray(lower, dtype=np.float64)
    cdef const double[::1] upper_view = np.ascontiguousarray(upper, dtype=np.float64)
    cdef const double[::1] weight_view = np.ascontiguousarray(weight, dtype=np.float64)
    cdef intp_t m = rows.shape[0], p = rows.shape[1]
    if not (offset_view.shape[0] == lower_view.shape[0] == upper_view.shape[0]
            == weight_view.shape[0] == m):
        raise ValueError("A, offset, lower, upper and weight must have the same number "
                         "of rows.")
    theta = np.zeros(p + 1)
    cdef double[::1] theta_view = theta
    cdef RidgeNewton solver = RidgeNewton(m, p)
    cdef HingeProblem problem
    if m > 0:
        problem.rows = &row_view[0, 0] if p > 0 else NULL
        problem.lower = &lower_view[0]
        problem.upper = &upper_view[0]
        problem.weight = &weight_view[0]
        problem.n_rows = m
        problem.n_features = p
        with nogil:
            solver.solve(&problem, &offset_view[0], shrinkage, &theta_view[0])
    return float(theta[0]), theta[1:]
