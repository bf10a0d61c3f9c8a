"""The stacking combiner: convex weights of members' predictions that minimise
the squared hinge loss of the combined prediction outside each interval.

Given out-of-fold predictions ``P`` (n_samples x n_members), interval bounds
and sample weights ``s``, :func:`simplex_weights` solves

    minimise  f(w) = sum_i s_i ([lower_i - P_i w]_+^2 + [P_i w - upper_i]_+^2)
    over      w >= 0, sum(w) = 1

(the squared hinge of :class:`mmit.MMIT`, margin 0: an exact value costs its
squared error, an infinite bound nothing; the registry's ``squared_hinge``,
the loss of the generalised Newton solver of ``_newton``, which refuses a
loss without curvature). ``f`` is convex, continuously differentiable and
piecewise quadratic: on the rows that are outside their interval at ``w``
it is a quadratic of ``w``. The solver is a finite generalised Newton
method (Mangasarian 2002) restricted to the simplex:

1. At ``w``, take the rows outside their interval and the bound each
   violates; their squared errors, weighted by the loss's curvature, form
   a quadratic ``q`` that agrees with ``f`` and with its gradient at ``w``.
2. Minimise ``q`` over the simplex exactly with a primal active-set method
   (Nocedal and Wright 2006, algorithm 16.3): the equality-constrained
   problem on the members with positive weight is one small linear system;
   a weight that would turn negative stops the step and leaves the free
   set, a member whose Lagrange multiplier is negative enters it.
3. Move from ``w`` toward that minimiser by an exact line search: along a
   segment every hinge is again a hinge of the step length, so the optimal
   step is the optimal constant of intervals, found by the project's
   dynamic-programming solver (``_solver.optimal_costs``) in O(n log n).

Because the weights sum to one, every row's predictions and bounds may be
moved by the same constant without changing ``f``: they are centred on the
members' mean prediction of the row first, which leaves the members'
differences (members predict alike, and their raw predictions would make
the quadratic nearly singular).

It stops when the Frank-Wolfe gap ``g.w - min_j g_j`` (``g`` the gradient
of ``f``), an upper bound of ``f(w) - min f``, is at most ``tol * f(w)``:
an optimality certificate, not a heuristic. Each iteration costs
O(n m^2) for the quadratic plus O(m^3) per active-set step and
O(n log n) for the line search; a handful of iterations is typical.

Ties: when several weight vectors reach the minimum (members whose
predictions are collinear), the active-set steps are minimum-norm steps
from the start at equal weights, so that identical members share their
weight equally.
"""

import numpy as np

from ..linear_model._newton import NEWTON_LOSS, newton_scale

# Newton iterations (and active-set steps per member) before stopping
_MAX_ITER = 200


def combined_loss(weights, predictions, lower, upper, sample_weight, loss=NEWTON_LOSS):
    """``f(w)``: the weighted ``loss`` (margin 0: the intervals are the
    hinges' breakpoints) of ``predictions @ weights``."""
    return float(sample_weight @ loss.value(lower, upper, predictions @ weights))


def _simplex_qp(Q, r, start):
    """A minimiser of ``v.Q v / 2 - r.v`` over the simplex (``Q`` positive
    semi-definite), by a primal active-set method started at the feasible
    ``start``.

    On the free set F each step solves the equality-constrained problem in
    the subspace ``sum(p) = 0`` with the pseudo-inverse of the projected
    curvature, so that a singular ``Q`` (collinear members) gives the
    minimum-norm step, the same for identical members; where the objective
    is linear along a null direction of the curvature, the step follows that
    direction until a weight reaches zero.
    """
    m = r.shape[0]
    v = start.copy()
    free = v > 0.0
    scale = max(float(np.max(np.abs(Q))), float(np.max(np.abs(r))), 1e-300)
    for _ in range(_MAX_ITER * m):
        F = np.flatnonzero(free)
        k = F.shape[0]
        gradient = Q @ v - r
        projector = np.eye(k) - 1.0 / k
        curvature = projector @ Q[np.ix_(F, F)] @ projector
        slope = projector @ gradient[F]
        inverse = np.linalg.pinv(curvature, rcond=1e-12, hermitian=True)
        step = -inverse @ slope
        flat = slope + curvature @ step  # the slope along null directions
        if np.max(np.abs(flat)) > 1e-12 * scale:
            step, length = -flat, np.inf  # linear descent: to the first bound
        else:
            length = 1.0
            if np.max(np.abs(step)) <= 1e-15:
                # optimal on the free set: a member at zero whose multiplier
                # (its derivative minus the free members') is negative enters
                multipliers = gradient - gradient[F].mean()
                multipliers[free] = np.inf
                entering = int(np.argmin(multipliers))
                if multipliers[entering] >= -1e-13 * scale:
                    return v
                free[entering] = True
                continue
        shrinking = step < 0.0
        if not shrinking.any():  # no descent left within the rounding
            return v
        ratios = np.full(k, np.inf)
        ratios[shrinking] = -v[F[shrinking]] / step[shrinking]
        blocking = int(np.argmin(ratios))
        length = min(length, ratios[blocking])
        v[F] += length * step
        if ratios[blocking] <= length:
            v[F[blocking]] = 0.0
            free[F[blocking]] = False
    return v  # not reached in practice; feasible, and the line search only improves


