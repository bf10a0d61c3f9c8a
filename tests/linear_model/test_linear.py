"""IntervalLinearRegression and its coordinate-descent path against an independent
solver, and its optimality conditions."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold

from mmit import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit._loss._loss import LOSSES
from mmit._loss._solver import hinge_positions
from mmit.linear_model import _linear as linear_module
from mmit.linear_model._elastic_net_path import elastic_net_path
from mmit.linear_model._linear import StandardisedProblem
from mmit.linear_model._standardisation import StandardisedFeatures
from mmit.metrics import interval_mse


def problem(n=120, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 5.0, p) + rng.normal(0, 3, p)
    center = X[:, 0] - 0.5 * X[:, 1] - 2.0
    lower = center - rng.exponential(0.5, n)
    upper = center + rng.exponential(0.5, n)
    lower[rng.random(n) < 0.2] = -np.inf
    upper[rng.random(n) < 0.2] = np.inf
    exact = rng.random(n) < 0.1
    upper[exact] = lower[exact] = center[exact]
    return X, np.column_stack([lower, upper]), rng.uniform(0.5, 2.0, n)


def standardised_objective(X, y, weight, alpha, l1_ratio, margin):
    """The objective in (coefficients on standardised features, intercept)."""
    w = weight / weight.sum()
    mean = w @ X
    scale = np.sqrt(w @ (X - mean) ** 2)
    Z = (X - mean) / scale
    lower, upper = hinge_positions(np.ascontiguousarray(y[:, 0]),
                                   np.ascontiguousarray(y[:, 1]), margin)

    def objective(coef, intercept):
        f = Z @ coef + intercept
        below, above = np.maximum(lower - f, 0.0), np.maximum(f - upper, 0.0)
        return (w @ (below**2 + above**2) + alpha * l1_ratio * np.abs(coef).sum()
                + 0.5 * alpha * (1.0 - l1_ratio) * coef @ coef)

    def gradient(coef, intercept):
        f = Z @ coef + intercept
        g = 2.0 * w * (np.maximum(f - upper, 0.0) - np.maximum(lower - f, 0.0))
        return Z.T @ g, g.sum()

    return objective, gradient, mean, scale


@pytest.mark.parametrize("alpha, l1_ratio, margin, seed", [
    (0.0, 1.0, 0.0, 0), (0.01, 1.0, 0.1, 1), (0.05, 0.5, 0.0, 2), (0.1, 0.0, 0.3, 3),
    (0.002, 0.9, 0.2, 4),
])
def test_objective_matches_an_independent_solver(alpha, l1_ratio, margin, seed):
    X, y, weight = problem(seed=seed)
    model = IntervalLinearRegression(alpha=alpha, l1_ratio=l1_ratio, margin=margin,
                                     tol=1e-10, max_iter=100_000).fit(X, y, weight)
    objective, gradient, mean, scale = standardised_objective(X, y, weight, alpha,
                                                              l1_ratio, margin)
    p = X.shape[1]

    def split(v):  # coef = positive part - negative part: a smooth problem
        return objective(v[:p] - v[p:2 * p], v[-1]) + alpha * l1_ratio * (
            (v[:p] + v[p:2 * p]).sum() - np.abs(v[:p] - v[p:2 * p]).sum())

    reference = minimize(split, np.zeros(2 * p + 1), method="L-BFGS-B",
                         bounds=[(0, None)] * (2 * p) + [(None, None)],
                         options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20_000})
    coef = model.coef_ * scale
    ours = objective(coef, model.intercept_ + model.coef_ @ mean)
    assert ours <= reference.fun + 1e-6 * max(1.0, abs(reference.fun))
    # optimality (KKT) of the solution
    grad, intercept_grad = gradient(coef, model.intercept_ + model.coef_ @ mean)
    l1, l2 = alpha * l1_ratio, alpha * (1.0 - l1_ratio)
    smooth = grad + l2 * coef
    active = coef != 0
    assert abs(intercept_grad) < 1e-6
    np.testing.assert_allclose(smooth[active], -l1 * np.sign(coef[active]), atol=1e-6)
    assert np.all(np.abs(smooth[~active]) <= l1 + 1e-6)


def test_a_large_penalty_leaves_the_optimal_constant():
    X, y, weight = problem(seed=5)
    model = IntervalLinearRegression(alpha=1e6, margin=0.1).fit(X, y, weight)
    assert np.all(model.coef_ == 0.0)
    constant = LOSSES["squared_hinge"].optimal_constant(y[:, 0], y[:, 1], 0.1, weight)
    assert model.intercept_ == pytest.approx(constant, abs=1e-6)


def test_integer_weights_equal_repeated_rows():
    X, y, _ = problem(seed=6)
    counts = np.random.default_rng(6).integers(0, 4, len(X))
    counts[0] = 1
    params = dict(alpha=0.01, l1_ratio=0.7, tol=1e-10, max_iter=100_000)
    weighted = IntervalLinearRegression(**params).fit(X, y, counts.astype(float))
    repeated = IntervalLinearRegression(**params).fit(np.repeat(X, counts, axis=0),
                                                      np.repeat(y, counts, axis=0))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-6)
    assert weighted.intercept_ == pytest.approx(repeated.intercept_, abs=1e-6)


def test_a_linear_signal_is_recovered_and_convergence_is_reported():
    X, y, _ = problem(n=400, seed=7)
    model = IntervalLinearRegression(alpha=1e-4).fit(X, y)
    np.testing.assert_allclose(model.coef_[:2], [1.0, -0.5], atol=0.1)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        IntervalLinearRegression(max_iter=1).fit(X, y)


def test_the_path_starts_where_every_coefficient_is_zero():
    X, y, weight = problem(seed=8)
    features = StandardisedFeatures(X, weight)
    path = StandardisedProblem(features, y[:, 0], y[:, 1], 0.1, weight)
    alpha_max = path.alpha_max(1.0)
    coefs, _, _, _ = path.path([alpha_max, 0.99 * alpha_max], 1.0, 1e-10, 100_000)
    assert np.all(coefs[0] == 0.0)
    assert np.any(coefs[1] != 0.0)


def test_cv_chooses_on_the_path_and_refits_on_all_data():
    X, y, weight = problem(n=200, p=6, seed=9)
    search = IntervalLinearRegressionCV(n_alphas=15, cv=4, tol=1e-9,
                                        max_iter=100_000).fit(X, y, weight)
    assert search.mse_path_.shape == (4, 15, 4)
    assert search.alphas_.shape == (4, 15)
    assert np.all(np.diff(search.alphas_, axis=1) < 0)
    mean = search.mse_path_.mean(axis=2)
    m, a = np.unravel_index(np.argmin(mean), mean.shape)
    assert search.margin_ == search.margins_[m] and search.alpha_ == search.alphas_[m, a]
    single = IntervalLinearRegression(alpha=search.alpha_, margin=search.margin_, tol=1e-9,
                                      max_iter=100_000).fit(X, y, weight)
    np.testing.assert_allclose(search.coef_, single.coef_, atol=1e-5)
    # the signal's features are kept, the noise ones mostly dropped
    assert np.all(search.coef_[:2] != 0)
    two_jobs = IntervalLinearRegressionCV(n_alphas=15, cv=4, tol=1e-9, max_iter=100_000,
                                          n_jobs=2).fit(X, y, weight)
    np.testing.assert_array_equal(two_jobs.mse_path_, search.mse_path_)


def test_cv_with_given_alphas_and_margins():
    X, y, _ = problem(seed=10)
    search = IntervalLinearRegressionCV(alphas=[0.001, 0.1, 0.01], margins=[0.0, 0.2],
                                        cv=3).fit(X, y)
    np.testing.assert_array_equal(search.alphas_, [[0.1, 0.01, 0.001]] * 2)
    assert search.mse_path_.shape == (2, 3, 3)
    with pytest.raises(ValueError, match="alphas"):
        IntervalLinearRegressionCV(alphas=[-1.0]).fit(X, y)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), p=st.integers(1, 8),
       l1_ratio=st.sampled_from([0.0, 0.5, 1.0]), censored=st.sampled_from([0.0, 0.4]),
       margin=st.sampled_from([0.0, 0.5]), zero_weights=st.booleans())
def test_path_solutions_match_an_independent_solver(seed, n, p, l1_ratio, censored, margin,
                                                     zero_weights):
    """Every solution of a warm-started path (collinear and constant columns,
    more features than rows, crossed breakpoints, zero weights) against
    L-BFGS-B on the same problem."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    if p > 1:
        Z[:, -1] = Z[:, 0] * 2.0  # collinear
    Z[:, 0] *= rng.random() < 0.8  # sometimes a constant column
    center = Z @ rng.normal(size=p)
    lower, upper = center - rng.exponential(0.5, n), center + rng.exponential(0.5, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    lower, upper = hinge_positions(lower, upper, margin)
    weight = rng.exponential(1.0, n) * (rng.random(n) > 0.3 if zero_weights else 1.0)
    if weight.sum() == 0:
        weight[0] = 1.0
    weight /= weight.sum()
    alphas = np.array([1.0, 0.1, 0.01]) * rng.choice([0.1, 1.0])
    coefs, intercepts, _, converged = elastic_net_path(
        np.ascontiguousarray(Z), lower, upper, weight, alphas, l1_ratio, 1e-10, 100_000,
        0.0)
    assert converged.all()

    def objective(theta, alpha):
        f = Z @ theta[1:] + theta[0]
        loss = weight @ (np.maximum(f - upper, 0) ** 2 + np.maximum(lower - f, 0) ** 2)
        return loss + alpha * (l1_ratio * np.abs(theta[1:]).sum()
                               + 0.5 * (1 - l1_ratio) * theta[1:] @ theta[1:])

    for k, alpha in enumerate(alphas):
        def split(v, alpha=alpha):  # coefficients = positive - negative parts
            theta = np.r_[v[0], v[1:p + 1] - v[p + 1:]]
            return objective(theta, alpha) + alpha * l1_ratio * (
                v[1:].sum() - np.abs(theta[1:]).sum())

        reference = minimize(split, np.zeros(2 * p + 1), method="L-BFGS-B",
                             bounds=[(None, None)] + [(0, None)] * (2 * p),
                             options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20_000})
        found = objective(np.r_[intercepts[k], coefs[k]], alpha)
        assert found <= reference.fun + 1e-6 * max(1.0, abs(reference.fun))


