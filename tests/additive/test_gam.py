"""IntervalGAM and IntervalGAMCV: the splines against scipy's, the solver
against an independent minimiser, the box-constrained quadratic against an
enumeration of its bounds, monotone and centred terms, categorical and
missing-value effects, model files and bad input."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import BSpline
from scipy.optimize import minimize

from mmit import (
    IntervalGAM,
    IntervalGAMCV,
    IntervalLinearRegression,
    load_model,
    save_model,
    shap_values,
)
from mmit._loss._loss import LOSSES, breakpoints
from mmit.additive._penalized_newton import box_quadratic, fellner_schall_penalties
from mmit.additive._splines import SplineBasis


def interval_data(seed, n=200, p=3, censored=0.2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, p))
    center = np.sin(2 * X[:, 0]) + (X[:, 1] ** 2 if p > 1 else 0.0)
    lower = center - rng.uniform(0, 0.3, n)
    upper = center + rng.uniform(0, 0.3, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    return X, np.column_stack([lower, upper])


@pytest.mark.parametrize("order", [1, 2, 3])
def test_the_basis_is_scipys_b_spline_basis(order):
    basis = SplineBasis(-1.5, 4.0, 9, order)
    values = np.linspace(-1.5, 4.0, 71)
    expected = BSpline.design_matrix(values, basis.knots, order).toarray()
    np.testing.assert_allclose(basis.design(values).toarray(), expected, atol=1e-14)
    clipped = basis.design(np.array([-9.0, 9.0, np.nan])).toarray()
    np.testing.assert_allclose(clipped[:2], expected[[0, -1]], atol=1e-14)
    assert clipped[2].sum() == 0.0


def shrunk_slope(beta):
    """A spline's squared slope as its shrinkage penalizes it: the squared sum
    of its coefficient differences over their number."""
    return (beta[-1] - beta[0]) ** 2 / (len(beta) - 1)


def objective_of(model, X, y, weight, lam):
    """The fit's objective at the model's predictions, from scratch: the mean
    weighted squared hinge plus lam over the weights' sum times the squared
    second differences of every spline's coefficients and the shrinkage times
    its squared slope."""
    lower, upper = breakpoints(y[:, 0], y[:, 1], model.margin)
    loss = np.average(LOSSES["squared_hinge"].value(lower, upper, model.predict(X)),
                      weights=weight)
    penalty = 0.0
    for term in model.design_.terms:
        beta = model.coef_[term.column:term.column + term.n_basis]
        penalty += np.sum(np.diff(beta, 2) ** 2) + model.shrinkage * shrunk_slope(beta)
    return loss + lam * penalty / weight.sum()


def brute_force_objective(model, X, y, weight, lam):
    """The least objective that scipy's BFGS finds over the same splines'
    coefficients and intercept (from the optimal constant and from the
    model's own coefficients perturbed)."""
    basis = model.design_.terms[0].basis
    design = basis.design(X[:, 0]).toarray()
    lower, upper = breakpoints(y[:, 0], y[:, 1], model.margin)
    loss = LOSSES["squared_hinge"]

    n = design.shape[1]
    ends = np.zeros(n)
    ends[[0, -1]] = -1.0, 1.0
    shrinkage = model.shrinkage / (n - 1)

    def value(theta):
        prediction = theta[0] + design @ theta[1:]
        return (np.average(loss.value(lower, upper, prediction), weights=weight)
                + lam * (np.sum(np.diff(theta[1:], 2) ** 2)
                         + shrinkage * (ends @ theta[1:]) ** 2) / weight.sum())

    def gradient(theta):
        prediction = theta[0] + design @ theta[1:]
        g = np.average(np.zeros_like(prediction)) + weight * loss.gradient(
            lower, upper, prediction) / weight.sum()
        difference = np.diff(np.eye(design.shape[1]), 2, axis=0)
        penalty = 2 * lam * (difference.T @ (difference @ theta[1:])
                             + shrinkage * ends * (ends @ theta[1:])) / weight.sum()
        return np.r_[g.sum(), design.T @ g + penalty]

    starts = [np.zeros(design.shape[1] + 1),
              np.r_[0.0, model.coef_[1:1 + design.shape[1]] + model.intercept_ + 0.1]]
    return min(minimize(value, start, jac=gradient, method="BFGS",
                        options={"gtol": 1e-12, "maxiter": 10_000}).fun
               for start in starts)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.0, 1e-4, 0.01, 1.0]),
       margin=st.sampled_from([0.0, 0.1]), shrinkage=st.sampled_from([0.0, 0.1, 1.0]))
