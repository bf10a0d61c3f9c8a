"""The elastic net on the squared-hinge problem along a path of alphas (the
linear model of ``_linear``), by a proximal generalised Newton method
(``_newton``): :class:`GramNewton` and :func:`elastic_net_path`.

One solver and its path driver: about 850 lines, kept whole because the
working set, the row screening and the Gram updates share their state.

The elastic-net path, on standardised features ``Z`` and weights summing
to 1, minimises::

    sum_i w_i h_i(zt_i . theta)
         + alpha * (l1_ratio |beta|_1 + (1 - l1_ratio) / 2 |beta|^2).

Coordinate descent minimises ``Q`` plus the penalty over a working set of
features, in O(p) per coordinate through ``q = G theta - c`` (only roughly
while the active hinges still change; every few sweeps an Anderson
extrapolation of the iterates, and feature-sign Cholesky moves, speed up
slow, nearly collinear cases); an Armijo line search on the true objective
along the step keeps every step a descent; then the rows whose active
hinges changed update ``G`` and ``c`` (in blocks: symmetric rank-k BLAS
updates). The line search and the updates visit only the rows a step may
move across a breakpoint (row screening, see ``GramNewton``). When no hinge
changes after a full step the working set's solution is exact. ``2 q`` is
the true gradient, so checking the optimality (KKT) of the features outside
the working set costs O(p).

Along a decreasing path of alphas each solution starts from the previous
one, and the working set starts as the non-zero coefficients plus the
features kept by the sequential strong rule (Tibshirani et al. 2012,
``|gradient_j| >= 2 alpha_k l1_ratio - alpha_{k-1} l1_ratio``).
"""

from libc.math cimport INFINITY, fabs, isfinite, sqrt
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from libcpp.queue cimport priority_queue
from libcpp.utility cimport pair

import numpy as np

from scipy.linalg.cython_blas cimport daxpy, ddot, dsyrk
from scipy.linalg.cython_lapack cimport dposv

from .._utils._typedefs cimport check_index, intp_t

from ._standardisation import SparseStandardised

from ._hinge_problem cimport (ABOVE, BELOW, HingeProblem, hinge_sides, hinges_change,
                              problem_row)


cdef enum:
    MAX_HALVINGS = 30        # Armijo line-search halvings before giving up a step
    PATH_MAX_STEPS = 200     # proximal Newton steps per alpha
    FLIP_BLOCK = 256         # rows whose active hinges changed, added to G at once
    ANDERSON_DEPTH = 5       # sweeps' differences combined by an extrapolation

cdef double PATH_ARMIJO = 0.01       # sufficient-decrease fraction
cdef double MIN_CURVATURE = 1e-3     # floor of a coordinate's curvature, times its column's
cdef double INEXACT = 0.1            # share of the local model's gap an inexact step leaves
cdef double SLOW_PROGRESS = 0.5      # a sweep leaving more of the gap than this is slow


cdef inline double soft_threshold(double value, double threshold) noexcept nogil:
    if value > threshold:
        return value - threshold
    if value < -threshold:
        return value + threshold
    return 0.0


cdef inline double allowed(double value, signed char sign) noexcept nogil:
    """``value`` on the side its sign constraint allows (0 otherwise)."""
    if sign * value < 0.0:
        return 0.0
    return value


cdef inline double descent_at_zero(double gradient, signed char sign) noexcept nogil:
    """How fast a coefficient at 0 lowers the smooth part of the objective
    in the best direction its sign constraint allows: ``|gradient|`` when
    free, ``-gradient`` when it may only grow, ``gradient`` when it may only
    shrink. It leaves 0 when this exceeds the l1 penalty."""
    if sign == 0:
        return fabs(gradient)
    return -sign * gradient


ctypedef pair[double, intp_t] Deadline   # (-deadline, row): a max-heap pops the earliest


ctypedef struct Penalty:
    double l1              # alpha * l1_ratio: of |beta|_1
    double l2              # alpha * (1 - l1_ratio): of |beta|^2 / 2


ctypedef struct WorkingSet:
    intp_t* features       # the features whose coefficients may move, in order added
    unsigned char* member  # per feature: whether it is in the set
    intp_t size


ctypedef struct NewtonStep:
    int outcome            # 1: the step taken in full, 0: shortened, -1: no descent
    double moved           # the length of the step taken
    intp_t changed         # the rows whose active hinges changed
    bint solved            # the local model was solved to the tolerance


