"""The interval solver against a brute-force oracle and the paper's outputs."""

import numpy as np
import pytest
from brute_force import conventional_minimiser, minimum, objective
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from problems import grid_intervals

from mmit import compute_optimal_costs
from mmit._loss._loss import LOSSES as LOSS_ENTRIES
from mmit._loss._solver import optimal_constant as solver_optimal_constant

LOSSES = sorted(LOSS_ENTRIES)
INF = np.inf


# --------------------------------------------------------------------------
# Reference outputs of the authors' implementation
# --------------------------------------------------------------------------

def test_matches_reference_solver_cases(reference):
    cases = reference("solver_cases.json")
    assert len(cases) > 0
    for case in cases:
        predictions, costs, moves = compute_optimal_costs(
            case["lower"], case["upper"], margin=case["margin"], loss=case["loss"]
        )
        label = f"{case['name']} ({case['loss']})"
        np.testing.assert_allclose(costs, case["cost"], rtol=1e-9, atol=1e-12,
                                   err_msg=label)
        np.testing.assert_allclose(predictions, case["pred"], rtol=1e-9, atol=1e-12,
                                   err_msg=label)
        if case["loss"] == "linear_hinge":
            assert moves.max() <= 1, label


# --------------------------------------------------------------------------
# Worked examples
# --------------------------------------------------------------------------

def test_paper_figure_2():
    # [-inf, 4] then [1, inf] with margin 1: breakpoints 3 (upper) and 2 (lower)
    predictions, costs, _ = compute_optimal_costs([-INF, 1.0], [4.0, INF], margin=1.0)
    np.testing.assert_array_equal(predictions, [3.0, 2.5])
    np.testing.assert_array_equal(costs, [0.0, 0.0])


@pytest.mark.parametrize("loss", LOSSES)
def test_minimiser_conventions(loss):
    # only lower bounds: flat to the right, the rightmost breakpoint
    predictions, costs, _ = compute_optimal_costs([0.0, 2.0, 1.0], [INF] * 3, loss=loss)
    np.testing.assert_array_equal(predictions, [0.0, 2.0, 2.0])
    np.testing.assert_array_equal(costs, [0.0, 0.0, 0.0])
    # only upper bounds: flat to the left, the leftmost breakpoint
    predictions, _, _ = compute_optimal_costs([-INF] * 3, [0.0, 2.0, -1.0], loss=loss)
    np.testing.assert_array_equal(predictions, [0.0, 0.0, -1.0])
    # a zero-cost region between two breakpoints: its midpoint
    predictions, _, _ = compute_optimal_costs([0.0, 1.0], [4.0, 2.0], loss=loss)
    np.testing.assert_array_equal(predictions, [2.0, 1.5])


def test_exact_values_ignore_the_margin():
    predictions, costs, _ = compute_optimal_costs([1.0, 2.0, 4.0], [1.0, 2.0, 4.0],
                                                  margin=1.0)
    np.testing.assert_array_equal(predictions, [1.0, 1.5, 2.0])
    np.testing.assert_array_equal(costs, [0.0, 1.0, 3.0])
    predictions, costs, _ = compute_optimal_costs([1.0, 2.0, 4.0], [1.0, 2.0, 4.0],
                                                  margin=1.0, loss="squared_hinge")
    np.testing.assert_allclose(predictions, [1.0, 1.5, 7.0 / 3.0])
    np.testing.assert_allclose(costs, [0.0, 0.5, 14.0 / 3.0])


def test_uninformative_and_zero_weight_rows_change_nothing():
    predictions, costs, moves = compute_optimal_costs(
        [-INF, 1.0, -INF, 5.0], [INF, 2.0, INF, 6.0], sample_weight=[1, 1, 1, 0]
    )
    np.testing.assert_array_equal(predictions, [0.0, 1.5, 1.5, 1.5])
    np.testing.assert_array_equal(costs, [0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(moves[[0, 2, 3]], [0, 0, 0])


def test_empty_input():
    predictions, costs, moves = compute_optimal_costs([], [])
    assert predictions.shape == costs.shape == moves.shape == (0,)


def test_breakpoints_closer_than_the_packed_key_resolution():
    # Values differing only in their last bits share the high bits of their
    # sort keys; values of extreme magnitude, signed zeros and subnormals
    # stress the packing. With exact values and the linear hinge the
    # prediction is the running median, an oracle for the ordering alone.
    rng = np.random.default_rng(0)
    eps = np.finfo(float).eps
    near_one = 1.0 + np.arange(300) * eps
    values = np.concatenate([
        near_one, -near_one, near_one * 1e300, -near_one * 1e-300,
        np.repeat([2.0, -3.0], 50), [0.0, -0.0, 5e-324, -5e-324, 1e-310],
    ])
    values = rng.permutation(values)
    predictions, _, _ = compute_optimal_costs(values, values)
    for stop in range(1, values.size + 1):
        ordered = np.sort(values[:stop])
        middle = stop // 2
        if stop % 2:
            median = ordered[middle]
        else:
            median = 0.5 * (ordered[middle - 1] + ordered[middle])
        assert predictions[stop - 1] == median


# --------------------------------------------------------------------------
# Property tests against the brute-force oracle
# --------------------------------------------------------------------------

@st.composite
def interval_problems(draw, nice_weights=True):
    """Intervals on a coarse grid (many duplicated breakpoints), with censoring."""
    n = draw(st.integers(1, 25))
    lower, upper = draw(grid_intervals(n, st.integers(-8, 8).map(lambda k: k / 2)))
    if nice_weights:
        weight = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]),
                               min_size=n, max_size=n))
    else:
        weight = draw(st.lists(st.floats(0.0, 10.0), min_size=n, max_size=n))
    margin = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 3.0]))
    loss = draw(st.sampled_from(LOSSES))
    return lower, upper, np.array(weight), margin, loss


