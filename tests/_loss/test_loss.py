"""The loss registry: each entry's value, gradient and curvature against
plain formulas and finite differences, what is derived from it, and every
run-time dispatch on a loss's tag (each tag served, an unknown one refused)."""

import numpy as np
import pytest
from brute_force import conventional_minimiser, minimum
from hypothesis import given
from hypothesis import strategies as st

from mmit import MMIT, MMITBoost
from mmit._loss._loss import LOSSES, IntervalLoss, breakpoints, derivatives, weighted_loss
from mmit._loss._loss_list import LOSS_LIST
from mmit._loss._solver import incremental_optima, optimal_constant, optimal_costs
from mmit.baselines import ConstantRegressor
from mmit.tree._criterion import HingeCriterion, HingeTargets
from mmit.tree._growing import TREE_PARAMETER_CONSTRAINTS
from mmit.tree._node_models import fit_linear_models

POWER = {"linear_hinge": 1, "squared_hinge": 2}


def plain_loss(name, lower, upper, f):
    below, above = np.maximum(lower - f, 0.0), np.maximum(f - upper, 0.0)
    return below ** POWER[name] + above ** POWER[name]


finite = st.floats(-100, 100, allow_nan=False)


@given(name=st.sampled_from(sorted(LOSSES)), lower=finite, width=st.floats(0, 10),
       prediction=finite, lower_inf=st.booleans(), upper_inf=st.booleans())
def test_value_gradient_and_curvature_follow_the_plain_formula(
        name, lower, width, prediction, lower_inf, upper_inf):
    loss = LOSSES[name]
    lo = np.array([-np.inf if lower_inf else lower])
    up = np.array([np.inf if upper_inf else lower + width])
    f = np.array([prediction])
    assert loss.value(lo, up, f)[0] == pytest.approx(plain_loss(name, lo, up, f)[0])
    step = 1e-4
    kink = min(abs(f[0] - lo[0]), abs(f[0] - up[0]))
    if kink > 10 * step:  # away from the kinks: central differences
        numeric = (plain_loss(name, lo, up, f + step) - plain_loss(name, lo, up, f - step))
        assert loss.gradient(lo, up, f)[0] == pytest.approx(numeric[0] / (2 * step),
                                                            abs=1e-5)
        second = (plain_loss(name, lo, up, f + step) - 2 * plain_loss(name, lo, up, f)
                  + plain_loss(name, lo, up, f - step)) / step**2
        assert loss.curvature(lo, up, f)[0] == pytest.approx(second[0], abs=1e-3)


def test_entries_and_what_derives_from_them():
    assert set(LOSSES) == {"linear_hinge", "squared_hinge"}
    assert LOSSES["squared_hinge"].differentiable
    assert not LOSSES["linear_hinge"].differentiable
    assert sorted(TREE_PARAMETER_CONSTRAINTS["loss"][0].options) == sorted(LOSSES)
    for name, loss in LOSSES.items():
        assert loss.name == name and repr(loss) == f"IntervalLoss({name!r})"
    with pytest.raises(ValueError, match="loss"):
        MMIT(loss="huber").fit([[0.0], [1.0]], [0.0, 1.0])


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_objective_and_optimal_constant(name):
    rng = np.random.default_rng(0)
    lower = rng.normal(size=40)
    upper = lower + rng.exponential(size=40)
    upper[::5] = np.inf
    weight = rng.uniform(0.5, 2.0, 40)
    loss = LOSSES[name]
    objective = loss.objective(lower, upper, 0.1, weight)
    moved_lower, moved_upper = breakpoints(lower, upper, 0.1)
    prediction = rng.normal(size=40)
    values = plain_loss(name, moved_lower, moved_upper, prediction)
    expected = weight @ values / weight.sum()
    assert objective(prediction) == pytest.approx(expected)
    constant = loss.optimal_constant(lower, upper, 0.1, weight)
    grid = np.linspace(constant - 1, constant + 1, 201)
    best = min(objective(np.full(40, value)) for value in grid)
    assert objective(np.full(40, constant)) <= best + 1e-12
    model = ConstantRegressor(margin=0.1, loss=name).fit(np.zeros((40, 1)),
                                                         np.column_stack([lower, upper]),
                                                         weight)
    assert model.constant_ == constant
    boost = MMITBoost(n_estimators=1, loss=name, margin=0.1).fit(
        np.zeros((40, 1)), np.column_stack([lower, upper]), weight)
    assert boost.baseline_prediction_ == constant


