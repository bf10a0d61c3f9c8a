"""The hinge-loss objective of fitted predictions, for the models that fit
predictions directly (boosting stages, the linear model) rather than through
the tree builder's criterion."""

import numpy as np

from . import _solver


class HingeLoss:
    """Mean weighted hinge loss of predictions, and its gradient.

    ``lower`` and ``upper`` become the hinges' breakpoints (the bounds moved
    inside by the margin; exact values not moved), as in the tree criterion.
    """

    def __init__(self, lower, upper, margin, loss, sample_weight):
        self.lower, self.upper = _solver.hinge_positions(
            np.ascontiguousarray(lower), np.ascontiguousarray(upper), float(margin))
        self.squared = loss == "squared_hinge"
        self.weight = sample_weight / sample_weight.sum()

    def _outside(self, prediction, rows):
        """Distances below the lower and above the upper breakpoints."""
        return (np.maximum(self.lower[rows] - prediction, 0.0),
                np.maximum(prediction - self.upper[rows], 0.0))

    def __call__(self, prediction, rows=slice(None)):
        """Mean loss of ``prediction`` for ``rows`` (weights renormalised)."""
        below, above = self._outside(prediction, rows)
        if self.squared:
            below, above = below * below, above * above
        weight = self.weight[rows]
        return float(weight @ (below + above) / weight.sum())

    def gradient(self, prediction):
        """Gradient of the mean loss over all rows with respect to each
        prediction (a subgradient for the linear hinge)."""
        below, above = self._outside(prediction, slice(None))
        if self.squared:
            return 2.0 * self.weight * (above - below)
        return self.weight * (np.sign(above) - np.sign(below))


def optimal_constant(lower, upper, margin, loss, sample_weight):
    """The constant minimising the weighted hinge loss of all intervals
    (0 without a finite bound)."""
    predictions, _, _ = _solver.optimal_costs(
        np.ascontiguousarray(lower), np.ascontiguousarray(upper), float(margin), loss,
        np.ascontiguousarray(sample_weight))
    return float(predictions[-1]) if predictions.size else 0.0
