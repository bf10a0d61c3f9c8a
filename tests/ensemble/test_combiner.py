"""The stacking combiner against brute force: its weights are feasible, meet
the optimality conditions and are not beaten by any point of a fine grid of
the simplex."""

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mmit.ensemble._combiner import combined_loss, simplex_weights


def random_problem(seed, n, m, censored=0.2, exact=0.2, zero_weights=False,
                   duplicate=False, constant=False, scale=1.0, shift=0.0):
    """Members predicting a truth with errors of their own, intervals around
    it; everything on the given scale and moved by ``shift``."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    predictions = (truth[:, np.newaxis] + rng.normal(size=(n, m)) * rng.uniform(0.1, 2, m)
                   + rng.normal(size=m))
    if duplicate and m > 1:
        predictions[:, -1] = predictions[:, 0]
    if constant:
        predictions[:, 0] = rng.normal()
    lower = truth - rng.exponential(0.3, n)
    upper = truth + rng.exponential(0.3, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    is_exact = rng.random(n) < exact
    lower[is_exact] = upper[is_exact] = truth[is_exact]
    weight = rng.uniform(0.1, 2.0, n)
    if zero_weights:
        weight[rng.random(n) < 0.3] = 0.0
        weight[0] = 1.0
    return (scale * predictions + shift, scale * lower + shift, scale * upper + shift,
            weight)


def gradient(weights, predictions, lower, upper, sample_weight):
    combined = predictions @ weights
    below = np.maximum(lower - combined, 0.0)
    above = np.maximum(combined - upper, 0.0)
    return 2.0 * predictions.T @ (sample_weight * (above - below))


def simplex_grid(m, steps):
    """Every point of the simplex whose coordinates are multiples of 1/steps."""
    for head in itertools.product(range(steps + 1), repeat=m - 1):
        if sum(head) <= steps:
            yield np.array([*head, steps - sum(head)]) / steps


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 40), m=st.integers(1, 4),
       censored=st.sampled_from([0.0, 0.3, 0.9]), exact=st.sampled_from([0.0, 0.3, 1.0]),
       zero_weights=st.booleans(), duplicate=st.booleans(), constant=st.booleans(),
       scale=st.sampled_from([1e-4, 1.0, 1e4]), shift=st.sampled_from([0.0, -3.0, 1e3]))
@example(seed=0, n=1, m=3, censored=0.0, exact=1.0, zero_weights=False, duplicate=False,
         constant=False, scale=1.0, shift=0.0)
@example(seed=84, n=88, m=4, censored=0.3, exact=0.3, zero_weights=True, duplicate=False,
         constant=True, scale=1.0, shift=563.0)  # members alike: nearly singular
def test_weights_are_optimal(seed, n, m, censored, exact, zero_weights, duplicate,
                             constant, scale, shift):
    problem = random_problem(seed, n, m, censored, exact, zero_weights, duplicate, constant,
                             scale, shift)
    weights = simplex_weights(*problem)
    assert weights.shape == (m,)
    assert np.all(weights >= 0.0) and weights.sum() == pytest.approx(1.0, abs=1e-12)
    loss = combined_loss(weights, *problem)
    # the loss's scale: the weight times the squared spread of the members'
    # predictions (at least the rounding of their magnitude)
    spread = max(np.ptp(problem[0], axis=1).max(), 1e-12 * np.abs(problem[0]).max())
    loss_scale = np.sum(problem[3]) * spread**2
    # optimality on the simplex: no member's partial derivative is below that
    # of the members holding weight (the Frank-Wolfe gap vanishes)
    g = gradient(weights, *problem)
    assert g @ weights - g.min() <= 1e-8 * loss_scale
    # brute force: no point of a grid of the simplex does better
    steps = {1: 1, 2: 200, 3: 60, 4: 20}[m]
    best = min(combined_loss(point, *problem) for point in simplex_grid(m, steps))
    # (the loss's rounding: its residuals are differences of numbers as large
    # as the predictions)
    rounding = 1e-13 * np.abs(problem[0]).max() * np.sqrt(loss * np.sum(problem[3]))
    assert loss <= best + 1e-9 * loss_scale + rounding


def test_a_member_predicting_the_truth_gets_all_the_weight():
    rng = np.random.default_rng(1)
    truth = rng.normal(size=50)
    predictions = np.column_stack([truth + rng.normal(0, 0.3, 50), truth,
                                   rng.normal(size=50), np.full(50, truth.mean())])
    weights = simplex_weights(predictions, truth, truth, np.ones(50))
    np.testing.assert_allclose(weights, [0.0, 1.0, 0.0, 0.0], atol=1e-14)  # rounding


def test_identical_members_share_their_weight():
    predictions, lower, upper, weight = random_problem(2, 60, 2)
    doubled = np.column_stack([predictions, predictions[:, 1]])
    single = simplex_weights(predictions, lower, upper, weight)
    weights = simplex_weights(doubled, lower, upper, weight)
    np.testing.assert_allclose(weights[1:], [single[1] / 2] * 2, atol=1e-9)
    assert weights[0] == pytest.approx(single[0], abs=1e-9)


def test_one_member_or_no_loss():
    predictions, lower, upper, weight = random_problem(3, 20, 1)
    np.testing.assert_array_equal(simplex_weights(predictions, lower, upper, weight), [1.0])
    # every combination inside every interval: the loss is 0 from the start
    inside = np.column_stack([np.zeros(5), np.ones(5)])
    weights = simplex_weights(inside, np.full(5, -1.0), np.full(5, 2.0), np.ones(5))
    np.testing.assert_array_equal(weights, [0.5, 0.5])


def test_integer_weights_equal_repeated_rows():
    predictions, lower, upper, _ = random_problem(4, 40, 3)
    counts = np.random.default_rng(4).integers(0, 4, 40)
    rows = np.repeat(np.arange(40), counts)
    weighted = simplex_weights(predictions, lower, upper, counts.astype(float))
    repeated = simplex_weights(predictions[rows], lower[rows], upper[rows],
                               np.ones(rows.size))
    np.testing.assert_allclose(weighted, repeated, atol=1e-10)
