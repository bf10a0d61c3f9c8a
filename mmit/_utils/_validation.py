"""Validation of interval targets, margins, losses and sample weights, of
thresholds and times (``check_times``: survival times, grids of times, a
step function's domain), and the scales of interval targets (their
spread, the default margins).

Everything a user passes is checked here, in Python, once; the Cython core
trusts its inputs.
"""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import check_array, validate_data

from ._categorical import validate_features


def check_bounds(lower, upper):
    """Validate lower and upper interval bounds given as two 1-D arrays.

    Returns both as contiguous float64 arrays. Infinite bounds are allowed
    (``-inf`` lower, ``+inf`` upper); NaN, ``lower > upper``, a lower bound
    of ``+inf`` or an upper bound of ``-inf`` are not.
    """
    lower = _as_bound_array(lower, "lower")
    upper = _as_bound_array(upper, "upper")
    if lower.shape != upper.shape:
        raise ValueError(
            f"lower and upper must have the same length, got {lower.shape[0]} "
            f"and {upper.shape[0]}."
        )
    _check_interval_values(lower, upper)
    return lower, upper


def check_interval_target(y, n_samples=None):
    """Validate a target of intervals and split it into lower and upper bounds.

    Parameters
    ----------
    y : array-like of shape (n_samples, 2) or (n_samples,)
        Columns ``lower, upper`` (infinite bounds allowed), or exact values.
    n_samples : int, default=None
        Expected number of rows.

    Returns
    -------
    lower, upper : ndarray of shape (n_samples,), dtype float64
    """
    y = check_array(
        y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False,
        input_name="y", ensure_min_samples=0,
    )
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change "
            "the shape of y to (n_samples,), for example using ravel(); give "
            "intervals as an (n_samples, 2) array of lower and upper bounds.",
            DataConversionWarning, stacklevel=3,
        )
        y = y[:, 0]
    if y.ndim == 1:
        lower = upper = np.ascontiguousarray(y)
        if not np.all(np.isfinite(y)):
            raise ValueError(
                "y given as exact values (1-D) must be finite; give intervals "
                "as an (n_samples, 2) array of lower and upper bounds to use "
                "infinite bounds."
            )
    elif y.ndim == 2 and y.shape[1] == 2:
        lower = np.ascontiguousarray(y[:, 0])
        upper = np.ascontiguousarray(y[:, 1])
        _check_interval_values(lower, upper)
    else:
        raise ValueError(
            "y must be an array of shape (n_samples, 2) holding the lower and "
            f"upper bound of each interval, or (n_samples,); got shape {y.shape}."
        )
    if n_samples is not None and lower.shape[0] != n_samples:
        raise ValueError(
            f"y has {lower.shape[0]} rows but X has {n_samples} samples."
        )
    return lower, upper


def check_margin(margin):
    """Return the margin as a float after checking it is finite and >= 0."""
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real):
        raise TypeError(f"margin must be a real number, got {margin!r}.")
    margin = float(margin)
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}.")
    return margin


