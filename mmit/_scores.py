"""Unchecked distances of predictions to interval targets and their mean
scores: the sums behind :mod:`mmit.metrics`, shared with the estimators that
score many candidates at once (model selection, the stack's members)."""

import numpy as np


def distance_outside(lower, upper, y_pred, out=None):
    """Distance from each prediction to its interval (0 inside; NaN stays NaN),
    broadcast; ``out`` (may be ``y_pred`` itself) receives it without
    temporaries of the full shape but one."""
    above = np.subtract(y_pred, upper)
    np.maximum(above, 0.0, out=above)
    below = np.subtract(lower, y_pred, out=out)
    np.maximum(below, 0.0, out=below)
    below += above
    return below


def interval_scores(lower, upper, predictions, *, accuracy=False, sample_weight=None):
    """Interval MSE (or accuracy) of each row of ``predictions`` (candidates
    x samples), unchecked: the same sums as :func:`mmit.metrics.interval_mse` of each row,
    for model selection's many candidates (one pass instead of a scorer call
    each). Overwrites ``predictions``."""
    distance = distance_outside(lower, upper, predictions, out=predictions)
    values = distance == 0.0 if accuracy else np.square(distance, out=distance)
    weight = np.ones(values.shape[-1]) if sample_weight is None else sample_weight
    return np.average(values, axis=-1, weights=weight)
