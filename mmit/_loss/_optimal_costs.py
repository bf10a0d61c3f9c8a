"""Public entry point of the interval solver."""

from .._utils._validation import check_bounds, check_margin, check_sample_weight
from ._loss import get_loss


def compute_optimal_costs(lower, upper, margin=0.0, loss="linear_hinge",
                          sample_weight=None):
    """Optimal constant prediction and cost after each insertion of an interval.

    Intervals are inserted in the given order into a sum of hinge losses.
    After each insertion the function returns the minimal total loss and the
    prediction that attains it, computed by the dynamic program of Drouin,
    Hocking and Laviolette (2017) in O(n log n) overall.

    Parameters
    ----------
    lower : array-like of shape (n_samples,)
        Lower bounds; ``-inf`` for a left-censored interval.
    upper : array-like of shape (n_samples,)
        Upper bounds; ``+inf`` for a right-censored interval. An exact value
        has ``lower == upper``.
    margin : float, default=0.0
        Margin ``eps >= 0``: a prediction costs nothing only when it lies at
        least ``eps`` inside the interval. Exact values use margin 0.
    loss : {"linear_hinge", "squared_hinge"}, default="linear_hinge"
        The hinge applied to the distance outside the shrunk interval.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; rows with weight 0 are ignored.

    Returns
    -------
    predictions : ndarray of shape (n_samples,)
        Minimiser after each insertion. A flat minimum between two
        breakpoints gives their midpoint; a minimum flat to the right (only
        lower bounds) the rightmost breakpoint, flat to the left the
        leftmost. Before the first finite bound the prediction is 0.0.
    costs : ndarray of shape (n_samples,)
        Minimal total weighted loss after each insertion.
    moves : ndarray of shape (n_samples,), dtype intp
        Pointer moves of each insertion (at most 1 for the linear hinge with
        unit weights).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import compute_optimal_costs
    >>> predictions, costs, moves = compute_optimal_costs(
    ...     [-np.inf, 1.0], [4.0, np.inf], margin=1.0)
    >>> predictions
    array([3. , 2.5])
    >>> costs
    array([0., 0.])
    """
    lower, upper = check_bounds(lower, upper)
    margin = check_margin(margin)
    loss = get_loss(loss)
    sample_weight = check_sample_weight(sample_weight, lower.shape[0])
    return loss.optimal_costs(lower, upper, margin, sample_weight)
