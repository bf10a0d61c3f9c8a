"""The losses of interval regression: one registry entry per loss.

A loss ``h`` applies to the distance of a prediction ``f`` outside an
interval's hinges: the interval ``[lower, upper]`` has a lower hinge
breaking at ``lower + margin`` and an upper hinge at ``upper - margin``
(an exact value, ``lower == upper``, at the value itself; an infinite
bound has no hinge), and a row of weight ``w`` costs ``w * (h(lower + margin
- f) + h(f - upper + margin))``, ``h(d) = 0`` for ``d <= 0``.

Each loss is one :class:`IntervalLoss` in :data:`LOSSES`, made from its
item of ``_loss_list.LOSS_LIST`` (its position there is its tag): its
name, its tag, whether it is differentiable and whether hinges sum to one
hinge. Its algebra is compiled (``mmit/_loss/_<name>.pxd``, reached
through ``_loss.pxd``); everything else is derived from the entry: the
estimators' ``loss`` options, the solver's optima
(:meth:`IntervalLoss.optimal_costs`,
:meth:`IntervalLoss.optimal_constant`), its value, gradient and curvature
as numpy functions, and the Python-side objective of the boosting stages
and the linear model (:meth:`IntervalLoss.objective`). The models above
take an entry and use its tag: the trees' split criterion
(``mmit.tree._criterion.HingeCriterion``) runs the solver variant compiled
for it; the Newton solvers (the linear model, the linear leaves, the
stack's combiner) refuse an entry that is not ``differentiable``.

This module sits above the solver (it imports it; the solver only cimports
the compiled algebra of ``_loss.pxd``, which needs no module at run time)
and knows nothing of the models that use the losses.
How a loss is added: ``docs/development.rst``.
"""

from cython.parallel cimport prange

from .._utils._parallel cimport PARALLEL_MIN_ROWS, threads_for

import numpy as np

from .._utils._buffers import empty

from ._loss_list import LOSS_LIST
from ._solver import hinge_positions, optimal_constant, optimal_costs


def derivatives(const double[::1] lower, const double[::1] upper,
                const double[::1] prediction, int tag, buffers=None):
    """The loss of tag ``tag``, its derivative and its second derivative in
    each prediction, as rows of a (3, n) array (of ``buffers`` when given)."""
    cdef Py_ssize_t n = prediction.shape[0], i
    if lower.shape[0] != n or upper.shape[0] != n:
        raise ValueError("lower, upper and prediction must have the same length.")
    check_loss_tag(tag)
    out_array = empty(buffers, "derivatives", (3, n))
    cdef double[:, ::1] out = out_array
    with nogil:
        for i in range(n):
            out[0, i] = tagged_interval_loss(<LossTag> tag, lower[i], upper[i],
                                             prediction[i])
            tagged_derivatives(<LossTag> tag, lower[i], upper[i], prediction[i],
                               &out[1, i], &out[2, i])
    return out_array


cdef enum:
    ROWS_PER_BLOCK = 1 << 14    # rows whose losses one thread sums in order


