"""IntervalMARS: the forward pass' fast knot updates against a least-squares
refit of every candidate, the backward pass against every deletion refitted
by an independent minimiser, a noiseless hinge recovered, monotone fits,
exact SHAP values against their definition, model files and bad input."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from brute_force import breakpoints
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear, minimize

from mmit import IntervalMARS, load_model, save_model, shap_values
from mmit.additive import _mars as mars
from mmit.additive._hinge_terms import basis_matrix
from mmit.additive._mars import candidate_knots, candidate_scores, gcv


def interval_data(seed, n=200, p=3, censored=0.2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, p))
    center = 2 * np.maximum(0, X[:, 0] - 0.5) + np.abs(X[:, 1])
    if p > 2:
        center += X[:, 1] * X[:, 2]
    lower = center - rng.uniform(0, 0.3, n)
    upper = center + rng.uniform(0, 0.3, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    return X, np.column_stack([lower, upper])


def least_squares_decrease(basis, extra, weight, residual, bounds=None):
    """The decrease of the weighted residual sum of squares from the basis to
    the basis and ``extra`` (``bounds`` on the extra coefficients)."""
    root = np.sqrt(weight)[:, None]

    def rss(columns, lower, upper):
        fit = lsq_linear(root * columns, np.sqrt(weight) * residual, bounds=(lower, upper),
                         method="bvls", tol=1e-14)
        return float(np.sum(fit.fun ** 2))

    free = np.full(basis.shape[1], np.inf)
    low, high = (np.full(extra.shape[1], -np.inf), np.full(extra.shape[1], np.inf)) \
        if bounds is None else bounds
    return rss(basis, -free, free) - rss(np.column_stack([basis, extra]),
                                         np.concatenate([-free, low]),
                                         np.concatenate([free, high]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), direction=st.sampled_from([0, 1, -1]))
def test_fast_knot_updates_equal_refitting_every_candidate(seed, direction):
    rng = np.random.default_rng(seed)
    n = 40
    X = np.round(rng.normal(size=(n, 3)), 1)  # repeated values: knots shared by rows
    columns = np.column_stack([np.ones(n), np.maximum(0, X[:, 2] - 0.2),
                               np.maximum(0, X[:, 0]) * (rng.random(n) < 0.7)])
    weight = np.where(rng.random(n) < 0.7, rng.uniform(0.1, 2, n), 0.0)
    residual = np.where(weight > 0, rng.normal(size=n), 0.0)
    left, values, _ = np.linalg.svd(np.sqrt(weight)[:, None] * columns,
                                    full_matrices=False)
    orthonormal = left[:, values > 1e-9 * values.max()]
    signs = (direction, -direction)
    for parent, feature in ((0, 1), (2, 1), (1, 0)):
        values = np.unique(X[columns[:, parent] != 0, feature])
        knots = np.concatenate([values[:1], candidate_knots(values, 1, 0)])
        gains, used = candidate_scores(X, columns, parent, feature, weight, residual,
                                       orthonormal, knots,
                                       np.argsort(X[:, feature], kind="stable"), signs)
        for k, knot in enumerate(knots):
            plus = columns[:, parent] * np.maximum(0, X[:, feature] - knot)
            minus = columns[:, parent] * np.maximum(0, knot - X[:, feature])
            extra = plus[:, None] if k == 0 else np.column_stack([plus, minus])
            low = [0.0 if s > 0 else -np.inf for s in signs[:extra.shape[1]]]
            high = [0.0 if s < 0 else np.inf for s in signs[:extra.shape[1]]]
            expected = least_squares_decrease(columns, extra, weight, residual,
                                              (np.array(low), np.array(high)))
            assert gains[k] == pytest.approx(expected, rel=1e-6, abs=1e-9)
            if k == 0:
                assert not used[k, 1]


def squared_hinge_loss(prediction, y, weight, margin=0.0):
    lower, upper = breakpoints(y[:, 0], y[:, 1], margin)
    with np.errstate(invalid="ignore"):
        below = np.where(np.isfinite(lower), np.maximum(lower - prediction, 0.0), 0.0)
        above = np.where(np.isfinite(upper), np.maximum(prediction - upper, 0.0), 0.0)
    return float(np.sum(weight * (below ** 2 + above ** 2)) / weight.sum())


def least_loss(columns, y, weight):
    """The least squared hinge loss of the columns' span, by scipy's BFGS, and
    the rows it sees (of positive weight, on or outside a breakpoint, to
    the minimiser's precision)."""
    def value(theta):
        return squared_hinge_loss(columns @ theta, y, weight)
    start = np.zeros(columns.shape[1])
    start[0] = np.mean(np.where(np.isfinite(y), y, 0.0))
    fit = minimize(value, start, method="BFGS", options={"gtol": 1e-12})
    prediction = columns @ fit.x
    lower, upper = breakpoints(y[:, 0], y[:, 1], 0.0)
    active = (prediction > upper - 1e-6) | (prediction < lower + 1e-6)
    return fit.fun, int(np.count_nonzero(active & (weight > 0)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_backward_pass_deletes_the_best_term_and_keeps_the_least_gcv(seed, monkeypatch):
    # the passes' logic against brute force: without their ridge (RIDGE),
    # which the minimiser does not have
    monkeypatch.setattr(mars, "RIDGE", 1e-12)
    X, y = interval_data(seed, n=80)
    weight = np.random.default_rng(seed).uniform(0.5, 2.0, 80)
    model = IntervalMARS(max_terms=7, max_degree=2, forward_tol=0.0).fit(
        X, y, sample_weight=weight)
    columns = np.column_stack([np.ones(80), basis_matrix(model.forward_basis_, X)])
    kept = list(range(columns.shape[1]))
    fits = {len(kept): least_loss(columns, y, weight)}
    subsets = {len(kept): list(kept)}
    while len(kept) > 1:
        deletions = {k: least_loss(columns[:, [i for i in kept if i != k]], y, weight)
                     for k in kept[1:]}
        deleted = min(deletions, key=lambda k: deletions[k][0])
        kept = [i for i in kept if i != deleted]
        fits[len(kept)], subsets[len(kept)] = deletions[deleted], list(kept)
    expected = np.array([fits[size][0] for size in sorted(fits)])
    np.testing.assert_allclose(model.loss_path_, expected, rtol=1e-5, atol=1e-9)
    scores = [gcv(loss, size, 3.0, n_active)
              for size, (loss, n_active) in sorted(fits.items())]
    np.testing.assert_allclose(model.gcv_path_, scores, rtol=1e-5, atol=1e-9)
    chosen = subsets[int(np.argmin(scores)) + 1]
    assert [model.forward_basis_[k - 1] for k in chosen[1:]] == model.basis_


def test_a_noiseless_hinge_is_recovered():
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-2, 2, 41), rng.uniform(-2, 2, 159)])
    X = np.column_stack([x, rng.uniform(-2, 2, 200)])
    center = 3.0 * np.maximum(0.0, X[:, 0] - 0.3) - 1.0
    model = IntervalMARS(min_span=1, end_span=0).fit(X, center)
    # to the bias of the ridge (RIDGE) on the standardised terms
    np.testing.assert_allclose(model.predict(X), center, atol=5e-3)
    hinges = [(term.hinges[0], coef) for term, coef in zip(model.basis_, model.coef_,
                                                           strict=True)
              if abs(coef) > 1e-6]
    assert len(hinges) == 1
    (hinge, coef), = hinges
    assert (hinge.feature, hinge.direction) == (0, 1)
    assert hinge.knot == pytest.approx(0.3, abs=1e-12)
    assert coef == pytest.approx(3.0, rel=5e-3)
    assert model.intercept_ == pytest.approx(-1.0, abs=5e-3)