def _check_against_oracle(lower, upper, weight, margin, loss, check_conventions):
    predictions, costs, moves = compute_optimal_costs(
        lower, upper, margin=margin, loss=loss, sample_weight=weight
    )
    for t in range(len(lower)):
        best, left, right = minimum(lower[: t + 1], upper[: t + 1], margin, loss,
                                    weight[: t + 1])
        scale = 1e-9 * (1.0 + best + np.sum(weight[: t + 1]))
        assert costs[t] == pytest.approx(best, abs=scale)
        if left is None:  # no finite bound yet: fallback prediction
            assert predictions[t] == 0.0
            continue
        attained = objective(predictions[t], lower[: t + 1], upper[: t + 1], margin,
                             loss, weight[: t + 1])
        assert attained == pytest.approx(best, abs=scale)
        if check_conventions:
            assert predictions[t] == pytest.approx(conventional_minimiser(left, right),
                                                   abs=1e-9)
    return moves


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(interval_problems())
def test_agrees_with_brute_force(problem):
    lower, upper, weight, margin, loss = problem
    _check_against_oracle(lower, upper, weight, margin, loss, check_conventions=True)


# Weights of very different magnitudes cancel in the squared hinge's running
# curvature (1 + 1e-45 - 1 == 0) while hinges are still active: the solver
# divided by that zero (ZeroDivisionError with checks on, an arbitrary
# minimiser without them). Both examples were found by hypothesis.
CANCELLING_CURVATURE = [
    (np.array([-0.5, -0.5, 0.0, 0.0, 0.0]), np.array([-0.5, INF, 0.0, 0.0, 0.0]),
     np.array([1.40129846e-45, 1.0, 1.40129846e-45, 0.0, 0.0]), 0.0, "squared_hinge"),
    (np.array([0.0, -3.0, 0.0, 0.0]), np.array([0.0, 0.0, INF, 0.0]),
     np.array([0.0, 3.97966556e-43, 1.80292945, 0.0]), 0.25, "squared_hinge"),
]


def arbitrary_weight_problems(test):
    """Run ``test(problem)`` on problems of arbitrary weights, the cancelling
    curvatures among them."""
    for problem in reversed(CANCELLING_CURVATURE):
        test = example(problem)(test)
    return settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])(
        given(interval_problems(nice_weights=False))(test))


@arbitrary_weight_problems
def test_cost_is_minimal_with_arbitrary_weights(problem):
    lower, upper, weight, margin, loss = problem
    _check_against_oracle(lower, upper, weight, margin, loss, check_conventions=False)


@pytest.mark.parametrize("problem", CANCELLING_CURVATURE)
def test_curvature_lost_to_rounding_counts_as_flat(problem):
    lower, upper, weight, margin, loss = problem
    predictions, costs, _ = compute_optimal_costs(lower, upper, margin=margin,
                                                  loss=loss, sample_weight=weight)
    assert np.all(np.isfinite(predictions)) and np.all(np.isfinite(costs))
    # the curvature left by the tiny weights is below what the sums resolve:
    # any point of the piece is optimal to within rounding
    assert np.all(costs < 1e-40)
    _check_against_oracle(lower, upper, weight, margin, loss, check_conventions=False)


@settings(max_examples=150, deadline=None)
@given(interval_problems())
def test_linear_hinge_moves_at_most_once_per_insertion(problem):
    lower, upper, _, margin, _ = problem
    _, _, moves = compute_optimal_costs(lower, upper, margin=margin)
    assert moves.max() <= 1