def test_one_feature_fit_reaches_the_brute_force_objective(seed, lam, margin, shrinkage):
    X, y = interval_data(seed, n=40, p=1)
    weight = np.random.default_rng(seed).uniform(0.2, 2.0, X.shape[0])
    model = IntervalGAM(lam=lam, n_splines=6, margin=margin, shrinkage=shrinkage,
                        tol=1e-10).fit(X, y, sample_weight=weight)
    ours = objective_of(model, X, y, weight, lam)
    theirs = brute_force_objective(model, X, y, weight, lam)
    assert ours <= theirs + 1e-6 * (1.0 + theirs)


def kkt_minimum(hessian, target, signs):
    """The minimum of x'Hx/2 - target'x under signs * x >= 0 by enumerating
    which constrained coordinates sit at 0."""
    constrained = np.flatnonzero(signs)
    best, best_value = None, np.inf
    for size in range(constrained.size + 1):
        for fixed in itertools.combinations(constrained, size):
            free = np.setdiff1d(np.arange(signs.size), fixed)
            x = np.zeros(signs.size)
            x[free] = np.linalg.solve(hessian[np.ix_(free, free)], target[free])
            if np.all(signs * x >= -1e-12):
                value = 0.5 * x @ hessian @ x - target @ x
                if value < best_value:
                    best, best_value = x, value
    return best


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), size=st.integers(1, 6))
def test_box_quadratic_is_the_enumerated_minimum(seed, size):
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=(size + 2, size))
    hessian = factor.T @ factor + 0.1 * np.eye(size)
    target = rng.normal(size=size)
    signs = rng.integers(-1, 2, size).astype(np.int8)
    start = np.abs(rng.normal(size=size)) * np.where(signs == 0, rng.normal(size=size),
                                                      signs)
    x = box_quadratic(hessian, target, signs, start, 100)
    expected = kkt_minimum(hessian, target, signs)
    assert np.all(signs * x >= 0)
    np.testing.assert_allclose(x, expected, atol=1e-9)


def test_a_large_penalty_gives_the_linear_model_without_shrinkage():
    X, y = interval_data(1, n=300)
    gam = IntervalGAM(lam=1e9, shrinkage=0.0).fit(X, y)
    linear = IntervalLinearRegression(alpha=0.0, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(gam.predict(X), linear.predict(X), atol=1e-3)
    grid = np.linspace(gam.data_min_, gam.data_max_, 50)  # within the splines' span
    assert np.abs(np.diff(gam.term_values(grid), 2, axis=0)).max() < 1e-6


@pytest.mark.parametrize("interactions", [None, [(0, 1)]])
def test_a_large_penalty_with_shrinkage_gives_the_constant_model(interactions):
    X, y = interval_data(1, n=300)
    gam = IntervalGAM(lam=1e9, interactions=interactions).fit(X, y)
    constant = LOSSES["squared_hinge"].optimal_constant(y[:, 0], y[:, 1], 0.0,
                                                        np.ones(300))
    np.testing.assert_allclose(gam.predict(X), constant, atol=1e-3)
    np.testing.assert_allclose(gam.term_values(X), 0.0, atol=1e-3)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000),
       constraints=st.lists(st.sampled_from([-1, 0, 1]), min_size=3, max_size=3),
       lam=st.sampled_from([0.0, 0.1, 10.0]))