def weighted_loss(const double[::1] lower, const double[::1] upper,
                  const double[::1] prediction, const double[::1] weight, int tag,
                  int n_threads=1):
    """The weighted sum of the loss of tag ``tag`` over the predictions (one
    pass, no intermediate arrays): blocks of rows on ``n_threads`` threads,
    each summed in order, then the blocks' sums in order (the same total
    whatever the threads)."""
    cdef Py_ssize_t n = prediction.shape[0], n_blocks, block, i
    cdef double total = 0.0, part
    if lower.shape[0] != n or upper.shape[0] != n or weight.shape[0] != n:
        raise ValueError("lower, upper, prediction and weight must have the same length.")
    check_loss_tag(tag)
    n_blocks = (n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    sums_array = np.empty(max(n_blocks, 1))
    cdef double[::1] sums = sums_array
    for block in prange(n_blocks, nogil=True,
                        num_threads=threads_for(n, PARALLEL_MIN_ROWS, n_threads),
                        schedule="static"):
        part = 0.0
        for i in range(block * ROWS_PER_BLOCK, min(n, (block + 1) * ROWS_PER_BLOCK)):
            part = part + weight[i] * tagged_interval_loss(<LossTag> tag, lower[i],
                                                           upper[i], prediction[i])
        sums[block] = part
    for block in range(n_blocks):
        total += sums[block]
    return total


class IntervalLoss:
    """A loss of the distance outside interval targets (a registry entry).

    Parameters
    ----------
    name : str
        The name estimators take as ``loss``.
    tag : int
        The loss's tag (its position in ``_loss_list.LOSS_LIST``): which
        variant of the compiled kernels serves it.
    differentiable : bool
        Whether the loss has a gradient everywhere and a curvature (the
        linear hinge has a kink at each breakpoint and no curvature: a Newton
        step cannot fit it, the solver must).
    sums_to_one_hinge : bool, default=False
        Whether the hinges of rows whose margins a range of predictions
        crosses sum there to one hinge at their weighted mean position plus a
        constant (what the booster's fit on Dask collections needs).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit._loss._loss import LOSSES
    >>> loss = LOSSES["squared_hinge"]
    >>> lower, upper = np.array([0.0, 0.0]), np.array([1.0, np.inf])
    >>> loss.value(lower, upper, np.array([3.0, -2.0]))
    array([4., 4.])
    >>> loss.gradient(lower, upper, np.array([3.0, -2.0]))
    array([ 4., -4.])
    """

    def __init__(self, name, tag, differentiable, sums_to_one_hinge=False):
        check_loss_tag(tag)
        self.name = name
        self.tag = tag
        self.differentiable = differentiable
        self.sums_to_one_hinge = sums_to_one_hinge

    def __repr__(self):
        return f"IntervalLoss({self.name!r})"

    def derivatives(self, lower, upper, prediction):
        """:meth:`value`, :meth:`gradient` and :meth:`curvature` at once, as
        the rows of a (3, n) array."""
        prediction = np.ascontiguousarray(prediction, dtype=np.float64)
        lower = np.ascontiguousarray(np.broadcast_to(lower, prediction.shape),
                                     dtype=np.float64)
        upper = np.ascontiguousarray(np.broadcast_to(upper, prediction.shape),
                                     dtype=np.float64)
        return derivatives(lower, upper, prediction, self.tag)

    def value(self, lower, upper, prediction):
        """Loss of each prediction (1-D) for hinges breaking at ``lower`` and
        ``upper`` (the bounds moved in by the margin: :func:`breakpoints`)."""
        return self.derivatives(lower, upper, prediction)[0]

    def gradient(self, lower, upper, prediction):
        """Derivative of :meth:`value` in each prediction (0 at a kink)."""
        return self.derivatives(lower, upper, prediction)[1]

    def curvature(self, lower, upper, prediction):
        """Second derivative of :meth:`value` in each prediction (0 at a kink)."""
        return self.derivatives(lower, upper, prediction)[2]

    def objective(self, lower, upper, margin, sample_weight, n_threads=1):
        """The mean weighted loss of predictions of these intervals
        (:class:`Objective`)."""
        return Objective(self, lower, upper, margin, sample_weight, n_threads)

    def optimal_costs(self, lower, upper, margin, sample_weight, fallback=0.0):
        """The solver's optimal prediction and cost after each row (validated
        inputs; see :func:`mmit.compute_optimal_costs`)."""
        return optimal_costs(lower, upper, margin, self.tag, sample_weight, fallback)

    def optimal_constant(self, lower, upper, margin, sample_weight):
        """The constant minimising the weighted loss of all intervals (0
        without a finite bound)."""
        prediction, _ = optimal_constant(
            np.ascontiguousarray(lower, dtype=np.float64),
            np.ascontiguousarray(upper, dtype=np.float64), float(margin), self.tag,
            np.ascontiguousarray(sample_weight, dtype=np.float64))
        return prediction


def breakpoints(lower, upper, margin):
    """The hinges' breakpoints of intervals: lower bounds moved up and upper
    bounds moved down by the margin (exact values not moved, infinite
    bounds infinite)."""
    return hinge_positions(np.ascontiguousarray(lower, dtype=np.float64),
                           np.ascontiguousarray(upper, dtype=np.float64), float(margin))


class Objective:
    """Mean weighted loss of predictions of fixed intervals, with its
    gradient and curvature (for the models that fit predictions directly:
    boosting stages, the linear model, the node models).

    Parameters
    ----------
    loss : IntervalLoss
    lower, upper : ndarray of shape (n_samples,)
        Interval bounds.
    margin : float
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights; they are normalised to sum to 1.
    n_threads : int, default=1
        Threads evaluating the mean loss.

    Attributes
    ----------
    lower, upper : ndarray of shape (n_samples,)
        The hinges' breakpoints (:func:`breakpoints`).
    weight : ndarray of shape (n_samples,)
        The normalised weights.
    """

    def __init__(self, loss, lower, upper, margin, sample_weight, n_threads=1):
        self.loss = loss
        self.lower, self.upper = breakpoints(lower, upper, margin)
        self.weight = sample_weight / sample_weight.sum()
        self.n_threads = n_threads

    def __call__(self, prediction):
        """Mean loss of ``prediction`` (an array of one prediction per row)."""
        return weighted_loss(self.lower, self.upper,
                             np.ascontiguousarray(prediction, dtype=np.float64),
                             self.weight, self.loss.tag, self.n_threads)

    def gradient(self, prediction):
        """Gradient of the mean loss over all rows in each prediction (a
        subgradient for the linear hinge)."""
        return self.weight * self.loss.gradient(self.lower, self.upper, prediction)

    def curvature(self, prediction):
        """Second derivative of the mean loss in each prediction."""
        return self.weight * self.loss.curvature(self.lower, self.upper, prediction)


def get_loss(name):
    """The registry entry of a loss name (ValueError for an unknown one)."""
    if name not in LOSSES:
        raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {name!r}.")
    return LOSSES[name]


#: The losses, by name: what estimators accept as ``loss``.
LOSSES = {
    spec.name: IntervalLoss(spec.name, tag, spec.differentiable, spec.sums_to_one_hinge)
    for tag, spec in enumerate(LOSS_LIST)
}
