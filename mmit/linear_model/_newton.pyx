"""The penalised squared-hinge problem and its generalised Newton method.

The problem (a ``HingeProblem``, ``_newton.pxd``): rows ``x_i`` with
weights ``w_i`` and hinges breaking at ``lower_i`` and ``upper_i`` (infinite
ones never active; both active where a wide margin crossed them), and the
coefficients ``theta = (b, beta)`` of the predictions ``f_i = offset_i + b
+ x_i . beta`` (``offset_i``: the node models' constant, 0 for the linear
model) minimising

    sum_i w_i h_i(f_i) + penalty(theta),
    h_i(f) = (f - upper_i)_+^2 + (lower_i - f)_+^2.

The loss is piecewise quadratic: where the set of active hinges (the rows'
*sides*, :func:`hinge_sides`) does not change it equals the quadratic of
the active hinges, ``Q(theta) = theta' G theta - 2 c' theta + const``,
``G = sum_{active} w_i xt_i xt_i'`` and ``c = sum_{active} w_i t_i xt_i``
(``xt_i = (1, x_i)``, ``t_i`` the hinge's breakpoint): its generalised
Hessian is ``2 G`` (Mangasarian 2002; Keerthi and DeCoste 2005, the finite
Newton method for L2-loss SVMs). The solver is the generalised Newton
method on it: minimise ``Q`` plus the penalty (the local model), move
toward that minimum as far as an Armijo line search on the true objective
allows, update the active hinges; when a full step leaves the same hinges
active, the local model's minimum is the problem's. Two penalties, and two
ways of solving the local model, each a module of its own:

- a ridge ``shrinkage * |theta|^2`` (``_ridge_newton.RidgeNewton``, the
  node models of ``mmit.tree._node_models``): the local model's minimum is
  one Cholesky solve of the ridge system (through the rows' space,
  Woodbury, when the active rows are fewer than the columns); the line
  search evaluates every row.
- an elastic net on ``beta`` along a decreasing path of alphas
  (``_elastic_net_path``: ``GramNewton``, ``elastic_net_path``, the linear
  model of ``_linear``): a proximal Newton method whose local model is
  solved by coordinate descent on a working set, keeping ``G`` between
  steps and screening the rows a step may move across a breakpoint.

The problem and the rows' hinges, which both cimport, are declared in
``_hinge_problem.pxd``; the features are standardised first
(``_standardisation``, shared by both). The kernels are compiled for the
squared hinge (its curvature defines ``G``); any differentiable loss of
the registry is a multiple of it beyond the breakpoints, minimised on
scaled weights (:func:`newton_scale`, where a caller's loss entry is
checked).
"""

import numpy as np

from .._loss._loss import LOSSES


def newton_scale(loss):
    """The factor of the weights under which the generalised Newton solvers minimise
    ``loss``, a differentiable registry entry (``mmit._loss._loss.LOSSES``).

    The kernels are compiled for the squared hinge, ``d**2`` at a distance
    ``d`` beyond a breakpoint. A differentiable loss whose sums of hinges the
    interval solver holds (pieces of degree two at most, one breakpoint per
    hinge, no kink) is ``scale * d**2``: the squared hinge on weights
    ``scale * w``, which is what the linear model, the linear leaves and the
    stack's combiner minimise for it.

    Raises
    ------
    ValueError
        When the loss is not differentiable (a Newton method needs its
        curvature), or its hinge is not a multiple of the squared hinge.
    """
    if not loss.differentiable:
        raise ValueError(
            f"The {loss.name!r} loss is not differentiable: the generalised Newton "
            "solver needs its curvature.")
    # a lower hinge at 0, predictions 0, 0.5, 1 and 2 below it
    distance = np.array([0.0, 0.5, 1.0, 2.0])
    value, _, curvature = loss.derivatives(np.zeros(4), np.full(4, np.inf), -distance)
    scale = curvature[2] / 2.0
    if not (scale > 0.0 and np.allclose(value, scale * distance**2, rtol=1e-12, atol=0.0)
            and np.allclose(curvature[1:], 2.0 * scale, rtol=1e-12, atol=0.0)):
        raise ValueError(f"The {loss.name!r} loss is not a multiple of the squared hinge "
                         "beyond its breakpoints: the generalised Newton solver cannot "
                         "minimise it.")
    return float(scale)


#: The loss the linear models, the linear leaves and the stack's combiner
#: minimise (any differentiable entry would do, see :func:`newton_scale`).
NEWTON_LOSS = LOSSES["squared_hinge"]