def test_the_knot_lies_within_one_candidate_step_of_the_truth():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(500, 3))
    center = -2.0 * np.maximum(0.0, 0.4 - X[:, 1])
    model = IntervalMARS().fit(X, center)
    term = model.basis_[int(np.argmax(np.abs(model.coef_)))]
    x = np.sort(X[:, 1])
    step = np.max(np.diff(x)) * 50  # far more than Friedman's min_span of rows
    assert term.features == (1,)
    assert abs(term.hinges[0].knot - 0.4) < step
    assert np.mean((model.predict(X) - center) ** 2) < 1e-3


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_monotone_constraints_give_monotone_fits_along_random_lines(seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(150, 3))
    center = np.sin(2 * X[:, 0]) - np.abs(X[:, 1]) + X[:, 1] * X[:, 2]
    y = np.column_stack([center - 0.2, center + rng.uniform(0.0, 0.5, 150)])
    y[rng.random(150) < 0.2, 1] = np.inf
    model = IntervalMARS(max_degree=2, monotonic_cst=[1, -1, 0]).fit(X, y)
    for _ in range(5):
        point = rng.uniform(-3, 3, size=3)
        grid = np.linspace(-3, 3, 301)
        for feature, sign in ((0, 1), (1, -1)):
            line = np.tile(point, (grid.size, 1))
            line[:, feature] = grid
            steps = np.diff(model.predict(line))
            assert np.all(sign * steps >= -1e-10)
    for term in model.basis_:
        assert term.degree == 1 or not set(term.features) & {0, 1}


