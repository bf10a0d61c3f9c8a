"""The penalized Newton solver of the additive models (IntervalGAM, its
CV and IntervalMARS' refits) and the penalized fit's covariance.

The fit minimises ``sum_i w_i h_i(f(x_i)) + lam * penalty``, ``h_i`` the
squared hinge of row ``i`` outside its margin-shrunk interval and ``f`` linear
in the parameters, by the generalised Newton method
(:func:`penalized_newton`): the loss is piecewise quadratic, so each step
minimises the quadratic of the rows outside their margins plus the penalty
(one Cholesky solve, or with sign constraints a box-constrained quadratic
solved exactly by an active set, :func:`box_quadratic`), and an Armijo
search on the true objective keeps the steps descending. It converges when
a full step leaves the same hinges active (finite, as for the linear
model's solver).

The terms' bands come from the penalized fit's Bayesian covariance (Wahba
1983, as mgcv and pygam give theirs, :func:`coefficient_covariance`): the
squared hinge of a row outside its interval taken as a Gaussian
log-likelihood of its distance to the nearest bound, a row inside its
interval (zero curvature) informing nothing, and the penalty as a Gaussian
prior: ``V = sigma^2 (X_A' W X_A + lam S)^{-1}`` on the parameters, ``X_A``
the rows outside their intervals, ``sigma^2`` their weighted squared
distances over their weight less the effective degrees of freedom. Sign
constraints are left out of it (a band of a monotone term is that of the
free fit at the same coefficients). :func:`fellner_schall_penalties`
chooses a penalty per term from it.

Cost: O(n M^2) a Newton step for the Gram matrix of the active rows (row
blocks of the sparse design, dense products), O(M^3) for its solve, ``M``
the parameters; a few to twenty steps.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp

#: Rows of the design made dense at a time for the Gram matrix.
GRAM_BLOCK_ROWS = 4096
#: The ridge on every parameter but the intercept, in the objective (whose
#: loss is a mean): keeps the problem strictly convex where the data leave a
#: direction free (a basis function without rows, collinear terms, more
#: parameters than rows), so that its minimum is one, the same for integer
#: weights as for repeated rows.
REGULARISATION = 1e-7
#: The Armijo condition's share of the predicted decrease, and the halvings
#: of a step the line search tries.
ARMIJO, MAX_HALVINGS = 1e-4, 40
#: The relative rounding of the objective: a step predicted to lower it by
#: less has converged.
ROUNDING = 1e-14
#: The least damping of a damped Newton step, relative to the Hessian's mean
#: diagonal (:func:`penalized_newton`).
MIN_DAMPING = 1e-6

#: The Fellner-Schall iteration's relative tolerance on the penalties, its
#: updates at most and the range of its penalties around its start
#: (:func:`fellner_schall_penalties`).
FS_TOL, FS_MAX_ITER, FS_RANGE = 0.05, 10, 1e6
#: The degrees of freedom below which a term's penalty no longer matters to
#: the iteration's convergence.
FS_NEGLIGIBLE_EDF = 0.01
#: The penalty the Fellner-Schall iteration starts from, and the scales of
#: its penalties that IntervalGAMCV cross-validates.
FS_START, FS_SCALES = 1.0, np.geomspace(100.0, 0.01, 9)


def active_gram(design, curvature):
    """``design' diag(curvature) design`` over the rows of positive curvature,
    as a dense matrix (row blocks made dense for the products)."""
    rows = np.flatnonzero(curvature > 0)
    gram = np.zeros((design.shape[1], design.shape[1]))
    for start in range(0, rows.size, GRAM_BLOCK_ROWS):
        block = rows[start:start + GRAM_BLOCK_ROWS]
        dense = design[block].toarray()
        gram += dense.T @ (curvature[block, np.newaxis] * dense)
    return gram


def box_quadratic(hessian, target, signs, start, max_iter):
    """The minimum of ``x' H x / 2 - target' x`` subject to ``signs * x >= 0``
    (free where ``signs`` is 0), by a primal active-set method from the
    feasible ``start``; exact (finite) for a positive definite ``H``."""
    constrained = signs != 0
    x = np.where(constrained & (signs * start <= 0), 0.0, start)
    at_bound = constrained & (x == 0)
    for _ in range(max_iter):
        free = ~at_bound
        point = np.zeros_like(x)
        point[free] = scipy.linalg.solve(hessian[np.ix_(free, free)], target[free],
                                         assume_a="pos")
        crossing = constrained & free & (signs * point < 0)
        if crossing.any():  # move to the first bound on the way
            share = x[crossing] / (x[crossing] - point[crossing])
            step = share.min()
            x = x + step * (point - x)
            hit = np.flatnonzero(crossing)[share <= step]
            x[hit] = 0.0
            at_bound[hit] = True
            continue
        x = point
        multiplier = signs * (hessian @ x - target)
        leaving = at_bound & (multiplier < -1e-12 * (1.0 + np.abs(target).max()))
        if not leaving.any():
            return x
        at_bound[np.flatnonzero(leaving)[np.argmin(multiplier[leaving])]] = False
    return x


@dataclass(frozen=True)
class Posterior:
    """The penalized fit's Gaussian approximation at its parameters (module
    doc): the inverse of ``X_A' W X_A + penalty`` (the raw weights of the
    rows outside their intervals), the effective degrees of freedom and the
    scale ``sigma^2`` (NaN where the rows outside their intervals weigh no
    more than the degrees of freedom)."""

    inverse: np.ndarray
    edf: float
    scale: float

    @classmethod
    def of_fit(cls, design, problem, parameters, lam, shrinkage, weight_sum):
        predictions = problem.predictions(parameters)
        objective = problem.objective
        # the raw weights of the rows outside their intervals (their curvature / 2)
        active_weight = problem.curvature(predictions) / 2.0 * weight_sum
        gram = active_gram(problem.parameter_columns, active_weight)
        hessian = gram + design.penalty(lam, shrinkage)
        hessian[1:, 1:] += REGULARISATION * weight_sum * np.eye(hessian.shape[0] - 1)
        if hessian[0, 0] <= 0.0:  # no row outside its interval: the level is free
            hessian[0, 0] = 1.0
        inverse = scipy.linalg.solve(hessian, np.eye(hessian.shape[0]), assume_a="pos")
        edf = float(np.sum(inverse * gram))  # trace(inverse @ gram), both symmetric
        distance = (np.maximum(predictions - objective.upper, 0.0)
                    + np.maximum(objective.lower - predictions, 0.0))
        residual_weight = active_weight.sum() - edf
        scale = (float(np.sum(active_weight * distance ** 2)) / residual_weight
                 if residual_weight > 0 else np.nan)
        return cls(inverse, edf, scale)


def coefficient_covariance(design, problem, parameters, lam, shrinkage, weight_sum):
    """The Bayesian covariance of the design's coefficients (n_columns,
    n_columns) at the fitted ``parameters`` (:class:`Posterior`) and the
    effective degrees of freedom."""
    posterior = Posterior.of_fit(design, problem, parameters, lam, shrinkage, weight_sum)
    return (posterior.scale * (problem.mapping @ posterior.inverse @ problem.mapping.T),
            posterior.edf)


def fellner_schall_penalties(fit, design, problem, lam, shrinkage, weight_sum, start,
                              tol=None, max_iter=None):
    """Each term's penalty by the generalized Fellner-Schall iteration (Wood
    and Fasiolo 2017), from ``lam`` and the parameters ``start``: with the
    rows outside their intervals as Gaussian (:class:`Posterior`), each
    update moves term ``j``'s penalty to ``sigma^2 (r_j - lam_j tr(H^-1
    S_j)) / (beta_j' S_j beta_j)`` (``r_j`` the rank of its penalty ``S_j``,
    ``H`` the penalized Hessian; the numerator is the term's degrees of
    freedom), which raises the restricted likelihood (REML), until no term
    of ``FS_NEGLIGIBLE_EDF`` degrees of freedom or more changes its penalty
    by a share above ``tol``, or ``max_iter`` updates (None: ``FS_TOL``,
    ``FS_MAX_ITER``; the cross-validated scale of the penalties makes a
    coarse estimate enough). ``fit(lams, start)`` returns the parameters at
    the penalties ``lams``. Returns the penalties (within ``FS_RANGE`` times ``lam``) and
    the parameters at them."""
    blocks = [(slice(term.parameter, term.parameter + term.n_parameters),
               term.penalty(shrinkage)) for term in design.terms]
    ranks = np.array([np.linalg.matrix_rank(penalty) for _, penalty in blocks])
    lams = np.full(len(blocks), float(lam))
    parameters = fit(lams, start)
    for _ in range(FS_MAX_ITER if max_iter is None else max_iter):
        posterior = Posterior.of_fit(design, problem, parameters, lams, shrinkage,
                                     weight_sum)
        if not np.isfinite(posterior.scale):
            break
        updated, freedom = np.empty_like(lams), np.empty_like(lams)
        for j, (block, penalty) in enumerate(blocks):
            size = float(parameters[block] @ penalty @ parameters[block])
            trace = float(np.sum(posterior.inverse[block, block] * penalty))
            freedom[j] = max(ranks[j] - lams[j] * trace, 0.0)
            updated[j] = posterior.scale * freedom[j] / size if size > 0 else np.inf
        updated = np.clip(updated, lam / FS_RANGE, lam * FS_RANGE)
        # a term of almost no degree of freedom left is shrunk to nothing: its
        # penalty's growth (slow, as the iteration's towards infinity) is moot
        change = np.max(np.abs(np.log(updated / lams))[freedom >= FS_NEGLIGIBLE_EDF],
                        initial=0.0)
        lams = updated
        parameters = fit(lams, parameters)
        if change < (FS_TOL if tol is None else tol):
            break
    return lams, parameters


@dataclass
class PenalizedProblem:
    """The fit's problem: the design ``columns`` (CSR) times the coefficient
    map, the objective's mean loss (``objective``, weights normalised) plus
    ``parameters' penalty parameters`` (the penalty over the weights' sum),
    the parameters' signs. ``parameter_columns`` is the design in the
    parameters (CSR: a spline's row has a value for each parameter up to its
    last non-zero basis function), made once: the Newton steps' products
    and Gram matrices are taken in it, not through the dense map."""

    columns: sp.csr_matrix
    mapping: np.ndarray
    objective: object
    signs: np.ndarray
    parameter_columns: sp.csr_matrix = field(init=False)

    def __post_init__(self):
        self.parameter_columns = sp.csr_matrix(self.columns @ sp.csr_matrix(self.mapping))

    def predictions(self, parameters):
        return self.parameter_columns @ parameters

    def curvature(self, predictions):
        """The generalised Hessian of the mean loss in each prediction: a hinge
        counts where the prediction is at its breakpoint too (an exact value's
        loss is quadratic there, and a row on its bound is taken as active,
        the line search correcting a step that moves it inside)."""
        objective = self.objective
        lower, upper = objective.lower, objective.upper
        active = ((predictions >= upper).astype(np.float64)
                  + (predictions <= lower).astype(np.float64))
        active[lower == upper] = 1.0
        return 2.0 * objective.weight * active

    def value(self, parameters, penalty):
        return float(self.objective(self.predictions(parameters))
                     + parameters @ penalty @ parameters)


def penalized_newton(problem, penalty, start, tol, max_iter, max_change):
    """The parameters minimising the problem's objective plus ``penalty``, by
    the generalised Newton method from ``start`` (module doc). Stops when an
    undamped full step moves no prediction by more than ``max_change *
    tol`` (or when no step along it lowers the objective beyond its
    rounding), or after ``max_iter`` steps. Returns the parameters, the steps
    taken and whether it converged.

    A step the line search must shorten makes the next steps damped
    (Levenberg-Marquardt: ``damping`` times the Hessian's mean diagonal
    added to it), a full step undamps them again: where the data leave
    directions almost free (few rows, no penalty), undamped steps would
    overshoot along them and move many rows across their breakpoints."""
    parameters = start.copy()
    constrained = bool(np.any(problem.signs))
    damping = 0.0
    for step in range(1, max_iter + 1):
        predictions = problem.predictions(parameters)
        gradient = problem.parameter_columns.T @ problem.objective.gradient(predictions)
        gradient += 2.0 * penalty @ parameters
        hessian = active_gram(problem.parameter_columns, problem.curvature(predictions))
        hessian += 2.0 * penalty
        if hessian[0, 0] <= 0.0:  # no hinge active: the intercept's gradient is 0 too
            hessian[0, 0] = 1.0
        current = problem.value(parameters, penalty)
        while True:
            direction = _newton_direction(hessian, gradient, damping, parameters,
                                          problem.signs if constrained else None)
            decrease = float(gradient @ direction)
            change = float(np.abs(problem.predictions(direction)).max(initial=0.0))
            # a step that lowers the objective by less than its rounding is none
            if decrease < -ROUNDING * current and change > tol * max_change:
                break
            if not damping:  # converged: an undamped full step changes nothing
                return parameters + (direction if decrease < 0 else 0.0), step, True
            damping = 0.0  # small because damped? see the undamped step
        share = 1.0
        for _ in range(MAX_HALVINGS):
            candidate = parameters + share * direction
            if problem.value(candidate, penalty) <= current + ARMIJO * share * decrease:
                break
            share /= 2.0
        else:  # no step lowers the objective beyond its rounding: converged
            return parameters, step, True
        if current - problem.value(candidate, penalty) <= ROUNDING * abs(current):
            return candidate, step, True  # the objective no longer moves
        damping = (0.0 if damping < MIN_DAMPING else damping / 4.0) if share == 1.0 \
            else max(4.0 * damping, MIN_DAMPING)
        parameters = candidate
    return parameters, max_iter, False


def _newton_direction(hessian, gradient, damping, parameters, signs):
    """The step to the minimum of the local quadratic model (its Hessian
    damped by ``damping`` times its mean diagonal), within the parameters'
    signs when given."""
    if damping:
        hessian = hessian + damping * np.mean(np.diag(hessian)) * np.eye(hessian.shape[0])
    if signs is None:  # Cholesky factor and solve (LAPACK's posv, without its
        # condition estimate, a third of the solve's time on small systems)
        return -scipy.linalg.cho_solve(scipy.linalg.cho_factor(hessian), gradient)
    target = hessian @ parameters - gradient
    return box_quadratic(hessian, target, signs, parameters,
                         10 * hessian.shape[0]) - parameters


def row_deviations(rows, covariance):
    """The standard deviation of each row of the sparse ``rows`` times
    coefficients of ``covariance``."""
    variances = np.asarray(rows.multiply(rows @ covariance).sum(axis=1)).ravel()
    return np.sqrt(np.maximum(variances, 0.0))