def heavy_tailed_problem(n=200, seed=11):
    """A linear signal in one feature beside a count-like feature spanning
    orders of magnitude, which carries nothing."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-1, 1, n), np.exp(3.0 * rng.normal(size=n))])
    y = np.column_stack([X[:, 0] - 0.1, X[:, 0] + 0.1])
    return X, y


@pytest.mark.parametrize("estimator", [
    IntervalLinearRegression(alpha=1e-4, tol=1e-10),
    IntervalLinearRegressionCV(n_alphas=10, cv=3, tol=1e-10)])
def test_features_are_clipped_to_their_training_range(estimator):
    X, y = heavy_tailed_problem()
    weight = np.ones(len(X))
    weight[np.argmax(X[:, 1])] = 0.0  # a row of weight 0 is not part of the range
    model = estimator.fit(X, y, weight)
    kept = X[weight > 0]
    np.testing.assert_array_equal(model.data_min_, kept.min(axis=0))
    np.testing.assert_array_equal(model.data_max_, kept.max(axis=0))
    far = np.array([[5.0, 1e12], [-5.0, 0.0], [0.3, 1e30]])
    edge = np.clip(far, model.data_min_, model.data_max_)
    np.testing.assert_array_equal(model.predict(far), edge @ model.coef_ + model.intercept_)
    # every prediction stays within the training rows' range of predictions
    training = model.predict(kept)
    assert np.all((model.predict(far) >= training.min() - 1e-12)
                  & (model.predict(far) <= training.max() + 1e-12))
    extrapolating = estimator.set_params(clip_features=False).fit(X, y, weight)
    np.testing.assert_allclose(extrapolating.predict(far),
                               far @ extrapolating.coef_ + extrapolating.intercept_)


def test_cv_scores_its_folds_on_clipped_features():
    """A test row of a fold beyond that fold's training range is clipped as
    the refitted model's are: the fold scores equal a refit per fold."""
    X, y = heavy_tailed_problem(n=90, seed=12)
    cv = KFold(3, shuffle=True, random_state=0)
    search = IntervalLinearRegressionCV(alphas=[0.01], margins=[0.0], cv=cv,
                                        tol=1e-10).fit(X, y)
    for k, (train, test) in enumerate(cv.split(X)):
        fold = IntervalLinearRegression(alpha=0.01, tol=1e-10).fit(X[train], y[train])
        assert search.mse_path_[0, 0, k] == pytest.approx(
            interval_mse(y[test], fold.predict(X[test])), rel=1e-6, abs=1e-12)
    unclipped = IntervalLinearRegressionCV(alphas=[0.01], margins=[0.0], cv=cv, tol=1e-10,
                                           clip_features=False).fit(X, y)
    assert np.any(unclipped.mse_path_ != search.mse_path_)  # some test rows were clipped