def brute_force_shap(model, X, background, weight):
    """Interventional Shapley values by the definition: ``v(S)`` the weighted
    mean prediction over the background rows with the features of ``S`` set
    to the row's."""
    p = X.shape[1]
    values = np.zeros_like(X)
    for row, x in enumerate(X):
        def v(subset, x=x):
            rows = background.copy()
            rows[:, list(subset)] = x[list(subset)]
            return np.average(model.predict(rows), weights=weight)
        for j in range(p):
            others = [k for k in range(p) if k != j]
            for size in range(p):
                share = (math.factorial(size) * math.factorial(p - size - 1)
                         / math.factorial(p))
                for subset in itertools.combinations(others, size):
                    values[row, j] += share * (v(subset + (j,)) - v(subset))
    return values


def test_shap_values_are_the_interventional_shapley_values():
    X, y = interval_data(3, n=120)
    weight = np.random.default_rng(3).uniform(0.5, 2.0, 120)
    model = IntervalMARS(max_degree=3).fit(X, y, sample_weight=weight)
    assert max(term.degree for term in model.basis_) >= 2
    explanation = shap_values(model, X[:6])
    expected = brute_force_shap(model, X[:6], X, weight)
    np.testing.assert_allclose(explanation.values, expected, atol=1e-9)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X[:6]), atol=1e-9)
    interactions = shap_values(model, X[:6], interactions=True)
    np.testing.assert_allclose(interactions.values.sum(axis=2), explanation.values,
                               atol=1e-9)
    np.testing.assert_allclose(interactions.values, interactions.values.transpose(0, 2, 1))


def test_model_file_round_trip_and_summary(tmp_path):
    X, y = interval_data(4)
    model = IntervalMARS(max_degree=2).fit(X, y)
    save_model(model, tmp_path / "mars.npz")
    loaded = load_model(tmp_path / "mars.npz")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.basis_ == model.basis_ and loaded.forward_basis_ == model.forward_basis_
    np.testing.assert_array_equal(loaded.gcv_path_, model.gcv_path_)
    assert loaded.summary() == model.summary()
    text = model.summary()
    assert "(intercept)" in text and text.count("\n") == len(model.basis_) + 1


def test_summary_names_the_features():
    pd = pytest.importorskip("pandas")
    X, y = interval_data(5)
    frame = pd.DataFrame(X, columns=["age", "dose", "weight"])
    model = IntervalMARS().fit(frame, y)
    assert "h(age - " in model.summary() or "age)" in model.summary()


def test_categorical_columns_are_refused_by_name():
    pd = pytest.importorskip("pandas")
    X, y = interval_data(9)
    for site in (["a", "b", "c", "d"], [1, 2, 3, 4]):  # labels, and numbers as categories
        frame = pd.DataFrame({"site": pd.Categorical(np.resize(site, 200)), "x": X[:, 0]})
        with pytest.raises(ValueError, match=r"\['site'\] are categories"):
            IntervalMARS().fit(frame, y)


def test_sparse_input_is_made_dense():
    X, y = interval_data(6)
    dense = IntervalMARS().fit(X, y)
    sparse = IntervalMARS().fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


def test_intervals_and_exact_values_alike():
    X, y = interval_data(7, censored=0.0)
    center = y.mean(axis=1)
    exact = IntervalMARS(max_degree=2).fit(X, center)
    assert np.mean((exact.predict(X) - center) ** 2) < 0.05
    everything_free = IntervalMARS().fit(X, np.column_stack([np.full(200, -np.inf),
                                                              np.full(200, np.inf)]))
    assert everything_free.basis_ == []


def test_bad_input_gets_a_clear_error():
    X, y = interval_data(8)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        IntervalMARS().fit(X_nan, y)
    with pytest.raises(ValueError, match="monotonic_cst"):
        IntervalMARS(monotonic_cst=[1, 0]).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        IntervalMARS(loss="linear_hinge").fit(X, y)
    with pytest.raises(ValueError, match="max_degree"):
        IntervalMARS(max_degree=0).fit(X, y)
    model = IntervalMARS().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
