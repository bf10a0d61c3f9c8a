"""The penalised squared-hinge solvers (``mmit.linear_model._newton``: the ridge
solver, the elastic-net path, the standardisation) against brute force:
its two penalties' solutions against scipy on the same objectives, its
weighted standardisation against numpy, and the loss check every model
using it goes through."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from mmit._loss._loss import LOSSES, IntervalLoss
from mmit.ensemble._combiner import simplex_weights
from mmit.linear_model._linear import StandardisedProblem
from mmit.linear_model._newton import NEWTON_LOSS, newton_scale
from mmit.linear_model._ridge_newton import ridge_newton
from mmit.linear_model._standardisation import StandardisedFeatures
from mmit.tree._node_models import fit_linear_models


def hinge_rows(rng, n, censored):
    """Breakpoints around a random centre: crossed ones (a wide margin),
    exact values and censored bounds among them."""
    lower = rng.normal(size=n) * 2
    upper = lower + rng.normal(0.5, 1.0, n) * (rng.random(n) < 0.7)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    return lower, upper


def squared_hinge(prediction, lower, upper):
    below = np.maximum(lower - prediction, 0.0)
    above = np.maximum(prediction - upper, 0.0)
    return below ** 2 + above ** 2


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), p=st.integers(0, 8),
       shrinkage=st.sampled_from([1e-3, 0.1, 1.0, 30.0]),
       censored=st.sampled_from([0.0, 0.3, 0.6]))
def test_ridge_solution_is_the_minimum_and_its_gradient_vanishes(seed, n, p, shrinkage,
                                                                  censored):
    """RidgeNewton's solution is not beaten by L-BFGS-B on the same objective
    (with and without features, both sides of the Woodbury switch), and the
    objective's gradient, in closed form, is zero there."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, p)) * rng.exponential(1.0, p)
    offset = rng.normal(size=n)
    lower, upper = hinge_rows(rng, n, censored)
    weight = rng.exponential(1.0, n) + 0.01

    def objective(theta):
        prediction = offset + theta[0] + A @ theta[1:]
        return weight @ squared_hinge(prediction, lower, upper) + shrinkage * theta @ theta

    b, w = ridge_newton(A, offset, lower, upper, weight, shrinkage)
    theta = np.r_[b, w]
    reference = minimize(objective, np.zeros(p + 1), method="L-BFGS-B",
                         options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20_000})
    assert objective(theta) <= reference.fun + 1e-6 * max(1.0, abs(reference.fun))
    prediction = offset + b + A @ w
    slope = 2.0 * weight * (np.maximum(prediction - upper, 0.0)
                            - np.maximum(lower - prediction, 0.0))
    gradient = np.r_[slope.sum(), A.T @ slope] + 2.0 * shrinkage * theta
    scale = 1.0 + np.r_[np.abs(slope).sum(), np.abs(A).T @ np.abs(slope)] + np.abs(
        2.0 * shrinkage * theta)
    np.testing.assert_array_less(np.abs(gradient), 1e-7 * scale)


def test_ridge_solver_refuses_inconsistent_rows():
    with pytest.raises(ValueError, match="same number of rows"):
        ridge_newton(np.zeros((3, 2)), np.zeros(3), np.zeros(2), np.ones(3), np.ones(3),
                     1.0)
    with pytest.raises(ValueError, match="2-D"):
        ridge_newton(np.zeros(3), np.zeros(3), np.zeros(3), np.ones(3), np.ones(3), 1.0)


def masked_standardisation(X, weight):
    """Each column's weighted mean and standard deviation over the rows that
    have it, one column at a time (the definition), and whether it is
    constant over them."""
    mean, scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
    constant = np.ones(X.shape[1], dtype=bool)
    for j in range(X.shape[1]):
        present = ~np.isnan(X[:, j])
        w = weight[present]
        values = X[present, j][w > 0]
        if values.size:
            mean[j] = np.average(X[present, j], weights=w)
            constant[j] = np.all(values == values[0])
            if not constant[j]:
                scale[j] = np.sqrt(np.average((X[present, j] - mean[j]) ** 2, weights=w))
    return mean, scale, constant


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), p=st.integers(1, 6),
       missing=st.sampled_from([0.0, 0.2, 0.7]), zero_weights=st.booleans(),
       constant=st.booleans(), overwrite=st.booleans())