cdef class GramNewton:
    """The state of one path: ``theta``, the active hinges, ``G``, ``c`` and
    ``q = G theta - c`` (index 0: the intercept), and the rows' deadlines.

    Row screening: a row's active hinges can only change when its prediction
    crosses a breakpoint. Once evaluated at ``theta`` (prediction ``f_i``,
    distance ``slack_i`` to its nearest finite breakpoint), the row keeps
    its hinges while ``|zt_i . (theta' - theta)| <= |zt_i| |theta' -
    theta| < slack_i``; with ``L`` the length of the path that ``theta``
    has travelled, that holds until ``L`` reaches the row's deadline ``L_i +
    slack_i / |zt_i|``. A step therefore evaluates only the rows whose
    deadline it may pass (a min-heap of deadlines), in O(p) each: the other
    rows' contributions to the loss are exactly the local model's.

    (Attributes are incremented as ``x = x + 1``: with the debug build's
    ``nonecheck``, Cython rejects in-place operators on them without the GIL.)
    """
    cdef HingeProblem problem            # standardised features and the hinges
    cdef object problem_arrays           # the memory the problem points into
    cdef intp_t n, p1                    # rows; coefficients with the intercept
    cdef double[::1] row_norm            # |zt_i|
    cdef unsigned char[::1] sides        # the hinges of row i in G (ABOVE, BELOW)
    cdef priority_queue[Deadline] deadlines
    cdef double travelled                # L: length of theta's path so far
    cdef intp_t[::1] candidates          # rows a step may change
    cdef double[::1] candidate_f         # their predictions before the step
    cdef double[::1] candidate_change    # zt_i . step
    cdef double[::1] direction           # the step of theta
    cdef intp_t n_candidates
    cdef double[::1, :] G
    cdef double[::1] c
    cdef double[::1] theta
    cdef double[::1] q
    cdef double[::1] column_curvature    # 2 sum_i w_i zt_ij^2
    cdef double[::1, :] added            # up to FLIP_BLOCK rows sqrt(w) zt_i as columns,
    cdef double[::1, :] removed          # of hinges entering / leaving G
    cdef intp_t n_added, n_removed
    cdef intp_t[::1] support             # support_newton: the coefficients solved for,
    cdef double[::1] system              # their system (column-major, m x m),
    cdef double[::1] solution            # and its right-hand side, then solution
    cdef double[:, ::1] history          # last sweeps' iterates (intercept, working set)
    cdef intp_t n_history
    cdef double[::1] extrapolated        # anderson_step: its step (intercept, working set),
    cdef double[::1] G_step              # G times it,
    cdef double[::1] combination         # and the differences' system
    cdef double[::1] old_theta           # newton_step: theta and q before the step,
    cdef double[::1] old_q
    cdef double[::1] full_q              # and q after the full step
    cdef intp_t sweeps                   # coordinate-descent sweeps, in all
    cdef const signed char* signs        # per feature: its coefficient's sign
    cdef object signs_array              # (-1, 0: free, +1; NULL: none), kept alive
    cdef bint sparse                     # Z a SparseStandardised: rows made when read
    cdef const int64_t* sparse_indptr    # its X's rows (CSR)
    cdef const int32_t* sparse_indices
    cdef const double* sparse_data
    cdef const double* sparse_mean       # its columns' means, inverse scales and
    cdef const double* sparse_inverse_scale
    cdef const double* sparse_zero       # standardised zeros
    cdef double[::1] row_values          # the row read last (sparse)

    def __cinit__(self, Z, const double[::1] lower, const double[::1] upper,
                  const double[::1] weight, double intercept,
                  const signed char[::1] signs=None):
        """``Z`` (an ndarray, row-major, or a :class:`SparseStandardised`) of at
        least one row and column; ``signs``: each coefficient kept >= 0
        (+1), <= 0 (-1) or free (0), None: all free."""
        cdef const double[:, ::1] dense
        cdef const int64_t[::1] indptr
        cdef const int32_t[::1] indices
        cdef const double[::1] data, mean, inverse_scale, zero
        weight_array = np.asarray(weight)
        self.sparse = isinstance(Z, SparseStandardised)
        if self.sparse:
            indptr = Z.X.indptr.astype(np.int64)
            indices = Z.X.indices.astype(np.int32, copy=False)
            data = Z.X.data
            mean, inverse_scale, zero = Z.mean, Z.inverse_scale, Z.zero
            self.sparse_indptr = &indptr[0]
            self.sparse_indices = &indices[0] if indices.shape[0] else NULL
            self.sparse_data = &data[0] if data.shape[0] else NULL
            self.sparse_mean = &mean[0]
            self.sparse_inverse_scale = &inverse_scale[0]
            self.sparse_zero = &zero[0]
            self.row_values = np.zeros(Z.shape[1])
            self.problem.rows = NULL
            self.problem_arrays = (Z, indptr, indices, lower, upper, weight)
            row_squares = Z.row_squares()
            column_squares = Z.weighted_column_squares(weight_array)
        else:
            dense = Z
            self.problem.rows = &dense[0, 0]
            self.problem_arrays = (Z, lower, upper, weight)
            Z_array = np.asarray(Z)
            row_squares = np.einsum("ij,ij->i", Z_array, Z_array)
            column_squares = np.einsum("i,ij,ij->j", weight_array, Z_array, Z_array)
        self.signs_array = signs
        self.signs = &signs[0] if signs is not None else NULL
        self.problem.lower = &lower[0]
        self.problem.upper = &upper[0]
        self.problem.weight = &weight[0]
        self.problem.n_rows = Z.shape[0]
        self.problem.n_features = Z.shape[1]
        self.n = Z.shape[0]
        self.p1 = Z.shape[1] + 1
        self.sides = np.zeros(self.n, dtype=np.uint8)
        self.travelled = 0.0
        self.candidates = np.zeros(self.n, dtype=np.intp)
        self.candidate_f = np.zeros(self.n)
        self.candidate_change = np.zeros(self.n)
        self.direction = np.zeros(self.p1)
        self.G = np.zeros((self.p1, self.p1), order="F")
        self.c = np.zeros(self.p1)
        self.theta = np.zeros(self.p1)
        self.theta[0] = intercept
        self.q = np.zeros(self.p1)
        self.added = np.zeros((self.p1, FLIP_BLOCK), order="F")
        self.removed = np.zeros((self.p1, FLIP_BLOCK), order="F")
        self.n_added = 0
        self.n_removed = 0
        self.support = np.zeros(self.p1, dtype=np.intp)
        self.system = np.zeros(self.p1 * self.p1)
        self.solution = np.zeros(self.p1)
        self.history = np.zeros((ANDERSON_DEPTH + 1, self.p1))
        self.n_history = 0
        self.extrapolated = np.zeros(self.p1)
        self.G_step = np.zeros(self.p1)
        self.combination = np.zeros(ANDERSON_DEPTH * (ANDERSON_DEPTH + 1))
        self.old_theta = np.zeros(self.p1)
        self.old_q = np.zeros(self.p1)
        self.full_q = np.zeros(self.p1)
        self.sweeps = 0
        self.row_norm = np.sqrt(1.0 + row_squares)
        self.column_curvature = 2.0 * np.concatenate(([weight_array.sum()], column_squares))
        cdef intp_t i
        with nogil:
            for i in range(self.n):
                self.evaluate(i, intercept)
            self.flush_block()

    cdef inline const double* row(self, intp_t i) noexcept nogil:
        """Row i of Z: in the problem's rows, or made from a sparse X's
        (valid until the next row is read)."""
        cdef int64_t k
        cdef intp_t j
        if not self.sparse:
            return problem_row(&self.problem, i)
        check_index(i, self.n)
        memcpy(&self.row_values[0], self.sparse_zero, (self.p1 - 1) * sizeof(double))
        for k in range(self.sparse_indptr[i], self.sparse_indptr[i + 1]):
            j = self.sparse_indices[k]
            check_index(j, self.p1 - 1)
            self.row_values[j] = ((self.sparse_data[k] - self.sparse_mean[j])
                                  * self.sparse_inverse_scale[j])
        return &self.row_values[0]

    cdef inline double descent(self, intp_t feature, double gradient) noexcept nogil:
        """``descent_at_zero`` of a feature's coefficient under its sign
        constraint."""
        return descent_at_zero(gradient, self.signs[feature] if self.signs != NULL else 0)

    cdef void flush_block(self) noexcept nogil:
        """G += added . added' - removed . removed' (the rows gathered so
        far): symmetric rank-k updates of G's lower triangle (half a general
        product's work), then copied to the upper one."""
        cdef char lower = b"L", no = b"N"
        cdef int m = <int>self.p1, k
        cdef double one = 1.0, minus_one = -1.0
        cdef intp_t i, j
        if self.n_added == 0 and self.n_removed == 0:
            return
        if self.n_added > 0:
            k = <int>self.n_added
            dsyrk(&lower, &no, &m, &k, &one, &self.added[0, 0], &m, &one, &self.G[0, 0], &m)
        if self.n_removed > 0:
            k = <int>self.n_removed
            dsyrk(&lower, &no, &m, &k, &minus_one, &self.removed[0, 0], &m, &one,
                  &self.G[0, 0], &m)
        for j in range(self.p1):
            for i in range(j + 1, self.p1):
                self.G[j, i] = self.G[i, j]
        self.n_added = 0
        self.n_removed = 0

    cdef intp_t evaluate(self, intp_t i, double f) noexcept nogil:
        """Row i, whose prediction at ``theta`` is ``f``: bring its hinges in
        G, c and q up to date (rows gathered for ``flush_block``), and give it
        its new deadline. Returns 1 when its hinges changed."""
        cdef intp_t j
        cdef const HingeProblem* problem = &self.problem
        cdef const double* row = self.row(i)
        cdef unsigned char old_sides = self.sides[i]
        cdef unsigned char sides = hinge_sides(f, problem.lower[i], problem.upper[i])
        cdef int above_change = ((sides & ABOVE) != 0) - ((old_sides & ABOVE) != 0)
        cdef int below_change = ((sides & BELOW) != 0) - ((old_sides & BELOW) != 0)
        cdef double weight_change, target_change, q_change, slack = INFINITY
        if problem.weight[i] <= 0.0:
            return 0
        if isfinite(problem.upper[i]):
            slack = fabs(f - problem.upper[i])
        if isfinite(problem.lower[i]) and fabs(f - problem.lower[i]) < slack:
            slack = fabs(f - problem.lower[i])
        if slack < INFINITY:
            self.deadlines.push(Deadline(-(self.travelled + slack / self.row_norm[i]), i))
        if sides == old_sides:
            return 0
        weight_change = problem.weight[i] * (above_change + below_change)
        target_change = 0.0
        if above_change != 0:
            target_change += problem.weight[i] * problem.upper[i] * above_change
        if below_change != 0:
            target_change += problem.weight[i] * problem.lower[i] * below_change
        self.sides[i] = sides
        # G += weight_change zt zt', c += target_change zt; so q = G theta - c
        # moves by (weight_change f - target_change) zt
        q_change = weight_change * f - target_change
        self.c[0] += target_change
        self.q[0] += q_change
        for j in range(1, self.p1):
            self.c[j] += target_change * row[j - 1]
            self.q[j] += q_change * row[j - 1]
        # (both hinges crossed the other way: G does not change)
        if weight_change > 0.0:
            self.gather(&self.added[0, self.n_added], row, sqrt(weight_change))
            self.n_added = self.n_added + 1
        elif weight_change < 0.0:
            self.gather(&self.removed[0, self.n_removed], row, sqrt(-weight_change))
            self.n_removed = self.n_removed + 1
        if self.n_added == FLIP_BLOCK or self.n_removed == FLIP_BLOCK:
            self.flush_block()
        return 1

    cdef inline void gather(self, double* column, const double* row,
                            double factor) noexcept nogil:
        """``column`` (a block's, p1 long) = factor * zt_i, ``row`` z_i."""
        cdef intp_t j
        column[0] = factor
        for j in range(1, self.p1):
            column[j] = factor * row[j - 1]

    cdef double model_change(self, intp_t i, double f, double new_f) noexcept nogil:
        """The change of row i's hinges counted in G (the local model's
        loss) from ``f`` to ``new_f``."""
        cdef double change = 0.0
        if self.sides[i] & ABOVE:
            change += (new_f - f) * (new_f + f - 2.0 * self.problem.upper[i])
        if self.sides[i] & BELOW:
            change += (new_f - f) * (new_f + f - 2.0 * self.problem.lower[i])
        return change

    cdef intp_t coordinate_sweep(self, const intp_t* working, intp_t n_working,
                                 double l1, double l2, bint whole_q) noexcept nogil:
        """One sweep of exact coordinate minimisation of Q plus the penalty
        over the intercept and the working set; returns how many
        coefficients changed sign (zero counting as a sign). Only the
        entries of q of the intercept and the working set follow (see
        ``update_outside``), unless ``whole_q`` (cheaper, being contiguous,
        for a large set)."""
        cdef intp_t k, j, sign_changes = 0
        cdef double curvature, gradient, new, step, l1_j, l2_j
        for k in range(-1, n_working):
            j = 0 if k < 0 else working[k] + 1
            l1_j = 0.0 if j == 0 else l1
            l2_j = 0.0 if j == 0 else l2
            curvature = 2.0 * self.G[j, j]
            if curvature < MIN_CURVATURE * self.column_curvature[j]:
                curvature = MIN_CURVATURE * self.column_curvature[j]
            curvature += l2_j
            if curvature <= 0.0:
                continue
            gradient = 2.0 * self.q[j] + l2_j * self.theta[j]
            new = soft_threshold(curvature * self.theta[j] - gradient, l1_j) / curvature
            if j > 0 and self.signs != NULL:
                # the minimum of a convex function of one variable on a half-line
                new = allowed(new, self.signs[j - 1])
            step = new - self.theta[j]
            if step == 0.0:
                continue
            sign_changes += (new > 0.0) != (self.theta[j] > 0.0) or (
                (new < 0.0) != (self.theta[j] < 0.0))
            self.theta[j] = new
            self.move_q(j, step, working, n_working, whole_q)
        return sign_changes

    cdef inline void move_q(self, intp_t j, double step, const intp_t* working,
                            intp_t n_working, bint whole_q) noexcept nogil:
        """q += step G[:, j] (on the intercept and working set unless whole_q)."""
        cdef intp_t i, m
        cdef int size = <int>self.p1, one = 1
        if whole_q:
            daxpy(&size, &step, &self.G[0, j], &one, &self.q[0], &one)
            return
        self.q[0] += step * self.G[0, j]
        for m in range(n_working):
            i = working[m] + 1
            self.q[i] += step * self.G[i, j]

    cdef int support_newton(self, const intp_t* working, intp_t n_working, double l1,
                            double l2, bint whole_q) noexcept nogil:
        """Move toward the exact minimum of Q plus the penalty on the current
        signs: on the intercept and the non-zero coefficients S,
        ``(2 G_SS + l2 I) theta_S = 2 c_S - l1 sign(theta_S)`` (no penalty on
        the intercept), by Cholesky. Along the segment to it the objective
        equals this quadratic until a coefficient reaches 0, and decreases:
        the move stops there and that coefficient becomes 0 (feature-sign
        search, Lee et al. 2007). Coordinate descent is slow where features
        are nearly collinear; these moves finish its work once the signs
        settle. Returns 1 for the full move, 0 for a move stopped at a
        zero, -1 when the system is not positive definite."""
        cdef intp_t k, a, b, m = 0, first_zero = -1
        cdef int size, one = 1, info = 0
        cdef char lower = b"L"
        cdef double value, fraction = 1.0, ratio, step
        self.support[m] = 0
        m += 1
        for k in range(n_working):
            if self.theta[working[k] + 1] != 0.0:
                self.support[m] = working[k] + 1
                m += 1
        for a in range(m):
            for b in range(m):
                self.system[a + b * m] = 2.0 * self.G[self.support[a], self.support[b]]
            if a > 0:
                self.system[a + a * m] += l2
                value = self.theta[self.support[a]]
                self.solution[a] = 2.0 * self.c[self.support[a]] - (
                    l1 if value > 0.0 else -l1)
            else:
                self.solution[a] = 2.0 * self.c[0]
        size = <int>m
        dposv(&lower, &size, &one, &self.system[0], &size, &self.solution[0], &size, &info)
        if info != 0:
            return -1
        # the first coefficient to reach 0 on the way, if any
        for a in range(1, m):
            value = self.theta[self.support[a]]
            if (self.solution[a] > 0.0) != (value > 0.0) or self.solution[a] == 0.0:
                ratio = value / (value - self.solution[a])
                if ratio < fraction:
                    fraction = ratio
                    first_zero = a
        for a in range(m):
            value = self.theta[self.support[a]]
            step = fraction * (self.solution[a] - value)
            if a == first_zero:
                step = -value
            if step != 0.0:
                self.theta[self.support[a]] = value + step
                self.move_q(self.support[a], step, working, n_working, whole_q)
        return 1 if first_zero < 0 else 0

    cdef void remember_iterate(self, const intp_t* working,
                               intp_t n_working) noexcept nogil:
        """Append theta (intercept, then the working set) to the history."""
        cdef intp_t k
        self.history[self.n_history, 0] = self.theta[0]
        for k in range(n_working):
            self.history[self.n_history, k + 1] = self.theta[working[k] + 1]
        self.n_history = self.n_history + 1

    cdef bint anderson_step(self, const intp_t* working, intp_t n_working, double l1,
                            double l2, bint whole_q) noexcept nogil:
        """Anderson extrapolation of the sweeps (as Bertrand and Massias 2021
        accelerate coordinate descent): the affine combination of the last
        ANDERSON_DEPTH iterates whose weights ``c`` minimise ``|U c|``,
        ``U`` the differences of consecutive iterates (``U'U c`` proportional
        to 1, weights summing to 1). Sweeps converge slowly on nearly
        collinear features, along a few directions: the combination jumps
        along them. Kept only when it lowers Q plus the penalty (computed
        exactly: ``2 q.d + d.G d`` for the step ``d``); clears the history.
        Refused when it moves a coefficient to the side its sign constraint
        forbids. Returns whether it was kept."""
        cdef intp_t a, b, k, j, m = n_working + 1
        cdef int depth = ANDERSON_DEPTH, one = 1, info = 0, size = <int>self.p1
        cdef char lower = b"L"
        cdef double total, trace = 0.0, change = 0.0, step, old, new
        cdef double* system = &self.combination[0]
        cdef double* weights = &self.combination[ANDERSON_DEPTH * ANDERSON_DEPTH]
        self.n_history = 0
        for a in range(ANDERSON_DEPTH):
            for b in range(a + 1):
                total = 0.0
                for k in range(m):
                    total += ((self.history[a + 1, k] - self.history[a, k])
                              * (self.history[b + 1, k] - self.history[b, k]))
                system[a + b * ANDERSON_DEPTH] = total
            trace += system[a + a * ANDERSON_DEPTH]
            weights[a] = 1.0
        if not trace > 0.0:
            return False
        for a in range(ANDERSON_DEPTH):  # a relative ridge: the differences are
            system[a + a * ANDERSON_DEPTH] += 1e-10 * trace  # often nearly dependent
        dposv(&lower, &depth, &one, system, &depth, weights, &depth, &info)
        total = 0.0
        for a in range(ANDERSON_DEPTH):
            total += weights[a]
        if info != 0 or not (isfinite(total) and total != 0.0):
            return False
        for j in range(self.p1):
            self.G_step[j] = 0.0
        for k in range(m):
            j = 0 if k == 0 else working[k - 1] + 1
            new = 0.0
            for a in range(ANDERSON_DEPTH):
                new += weights[a] * self.history[a + 1, k]
            step = new / total - self.theta[j]
            self.extrapolated[k] = step
            if step != 0.0:
                daxpy(&size, &step, &self.G[0, j], &one, &self.G_step[0], &one)
        for k in range(m):
            j = 0 if k == 0 else working[k - 1] + 1
            step = self.extrapolated[k]
            change += step * (2.0 * self.q[j] + self.G_step[j])
            if k > 0:
                old = self.theta[j]
                new = old + step
                if self.signs != NULL and allowed(new, self.signs[j - 1]) != new:
                    return False
                change += l1 * (fabs(new) - fabs(old)) + 0.5 * l2 * (new * new - old * old)
        if not change < 0.0:
            return False
        for k in range(m):
            j = 0 if k == 0 else working[k - 1] + 1
            self.theta[j] += self.extrapolated[k]
        if whole_q:
            for j in range(self.p1):
                self.q[j] += self.G_step[j]
        else:
            self.q[0] += self.G_step[0]
            for k in range(n_working):
                j = working[k] + 1
                self.q[j] += self.G_step[j]
        return True

    cdef void update_outside(self, const unsigned char* in_working, const intp_t* working,
                             intp_t n_working, const double* old_theta) noexcept nogil:
        """Bring the entries of q outside the working set up to date with the
        change of theta since ``old_theta`` (sweeps update only the inside)."""
        cdef intp_t i, k, j
        cdef double step
        for k in range(-1, n_working):
            j = 0 if k < 0 else working[k] + 1
            step = self.theta[j] - old_theta[j]
            if step == 0.0:
                continue
            for i in range(1, self.p1):
                if not in_working[i - 1]:
                    self.q[i] += step * self.G[i, j]

    cdef double optimality_gap(self, const intp_t* working, intp_t n_working,
                               double l1, double l2) noexcept nogil:
        """Largest violation of the optimality conditions of Q plus the
        penalty over the intercept and the working set (the distance of 0
        from each coordinate's subdifferential; 2 q is the gradient)."""
        cdef intp_t k, j
        cdef double largest = fabs(2.0 * self.q[0]), gradient, violation
        for k in range(n_working):
            j = working[k] + 1
            gradient = 2.0 * self.q[j] + l2 * self.theta[j]
            if self.theta[j] > 0.0:
                violation = fabs(gradient + l1)
            elif self.theta[j] < 0.0:
                violation = fabs(gradient - l1)
            else:
                violation = self.descent(j - 1, gradient) - l1
            if violation > largest:
                largest = violation
        return largest

    cdef double penalty(self, const double* theta, const intp_t* working,
                        intp_t n_working, double l1, double l2) noexcept nogil:
        cdef intp_t k
        cdef double value = 0.0, beta
        for k in range(n_working):
            beta = theta[working[k] + 1]
            value += l1 * fabs(beta) + 0.5 * l2 * beta * beta
        return value

    cdef NewtonStep newton_step(self, const WorkingSet* working_set, Penalty penalty,
                                double tol, intp_t max_sweeps,
                                bint inexact) noexcept nogil:
        """Minimise Q plus the penalty over the working set (at most
        ``max_sweeps`` sweeps), then move along the step as far as the line
        search allows, and re-evaluate the rows whose deadline the step may
        have passed. ``inexact``: the local model is only solved to a tenth
        of its optimality gap at the start (while the active hinges still
        change). Returns what the step did (a ``NewtonStep``)."""
        cdef NewtonStep result
        cdef const HingeProblem* problem = &self.problem
        cdef const intp_t* working = working_set.features
        cdef intp_t n_working = working_set.size
        cdef double l1 = penalty.l1, l2 = penalty.l2
        cdef double* old_theta = &self.old_theta[0]
        cdef double* old_q = &self.old_q[0]
        cdef double* full_q = &self.full_q[0]
        cdef intp_t k, j, row, sweep, sign_changes
        cdef const double* row_features
        cdef double slope, step, t = 1.0, length = 0.0, model_slope, model_curvature
        cdef double loss_change, penalty_old, penalty_new, f, df, new_f
        cdef int halving, outcome = -1, n_features = <int>(self.p1 - 1), one = 1
        # a large working set: loops over every coefficient, contiguous, beat
        # loops through the set's indices
        cdef bint whole_q = 4 * n_working >= self.p1
        for j in range(self.p1):
            old_theta[j] = self.theta[j]
            old_q[j] = self.q[j]
        # the first feature-sign move once the sweeps have cost about as much
        # as its factorisation (m^3 / 3 against m p per sweep, m ~ the set)
        cdef intp_t next_jump = n_working * n_working // (3 * self.p1), wait = 1
        cdef double gap = self.optimality_gap(working, n_working, l1, l2)
        cdef double inner_tol = max(tol, INEXACT * gap) if inexact else tol
        cdef double previous_gap
        self.n_history = 0
        self.remember_iterate(working, n_working)
        for sweep in range(max_sweeps):
            if gap <= inner_tol:
                break
            self.sweeps = self.sweeps + 1
            previous_gap = gap
            sign_changes = self.coordinate_sweep(working, n_working, l1, l2, whole_q)
            self.remember_iterate(working, n_working)
            if self.n_history == ANDERSON_DEPTH + 1:
                self.anderson_step(working, n_working, l1, l2, whole_q)
                self.remember_iterate(working, n_working)
            gap = self.optimality_gap(working, n_working, l1, l2)
            if (gap > tol and gap > SLOW_PROGRESS * previous_gap and sign_changes == 0
                    and sweep >= next_jump):
                # slow progress while the signs hold: move toward the exact
                # minimum on them (a Cholesky factorisation: each try waits
                # twice as many sweeps as the one before)
                self.support_newton(working, n_working, l1, l2, whole_q)
                self.n_history = 0
                self.remember_iterate(working, n_working)
                gap = self.optimality_gap(working, n_working, l1, l2)
                next_jump = sweep + wait
                wait *= 2
        result.solved = gap <= tol
        if not whole_q:
            self.update_outside(working_set.member, working, n_working, old_theta)
        # along theta(t) = old + t d: the local model's loss changes by
        # 2 t old_q.d + t^2 d.G d, with G d = full_q - old_q; the objective's
        # directional derivative (the l1 part by its change over the step)
        model_slope = 0.0
        model_curvature = 0.0
        for j in range(self.p1):
            step = self.theta[j] - old_theta[j]
            self.direction[j] = step
            full_q[j] = self.q[j]
            length += step * step
            model_slope += 2.0 * old_q[j] * step
            model_curvature += (full_q[j] - old_q[j]) * step
        length = sqrt(length)
        slope = model_slope
        for k in range(n_working):
            j = working[k] + 1
            step = self.direction[j]
            slope += l2 * old_theta[j] * step + l1 * (fabs(old_theta[j] + step)
                                                      - fabs(old_theta[j]))
        # the rows whose hinges the full step may change: their predictions
        # before it and their change along it
        self.n_candidates = 0
        while (not self.deadlines.empty()
               and -self.deadlines.top().first <= self.travelled + length):
            row = self.deadlines.top().second
            row_features = self.row(row)
            self.deadlines.pop()
            f = old_theta[0]
            df = self.direction[0]
            if whole_q:  # contiguous over every feature (theta is 0 outside the set)
                f += ddot(&n_features, &old_theta[1], &one,
                          <double*>row_features, &one)
                df += ddot(&n_features, &self.direction[1], &one,
                           <double*>row_features, &one)
            else:
                for k in range(n_working):
                    j = working[k] + 1
                    f += old_theta[j] * row_features[j - 1]
                    df += self.direction[j] * row_features[j - 1]
            self.candidates[self.n_candidates] = row
            self.candidate_f[self.n_candidates] = f
            self.candidate_change[self.n_candidates] = df
            self.n_candidates = self.n_candidates + 1
        penalty_old = self.penalty(old_theta, working, n_working, l1, l2)
        for halving in range(MAX_HALVINGS):
            for j in range(self.p1):
                self.theta[j] = old_theta[j] + t * self.direction[j]
                self.q[j] = old_q[j] + t * (full_q[j] - old_q[j])
            loss_change = t * model_slope + t * t * model_curvature
            for k in range(self.n_candidates):
                row = self.candidates[k]
                f = self.candidate_f[k]
                new_f = f + t * self.candidate_change[k]
                loss_change += problem.weight[row] * (
                    hinges_change(f, new_f, problem.lower[row], problem.upper[row])
                    - self.model_change(row, f, new_f))
            penalty_new = self.penalty(&self.theta[0], working, n_working, l1, l2)
            if loss_change + penalty_new - penalty_old <= PATH_ARMIJO * t * slope:
                outcome = 1 if halving == 0 else 0
                break
            t *= 0.5
        if outcome < 0:
            t = 0.0
            for j in range(self.p1):
                self.theta[j] = old_theta[j]
                self.q[j] = old_q[j]
        self.travelled = self.travelled + t * length
        result.outcome = outcome
        result.moved = t * length
        result.changed = 0
        for k in range(self.n_candidates):
            row = self.candidates[k]
            result.changed += self.evaluate(row, self.candidate_f[k]
                                            + t * self.candidate_change[k])
        self.flush_block()
        return result


