"""The read-outs of a forest's predictive distributions
(mmit.ensemble._forest_readout, over the leaves' estimates of
mmit.ensemble._turnbull) against the average of each leaf's NPMLE."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from problems import grid_intervals

from mmit.ensemble._distributions import NPMLE_TOLERANCE, LeafSamples
from mmit.ensemble._turnbull import weighted_npmle

INF = np.inf


def estimate_cdf(items, value):
    """P(X <= value) under a list of (left, right, mass) items, each under the
    read-out's conventions: a bounded interval's mass spread evenly, an
    unbounded one's at its infinite end."""
    total = 0.0
    for left, right, mass in items:
        if left == -INF:
            total += mass
        elif right == INF:
            continue
        elif right <= value:
            total += mass
        elif left <= value and left < right:
            total += mass * (value - left) / (right - left)
    return total


@st.composite
def leaves_of_trees(draw):
    """A few trees of two leaves each over a handful of weighted training
    intervals, and a query's leaf in each tree (-1: left out)."""
    n = draw(st.integers(1, 10))
    n_trees = draw(st.integers(1, 4))
    lower, upper = draw(grid_intervals(n, st.integers(-3, 3).map(float)))
    leaves = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=n_trees,
                                             max_size=n_trees), min_size=n, max_size=n)))
    weights = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 1.0, 2.0]),
                                              min_size=n, max_size=n),
                                     min_size=n_trees, max_size=n_trees)))
    query = np.array(draw(st.lists(st.integers(-1, 1), min_size=n_trees,
                                   max_size=n_trees)))
    return lower, upper, leaves, weights, query


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaves_of_trees(), st.floats(-2.0, 2.0))
def test_forest_readout_averages_the_leaves_estimates(problem, shift):
    """The read-out's CDF and quantiles are those of the average over the
    query's trees of the NPMLE of its leaf's rows (each by ``weighted_npmle``
    at the read-out's tolerance), moved by ``shift``."""
    lower, upper, leaves, weights, query = problem
    samples = LeafSamples(leaves, [2] * len(query), lower, upper, lambda t: weights[t])
    items = []
    for t, leaf in enumerate(query):
        held = (leaves[:, t] == leaf) & (weights[t] > 0) if leaf >= 0 else []
        if np.any(held):
            estimate = weighted_npmle(lower[held], upper[held], weights[t][held],
                                      tolerance=NPMLE_TOLERANCE)
            items.append(list(zip(*estimate, strict=True)))
    items = [(left, right, mass / len(items)) for tree in items
             for left, right, mass in tree]
    thresholds = np.array([-4.0, -2.5, -1.0, -0.5, 0.0, 0.3, 1.0, 2.0, 3.0, 4.0]) + shift
    levels = np.array([0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0])
    cdf = samples.readout(query[None, :], [shift], thresholds, False, 1)[0]
    quantiles = samples.readout(query[None, :], [shift], levels, True, 1)[0]
    if not items:
        assert np.isnan(cdf).all() and np.isnan(quantiles).all()
        return
    expected = [estimate_cdf(items, t - shift) for t in thresholds]
    np.testing.assert_allclose(cdf, np.minimum(expected, 1.0), atol=1e-9)
    assert np.all(quantiles[1:] >= quantiles[:-1])
    for level, quantile in zip(levels, quantiles, strict=True):
        below = estimate_cdf(items, -INF)
        if quantile == -INF:
            assert below >= level - 1e-9 and below > 0
        elif quantile == INF:
            assert estimate_cdf(items, INF) < level + 1e-9
        else:  # the smallest value whose CDF reaches the level (to within
            # the rounding of the shift)
            assert estimate_cdf(items, quantile - shift + 1e-9) >= level - 1e-9
            assert estimate_cdf(items, quantile - shift - 1e-6) < level + 1e-9
