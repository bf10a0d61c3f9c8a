"""Presorting of features and interval breakpoints, shared by all trees."""

import numpy as np

from . import _solver
from ._tree import TrainingData


def presort_features(X):
    """Column-major copy of X and, per feature, the rows in increasing order.

    Returns ``(X_columns, order)`` with ``order`` of shape (n_features,
    n_samples), int32; ties keep row order (stable sort). O(p n log n).
    """
    X_columns = np.asfortranarray(X, dtype=np.float64)
    order = np.argsort(X_columns, axis=0, kind="stable").T.astype(np.int32, order="C")
    return X_columns, order


def presort_hinges(lower, upper, margin):
    """Breakpoints of every hinge and the finite hinges in breakpoint order.

    Returns ``(lower_position, upper_position, hinge_order)`` where a hinge
    is numbered ``2 * row + is_upper`` and ``hinge_order`` (int32) lists the
    finite ones by increasing breakpoint (stable).
    """
    lower_position, upper_position = _solver.hinge_positions(lower, upper, margin)
    positions = np.column_stack([lower_position, upper_position]).ravel()
    finite = np.flatnonzero(np.isfinite(positions))
    hinge_order = finite[np.argsort(positions[finite], kind="stable")].astype(np.int32)
    return lower_position, upper_position, hinge_order


def training_data(features, lower, upper, margin):
    """TrainingData from presorted features ``(X_columns, order)`` and bounds."""
    X_columns, order = features
    return TrainingData(X_columns, order, *presort_hinges(lower, upper, margin))