def elastic_net_path(Z, const double[::1] lower,
                     const double[::1] upper, const double[::1] weight,
                     const double[::1] alphas, double l1_ratio, double tol,
                     intp_t max_sweeps, double intercept, signs=None):
    """Solutions along decreasing ``alphas``, each from the previous one.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features), row-major, or SparseStandardised
        Standardised features.
    lower, upper : ndarray of shape (n_samples,)
        Breakpoints of the hinges.
    weight : ndarray of shape (n_samples,)
        Non-negative weights summing to 1.
    alphas : ndarray of shape (n_alphas,)
        Decreasing penalties.
    l1_ratio : float
    tol : float
        An alpha's solution is reached when a Newton step moves the
        predictions by less than ``tol`` (root mean square) and the
        optimality conditions hold outside the working set.
    max_sweeps : int
        Coordinate-descent sweeps allowed per alpha (over its Newton steps).
    intercept : float
        Start of the intercept (the coefficients start at 0).
    signs : ndarray of shape (n_features,), int8, default=None
        Sign constraints: coefficient j stays >= 0 (+1), <= 0 (-1) or is
        free (0); None: all free. Coordinate descent minimises each
        coefficient on its allowed half-line (the projection of its free
        minimum: the function of one coefficient is convex), the
        feature-sign moves stop where a coefficient reaches 0 anyway, an
        extrapolation that crosses a sign is refused, and a coefficient at 0
        is optimal when no allowed direction descends faster than the l1
        penalty.

    Returns
    -------
    coefs : ndarray of shape (n_alphas, n_features)
    intercepts : ndarray of shape (n_alphas,)
    sweeps : int
        Coordinate-descent sweeps, in all.
    converged : ndarray of shape (n_alphas,), bool
    """
    if not isinstance(Z, SparseStandardised):
        Z = np.asarray(Z)
        if Z.dtype != np.float64 or not Z.flags.c_contiguous or Z.ndim != 2:
            raise ValueError("Z must be a 2-D, C-contiguous float64 array.")
    cdef intp_t n = Z.shape[0], p = Z.shape[1], n_alphas = alphas.shape[0]
    if lower.shape[0] != n or upper.shape[0] != n or weight.shape[0] != n:
        raise ValueError("Z, lower, upper and weight must have the same number of rows.")
    if not max_sweeps >= 1:
        raise ValueError(f"max_sweeps must be at least 1, got {max_sweeps}.")
    if n == 0 or p == 0:
        raise ValueError(f"Z must have rows and columns, got shape ({n}, {p}).")
    if signs is not None:
        signs = np.ascontiguousarray(signs, dtype=np.int8)
        if signs.shape != (p,) or not np.isin(signs, (-1, 0, 1)).all():
            raise ValueError(f"signs must hold -1, 0 or 1 for each of the {p} features.")
    cdef GramNewton state = GramNewton(Z, lower, upper, weight, intercept, signs)
    coefs_array = np.zeros((n_alphas, p))
    intercepts_array = np.zeros(n_alphas)
    converged_array = np.zeros(n_alphas, dtype=np.uint8)
    cdef double[:, ::1] coefs = coefs_array
    cdef double[::1] intercepts = intercepts_array
    cdef unsigned char[::1] converged = converged_array
    cdef intp_t[::1] features = np.zeros(p, dtype=np.intp)
    cdef unsigned char[::1] member = np.zeros(p, dtype=np.uint8)
    cdef WorkingSet working
    working.features = &features[0]
    working.member = &member[0]
    cdef Penalty penalty
    cdef NewtonStep step
    cdef intp_t j, k, n_added, first_sweep
    cdef double previous_l1 = -1.0, threshold
    cdef bint inexact
    with nogil:
        for k in range(n_alphas):
            penalty.l1 = alphas[k] * l1_ratio
            penalty.l2 = alphas[k] * (1.0 - l1_ratio)
            # strong rule (the basic one for the first alpha); 2 q is the gradient
            threshold = (2.0 * penalty.l1 - previous_l1 if previous_l1 >= 0.0
                         else penalty.l1)
            working.size = 0
            for j in range(p):
                member[j] = state.column_curvature[j + 1] > 0.0 and (
                    state.theta[j + 1] != 0.0 or state.descent(j, 2.0 * state.q[j + 1])
                    >= threshold)
                if member[j]:
                    features[working.size] = j
                    working.size += 1
            first_sweep = state.sweeps
            inexact = True
            for _ in range(PATH_MAX_STEPS):
                if state.sweeps - first_sweep >= max_sweeps:
                    break
                step = state.newton_step(&working, penalty, tol,
                                         max_sweeps - (state.sweeps - first_sweep), inexact)
                # the local model is solved to tol once the hinges settle or a
                # step finds no descent; settled: solved to tol, and no descent
                # left along the step, a negligible step, or a full step after
                # which the same hinges are active (exact)
                if step.outcome < 0 or step.changed == 0:
                    inexact = False
                if not (step.solved and (step.outcome < 0 or step.moved <= tol
                                         or (step.outcome == 1 and step.changed == 0))):
                    continue
                n_added = 0
                for j in range(p):
                    if (not member[j] and state.column_curvature[j + 1] > 0.0
                            and state.descent(j, 2.0 * state.q[j + 1]) > penalty.l1):
                        member[j] = 1
                        features[working.size] = j
                        working.size += 1
                        n_added += 1
                if n_added == 0:
                    converged[k] = 1
                    break
            for j in range(p):
                coefs[k, j] = state.theta[j + 1]
            intercepts[k] = state.theta[0]
            previous_l1 = penalty.l1
    return coefs_array, intercepts_array, state.sweeps, converged_array.astype(bool)