def test_the_registry_follows_the_list_of_losses():
    # a loss's tag is its position in the one list the dispatch is generated from
    assert list(LOSSES) == [spec.name for spec in LOSS_LIST]
    assert [LOSSES[spec.name].tag for spec in LOSS_LIST] == list(range(len(LOSS_LIST)))
    assert all(LOSSES[spec.name].differentiable == spec.differentiable
               for spec in LOSS_LIST)


def dispatch_problem():
    rng = np.random.default_rng(3)
    lower = np.round(rng.normal(0.0, 2.0, 14), 1)
    upper = lower + np.round(rng.exponential(1.0, 14), 1)
    lower[::4] = -np.inf
    upper[1::5] = np.inf
    upper[2] = lower[2]  # an exact value
    weight = rng.uniform(0.5, 2.0, 14)
    weight[5] = 0.0
    return lower, upper, weight


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_dispatcher_serves_every_tag(name):
    # each run-time dispatcher reached from Python with the loss's tag gives
    # the loss's own result (brute force, plain formulas): a tag missing
    # from a dispatcher fails here
    lower, upper, weight = dispatch_problem()
    margin, tag = 0.2, LOSSES[name].tag
    moved_lower, moved_upper = breakpoints(lower, upper, margin)
    prediction = np.linspace(-3.0, 3.0, 14)
    # tagged_interval_loss and tagged_derivatives
    value, gradient, curvature = derivatives(moved_lower, moved_upper, prediction, tag)
    np.testing.assert_allclose(value, plain_loss(name, moved_lower, moved_upper,
                                                 prediction))
    below = np.maximum(moved_lower - prediction, 0.0)
    above = np.maximum(prediction - moved_upper, 0.0)
    power = POWER[name]
    np.testing.assert_allclose(
        gradient, power * (above ** (power - 1) * (above > 0)
                           - below ** (power - 1) * (below > 0)))
    np.testing.assert_allclose(curvature, (power - 1) * power
                               * ((above > 0).astype(float) + (below > 0)))
    assert weighted_loss(moved_lower, moved_upper, prediction, weight, tag) == (
        pytest.approx(weight @ value))
    # insert_rows (optimal_costs), solver_sweep, solver_insert and
    # solver_minimum (incremental_optima), sorted_minimum (optimal_constant)
    predictions, costs, _ = optimal_costs(lower, upper, margin, tag, weight, np.nan)
    swept, swept_costs, final, final_cost = incremental_optima(lower, upper, margin, tag,
                                                               weight)
    np.testing.assert_array_equal(swept, predictions)
    np.testing.assert_array_equal(swept_costs, costs)
    assert (final, final_cost) == (predictions[-1], costs[-1])
    assert optimal_constant(lower, upper, margin, tag, weight) == pytest.approx(
        (final, final_cost), abs=1e-12)
    for stop in range(1, len(lower) + 1):
        best, left, right = minimum(lower[:stop], upper[:stop], margin, name,
                                    weight[:stop])
        assert costs[stop - 1] == pytest.approx(best, rel=1e-9, abs=1e-12)
        if left is not None:
            assert predictions[stop - 1] == pytest.approx(
                conventional_minimiser(left, right), abs=1e-9)
    # the criterion takes the tag
    assert HingeCriterion(HingeTargets(lower, upper, margin), weight, tag).loss == tag


@pytest.mark.parametrize("tag", [-1, len(LOSS_LIST), 99])
def test_an_unknown_tag_is_refused_by_every_entry_point(tag):
    lower, upper, weight = dispatch_problem()
    prediction = np.zeros(len(lower))
    message = f"unknown loss tag {tag}"
    calls = [
        lambda: derivatives(lower, upper, prediction, tag),
        lambda: weighted_loss(lower, upper, prediction, weight, tag),
        lambda: optimal_costs(lower, upper, 0.1, tag, weight),
        lambda: optimal_constant(lower, upper, 0.1, tag, weight),
        lambda: incremental_optima(lower, upper, 0.1, tag, weight),
        lambda: HingeCriterion(HingeTargets(lower, upper, 0.1), weight, tag),
        lambda: IntervalLoss("unknown", tag, differentiable=False),
        lambda: fit_linear_models(
            np.zeros((len(lower), 1)), lower, upper, weight,
            np.array([0, len(lower)]), np.arange(len(lower)), np.array([0]), 1.0,
            LOSSES["squared_hinge"], tag, np.zeros(1), np.zeros(1)),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=message):
            call()
