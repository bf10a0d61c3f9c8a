"""Survival data as interval targets."""

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length


def intervals_from_survival(event, time, *, log=False):
    """Interval targets from right-censored survival data.

    An observed event at time ``t`` is the exact value ``[t, t]``; a
    censored time ``t`` (the event happened later, if ever) is ``[t, inf)``.

    Parameters
    ----------
    event : array-like of shape (n_samples,)
        True (or 1) where the event was observed, False (or 0) where the
        time is censored.
    time : array-like of shape (n_samples,)
        Event or censoring times (finite; positive when ``log``).
    log : bool, default=False
        Take the logarithm of the times first, so that a model of the
        targets is an accelerated failure time model.

    Returns
    -------
    y : ndarray of shape (n_samples, 2)
        Lower and upper bounds, as ``MMIT.fit`` takes them.

    Examples
    --------
    >>> from mmit import intervals_from_survival
    >>> intervals_from_survival([True, False], [2.0, 5.0])
    array([[ 2.,  2.],
           [ 5., inf]])
    >>> intervals_from_survival([1, 0], [1.0, 10.0], log=True).round(3)
    array([[0.   , 0.   ],
           [2.303,   inf]])
    """
    event = check_array(event, ensure_2d=False, dtype=None, input_name="event")
    time = check_array(time, ensure_2d=False, dtype=np.float64, input_name="time")
    check_consistent_length(event, time)
    if event.ndim != 1 or time.ndim != 1:
        raise ValueError("event and time must be 1-D.")
    if not np.all(np.isin(event, [0, 1])):
        raise ValueError("event must hold booleans (or 0 and 1).")
    event = event.astype(bool)
    if log:
        if np.any(time <= 0):
            raise ValueError("log=True needs positive times.")
        time = np.log(time)
    return np.column_stack([time, np.where(event, time, np.inf)])
