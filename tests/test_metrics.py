"""Interval metrics and scorers, alone and inside scikit-learn's tools."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, cross_val_score

from mmit import MMIT
from mmit.metrics import (
    get_scorer,
    interval_accuracy,
    interval_accuracy_scorer,
    interval_mse,
    neg_interval_mse_scorer,
)

INF = np.inf


def test_interval_mse_is_the_squared_distance_to_the_interval():
    y = np.array([[0.0, 1.0], [2.0, INF], [-INF, -1.0], [3.0, 3.0]])
    prediction = np.array([0.5, 0.0, 1.0, 5.0])
    # distances: inside, 2 below, 2 above, 2 above the exact value
    assert interval_mse(y, prediction) == pytest.approx((0 + 4 + 4 + 4) / 4)
    assert interval_mse(y, prediction, sample_weight=[1, 0, 0, 0]) == 0.0
    assert interval_mse([1.0, 2.0], [1.0, 4.0]) == pytest.approx(2.0)


def test_interval_accuracy_counts_predictions_inside_bounds_included():
    y = np.array([[0.0, 1.0], [2.0, INF], [-INF, -1.0], [3.0, 3.0]])
    assert interval_accuracy(y, [1.0, 1e9, -1.0, 3.0]) == 1.0
    assert interval_accuracy(y, [1.1, 1e9, 0.0, 3.0]) == 0.5
    assert interval_accuracy(y, [1.1, 1e9, 0.0, 3.0], sample_weight=[0, 3, 0, 1]) == 1.0


def test_metrics_validate_their_input():
    with pytest.raises(ValueError, match="lower <= upper"):
        interval_mse([[1.0, 0.0]], [0.5])
    with pytest.raises(ValueError, match="inconsistent"):
        interval_mse([[0.0, 1.0]], [0.5, 0.5])
    with pytest.raises(ValueError, match="1-D"):
        interval_accuracy([[0.0, 1.0]], [[0.5]])


def test_scorers_work_in_cross_validation():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    center = 2 * X[:, 0]
    y = np.column_stack([center - 0.5, center + 0.5])
    model = MMIT(max_depth=3, random_state=0)
    cv = KFold(3, shuffle=True, random_state=0)
    mse = cross_val_score(model, X, y, cv=cv, scoring=neg_interval_mse_scorer)
    default = cross_val_score(model, X, y, cv=cv)
    np.testing.assert_allclose(mse, default)  # score() is the negative interval MSE
    accuracy = cross_val_score(model, X, y, cv=cv, scoring=interval_accuracy_scorer)
    by_hand = []
    for train, test in cv.split(X):
        predictions = clone(model).fit(X[train], y[train]).predict(X[test])
        by_hand.append((-interval_mse(y[test], predictions),
                        interval_accuracy(y[test], predictions)))
    np.testing.assert_allclose(np.column_stack([mse, accuracy]), by_hand, rtol=1e-12)
    assert get_scorer("interval_accuracy") is interval_accuracy_scorer
    with pytest.raises(ValueError, match="Unknown scorer"):
        get_scorer("r2")