def test_monotone_terms_are_monotone_along_a_fine_grid(seed, constraints, lam):
    X, y = interval_data(seed, n=120)
    model = IntervalGAM(lam=lam, monotonic_cst=constraints).fit(X, y)
    grid = np.linspace(-2.5, 2.5, 1001)
    terms = model.term_values(np.column_stack([grid] * 3))
    steps = np.diff(terms, axis=0) * np.asarray(constraints)
    assert np.all(steps >= -1e-10)


def test_terms_are_centred_and_sum_to_the_prediction():
    X, y = interval_data(2)
    weight = np.random.default_rng(2).uniform(0, 3, X.shape[0])
    model = IntervalGAM(lam=0.1).fit(X, y, sample_weight=weight)
    terms = model.term_values(X)
    np.testing.assert_allclose(np.average(terms, axis=0, weights=weight), 0.0, atol=1e-10)
    np.testing.assert_allclose(terms.sum(axis=1) + model.intercept_, model.predict(X),
                               atol=1e-10)
    explanation = shap_values(model, X[:10])
    np.testing.assert_allclose(explanation.values, terms[:10], atol=1e-12)
    np.testing.assert_allclose(explanation.base_values, model.intercept_)


def test_categorical_and_missing_value_effects():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    n = 400
    level = rng.choice(["a", "b", "c"], n)
    x = rng.uniform(-1, 1, n)
    missing = rng.random(n) < 0.2
    center = np.select([level == "a", level == "b"], [0.0, 2.0], -1.0) + x
    center[missing] = np.select([level[missing] == "a", level[missing] == "b"],
                                [0.0, 2.0], -1.0) + 3.0
    x[missing] = np.nan
    frame = pd.DataFrame({"level": pd.Categorical(level), "x": x})
    model = IntervalGAM(lam=1e-3).fit(frame, np.column_stack([center - 0.01,
                                                              center + 0.01]))
    terms = model.term_values(frame)
    effect = {label: terms[level == label, 0].mean() for label in "abc"}
    assert effect["b"] - effect["a"] == pytest.approx(2.0, abs=0.05)
    assert effect["c"] - effect["a"] == pytest.approx(-1.0, abs=0.05)
    assert model.has_missing_effect_.tolist() == [False, True]
    # a missing x is worth 3 above the line's value at 0
    at_zero = model.term_values(pd.DataFrame({"level": pd.Categorical(["a"],
                                                                      categories=list("abc")),
                                              "x": [0.0]}))[0, 1]
    assert terms[missing, 1].mean() - at_zero == pytest.approx(3.0, abs=0.1)
    with pytest.raises(ValueError, match="categorical"):
        IntervalGAM(monotonic_cst={"level": 1}).fit(frame, center)


def test_sparse_input_fits_as_dense():
    X, y = interval_data(4, n=150)
    X[np.abs(X) < 1.0] = 0.0
    dense = IntervalGAM(lam=0.1).fit(X, y).predict(X)
    for matrix in (sp.csr_matrix, sp.csc_matrix):
        sparse = IntervalGAM(lam=0.1).fit(matrix(X), y).predict(matrix(X))
        np.testing.assert_allclose(sparse, dense, atol=1e-10)


@pytest.mark.parametrize("model", [IntervalGAM(lam=0.3),
                                   IntervalGAMCV(lams=[10.0, 0.1], cv=3)])
def test_model_file_round_trip(tmp_path, model):
    X, y = interval_data(5, n=150)
    X[::9, 2] = np.nan
    model.fit(X, y)
    save_model(model, tmp_path / "gam.npz")
    loaded = load_model(tmp_path / "gam.npz")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_array_equal(loaded.term_values(X), model.term_values(X))


def test_cv_chooses_a_penalty_on_its_path_and_ignores_n_jobs():
    X, y = interval_data(6, n=240)
    one = IntervalGAMCV(cv=4, n_jobs=1).fit(X, y)
    two = IntervalGAMCV(cv=4, n_jobs=2).fit(X, y)
    assert one.mse_path_.shape == (15, 4)
    scores = np.concatenate([one.mse_path_, one.per_term_mse_path_]).mean(axis=1)
    if np.argmin(scores) < one.lams_.size:
        np.testing.assert_array_equal(one.lam_, one.lams_[np.argmin(scores)])
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    refit = IntervalGAM(lam=one.lam_).fit(X, y)
    np.testing.assert_allclose(refit.predict(X), one.predict(X), atol=1e-8)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), shrinkage=st.sampled_from([0.1, 1.0]))
