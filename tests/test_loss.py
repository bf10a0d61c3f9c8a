"""The loss registry: each entry's value, gradient and curvature against
plain formulas and finite differences, and what is derived from it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mmit import MMIT, MMITBoost
from mmit._fitting import TREE_PARAMETER_CONSTRAINTS
from mmit._loss import LOSSES, breakpoints
from mmit.baselines import ConstantRegressor

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
