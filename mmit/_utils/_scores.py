"""Distances of predictions to interval targets and their mean scores: the
unchecked sums behind :mod:`mmit.metrics`, shared with the estimators that
score many candidates at once (model selection, the stack's members), and
the checked interval MSE that every estimator's ``score`` is (published as
:func:`mmit.metrics.interval_mse`)."""

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length

from ._validation import check_interval_target, check_sample_weight


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


def distance_to_interval(y_true, y_pred, sample_weight):
    """Checked targets and predictions: the distance of each prediction to its
    interval, and the weights (ones if None)."""
    lower, upper = check_interval_target(y_true)
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred",
                         ensure_min_samples=0)
    if y_pred.ndim != 1:
        raise ValueError(f"y_pred must be 1-D, got shape {y_pred.shape}.")
    check_consistent_length(lower, y_pred)
    weight = check_sample_weight(sample_weight, y_pred.shape[0], allow_all_zero=False)
    return distance_outside(lower, upper, y_pred), weight


def interval_mse(y_true, y_pred, *, sample_weight=None):
    """Mean squared distance from each prediction to its target interval.

    A prediction inside its interval costs nothing (Drouin et al. 2017,
    eq. 16); outside, the squared distance to the nearest bound.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, 2) or (n_samples,)
        Lower and upper bounds (infinite allowed), or exact values.
    y_pred : array-like of shape (n_samples,)
        Predictions.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the average.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.metrics import interval_mse
    >>> interval_mse([[0.0, 1.0], [2.0, np.inf]], [1.5, 1.0])
    0.625
    """
    distance, weight = distance_to_interval(y_true, y_pred, sample_weight)
    return float(np.average(distance**2, weights=weight))