def test_per_term_penalties_are_the_fellner_schall_fixed_point(seed, shrinkage):
    """On exact targets (least squares) the penalties are a fixed point of
    the Fellner-Schall update computed from the closed-form penalized
    least-squares fit: sigma^2 (rank - lam tr(H^-1 S)) / beta' S beta."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(150, 3))
    center = np.sin(2 * X[:, 0]) + X[:, 1] / 2 + 0.3 * rng.normal(size=150)
    weight = rng.uniform(0.5, 2.0, 150)
    model = IntervalGAM(shrinkage=shrinkage, n_splines=8)
    model.n_features_in_ = 3
    lower = upper = center
    design, problem, start, spread = model._problem(X, lower, upper, weight, None)

    def fit(lam, start):
        return model._fit_at(design, problem, lam, weight.sum(), start, spread)[0]

    lams, parameters = fellner_schall_penalties(fit, design, problem, 1.0, shrinkage,
                                                weight.sum(), start, tol=1e-3,
                                                max_iter=300)
    # the oracle: dense least squares at those penalties
    columns = problem.parameter_columns.toarray()
    gram = columns.T @ (weight[:, np.newaxis] * columns)
    hessian = gram + design.penalty(lams, shrinkage)
    hessian[1:, 1:] += 1e-7 * weight.sum() * np.eye(hessian.shape[0] - 1)
    beta = np.linalg.solve(hessian, columns.T @ (weight * center))
    np.testing.assert_allclose(parameters, beta, rtol=1e-5, atol=1e-7)
    inverse = np.linalg.inv(hessian)
    scale = (weight @ (columns @ beta - center) ** 2) / (weight.sum()
                                                        - np.trace(inverse @ gram))
    for j in range(len(design.terms)):
        unit = np.zeros(len(design.terms))
        unit[j] = 1.0
        penalty = design.penalty(unit, shrinkage)
        freedom = np.linalg.matrix_rank(penalty) - lams[j] * np.trace(inverse @ penalty)
        update = scale * freedom / (beta @ penalty @ beta)
        if freedom >= 0.01:  # else the term is shrunk to nothing, its lam moot
            np.testing.assert_allclose(min(update, 1e6), lams[j], rtol=0.01)
    assert np.any(lams < 1e6)


def test_per_term_penalties_shrink_the_noise_features_terms():
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, size=(400, 5))
    center = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2 + 0.3 * rng.normal(size=400)
    y = np.column_stack([center - 0.2, center + 0.2])
    y[rng.random(400) < 0.2, 1] = np.inf
    model = IntervalGAMCV(term_penalties="per_term", cv=3).fit(X, y)
    assert model.lam_.shape == (5,)
    assert model.lam_[2:].min() > 100 * model.lam_[:2].max()
    assert np.abs(model.term_values(X)[:, 2:]).max() < 0.05
    assert model.per_term_mse_path_.shape == (model.per_term_scales_.size, 3)
    assert model.mse_path_.shape == (0, 3)
    shared = IntervalGAMCV(term_penalties="shared", cv=3).fit(X, y)
    assert shared.per_term_mse_path_.shape == (0, 3)
    assert np.all(shared.lam_ == shared.lam_[0])
    refit = IntervalGAM(lam=model.lam_).fit(X, y)
    np.testing.assert_allclose(refit.predict(X), model.predict(X), atol=1e-8)


@pytest.mark.parametrize("params, message", [
    ({"lam": [1.0, 2.0]}, "one per term"),
    ({"lam": [1.0, np.inf, 1.0]}, "non-negative and finite"),
    ({"n_splines": 3, "spline_order": 3}, "must exceed spline_order"),
    ({"monotonic_cst": [1, 0]}, "one entry per feature"),
    ({"loss": "linear_hinge"}, "loss"),
    ({"lam": -1.0}, "lam"),
])
def test_bad_input_gets_a_clear_error(params, message):
    X, y = interval_data(7, n=50)
    with pytest.raises(ValueError, match=message):
        IntervalGAM(**params).fit(X, y)


def test_a_fixed_lam_fit_has_no_distributions_and_says_so():
    X, y = interval_data(8, n=50)
    model = IntervalGAM().fit(X, y)
    assert not hasattr(model, "predict_quantiles")
    with pytest.raises(AttributeError, match="IntervalGAMCV gives them"):
        model.predict_quantiles(X)
    with pytest.raises(AttributeError, match="no attribute 'coef_typo_'"):
        model.coef_typo_  # noqa: B018


def test_unknown_names_and_bad_lams_get_a_clear_error():
    pd = pytest.importorskip("pandas")
    X, y = interval_data(8, n=50)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match="not in X"):
        IntervalGAM(monotonic_cst={"z": 1}).fit(frame, y)
    with pytest.raises(ValueError, match="lams"):
        IntervalGAMCV(lams=[1.0, -2.0]).fit(X, y)


@pytest.mark.parametrize("censored", [0.0, 0.3])
def test_bands_cover_the_true_term(censored):
    """95% bands of a smooth term, over 30 replicates of Gaussian noise (a
    share of the rows right-censored at their value): the true centred term
    lies in the band at most points (the Bayesian bands' coverage is
    across the function, Nychka 1988)."""
    coverage = []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        X = rng.uniform(-2, 2, size=(300, 2))
        truth = np.sin(X[:, 0])
        value = truth + X[:, 1] + 0.3 * rng.normal(size=300)
        y = np.column_stack([value, value])
        y[rng.random(300) < censored, 1] = np.inf
        model = IntervalGAM(lam=1.0).fit(X, y)
        shape = model.shape_function(0, n_points=50)
        centred = np.sin(shape.grid) - np.sin(X[:, 0]).mean()
        coverage.append(np.mean((shape.lower <= centred) & (centred <= shape.upper)))
    assert 0.88 <= np.mean(coverage) <= 1.0


def test_bands_are_the_term_deviations_and_survive_a_model_file(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = interval_data(9, n=300)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["c"] = pd.Categorical(np.where(X[:, 2] > 0, "high", "low"))
    frame.loc[::7, "a"] = np.nan
    model = IntervalGAM(lam=1.0).fit(frame, y)
    assert 0 < model.edf_ < model.coef_.size
    np.testing.assert_allclose(model.coef_covariance_, model.coef_covariance_.T)
    shape = model.shape_function("b", n_points=7, confidence=0.9)
    grid = pd.DataFrame({"a": 0.0, "b": shape.grid,
                         "c": pd.Categorical(["low"] * 7, categories=["high", "low"])})
    terms, std = model.term_values(grid, return_std=True)
    np.testing.assert_allclose(terms[:, 1], shape.term, atol=1e-12)
    np.testing.assert_allclose(shape.upper - shape.term, 1.6448536 * std[:, 1], rtol=1e-6)
    assert np.all(std > 0)
    categorical = model.shape_function(2)
    assert categorical.kind == "categorical" and list(categorical.grid) == ["high", "low"]
    assert model.shape_function(0).missing is not None
    assert len(model.shape_functions_) == 3
    save_model(model, tmp_path / "gam.npz")
    loaded = load_model(tmp_path / "gam.npz")
    np.testing.assert_array_equal(loaded.shape_function("b").upper,
                                  model.shape_function("b").upper)
    with pytest.raises(ValueError, match="not in X"):
        model.shape_function("z")
    with pytest.raises(ValueError, match="confidence"):
        model.shape_function(0, confidence=1.0)


def test_cv_model_gives_calibrated_distributions_that_survive_a_model_file(tmp_path):
    rng = np.random.default_rng(10)
    X = rng.uniform(-2, 2, size=(900, 2))
    value = np.sin(2 * X[:, 0]) + X[:, 1] + 0.5 * rng.normal(size=900)
    model = IntervalGAMCV(cv=3, random_state=0).fit(X[:600], value[:600])
    interval = model.predict_interval(X[600:], coverage=0.8)
    covered = np.mean((interval[:, 0] <= value[600:]) & (value[600:] <= interval[:, 1]))
    assert 0.7 <= covered <= 0.9
    quantiles = model.predict_quantiles(X[600:610], [0.1, 0.5, 0.9])
    assert np.all(np.diff(quantiles, axis=1) >= 0)
    save_model(model, tmp_path / "gam.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "gam.npz").predict_quantiles(
        X[600:610], [0.1, 0.5, 0.9]), quantiles)
    assert IntervalGAMCV(distribution=None).fit(X[:200], value[:200]).distribution_ is None


def test_terms_choose_the_features_with_a_term(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = interval_data(11, n=200)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = IntervalGAM(lam=0.3, terms=["c", "a"]).fit(frame, y)
    assert [term.feature for term in model.design_.terms] == [0, 2]
    terms = model.term_values(frame)
    assert np.all(terms[:, 1] == 0.0)
    np.testing.assert_allclose(terms.sum(axis=1) + model.intercept_, model.predict(frame),
                               atol=1e-10)
    # the same model as the one fitted on those columns alone
    alone = IntervalGAM(lam=0.3).fit(frame[["a", "c"]], y)
    np.testing.assert_allclose(model.predict(frame), alone.predict(frame[["a", "c"]]),
                               atol=1e-8)
    assert [shape.name for shape in model.shape_functions_] == ["a", "c"]
    with pytest.raises(ValueError, match="has no term"):
        model.shape_function("b")
    save_model(model, tmp_path / "gam.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "gam.npz").predict(frame),
                                  model.predict(frame))
    for terms, message in ((["z"], "not in X"), ([0, 0], "twice"), ([5], "not a feature")):
        with pytest.raises(ValueError, match=message):
            IntervalGAMCV(terms=terms, cv=3).fit(frame if terms == ["z"] else X, y)


def interacting_data(seed, n, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    center = X[:, 0] * X[:, 1] + np.sin(X[:, 2])
    X[rng.random(n) < missing, 1] = np.nan
    center = np.where(np.isnan(X[:, 1]), np.sin(X[:, 2]), center)
    y = np.column_stack([center - 0.1, center + 0.1])
    y[rng.random(n) < 0.2, 1] = np.inf
    return X, y, center


def interventional_shap(model, background, x):
    """Shapley values of ``model.predict`` with the rows of ``background`` as
    the absent features' values, by enumeration of the coalitions."""
    p = background.shape[1]

    def value(coalition):
        rows = background.copy()
        rows[:, list(coalition)] = x[list(coalition)]
        return model.predict(rows).mean()

    shap = np.zeros(p)
    for j in range(p):
        others = [k for k in range(p) if k != j]
        for size in range(p):
            weight = 1.0 / (p * len(list(itertools.combinations(others, size))))
            for coalition in itertools.combinations(others, size):
                shap[j] += weight * (value(coalition + (j,)) - value(coalition))
    return shap