def _line_search(combined, direction, lower, upper, sample_weight, loss):
    """The step ``t`` in [0, 1] minimising ``f`` along ``combined + t *
    direction``: each row's hinges, as functions of ``t``, are the hinges of
    the interval ``[(lower - combined) / direction, (upper - combined) /
    direction]`` (bounds swapped where ``direction < 0``) with weight
    ``s * direction**2``, so the best step is their optimal constant."""
    moving = direction != 0.0
    d = direction[moving]
    with np.errstate(invalid="ignore"):  # inf - inf cannot occur: combined is finite
        from_lower = (lower[moving] - combined[moving]) / d
        from_upper = (upper[moving] - combined[moving]) / d
    increasing = d > 0.0
    step_lower = np.where(increasing, from_lower, from_upper)
    step_upper = np.where(increasing, from_upper, from_lower)
    weight = sample_weight[moving] * d * d
    if not np.any(weight > 0.0):
        return 0.0
    step = loss.optimal_constant(step_lower, step_upper, 0.0, weight)
    return min(max(step, 0.0), 1.0)


def simplex_weights(predictions, lower, upper, sample_weight, *, loss=NEWTON_LOSS,
                    tol=1e-10):
    """Non-negative weights summing to one that minimise the squared hinge
    loss (margin 0) of the weighted combination of ``predictions``.

    Parameters
    ----------
    predictions : ndarray of shape (n_samples, n_members)
        Finite predictions of each member (out of fold).
    lower, upper : ndarray of shape (n_samples,)
        Interval bounds (infinite allowed).
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights of the rows.
    loss : IntervalLoss, default=the registry's ``squared_hinge``
        The loss minimised: one the generalised Newton solver accepts
        (ValueError for another, see ``_newton.newton_scale``).
    tol : float, default=1e-10
        Relative optimality: stop when the Frank-Wolfe gap, a bound on
        ``f(w) - min f``, is at most ``tol * f(w)``.

    Returns
    -------
    weights : ndarray of shape (n_members,)
        Non-negative, summing to one.
    """
    newton_scale(loss)  # a loss the Newton steps minimise: differentiable
    n_members = predictions.shape[1]
    weights = np.full(n_members, 1.0 / n_members)
    if n_members == 1:
        return weights
    # weights summing to one, each row may be moved by a constant: by the
    # members' mean prediction, which leaves only their differences (members
    # that predict alike would otherwise make the problem ill-conditioned)
    center = predictions.mean(axis=1)
    predictions = predictions - center[:, np.newaxis]
    lower, upper = lower - center, upper - center
    for _ in range(_MAX_ITER):
        combined = predictions @ weights
        values, slopes, curvatures = loss.derivatives(lower, upper, combined)
        value = float(sample_weight @ values)
        gradient = predictions.T @ (sample_weight * slopes)
        if value == 0.0 or gradient @ weights - gradient.min() <= tol * value:
            break
        # the quadratic of the rows outside their interval, toward the bound
        # each violates (below it: a negative slope), with their curvature
        outside = curvatures > 0.0
        rows = predictions[outside]
        curvature = sample_weight[outside] * curvatures[outside]
        target = np.where(slopes[outside] < 0.0, lower[outside], upper[outside])
        Q = rows.T @ (curvature[:, np.newaxis] * rows)
        newton = _simplex_qp(Q, rows.T @ (curvature * target), weights)
        step = _line_search(combined, predictions @ (newton - weights), lower, upper,
                            sample_weight, loss)
        candidate = newton if step == 1.0 else weights + step * (newton - weights)
        candidate = np.maximum(candidate, 0.0)
        candidate /= candidate.sum()
        if step == 0.0 or combined_loss(candidate, predictions, lower, upper,
                                        sample_weight, loss) >= value:
            break
        weights = candidate
    return weights