def test_cv_predictions_are_the_fold_models_at_the_chosen_alpha():
    X, y, weight = problem(n=150, p=5, seed=13)
    cv = list(KFold(4, shuffle=True, random_state=1).split(X))
    search = IntervalLinearRegressionCV(n_alphas=12, cv=cv, tol=1e-10,
                                        store_cv_predictions=True).fit(X, y, weight)
    m = list(search.margins_).index(search.margin_)
    a = list(search.alphas_[m]).index(search.alpha_)
    for k, (train, test) in enumerate(cv):
        # the fold models that mse_path_ scored
        assert interval_mse(y[test], search.cv_predictions_[test],
                            sample_weight=weight[test]) == pytest.approx(
            search.mse_path_[m, a, k], rel=1e-12)
        fold = IntervalLinearRegression(alpha=search.alpha_, margin=search.margin_,
                                        tol=1e-10).fit(X[train], y[train], weight[train])
        np.testing.assert_allclose(search.cv_predictions_[test], fold.predict(X[test]),
                                   atol=1e-5)
    assert not hasattr(IntervalLinearRegressionCV(cv=cv).fit(X, y), "cv_predictions_")
    # a row no fold tests has none; a row two folds test, their mean
    partial = [(np.arange(50, 150), np.arange(50)), (np.arange(25, 150), np.arange(25))]
    search = IntervalLinearRegressionCV(alphas=[0.01], margins=[0.0], cv=partial,
                                        store_cv_predictions=True).fit(X, y)
    assert np.all(np.isnan(search.cv_predictions_[50:]))
    assert np.all(np.isfinite(search.cv_predictions_[:50]))


