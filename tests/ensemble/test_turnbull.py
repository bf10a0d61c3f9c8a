"""The weighted NPMLE of interval-censored values (mmit.ensemble._turnbull) against
a brute-force self-consistency oracle."""

import numpy as np
import pytest
from brute_force import observation_probabilities
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from problems import grid_intervals

from mmit.ensemble._turnbull import weighted_npmle

INF = np.inf


@st.composite
def censored_values(draw):
    """Values on a coarse grid (ties), exact, interval-, left- and right-censored."""
    n = draw(st.integers(1, 12))
    lower, upper = draw(grid_intervals(n, st.integers(-4, 4).map(float),
                                       kinds=("interval", "exact", "left", "right")))
    weight = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n,
                           max_size=n))
    if not any(weight):
        weight[0] = 1.0
    return lower, upper, np.array(weight)


def probabilities(left, right, mass, lower, upper):
    """Each observation's probability under an estimate (its Turnbull
    intervals inside the observation)."""
    inside = (left[None, :] >= lower[:, None]) & (right[None, :] <= upper[:, None])
    return inside @ mass


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(censored_values())
def test_matches_a_brute_force_self_consistency(problem):
    lower, upper, weight = problem
    left, right, mass = weighted_npmle(lower, upper, weight)
    assert np.all(left <= right) and np.all(right[:-1] < left[1:])
    assert mass.sum() == pytest.approx(1.0) and np.all(mass >= 0)
    kept = weight > 0
    ours = probabilities(left, right, mass, lower[kept], upper[kept])
    oracle = observation_probabilities(lower, upper, weight)
    np.testing.assert_allclose(ours, oracle, atol=2e-3)
    # the likelihood is the oracle's (within the stopping tolerance)
    w = weight[kept] / weight[kept].sum()
    assert w @ np.log(ours) >= w @ np.log(oracle) - 1e-6


def test_exact_values_give_the_weighted_empirical_distribution():
    values = np.array([3.0, 1.0, 2.0, 1.0, 5.0])
    weight = np.array([1.0, 2.0, 0.5, 1.0, 0.0])
    left, right, mass = weighted_npmle(values, values, weight)
    np.testing.assert_array_equal(left, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(right, left)
    np.testing.assert_allclose(mass, np.array([3.0, 0.5, 1.0]) / 4.5)


def test_integer_weights_equal_repeated_observations():
    rng = np.random.default_rng(0)
    lower = np.round(rng.normal(size=30), 1)
    upper = lower + np.round(rng.exponential(size=30), 1)
    lower[::5] = -INF
    upper[::7] = INF
    counts = rng.integers(0, 4, 30)
    counts[0] = 1
    weighted = weighted_npmle(lower, upper, counts.astype(float))
    repeated = weighted_npmle(np.repeat(lower, counts), np.repeat(upper, counts),
                              np.ones(counts.sum()))
    for a, b in zip(weighted, repeated, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_the_mass_of_one_interval_stays_inside_it():
    left, right, mass = weighted_npmle(np.array([1.0, -INF]), np.array([2.0, 3.0]),
                                       np.array([1.0, 1.0]))
    np.testing.assert_array_equal(np.c_[left, right], [[1.0, 2.0]])
    np.testing.assert_array_equal(mass, [1.0])