@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_an_interaction_term_fits_a_product_and_is_pure(missing):
    X, y, _ = interacting_data(12, 600, missing)
    X_test, _, center = interacting_data(13, 1000)
    model = IntervalGAM(lam=0.1, interactions=[(0, 1)]).fit(X, y)
    additive = IntervalGAM(lam=0.1).fit(X, y)
    error = np.mean((model.predict(X_test) - center) ** 2)
    assert error < 0.05 < np.mean((additive.predict(X_test) - center) ** 2)
    terms = model.term_values(X)
    assert terms.shape == (600, 4)
    np.testing.assert_allclose(terms.sum(axis=1) + model.intercept_, model.predict(X),
                               atol=1e-10)
    np.testing.assert_allclose(terms.mean(axis=0), 0.0, atol=1e-10)
    # pure: the mean over one feature's training values is the same at every
    # value of the other (the term's centring constant), so that the
    # features' own terms hold their main effects
    means = []
    for fixed in (0, 1):
        for value in (-1.5, 0.3, 1.9):
            rows = X.copy()
            rows[:, fixed] = value
            means.append(model.term_values(rows)[:, 3].mean())
    np.testing.assert_allclose(means, means[0], atol=1e-10)
    shape = model.shape_function((1, 0), n_points=7)
    assert shape.kind == "tensor" and shape.feature == (0, 1) and shape.name == "0 x 1"
    assert shape.term.shape == shape.lower.shape == (7, 7)
    assert np.all(shape.lower <= shape.term) and np.all(shape.term <= shape.upper)
    assert [shape.kind for shape in model.shape_functions_] == ["spline"] * 3 + ["tensor"]