@settings(max_examples=150, deadline=None)
@given(interval_problems(), st.data())
def test_integer_weights_equal_duplicated_rows(problem, data):
    lower, upper, _, margin, loss = problem
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=len(lower),
                                         max_size=len(lower))))
    weighted = compute_optimal_costs(lower, upper, margin=margin, loss=loss,
                                     sample_weight=counts)
    repeated = compute_optimal_costs(np.repeat(lower, counts), np.repeat(upper, counts),
                                     margin=margin, loss=loss)
    # compare after the last copy of each row that has copies
    last_copy = np.cumsum(counts) - 1
    rows = np.flatnonzero(counts > 0)
    for output_w, output_r in zip(weighted[:2], repeated[:2], strict=True):
        np.testing.assert_allclose(output_w[rows], output_r[last_copy[rows]],
                                   rtol=1e-12, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(interval_problems(), st.randoms(use_true_random=False))
def test_final_optimum_does_not_depend_on_the_order(problem, random):
    lower, upper, weight, margin, loss = problem
    order = list(range(len(lower)))
    random.shuffle(order)
    first = compute_optimal_costs(lower, upper, margin=margin, loss=loss,
                                  sample_weight=weight)
    second = compute_optimal_costs(lower[order], upper[order], margin=margin, loss=loss,
                                   sample_weight=weight[order])
    assert second[0][-1] == pytest.approx(first[0][-1], abs=1e-12)
    assert second[1][-1] == pytest.approx(first[1][-1], rel=1e-12, abs=1e-12)


def _sorted_pass_optimum(lower, upper, weight, margin, loss):
    """The optimum of every row at once by the sorted-order pass."""
    return solver_optimal_constant(lower, upper, margin, LOSS_ENTRIES[loss].tag, weight)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(interval_problems())
def test_sorted_pass_agrees_with_brute_force(problem):
    # the one-pass optimum of hinges in breakpoint order (sorted_minimum):
    # minimal cost, and the conventional minimiser of the minimiser set
    lower, upper, weight, margin, loss = problem
    prediction, cost = _sorted_pass_optimum(lower, upper, weight, margin, loss)
    best, left, right = minimum(lower, upper, margin, loss, weight)
    scale = 1e-9 * (1.0 + best + np.sum(weight))
    assert cost == pytest.approx(best, abs=scale)
    if left is None:
        assert (prediction, cost) == (0.0, 0.0)
        return
    assert prediction == pytest.approx(conventional_minimiser(left, right), abs=1e-9)


@arbitrary_weight_problems
def test_sorted_pass_agrees_with_the_incremental_solver(problem):
    lower, upper, weight, margin, loss = problem
    prediction, cost = _sorted_pass_optimum(lower, upper, weight, margin, loss)
    predictions, costs, _ = compute_optimal_costs(lower, upper, margin=margin,
                                                  loss=loss, sample_weight=weight)
    assert np.isfinite(prediction)
    scale = 1e-9 * (1.0 + costs[-1] + np.sum(weight))
    assert cost == pytest.approx(costs[-1], abs=scale)
    attained = objective(prediction, lower, upper, margin, loss, weight)
    assert attained == pytest.approx(costs[-1], abs=scale)


def test_large_random_problem_matches_oracle_at_checkpoints():
    rng = np.random.default_rng(42)
    n = 3000
    lower = np.round(rng.normal(0, 3, n), 1)
    upper = lower + np.round(rng.exponential(1.0, n), 1)
    lower[rng.random(n) < 0.2] = -INF
    upper[rng.random(n) < 0.2] = INF
    for loss in LOSSES:
        predictions, costs, moves = compute_optimal_costs(lower, upper, margin=0.3,
                                                          loss=loss)
        if loss == "linear_hinge":
            assert moves.max() <= 1
        for stop in [10, 333, 1500, n]:
            best, left, right = minimum(lower[:stop], upper[:stop], 0.3, loss,
                                        np.ones(stop))
            assert costs[stop - 1] == pytest.approx(best, rel=1e-9)
            assert predictions[stop - 1] == pytest.approx(
                conventional_minimiser(left, right), abs=1e-9)


# --------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(lower=[0.0, np.nan], upper=[1.0, 2.0]), ValueError, "NaN"),
        (dict(lower=[0.0, 3.0], upper=[1.0, 2.0]), ValueError, "lower <= upper"),
        (dict(lower=[INF], upper=[INF]), ValueError, "lower bound cannot be \\+inf"),
        (dict(lower=[-INF], upper=[-INF]), ValueError, "upper bound cannot be -inf"),
        (dict(lower=[0.0, 1.0], upper=[1.0]), ValueError, "same length"),
        (dict(lower=[[0.0]], upper=[[1.0]]), ValueError, "1-D"),
        (dict(lower=[0.0], upper=[1.0], margin=-1.0), ValueError, "margin"),
        (dict(lower=[0.0], upper=[1.0], margin=np.nan), ValueError, "margin"),
        (dict(lower=[0.0], upper=[1.0], margin="1"), TypeError, "margin"),
        (dict(lower=[0.0], upper=[1.0], loss="hinge"), ValueError, "loss"),
        (dict(lower=[0.0], upper=[1.0], sample_weight=[-1.0]), ValueError, "[Nn]egative"),
        (dict(lower=[0.0], upper=[1.0], sample_weight=[1.0, 2.0]), ValueError,
         "sample_weight"),
        (dict(lower=[0.0], upper=[1.0], sample_weight=[np.nan]), ValueError, "NaN"),
    ],
)
def test_bad_input_raises_clear_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        compute_optimal_costs(**kwargs)
