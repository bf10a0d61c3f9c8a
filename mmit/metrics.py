"""Metrics and scorers for predictions against interval targets.

Targets are given as in :meth:`mmit.MMIT.fit`: an (n_samples, 2) array of
lower and upper bounds (infinite bounds allowed), or (n_samples,) exact
values. The scorers plug into scikit-learn's model selection tools
(``scoring=`` of ``cross_val_score``, ``GridSearchCV``, ...).
"""

import numpy as np
from sklearn.metrics import make_scorer
from sklearn.utils.validation import check_array, check_consistent_length

from ._validation import check_interval_target, check_sample_weight

__all__ = [
    "interval_mse",
    "interval_accuracy",
    "neg_interval_mse_scorer",
    "interval_accuracy_scorer",
    "get_scorer",
]


def _distance_outside(lower, upper, y_pred, out=None):
    """Distance from each prediction to its interval (0 inside; NaN stays NaN),
    broadcast; ``out`` (may be ``y_pred`` itself) receives it without
    temporaries of the full shape but one."""
    above = np.subtract(y_pred, upper)
    np.maximum(above, 0.0, out=above)
    below = np.subtract(lower, y_pred, out=out)
    np.maximum(below, 0.0, out=below)
    below += above
    return below


def _interval_scores(lower, upper, predictions, *, accuracy=False, sample_weight=None):
    """Interval MSE (or accuracy) of each row of ``predictions`` (candidates
    x samples), unchecked: the same sums as :func:`interval_mse` of each row,
    for model selection's many candidates (one pass instead of a scorer call
    each). Overwrites ``predictions``."""
    distance = _distance_outside(lower, upper, predictions, out=predictions)
    values = distance == 0.0 if accuracy else np.square(distance, out=distance)
    weight = np.ones(values.shape[-1]) if sample_weight is None else sample_weight
    return np.average(values, axis=-1, weights=weight)


def _distance_to_interval(y_true, y_pred, sample_weight):
    lower, upper = check_interval_target(y_true)
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred",
                         ensure_min_samples=0)
    if y_pred.ndim != 1:
        raise ValueError(f"y_pred must be 1-D, got shape {y_pred.shape}.")
    check_consistent_length(lower, y_pred)
    weight = check_sample_weight(sample_weight, y_pred.shape[0], allow_all_zero=False)
    return _distance_outside(lower, upper, y_pred), weight


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
    distance, weight = _distance_to_interval(y_true, y_pred, sample_weight)
    return float(np.average(distance**2, weights=weight))


def interval_accuracy(y_true, y_pred, *, sample_weight=None):
    """Fraction of predictions inside their target interval (bounds included).

    Parameters and target format as :func:`interval_mse`.

    Examples
    --------
    >>> from mmit.metrics import interval_accuracy
    >>> interval_accuracy([[0.0, 1.0], [2.0, 3.0]], [1.0, 1.0])
    0.5
    """
    distance, weight = _distance_to_interval(y_true, y_pred, sample_weight)
    return float(np.average(distance == 0.0, weights=weight))


#: Scorer for ``scoring=``: the negative interval MSE (greater is better).
neg_interval_mse_scorer = make_scorer(interval_mse, greater_is_better=False)

#: Scorer for ``scoring=``: the interval accuracy.
interval_accuracy_scorer = make_scorer(interval_accuracy)

_SCORERS = {
    "neg_interval_mse": neg_interval_mse_scorer,
    "interval_accuracy": interval_accuracy_scorer,
}


def get_scorer(scoring):
    """Scorer by name (``"neg_interval_mse"`` or ``"interval_accuracy"``).

    A callable is returned unchanged, so any scikit-learn scorer also works.

    Examples
    --------
    >>> from mmit.metrics import get_scorer
    >>> get_scorer("neg_interval_mse")
    make_scorer(interval_mse, greater_is_better=False, response_method='predict')
    """
    if callable(scoring):
        return scoring
    if scoring not in _SCORERS:
        raise ValueError(f"Unknown scorer {scoring!r}; choose one of {sorted(_SCORERS)}.")
    return _SCORERS[scoring]