def test_interaction_shap_values_are_the_interventional_shapley_values():
    X, y, _ = interacting_data(14, 150, missing=0.2)
    model = IntervalGAM(lam=0.3, interactions=[(1, 0), (1, 2)]).fit(X, y)
    rows = np.array([[0.5, -1.0, 0.2], [1.5, np.nan, -0.7], [-2.0, 1.9, 1.0]])
    explanation = shap_values(model, rows)
    for row, values in zip(rows, explanation.values, strict=True):
        np.testing.assert_allclose(values, interventional_shap(model, X, row), atol=1e-10)
    interactions = shap_values(model, rows, interactions=True).values
    np.testing.assert_allclose(interactions.sum(axis=2), explanation.values, atol=1e-12)
    np.testing.assert_allclose(interactions, np.swapaxes(interactions, 1, 2), atol=1e-12)


def test_interactions_survive_a_model_file_and_draw(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from mmit.plot import plot_terms

    pd = pytest.importorskip("pandas")
    X, y, _ = interacting_data(15, 200, missing=0.1)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = IntervalGAMCV(lams=[1.0, 0.1], cv=3, interactions=[("a", "b")]).fit(frame, y)
    save_model(model, tmp_path / "gam.npz")
    loaded = load_model(tmp_path / "gam.npz")
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))
    np.testing.assert_array_equal(shap_values(loaded, frame[:5]).values,
                                  shap_values(model, frame[:5]).values)
    axes = plot_terms(model, frame, y)
    assert len(axes) == 4 and axes[3].get_xlabel() == "a" and axes[3].get_ylabel() == "b"
    assert len(plot_terms(model, frame, features=[("a", "b")])) == 1


