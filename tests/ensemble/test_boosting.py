"""MMITBoost: exact interval criterion, monotone training loss, early stopping."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmit import MMIT, MMITBoost
from mmit._loss._loss import LOSSES as LOSS_ENTRIES
from mmit.datasets import make_interval_regression

LOSSES = sorted(LOSS_ENTRIES)


def problem(n=80, p=3, seed=0, censoring=0.3, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    center = np.sin(2 * X[:, 0]) + X[:, 1] - 3.0  # negative bounds are fine
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < censoring / 2] = -np.inf
    upper[rng.random(n) < censoring / 2] = np.inf
    exact = rng.random(n) < 0.1
    upper[exact] = lower[exact] = np.where(np.isfinite(lower[exact]), lower[exact], 0.0)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, np.column_stack([lower, upper])


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", range(4))
def test_one_stage_with_learning_rate_one_is_an_mmit(loss, seed):
    X, y = problem(seed=seed)
    weight = np.random.default_rng(seed).uniform(0.5, 2.0, len(X))
    boost = MMITBoost(n_estimators=1, learning_rate=1.0, max_depth=3, min_samples_leaf=2,
                      loss=loss, margin=0.1, random_state=seed).fit(X, y, weight)
    tree = MMIT(max_depth=3, min_samples_leaf=2, loss=loss, margin=0.1,
                random_state=seed).fit(X, y, weight)
    np.testing.assert_allclose(boost.predict(X), tree.predict(X), atol=1e-9)
    assert boost.estimators_[0].get_n_leaves() == tree.get_n_leaves()


def test_stage_zero_is_the_optimal_constant():
    X, y = problem()
    weight = np.ones(len(X))
    boost = MMITBoost(n_estimators=1, margin=0.0, random_state=0).fit(X, y)
    lower, upper = np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(y[:, 1])
    constant = LOSS_ENTRIES["squared_hinge"].optimal_constant(lower, upper, 0.0, weight)
    assert boost.baseline_prediction_ == constant
    objective = LOSS_ENTRIES["squared_hinge"].objective(lower, upper, 0.0, weight)
    for shift in (-0.1, 0.1):
        assert objective(np.full(len(X), constant)) <= objective(np.full(len(X),
                                                                          constant + shift))
    assert boost.train_score_[0] == pytest.approx(-objective(np.full(len(X), constant)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), loss=st.sampled_from(LOSSES),
       learning_rate=st.floats(0.05, 1.0), max_depth=st.integers(1, 4),
       margin=st.sampled_from([0.0, 0.2]), missing=st.sampled_from([0.0, 0.2]),
       weighted=st.booleans())
def test_training_loss_never_increases(seed, loss, learning_rate, max_depth, margin,
                                       missing, weighted):
    X, y = problem(n=60, seed=seed, missing=missing)
    rng = np.random.default_rng(seed)
    weight = rng.integers(0, 4, len(X)).astype(float) if weighted else None
    if weight is not None:
        weight[0] = 1.0
    boost = MMITBoost(n_estimators=15, learning_rate=learning_rate, max_depth=max_depth,
                      min_samples_leaf=1, loss=loss, margin=margin,
                      random_state=seed).fit(X, y, weight)
    scores = boost.train_score_
    assert len(scores) == 16
    # scores are negative losses: they never go down, up to rounding
    assert np.all(np.diff(scores) >= -1e-9 * (1.0 + np.abs(scores[:-1])))


def test_integer_weights_equal_repeated_rows():
    X, y = problem(seed=3)
    counts = np.random.default_rng(3).integers(0, 4, len(X))
    params = dict(n_estimators=10, learning_rate=0.3, min_samples_leaf=1, random_state=0)
    weighted = MMITBoost(**params).fit(X, y, counts.astype(float))
    repeated = MMITBoost(**params).fit(np.repeat(X, counts, axis=0),
                                       np.repeat(y, counts, axis=0))
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-9)


def test_auto_margin_is_a_share_of_the_spread_of_the_bounds():
    X, y = problem(seed=6)
    auto = MMITBoost(n_estimators=10, random_state=0).fit(X, y)
    finite = y[np.isfinite(y)]
    assert auto.margin_ == pytest.approx(0.3 * np.std(finite))
    explicit = MMITBoost(n_estimators=10, margin=auto.margin_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.predict(X), explicit.predict(X))
    assert all(tree.margin == auto.margin_ for tree in auto.estimators_)


def test_shifting_every_bound_shifts_the_predictions():
    X, y = problem(seed=1)
    model = MMITBoost(n_estimators=20, random_state=0).fit(X, y)
    shifted = MMITBoost(n_estimators=20, random_state=0).fit(X, y + 100.0)
    np.testing.assert_allclose(shifted.predict(X), model.predict(X) + 100.0, atol=1e-7)


def test_early_stopping_stops_and_staged_predict_agrees():
    X, y = make_interval_regression(600, 10, "sin", noise=0.5, random_state=0)
    model = MMITBoost(n_estimators=500, learning_rate=0.3, early_stopping=True,
                      n_iter_no_change=5, random_state=0).fit(X, y)
    assert model.n_iter_ < 500
    assert len(model.estimators_) == model.n_iter_
    assert model.train_score_.shape == model.validation_score_.shape == (model.n_iter_ + 1,)
    # the last n_iter_no_change stages did not beat the one before them
    reference = model.validation_score_[-6]
    assert np.all(model.validation_score_[-5:] <= reference + model.tol)
    stages = list(model.staged_predict(X))
    assert len(stages) == model.n_iter_
    np.testing.assert_array_equal(stages[-1], model.predict(X))
    # without early stopping ("auto" on small data) there is no validation score
    small = MMITBoost(n_estimators=5, random_state=0).fit(X, y)
    assert small.n_iter_ == 5 and small.validation_score_.size == 0


def test_warm_start_equals_fitting_at_once():
    X, y = problem(seed=2, missing=0.1)
    at_once = MMITBoost(n_estimators=12, subsample=0.7, random_state=4).fit(X, y)
    model = MMITBoost(n_estimators=5, subsample=0.7, random_state=4, warm_start=True)
    model.fit(X, y).set_params(n_estimators=12).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), at_once.predict(X))
    assert model.n_iter_ == 12
    np.testing.assert_allclose(model.train_score_, at_once.train_score_)
    with pytest.raises(ValueError, match="n_estimators"):
        model.set_params(n_estimators=3).fit(X, y)


def test_subsample_missing_values_and_importances():
    X, y = problem(n=200, p=5, seed=5, missing=0.2)
    model = MMITBoost(n_estimators=30, subsample=0.5, random_state=0).fit(X, y)
    X_test = X.copy()
    X_test[:, 0] = np.nan
    assert np.isfinite(model.predict(X_test)).all()
    importances = model.feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    assert importances[:2].sum() > importances[2:].sum()


def test_progress_is_reported_on_stderr(capsys):
    X, y = problem()
    MMITBoost(n_estimators=20, random_state=0, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "[MMITBoost] 10/20 stages, train loss" in err and "20/20 stages" in err
    assert len(err.splitlines()) == 10  # a line every tenth of the stages


@pytest.mark.parametrize("params, match", [
    ({"early_stopping": True, "validation_fraction": 0.99}, "validation_fraction"),
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"subsample": 1.5}, "subsample"),
])
def test_bad_parameters(params, match):
    X, y = problem(n=20)
    with pytest.raises(ValueError, match=match):
        MMITBoost(**params).fit(X, y)
