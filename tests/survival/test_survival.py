"""Survival data: (event, time) pairs as intervals, and SurvivalRegressor,
scikit-survival's conventions (structured targets, risk scores, curves as
step functions) for every model."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from mmit import (
    MMIT,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    SurvivalRegressor,
    intervals_from_survival,
)
from mmit.survival._survival import booster_share


def test_intervals_from_survival():
    y = intervals_from_survival([True, False, 1, 0], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(y, [[1, 1], [2, np.inf], [3, 3], [4, np.inf]])
    logged = intervals_from_survival([True, False], [np.e, 1.0], log=True)
    np.testing.assert_allclose(logged, [[1, 1], [0, np.inf]])
    with pytest.raises(ValueError, match="positive"):
        intervals_from_survival([True], [0.0], log=True)
    with pytest.raises(ValueError, match="event"):
        intervals_from_survival([2], [1.0])
    with pytest.raises(ValueError, match="inconsistent"):
        intervals_from_survival([True, False], [1.0])
    # a model fits them like any interval target
    X = np.arange(4.0).reshape(-1, 1)
    assert MMIT().fit(X, y).score(X, y) == 0.0


def survival_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    time = np.exp(1 + 2 * X[:, 0] + 0.3 * rng.normal(size=n))
    event = rng.random(n) < 0.7
    y = np.empty(n, dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = event, time
    return X, y, event, time


def test_the_front_end_fits_the_intervals_of_intervals_from_survival():
    X, y, event, time = survival_data()
    for log in (True, False):
        front = SurvivalRegressor(MMITForest(20, random_state=0), log=log,
                                  risk="prediction").fit(X, y)
        alone = MMITForest(20, random_state=0).fit(
            X, intervals_from_survival(event, time, log=log))
        np.testing.assert_array_equal(front.predict(X), -alone.predict(X))
        np.testing.assert_allclose(front.predict_time(X),
                                   np.exp(alone.predict(X)) if log else alone.predict(X))
        np.testing.assert_array_equal(front.unique_times_, np.unique(time))
    # interval times (interval censoring) take the same path
    intervals = np.column_stack([time, np.where(event, time, np.inf)])
    front.set_params(log=True)
    np.testing.assert_array_equal(
        SurvivalRegressor(MMITForest(20, random_state=0), risk="prediction").fit(
            X, intervals).predict(X),
        front.fit(X, y).predict(X))


def test_curves_in_scikit_survival_s_form():
    X, y, _, _ = survival_data()
    model = SurvivalRegressor(MMITForest(20, random_state=0)).fit(X, y)
    curves = model.predict_survival_function(X[:10], return_array=True)
    assert curves.shape == (10, len(model.unique_times_))
    assert np.all((curves >= 0) & (curves <= 1)) and np.all(np.diff(curves, axis=1) <= 0)
    functions = model.predict_survival_function(X[:10])
    np.testing.assert_array_equal(functions[3](model.unique_times_), curves[3])
    middle = (model.unique_times_[:-1] + model.unique_times_[1:]) / 2
    np.testing.assert_array_equal(functions[3](middle), curves[3, :-1])  # steps
    with pytest.raises(ValueError, match="domain"):
        functions[0](model.unique_times_[-1] + 1)
    hazards = model.predict_cumulative_hazard_function(X[:10], return_array=True)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(hazards, np.maximum(-np.log(curves), 0))
    assert np.all(np.diff(hazards, axis=1) >= 0)
    assert model.predict_cumulative_hazard_function(X[:2])[0].x is model.unique_times_
    # the default risk: minus the area under the curve up to the last time
    times = np.concatenate([[0.0], model.unique_times_])
    areas = np.column_stack([np.ones(10), curves[:, :-1]]) @ np.diff(times)
    # (computed from the leaves' estimates, not the curves)
    np.testing.assert_allclose(model.restricted_mean(X[:10]), areas, rtol=1e-10)
    np.testing.assert_allclose(model.predict(X[:10]), -areas, rtol=1e-10)
    # a model without distributions ranks but gives no curves
    linear = SurvivalRegressor(IntervalLinearRegressionCV()).fit(X, y)
    assert not hasattr(linear, "predict_survival_function")
    assert linear.score(X, y) > 0.8


def test_scikit_survival_s_metrics_and_searches_work_on_it():
    metrics = pytest.importorskip("sksurv.metrics")
    X, y, event, time = survival_data(300)
    model = SurvivalRegressor(MMITForest(20, random_state=0)).fit(X[:200], y[:200])
    risk = model.predict(X[200:])
    harrell = metrics.concordance_index_censored(event[200:], time[200:], risk)[0]
    assert model.score(X[200:], y[200:]) == pytest.approx(harrell, abs=1e-12)
    grid = np.quantile(time[200:], [0.2, 0.4, 0.6])
    inside = np.flatnonzero(time[200:] < time[:200].max()) + 200
    curves = np.vstack([f(grid) for f in model.predict_survival_function(X[inside])])
    assert 0 < metrics.integrated_brier_score(y[:200], y[inside], curves, grid) < 0.25
    search = GridSearchCV(SurvivalRegressor(MMIT(random_state=0)),
                          {"estimator__max_depth": [1, 3]}, cv=3).fit(X, y)
    assert search.best_params_ == {"estimator__max_depth": 3}  # C-index by score()


def test_the_default_model_is_the_survival_forest_and_a_booster():
    X, y, event, time = survival_data(120)
    model = SurvivalRegressor(random_state=0).fit(X, y)
    assert isinstance(model.estimator_, MMITForest)
    assert model.estimator_.min_samples_leaf == 15
    assert model.estimator_.max_features == 0.5
    assert model.estimator_.loss == "linear_hinge"
    booster = model.booster_
    assert isinstance(booster, MMITBoost) and booster.splitter == "hist"
    assert booster.early_stopping is True and booster.n_estimators == 2000
    assert booster.learning_rate == 0.025
    # the booster is the one a user would fit on the same intervals
    target = intervals_from_survival(event, time, log=True)
    alone = MMITBoost(splitter="hist", n_estimators=2000, learning_rate=0.025,
                      early_stopping=True, random_state=0).fit(X, target)
    np.testing.assert_array_equal(booster.predict(X), alone.predict(X))
    # the prediction (risk, time) is the mean of the two's (up to 1000 rows);
    # the curves the forest's
    assert model.booster_share_ == 0.5
    mean = (model.estimator_.predict(X) + booster.predict(X)) / 2
    np.testing.assert_array_equal(model.predict(X), -mean)
    np.testing.assert_array_equal(model.predict_time(X), np.exp(mean))
    np.testing.assert_array_equal(
        model.predict_survival_function(X[:5], return_array=True),
        model.estimator_.predict_survival(X[:5], model.curve_times_, log=True))
    np.testing.assert_array_equal(
        model.set_params(risk="restricted_mean").predict(X[:5]),
        -model.estimator_.predict_restricted_mean(X[:5], model.curve_times_, log=True))
    # a given model stands alone
    alone = SurvivalRegressor(MMITForest(10)).fit(X, y)
    assert alone.booster_ is None and alone.booster_share_ == 0.0


def test_the_booster_weighs_more_with_the_rows():
    """Half of the default model's prediction up to 1000 training rows, then
    1 - 0.5 sqrt(1000 / n)."""
    assert [booster_share(n) for n in (10, 1000)] == [0.5, 0.5]
    np.testing.assert_allclose([booster_share(n) for n in (4000, 1e4, 1e6)],
                               [0.75, 1 - 0.5 / np.sqrt(10), 1 - 0.5 / np.sqrt(1000)])
    X, y, _, _ = survival_data(1600)
    model = SurvivalRegressor(random_state=0).fit(X, y)
    share = 1 - 0.5 * np.sqrt(1000 / 1600)
    assert model.booster_share_ == pytest.approx(share, rel=1e-15)
    np.testing.assert_allclose(
        model.predict(X[:50]), -((1 - share) * model.estimator_.predict(X[:50])
                                 + share * model.booster_.predict(X[:50])),
        rtol=1e-14)


def test_the_stack_gives_curves():
    X, y, _, _ = survival_data(120)
    stack = SurvivalRegressor(IntervalStackingRegressor(random_state=0)).fit(X, y)
    curves = stack.predict_survival_function(X[:5], return_array=True)
    assert np.all(np.diff(curves, axis=1) <= 0) and np.all((curves >= 0) & (curves <= 1))
    times = stack.unique_times_
    np.testing.assert_allclose(stack.restricted_mean(X[:5]),
                               times[0] + curves[:, :-1] @ np.diff(times), rtol=1e-10)
    assert stack.score(X, y) > 0.8


def test_the_default_model_takes_the_front_end_s_threads_and_seed():
    X, y, _, _ = survival_data(150)
    one = SurvivalRegressor(random_state=0).fit(X, y)
    two = SurvivalRegressor(n_jobs=2, random_state=0).fit(X, y)
    for one_model, two_model in ((one.estimator_, two.estimator_),
                                 (one.booster_, two.booster_)):
        assert (one_model.n_jobs, two_model.n_jobs) == (None, 2)
        assert one_model.random_state == two_model.random_state == 0
    # the same model on any number of threads, and the same again for the seed
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    np.testing.assert_array_equal(one.predict(X), SurvivalRegressor(random_state=0).fit(
        X, y).predict(X))
    # a given estimator keeps its own
    given = SurvivalRegressor(MMITForest(10), n_jobs=2, random_state=3).fit(X, y)
    assert (given.estimator_.n_jobs, given.estimator_.random_state) == (None, None)
    with pytest.raises(ValueError, match="n_jobs"):
        SurvivalRegressor(n_jobs="all").fit(X, y)


def test_curves_on_a_grid_of_the_training_times():
    X, y, _, time = survival_data(300)
    exact = SurvivalRegressor(MMITForest(20, random_state=0), curve_times=None).fit(X, y)
    assert exact.curve_times_ is exact.unique_times_
    # at most curve_times distinct times keep every one (the default: 1000)
    small = SurvivalRegressor(MMITForest(20, random_state=0)).fit(X, y)
    np.testing.assert_array_equal(small.curve_times_, exact.unique_times_)
    np.testing.assert_array_equal(small.predict_survival_function(X[:5], return_array=True),
                                  exact.predict_survival_function(X[:5], return_array=True))
    # more: quantiles of the training times, the first and the last among them
    grid = SurvivalRegressor(MMITForest(20, random_state=0), curve_times=40).fit(X, y)
    times = grid.curve_times_
    assert 2 <= len(times) <= 40 and np.all(np.isin(times, exact.unique_times_))
    assert (times[0], times[-1]) == (exact.unique_times_[0], exact.unique_times_[-1])
    curves = grid.predict_survival_function(X[:5], return_array=True)
    np.testing.assert_array_equal(curves, exact.estimator_.predict_survival(
        X[:5], times, log=True))
    functions = grid.predict_cumulative_hazard_function(X[:5])
    assert all(function.x is times for function in functions)  # one time axis
    # the risk is minus the area under the curves, on the grid's times
    np.testing.assert_array_equal(small.predict(X), exact.predict(X))
    curves = grid.predict_survival_function(X, return_array=True)
    np.testing.assert_allclose(grid.predict(X),
                               -(times[0] + curves[:, :-1] @ np.diff(times)), rtol=1e-12)
    # chosen times
    chosen = SurvivalRegressor(MMITForest(20, random_state=0),
                               curve_times=[1.0, 5.0, 20.0]).fit(X, y)
    assert chosen.predict_survival_function(X[:3], return_array=True).shape == (3, 3)
    for bad in ([5.0, 1.0], [0.0, 1.0], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="curve_times"):
            SurvivalRegressor(MMITForest(5), curve_times=bad).fit(X, y)
    with pytest.raises(ValueError, match="curve_times"):
        SurvivalRegressor(curve_times=1).fit(X, y)
    # a front-end pickled before curve_times gives its curves at every time
    state = exact.__getstate__()
    del state["curve_times"], state["curve_times_"]
    old = SurvivalRegressor.__new__(SurvivalRegressor)
    old.__setstate__(state)
    assert old.curve_times is None and old.curve_times_ is old.unique_times_
    np.testing.assert_array_equal(old.predict_survival_function(X[:3], return_array=True),
                                  exact.predict_survival_function(X[:3], return_array=True))


def test_bad_survival_targets():
    X, y, event, time = survival_data(20)
    model = SurvivalRegressor(MMIT())
    negative = y.copy()
    negative["time"][[3, 7]] = [-1.0, 0.0]
    with pytest.raises(ValueError, match="positive times; rows 3, 7 are not"):
        model.fit(X, negative)
    with pytest.raises(ValueError, match="non-negative times; rows 3 are not"):
        model.set_params(log=False).fit(X, negative)
    numbers = np.empty(20, dtype=[("event", int), ("time", float)])
    numbers["event"], numbers["time"] = event, time
    with pytest.raises(TypeError, match="event field 'event' of y must be boolean"):
        model.fit(X, numbers)
    with pytest.raises(ValueError, match="inconsistent"):
        model.fit(X[:10], y)
    with pytest.raises(ValueError, match="structured array"):
        model.fit(X, time)
    with pytest.raises(ValueError, match="lower <= upper"):
        model.fit(X, np.column_stack([time, time - 1]))
    with pytest.raises(Exception, match="not fitted"):
        SurvivalRegressor(MMIT()).predict(X)
    with pytest.raises(ValueError, match="restricted_mean' needs a model with predictive"):
        SurvivalRegressor(MMIT(), risk="restricted_mean").fit(X, y)