def test_cv_predictions_from_kept_paths_equal_the_paths_solved_again(monkeypatch):
    # narrow data keep each fold's coefficient paths; wider ones solve the
    # chosen path of each fold again: the same fold models
    X, y, weight = problem(n=120, p=6, seed=21)
    X[:3, 0] = 40.0  # clipped in the folds that do not train on them
    cv = list(KFold(3, shuffle=True, random_state=2).split(X))
    search = IntervalLinearRegressionCV(n_alphas=15, cv=cv, store_cv_predictions=True)
    kept = clone(search).fit(X, y, weight)
    # a sparse X's fold predictions: the dense ones
    sparse_X = sp.csr_matrix(np.where(np.abs(X) < 0.7, 0.0, X))
    np.testing.assert_allclose(
        clone(search).fit(sparse_X, y, weight).cv_predictions_,
        clone(search).fit(sparse_X.toarray(), y, weight).cv_predictions_,
        rtol=1e-9, atol=1e-9)
    monkeypatch.setattr(linear_module, "MAX_KEPT_PATH_VALUES", 0)
    solved = clone(search).fit(X, y, weight)
    assert (kept.alpha_, kept.margin_) == (solved.alpha_, solved.margin_)
    np.testing.assert_allclose(kept.cv_predictions_, solved.cv_predictions_,
                               rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), p=st.integers(1, 6),
       l1_ratio=st.sampled_from([0.0, 0.5, 1.0]), censored=st.sampled_from([0.0, 0.4]))
