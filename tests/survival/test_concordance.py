"""The concordance index of interval targets (pairs counted in O(n log n)):
a brute-force pair count on interval data (hypothesis), scikit-survival's
Harrell's C on right-censored data (when installed), the scorer."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import cross_val_score

from mmit import MMIT, intervals_from_survival
from mmit.metrics import concordance_index, concordance_index_scorer, get_scorer


def brute_force(lower, upper, y_pred, weight, tied_tol):
    """Every ordered pair in turn: comparable when i's interval lies wholly
    below j's (touching at j's censored lower bound counts), concordant when
    the predictions order it alike, a tie counting one half."""
    concordant = comparable = 0.0
    for i in range(len(y_pred)):
        for j in range(len(y_pred)):
            if upper[i] < lower[j] or (upper[i] == lower[j] and lower[j] < upper[j]):
                pair = weight[i] * weight[j]
                comparable += pair
                if y_pred[i] == y_pred[j] or abs(y_pred[j] - y_pred[i]) <= tied_tol:
                    concordant += 0.5 * pair
                elif y_pred[j] > y_pred[i]:
                    concordant += pair
    if comparable == 0:
        raise ZeroDivisionError
    return concordant / comparable


def assert_equals_brute_force(lower, upper, y_pred, weight, tied_tol):
    """The index equals the brute force's to rounding, or both find no
    comparable pair."""
    y = np.column_stack([lower, upper])
    try:
        expected = brute_force(lower, upper, y_pred, weight, tied_tol)
    except ZeroDivisionError:
        with pytest.raises(ValueError, match="No pair"):
            concordance_index(y, y_pred, sample_weight=weight, tied_tol=tied_tol)
        return
    assert concordance_index(y, y_pred, sample_weight=weight, tied_tol=tied_tol) == \
        pytest.approx(expected, rel=1e-12, abs=1e-12)


bounds = st.sampled_from([-np.inf, 0.0, 1.0, 2.0, 2.5, 4.0, np.inf])


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(bounds, bounds, st.sampled_from([-1.0, 0.0, 1.0, 1.5,
                                                                 np.inf]),
                               st.sampled_from([0.0, 1.0, 2.5])),
                     min_size=2, max_size=12),
       tied_tol=st.sampled_from([0.0, 0.6]))
def test_equals_a_brute_force_pair_count(rows, tied_tol):
    lower = np.array([min(a, b) for a, b, _, _ in rows])
    upper = np.array([max(a, b) for a, b, _, _ in rows])
    keep = np.isfinite(lower) | np.isfinite(upper)
    keep &= ~((lower == upper) & ~np.isfinite(lower))  # no infinite exact value
    lower, upper = lower[keep], upper[keep]
    y_pred = np.array([p for _, _, p, _ in rows])[keep]
    weight = np.array([w for _, _, _, w in rows])[keep]
    if len(lower) == 0 or weight.sum() == 0:
        return
    assert_equals_brute_force(lower, upper, y_pred, weight, tied_tol)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 90),
       tied_tol=st.sampled_from([0.0, 1e-8, 0.25]))
def test_equals_the_brute_force_on_mixed_censoring_with_ties_at_the_tolerance(seed, n,
                                                                              tied_tol):
    # tied bounds of every kind of interval, predictions on a grid of steps of
    # about the tolerance (differences just above, at and below it after
    # rounding), weights with zeros
    rng = np.random.default_rng(seed)
    a, b = np.round(rng.exponential(size=(2, n)), 1)
    kind = rng.integers(0, 4, n)
    lower = np.where(kind == 2, -np.inf, np.minimum(a, b))
    upper = np.select([kind == 0, kind == 1], [lower, np.inf], np.maximum(a, b))
    upper[(kind == 3) & (upper == lower)] += 0.1
    step = tied_tol if tied_tol > 0 else 1e-8
    y_pred = 0.3 + step * rng.integers(0, 6, n) + rng.choice([0.0, 1e-17, -1e-17], n)
    y_pred[rng.random(n) < 0.05] = np.inf
    weight = rng.integers(0, 3, n).astype(float)
    if weight.sum() == 0:
        weight[0] = 1.0
    assert_equals_brute_force(lower, upper, y_pred, weight, tied_tol)


def test_equals_scikit_survival_s_harrell_c_on_right_censored_data():
    metrics = pytest.importorskip("sksurv.metrics")
    rng = np.random.default_rng(0)
    for n, share in ((50, 0.2), (400, 0.5), (3000, 0.8)):
        times = np.round(rng.exponential(size=n), 1) + 0.1  # tied times
        event = rng.random(n) > share
        risk = np.round(rng.normal(size=n), 1)  # tied risks
        risk[:5] += 1e-9  # ties within the tolerance
        theirs = metrics.concordance_index_censored(event, times, risk)[0]
        for log in (False, True):
            y = intervals_from_survival(event, times, log=log)
            assert concordance_index(y, -risk) == pytest.approx(theirs, abs=1e-12)


def test_orders_exact_values_as_kendall_would():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert concordance_index(y, [10, 20, 30, 40]) == 1.0
    assert concordance_index(y, [40, 30, 20, 10]) == 0.0
    assert concordance_index(y, [1, 1, 1, 1]) == 0.5
    assert concordance_index(y, [1, 2, 4, 3]) == pytest.approx(5 / 6)


def test_scorer_and_bad_input():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = intervals_from_survival(rng.random(80) < 0.7, np.exp(X[:, 0] + 0.1), log=True)
    scores = cross_val_score(MMIT(max_depth=2), X, y, cv=3,
                             scoring=concordance_index_scorer)
    assert np.all(scores > 0.7)
    assert get_scorer("concordance_index") is concordance_index_scorer
    with pytest.raises(ValueError, match="No pair"):
        concordance_index([[1.0, np.inf], [2.0, np.inf]], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        concordance_index([1.0, 2.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="inconsistent"):
        concordance_index([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="tied_tol"):
        concordance_index([1.0, 2.0], [1.0, 2.0], tied_tol=-1.0)
