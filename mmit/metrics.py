"""Metrics and scorers for predictions against interval targets.

Targets are given as in :meth:`mmit.MMIT.fit`: an (n_samples, 2) array of
lower and upper bounds (infinite bounds allowed), or (n_samples,) exact
values. The scorers plug into scikit-learn's model selection tools
(``scoring=`` of ``cross_val_score``, ``GridSearchCV``, ...).
"""

import numpy as np
from sklearn.metrics import make_scorer
from sklearn.utils import Bunch
from sklearn.utils.validation import check_array

from ._utils._scores import distance_to_interval, interval_mse
from ._utils._validation import check_interval_target, check_sample_weight
from .survival._concordance import concordance_index

__all__ = [
    "interval_mse",
    "interval_accuracy",
    "pinball_loss",
    "interval_coverage",
    "concordance_index",
    "neg_interval_mse_scorer",
    "interval_accuracy_scorer",
    "concordance_index_scorer",
    "get_scorer",
]


def interval_accuracy(y_true, y_pred, *, sample_weight=None):
    """Fraction of predictions inside their target interval (bounds included).

    Parameters and target format as :func:`interval_mse`.

    Examples
    --------
    >>> from mmit.metrics import interval_accuracy
    >>> interval_accuracy([[0.0, 1.0], [2.0, 3.0]], [1.0, 1.0])
    0.5
    """
    distance, weight = distance_to_interval(y_true, y_pred, sample_weight)
    return float(np.average(distance == 0.0, weights=weight))


def _predicted_columns(y_pred, n_samples, n_columns, name):
    y_pred = check_array(y_pred, dtype=np.float64, ensure_all_finite=False,
                         input_name=name, ensure_min_samples=0)
    if y_pred.shape != (n_samples, n_columns) or np.isnan(y_pred).any():
        raise ValueError(f"{name} must be an array of shape ({n_samples}, {n_columns}) "
                         f"without NaN, got shape {y_pred.shape}.")
    return y_pred


def pinball_loss(y_true, y_quantiles, quantiles, *, sample_weight=None):
    """Mean pinball (quantile) loss of predicted quantiles of interval targets.

    For a level ``tau`` and a predicted quantile ``q`` of an exact value
    ``y``, the pinball loss is ``tau * (y - q)`` when ``y >= q`` and ``(1 -
    tau) * (q - y)`` otherwise. For a target known only to lie in ``[lower,
    upper]`` it is the smallest loss of a value there: ``tau * (lower -
    q)`` when ``q < lower``, ``(1 - tau) * (q - upper)`` when ``q > upper``,
    0 in between (the quantile cannot be shown wrong). The result is the
    weighted mean over the samples and the levels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, 2) or (n_samples,)
        Lower and upper bounds (infinite allowed), or exact values.
    y_quantiles : array-like of shape (n_samples, n_quantiles)
        Predicted quantiles (for example ``predict_quantiles(X, quantiles)``;
        infinite ones allowed).
    quantiles : array-like of shape (n_quantiles,)
        Their levels, in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    float

    Examples
    --------
    >>> from mmit.metrics import pinball_loss
    >>> pinball_loss([1.0, 3.0], [[0.0, 2.0], [2.0, 4.0]], [0.25, 0.75])
    0.25
    >>> pinball_loss([[0.0, 2.0]], [[1.0, 3.0]], [0.25, 0.75])  # 3 > 2: 0.25 * 1
    0.125
    """
    lower, upper = check_interval_target(y_true)
    levels = np.asarray(quantiles, dtype=np.float64)
    if levels.ndim != 1 or levels.size == 0 or not np.all((levels >= 0) & (levels <= 1)):
        raise ValueError(f"quantiles must be a non-empty 1-D list of levels in [0, 1], "
                         f"got {quantiles!r}.")
    predicted = _predicted_columns(y_quantiles, lower.shape[0], levels.size, "y_quantiles")
    weight = check_sample_weight(sample_weight, lower.shape[0], allow_all_zero=False)
    with np.errstate(invalid="ignore"):
        below = np.where(predicted < lower[:, None], lower[:, None] - predicted, 0.0)
        above = np.where(predicted > upper[:, None], predicted - upper[:, None], 0.0)
    loss = levels * below + (1.0 - levels) * above
    return float(np.average(loss.mean(axis=1), weights=weight))


def interval_coverage(y_true, y_interval, *, sample_weight=None):
    """How often predicted intervals hold their target, censoring respected.

    A target known only to lie in ``[lower, upper]`` is *certainly covered*
    by a predicted interval ``[a, b]`` when ``a <= lower`` and ``upper <=
    b`` (whatever the value, it is inside), *certainly missed* when the two
    intervals do not meet (``b < lower`` or ``a > upper``), and *undecided*
    otherwise. An exact value is covered or missed.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, 2) or (n_samples,)
        Lower and upper bounds (infinite allowed), or exact values.
    y_interval : array-like of shape (n_samples, 2)
        Predicted intervals (``predict_interval``), lower then upper end.
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    coverage : :class:`~sklearn.utils.Bunch`
        ``covered``, ``missed`` and ``undecided``: the weighted shares of
        the samples (summing to 1).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.metrics import interval_coverage
    >>> coverage = interval_coverage([[1.0, 1.0], [0.0, np.inf], [5.0, 6.0]],
    ...                              [[0.0, 2.0], [-1.0, 3.0], [0.0, 2.0]])
    >>> coverage.covered, coverage.undecided, coverage.missed
    (0.3333333333333333, 0.3333333333333333, 0.3333333333333333)
    """
    lower, upper = check_interval_target(y_true)
    predicted = _predicted_columns(y_interval, lower.shape[0], 2, "y_interval")
    if np.any(predicted[:, 0] > predicted[:, 1]):
        raise ValueError("y_interval has a lower end above its upper end.")
    weight = check_sample_weight(sample_weight, lower.shape[0], allow_all_zero=False)
    covered = (predicted[:, 0] <= lower) & (upper <= predicted[:, 1])
    missed = (predicted[:, 1] < lower) | (predicted[:, 0] > upper)
    return Bunch(**{name: float(np.average(flags, weights=weight)) for name, flags in (
        ("covered", covered), ("missed", missed), ("undecided", ~covered & ~missed))})


#: Scorer for ``scoring=``: the negative interval MSE (greater is better).
neg_interval_mse_scorer = make_scorer(interval_mse, greater_is_better=False)

#: Scorer for ``scoring=``: the interval accuracy.
interval_accuracy_scorer = make_scorer(interval_accuracy)

#: Scorer for ``scoring=``: the concordance index of the predictions.
concordance_index_scorer = make_scorer(concordance_index)

_SCORERS = {
    "neg_interval_mse": neg_interval_mse_scorer,
    "interval_accuracy": interval_accuracy_scorer,
    "concordance_index": concordance_index_scorer,
}


def get_scorer(scoring):
    """Scorer by name (``"neg_interval_mse"``, ``"interval_accuracy"`` or
    ``"concordance_index"``).

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