def check_sample_weight(sample_weight, n_samples, allow_all_zero=True):
    """Finite, non-negative float64 weights of shape (n_samples,) (ones if None)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    sample_weight = check_array(
        sample_weight, ensure_2d=False, dtype=np.float64, input_name="sample_weight",
        ensure_min_samples=0,
    )
    if sample_weight.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got {sample_weight.shape}."
        )
    if np.any(sample_weight < 0):
        raise ValueError("Negative values in sample_weight: weights must be >= 0.")
    if not allow_all_zero and n_samples > 0 and not np.any(sample_weight > 0):
        raise ValueError("sample_weight must not be all zero: at least one weight must "
                         "be positive.")
    return np.ascontiguousarray(sample_weight)


def check_fold_weights(folds, sample_weight):
    """A clear error when some fold's training rows (``folds``: (train,
    test) pairs) all weigh 0: no model is fitted on them."""
    for k, (train, _) in enumerate(folds):
        if not np.any(sample_weight[train] > 0):
            raise ValueError(f"The training rows of fold {k} all have sample_weight 0: "
                             "give some of them weight, or other folds.")


def held_out_fold_of_rows(splits, n_samples):
    """The index of the test fold of each of ``n_samples`` rows, for
    ``splits`` of (train, test) whose test parts must partition the rows (as
    for cross_val_predict); a ValueError otherwise."""
    tests = [np.asarray(test) for _, test in splits]
    counts = np.bincount(np.concatenate(tests).astype(np.intp), minlength=n_samples)
    if counts.shape[0] != n_samples or np.any(counts != 1):
        raise ValueError("cv must partition the rows: each row in exactly one test "
                         "fold (as for cross_val_predict).")
    row_folds = np.empty(n_samples, dtype=np.intp)
    for fold, test in enumerate(tests):
        row_folds[test] = fold
    return row_folds


def _as_bound_array(values, name):
    if isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 1:
        return np.ascontiguousarray(values)
    array = check_array(
        values, ensure_2d=False, dtype=np.float64, ensure_all_finite=False,
        input_name=name, ensure_min_samples=0,
    )
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}.")
    return np.ascontiguousarray(array)


def _check_interval_values(lower, upper):
    # fast path: one comparison (False for NaN) and two reductions
    if lower.size == 0 or (
        np.all(lower <= upper) and lower.max() < np.inf and upper.min() > -np.inf
    ):
        return
    if np.isnan(lower).any() or np.isnan(upper).any():
        raise ValueError("Interval bounds must not be NaN.")
    bad = np.flatnonzero(lower > upper)
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"Each interval needs lower <= upper; {bad.size} do not, the first "
            f"at row {i} ({lower[i]!r} > {upper[i]!r})."
        )
    if np.isposinf(lower).any():
        raise ValueError("A lower bound cannot be +inf.")
    raise ValueError("An upper bound cannot be -inf.")


def bounds_spread(lower, upper, sample_weight=None):
    """Standard deviation of all finite bounds, each weighted by its row's
    weight when given (0 with fewer than two, or no weight)."""
    weight = np.ones(lower.shape[0]) if sample_weight is None else sample_weight
    bounds = np.concatenate([lower, upper])
    weights = np.concatenate([weight, weight])[np.isfinite(bounds)]
    bounds = bounds[np.isfinite(bounds)]
    if bounds.size < 2 or weights.sum() <= 0:
        return 0.0
    mean = np.average(bounds, weights=weights)
    return float(np.sqrt(np.average((bounds - mean) ** 2, weights=weights)))


def default_margins(lower, upper, n_margins=8):
    """0 and a log-spaced grid up to the spread of the finite bounds.

    The spread is the standard deviation of all finite bounds; the grid
    runs from 1e-3 to 1 times it.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit._utils._validation import default_margins
    >>> default_margins(np.array([0.0, 2.0]), np.array([2.0, np.inf]), n_margins=4)
    array([0.        , 0.00094281, 0.02981424, 0.94280904])
    """
    spread = bounds_spread(lower, upper)
    if spread == 0.0:
        return np.zeros(1)
    return np.r_[0.0, spread * np.logspace(-3, 0, n_margins - 1)]


def validate_training_data(estimator, X, y, sample_weight, allow_nan=True,
                           check_X=True):
    """Checked X (float64; NaN for missing values unless ``allow_nan`` is
    False, no inf), lower and upper bounds, and non-negative weights with at
    least one positive. An estimator with a ``categorical_features``
    parameter gets its ``is_categorical_`` and ``categories_``, and X its
    categorical features' codes (:func:`~mmit._utils._categorical.validate_features`).
    With ``check_X`` False (a data frame passed on to other estimators as
    given), X's values are left unchecked: only its number of features and
    their names are recorded."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the "
                         "target y is None.")
    if check_X:
        X = validate_features(estimator, X, reset=True,
                              ensure_all_finite="allow-nan" if allow_nan else True,
                              ensure_min_samples=1)
    else:
        X = validate_data(estimator, X, skip_check_array=True)
    lower, upper = check_interval_target(y, X.shape[0])
    sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=False)
    return X, lower, upper, sample_weight


def check_thresholds(thresholds, name="thresholds"):
    """Thresholds (or times: ``name``) as a 1-D float array without NaN
    (ValueError otherwise)."""
    values = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if values.ndim != 1 or values.size == 0 or np.isnan(values).any():
        raise ValueError(f"{name} must be a non-empty 1-D list of numbers, got "
                         f"{thresholds!r}.")
    return values


def check_times(times, log=False, *, name="times", grid=False, domain=None):
    """Times checked as a float64 array: the samples' times, a grid of times
    or the times a step function is read at (ValueError otherwise).

    Parameters
    ----------
    times : array-like of shape (n_times,) or (n_samples, 2)
        The times: each sample's event or censoring time, or (2 columns)
        each sample's interval of times, lower and upper; with ``grid`` or
        ``domain``, the times a curve is read at.
    log : bool, default=False
        Whether the times' logarithms are taken: they must be positive (but
        an interval's lower bound, which may be 0: the time origin).
    name : str, default="times"
        What a grid's or a domain's message calls the times.
    grid : bool, default=False
        Check a grid: a non-empty 1-D list without NaN, increasing, finite,
        from a non-negative (with ``log``: positive) first time.
    domain : (float, float) or None, default=None
        Check that every time lies in ``[domain[0], domain[1]]``.

    Without ``grid`` or ``domain``, every sample's times must be
    non-negative, and with ``log`` its last (upper) one positive; the
    message names the samples whose times are not.

    Returns
    -------
    times : ndarray of float64
        At least 1-D.
    """
    if grid:
        values = check_thresholds(times, name)
        if (np.any(np.diff(values) <= 0) or values[0] < 0 or (log and values[0] == 0)
                or not np.isfinite(values[-1])):
            first = "positive" if log else "non-negative"
            raise ValueError(f"{name} must increase from a {first} first time and be "
                             f"finite, got {times!r}.")
        return values
    values = np.atleast_1d(np.asarray(times, dtype=np.float64))
    if domain is not None:
        if np.any(values < domain[0]) or np.any(values > domain[1]):
            raise ValueError(f"{name} must lie within the domain [{domain[0]}, "
                             f"{domain[1]}].")
        return values
    samples = values.reshape(values.shape[0], -1)
    bad = samples[:, 0] < 0
    if log:
        bad |= samples[:, -1] <= 0
    rows = np.flatnonzero(bad)
    if rows.size:
        named = ", ".join(map(str, rows[:10])) + (", ..." if rows.size > 10 else "")
        raise ValueError(f"{'log=True needs' if log else 'times must be'} "
                         f"{'positive' if log else 'non-negative'} times; rows {named} "
                         f"are not.")
    return values