def test_signed_path_solutions_match_an_independent_solver(seed, n, p, l1_ratio, censored):
    """Sign-constrained solutions along a path (collinear columns, signs
    against the signal) against L-BFGS-B with the forbidden parts bounded
    at 0; every coefficient on its allowed side."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    if p > 1:
        Z[:, -1] = Z[:, 0] * 2.0
    center = Z @ rng.normal(size=p)
    lower, upper = center - rng.exponential(0.5, n), center + rng.exponential(0.5, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    weight = rng.exponential(1.0, n)
    weight /= weight.sum()
    signs = rng.integers(-1, 2, p).astype(np.int8)
    alphas = np.array([1.0, 0.1, 0.01, 0.0]) * rng.choice([0.1, 1.0])
    coefs, intercepts, _, converged = elastic_net_path(
        np.ascontiguousarray(Z), lower, upper, weight, alphas, l1_ratio, 1e-10, 100_000,
        0.0, signs)
    assert converged.all()
    assert np.all(coefs * signs >= 0.0)

    def objective(theta, alpha):
        f = Z @ theta[1:] + theta[0]
        loss = weight @ (np.maximum(f - upper, 0) ** 2 + np.maximum(lower - f, 0) ** 2)
        return loss + alpha * (l1_ratio * np.abs(theta[1:]).sum()
                               + 0.5 * (1 - l1_ratio) * theta[1:] @ theta[1:])

    positive = [(0, 0) if sign < 0 else (0, None) for sign in signs]
    negative = [(0, 0) if sign > 0 else (0, None) for sign in signs]
    for k, alpha in enumerate(alphas):
        def split(v, alpha=alpha):
            theta = np.r_[v[0], v[1:p + 1] - v[p + 1:]]
            return objective(theta, alpha) + alpha * l1_ratio * (
                v[1:].sum() - np.abs(theta[1:]).sum())

        reference = minimize(split, np.zeros(2 * p + 1), method="L-BFGS-B",
                             bounds=[(None, None)] + positive + negative,
                             options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20_000})
        found = objective(np.r_[intercepts[k], coefs[k]], alpha)
        assert found <= reference.fun + 1e-6 * max(1.0, abs(reference.fun))


def test_signed_paths_start_where_every_allowed_coefficient_is_zero():
    X, y, weight = problem(seed=8)
    features = StandardisedFeatures(X, weight)
    # the signal increases with feature 0, decreases with feature 1: against it
    signs = np.array([-1, 1, 0, 0], dtype=np.int8)
    path = StandardisedProblem(features, y[:, 0], y[:, 1], 0.1, weight, signs=signs)
    alpha_max = path.alpha_max(1.0)
    assert alpha_max < StandardisedProblem(features, y[:, 0], y[:, 1], 0.1,
                                           weight).alpha_max(1.0)
    coefs, _, _, _ = path.path([alpha_max, 0.99 * alpha_max], 1.0, 1e-10, 100_000)
    assert np.all(coefs[0] == 0.0)
    assert np.any(coefs[1] != 0.0)


@pytest.mark.parametrize("estimator", [
    IntervalLinearRegression(alpha=1e-4, tol=1e-10),
    IntervalLinearRegressionCV(n_alphas=10, cv=3, tol=1e-10)])
def test_sign_constraints_of_the_linear_models(estimator):
    X, y, weight = problem(seed=9)  # the signal: +1 in feature 0, -0.5 in feature 1
    free = clone(estimator).fit(X, y, weight)
    assert free.coef_[0] > 0 > free.coef_[1]
    against = clone(estimator).set_params(monotonic_cst=[-1, 1, 0, 0]).fit(X, y, weight)
    assert against.coef_[0] <= 0 and against.coef_[1] >= 0
    positive = clone(estimator).set_params(positive=True).fit(X, y, weight)
    assert np.all(positive.coef_ >= 0) and positive.coef_[1] == 0
    along = clone(estimator).set_params(monotonic_cst=[1, -1, 0, 0]).fit(X, y, weight)
    # signs the free solution has anyway: the same solution
    np.testing.assert_allclose(along.predict(X), free.predict(X), atol=1e-6)
    zero = clone(estimator).set_params(monotonic_cst=[0, 0, 0, 0]).fit(X, y, weight)
    np.testing.assert_array_equal(zero.predict(X), free.predict(X))
    with pytest.raises(ValueError, match="decreasing feature"):
        clone(estimator).set_params(positive=True, monotonic_cst=[-1, 0, 0, 0]).fit(X, y)
    with pytest.raises(ValueError, match="one entry per feature"):
        clone(estimator).set_params(monotonic_cst=[1, 0]).fit(X, y)


def test_linear_constraints_by_name_and_categorical_features():
    pd = pytest.importorskip("pandas")
    X, y, weight = problem(seed=10)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_name = IntervalLinearRegression(monotonic_cst={"b": 1}).fit(frame, y, weight)
    by_position = IntervalLinearRegression(monotonic_cst=[0, 1, 0, 0]).fit(X, y, weight)
    np.testing.assert_allclose(by_name.coef_, by_position.coef_, rtol=1e-12)
    frame["site"] = pd.Categorical(np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match=r"categorical features \['site'\]"):
        IntervalLinearRegression(monotonic_cst={"site": 1}).fit(frame, y)
    # positive=True keeps the categories' columns non-negative too
    model = IntervalLinearRegression(positive=True).fit(frame, y)
    assert np.all(model.coef_ >= 0)
