"""Harrell's concordance index, for interval targets."""

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length

from .._utils._validation import check_interval_target, check_sample_weight
from ._pair_counts import concordant_pairs


def concordance_index(y_true, y_pred, *, sample_weight=None, tied_tol=1e-8):
    """Share of the ordered pairs of targets that the predictions order alike.

    A pair of examples is comparable when one target interval lies wholly
    below the other: ``upper_i < lower_j``, or ``upper_i == lower_j`` when
    j's interval is not a single value (a censored ``[t, inf)`` means a
    value beyond ``t``). It is concordant when the predictions order it the
    same way (``y_pred_i < y_pred_j``), and counts one half when they tie
    (within ``tied_tol``). For right-censored survival times
    (:func:`mmit.intervals_from_survival`) this is Harrell's C, ties
    handled as scikit-survival's ``concordance_index_censored`` handles them
    (an event and a censoring at the same time are comparable); scikit-survival's
    risk scores order the other way: pass minus a risk score as ``y_pred``.
    The pairs are counted in O(n log n) time (a sweep over the sorted bounds
    with a Fenwick tree over the ranks of the predictions), not one by one.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, 2) or (n_samples,)
        Lower and upper bounds (infinite allowed), or exact values.
    y_pred : array-like of shape (n_samples,)
        Predicted values (higher: a later time, a larger value; infinite
        values allowed, equal ones tie).
    sample_weight : array-like of shape (n_samples,), default=None
        A pair weighs the product of its examples' weights.
    tied_tol : float, default=1e-8
        Predictions closer than this tie.

    Returns
    -------
    float
        Between 0 and 1; 0.5 for predictions unrelated to the targets.

    Raises
    ------
    ValueError
        When no pair is comparable (of positive weight).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.metrics import concordance_index
    >>> y = np.array([[1.0, 1.0], [2.0, np.inf], [3.0, 3.0], [0.5, 4.0]])
    >>> concordance_index(y, [1.0, 5.0, 2.5, 2.0])   # pairs (0,1), (0,2)
    1.0
    >>> concordance_index(y, [3.0, 2.0, 1.0, 0.0])
    0.0
    """
    lower, upper = check_interval_target(y_true)
    y_pred = check_array(y_pred, ensure_2d=False, dtype=np.float64, input_name="y_pred",
                         ensure_all_finite=False)
    if y_pred.ndim != 1:
        raise ValueError(f"y_pred must be 1-D, got shape {y_pred.shape}.")
    if np.isnan(y_pred).any():
        raise ValueError("y_pred contains NaN.")
    check_consistent_length(lower, y_pred)
    weight = check_sample_weight(sample_weight, y_pred.shape[0], allow_all_zero=False)
    if not (np.isscalar(tied_tol) and tied_tol >= 0):
        raise ValueError(f"tied_tol must be a non-negative number, got {tied_tol!r}.")
    concordant, comparable = concordant_pairs(
        np.ascontiguousarray(lower, dtype=np.float64),
        np.ascontiguousarray(upper, dtype=np.float64), np.ascontiguousarray(y_pred),
        np.ascontiguousarray(weight, dtype=np.float64), float(tied_tol))
    if comparable == 0:
        raise ValueError("No pair of targets is comparable (one interval wholly below "
                         "the other): the concordance index is undefined.")
    return float(concordant / comparable)