def test_standardisation_matches_numpy(seed, n, p, missing, zero_weights, constant,
                                       overwrite):
    """Means, scales and standardised values against the per-column
    definition (missing values, zero weights, constant columns, columns
    missing everywhere, in X's memory or not)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 10.0, p) + rng.normal(0, 5, p)
    if constant:
        X[:, 0] = 3.0
    X[rng.random((n, p)) < missing] = np.nan
    weight = rng.exponential(1.0, n)
    if zero_weights:
        weight[rng.random(n) < 0.4] = 0.0
        weight[0] = 1.0
    mean, scale, constant = masked_standardisation(X, weight)
    original = X.copy()
    features = StandardisedFeatures(X, weight, overwrite_X=overwrite)
    np.testing.assert_allclose(features.mean, mean, rtol=1e-12, atol=1e-12)
    # a constant column's spread is 0 or its mean's rounding (then its Z,
    # rounding over rounding, is arbitrary but finite)
    np.testing.assert_allclose(features.scale[~constant], scale[~constant], rtol=1e-12)
    assert np.all((features.scale[constant] == 1.0)
                  | (features.scale[constant] <= 1e-14 * (1.0 + np.abs(mean[constant]))))
    assert features.Z.flags.c_contiguous
    assert (features.Z is X) == overwrite
    np.testing.assert_array_equal(np.isnan(features.Z), np.isnan(original))
    np.testing.assert_allclose(features.Z * features.scale, original - mean, rtol=1e-12,
                               atol=1e-12 * (1.0 + np.abs(mean).max()))
    coef, intercept = features.original_scale(np.ones(p), 0.5)
    np.testing.assert_array_equal(coef, 1.0 / features.scale)
    assert intercept == pytest.approx(0.5 - coef @ features.mean)


def test_the_solver_minimises_the_registry_squared_hinge():
    assert NEWTON_LOSS is LOSSES["squared_hinge"]
    assert newton_scale(LOSSES["squared_hinge"]) == 1.0


def test_a_loss_without_curvature_is_refused_everywhere():
    """The linear model, the node models and the combiner go through the
    same check: differentiable decides."""
    linear_hinge = LOSSES["linear_hinge"]
    with pytest.raises(ValueError, match="not differentiable"):
        newton_scale(linear_hinge)
    lower, upper, weight = np.array([0.0, 1.0]), np.array([1.0, 2.0]), np.ones(2)
    features = StandardisedFeatures(np.array([[0.0], [1.0]]), weight)
    with pytest.raises(ValueError, match="not differentiable"):
        StandardisedProblem(features, lower, upper, 0.0, weight, loss=linear_hinge)
    with pytest.raises(ValueError, match="not differentiable"):
        simplex_weights(np.array([[0.5, 1.0], [1.5, 2.0]]), lower, upper, weight,
                        loss=linear_hinge)
    one_node = np.array([0, 2], dtype=np.int64)
    with pytest.raises(ValueError, match="not differentiable"):
        fit_linear_models(features.Z, lower, upper, weight, one_node,
                          np.array([0, 1], dtype=np.int64), np.array([0], dtype=np.int64),
                          1.0, linear_hinge, linear_hinge.tag, np.zeros(1), np.ones(1))


class ScaledSquaredHinge(IntervalLoss):
    """A differentiable entry the list could hold: the squared hinge times
    ``factor`` (its compiled algebra the squared hinge's)."""

    def __init__(self, factor):
        super().__init__("scaled", LOSSES["squared_hinge"].tag, differentiable=True)
        self.factor = factor

    def derivatives(self, lower, upper, prediction):
        return self.factor * super().derivatives(lower, upper, prediction)


def test_every_differentiable_loss_is_minimised():
    """Not by name: a differentiable loss is the squared hinge times a
    factor, minimised on weights times it by every Newton model."""
    loss = ScaledSquaredHinge(3.0)
    assert newton_scale(loss) == 3.0
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    lower, upper = hinge_rows(rng, 60, 0.2)
    weight = rng.uniform(0.5, 2.0, 60)
    features = StandardisedFeatures(X, weight)
    # 3 L(theta) + alpha P(theta): the squared hinge's solution at alpha / 3
    path = StandardisedProblem(features, lower, upper, 0.1, weight, loss=loss).path(
        [0.3, 0.03], 1.0, 1e-10, 10_000)
    reference = StandardisedProblem(features, lower, upper, 0.1, weight).path(
        [0.1, 0.01], 1.0, 1e-10, 10_000)
    for solution, expected in zip(path[:2], reference[:2], strict=True):
        np.testing.assert_allclose(solution, expected, rtol=1e-6, atol=1e-8)
    predictions = np.column_stack([X[:, 0], X[:, 1], np.zeros(60)])
    np.testing.assert_allclose(
        simplex_weights(predictions, lower, upper, weight, loss=loss),
        simplex_weights(predictions, lower, upper, weight), rtol=1e-9, atol=1e-12)
    # the node models: shrinkage 3 s with the scaled loss is s with the hinge
    nodes = (np.array([0, 60], dtype=np.int64), np.arange(60, dtype=np.int64),
             np.array([0], dtype=np.int64))
    fits = [fit_linear_models(features.Z, lower, upper, weight, *nodes, shrinkage, model,
                              LOSSES["squared_hinge"].tag, np.zeros(1), np.ones(1))
            for shrinkage, model in ((6.0, loss), (2.0, LOSSES["squared_hinge"]))]
    np.testing.assert_allclose(fits[0][1], fits[1][1], rtol=1e-9, atol=1e-12)


def test_a_differentiable_loss_that_is_no_squared_hinge_is_refused():
    class Smooth(IntervalLoss):  # declared differentiable, the linear hinge's values
        def __init__(self):
            super().__init__("smooth", LOSSES["linear_hinge"].tag, differentiable=True)

    with pytest.raises(ValueError, match="not a multiple of the squared hinge"):
        newton_scale(Smooth())