@pytest.mark.parametrize("interactions, extra, message", [
    ([(0, 0)], {}, "with itself"),
    ([(0, 1), (1, 0)], {}, "twice"),
    ([0], {}, "pairs of features"),
    ([(0, 1, 2)], {}, "pairs of features"),
    ([(0, 7)], {}, "not a feature"),
    ([(0, 1)], {"monotonic_cst": [1, 0, 0]}, "monotone constraint"),
])
def test_bad_interactions_get_a_clear_error(interactions, extra, message):
    X, y = interval_data(16, n=60)
    with pytest.raises(ValueError, match=message):
        IntervalGAM(interactions=interactions, **extra).fit(X, y)


def test_an_interaction_of_a_categorical_feature_gets_a_clear_error():
    pd = pytest.importorskip("pandas")
    X, y = interval_data(17, n=60)
    frame = pd.DataFrame({"a": X[:, 0], "level": pd.Categorical(np.where(X[:, 1] > 0,
                                                                         "hi", "lo"))})
    with pytest.raises(ValueError, match="categorical feature 1"):
        IntervalGAM(interactions=[("a", "level")]).fit(frame, y)


def test_partial_dependence_is_the_term_plus_a_constant():
    from sklearn.inspection import partial_dependence

    X, y, _ = interacting_data(18, 200)
    model = IntervalGAM(lam=0.1, interactions=[(0, 1)]).fit(X, y)
    result = partial_dependence(model, X, [2], grid_resolution=20)
    rows = np.repeat(X[:1], 20, axis=0)
    rows[:, 2] = result["grid_values"][0]
    offset = result["average"][0] - model.term_values(rows)[:, 2]
    np.testing.assert_allclose(offset, offset[0], atol=1e-12)
