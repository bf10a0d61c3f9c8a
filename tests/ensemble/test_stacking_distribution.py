"""Predictive distributions of IntervalStackingRegressor: the stack's
prediction plus its out-of-fold residual intervals, weighed by a forest
grown on their sizes. Shapes of quantiles, CDFs and survival curves,
censored mass, the one-member case, model files, threads and bad input."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold

from mmit import (
    MMIT,
    IntervalLinearRegression,
    IntervalStackingRegressor,
    MMITForest,
    SpreadDistribution,
    intervals_from_survival,
    load_model,
    save_model,
)
from mmit.baselines import ConstantRegressor
from mmit.metrics import interval_coverage


def heteroscedastic(n, seed, censored=0.0):
    """Location linear in x0 and x1, spread from x2 only; a share of the
    values known only between inspection times."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + (0.1 + 0.6 * (X[:, 2] > 0)) * rng.normal(size=n)
    lower, upper = y.copy(), y.copy()
    hidden = rng.random(n) < censored
    lower[hidden] = np.floor(y[hidden] / 0.5) * 0.5
    upper[hidden] = lower[hidden] + 0.5
    return X, np.column_stack([lower, upper]), y


def small_members():
    return [("tree", MMIT(max_depth=2, random_state=0)),
            ("linear", IntervalLinearRegression())]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), censored=st.sampled_from([0.0, 0.5, 1.0]))
def test_quantiles_and_cdfs_are_monotone(seed, censored):
    X, y, _ = heteroscedastic(90, seed, censored)
    stack = IntervalStackingRegressor(small_members(), cv=3, random_state=seed,
                                      distribution=SpreadDistribution(tree_share=0.1,
                                                                      min_samples_leaf=10))
    stack.fit(X, y)
    quantiles = stack.predict_quantiles(X[:15], np.linspace(0, 1, 11))
    assert quantiles.shape == (15, 11) and np.all(np.diff(quantiles, axis=1) >= 0)
    cdf = stack.predict_cdf(X[:15], np.linspace(-5, 5, 21))
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.diff(cdf, axis=1) >= -1e-12)
    np.testing.assert_allclose(stack.predict_interval(X[:15], 0.8),
                               stack.predict_quantiles(X[:15], [0.1, 0.9]), atol=1e-12)


def test_a_censored_value_keeps_its_mass_inside_its_bounds():
    # every row [1, 2]: the constant predicts inside, the residuals stay in it
    X = np.zeros((30, 1))
    y = np.tile([1.0, 2.0], (30, 1))
    stack = IntervalStackingRegressor([("constant", ConstantRegressor())], cv=3,
                                      random_state=0).fit(X, y)
    location = stack.predict(X[:1])[0]
    assert 1.0 <= location <= 2.0
    cdf = stack.predict_cdf(X[:1], [0.99, 1.0, 1.5, 2.0, 2.01])[0]
    np.testing.assert_allclose(cdf, [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-12)
    low, high = stack.predict_interval(X[:1], 0.9)[0]
    assert 1.0 <= low <= high <= 2.0
    # half the rows right-censored at 3: their mass lies above it, unplaced;
    # folds of equal halves give the refit's constant, so no shift moves it
    censored = np.tile([3.0, np.inf], (30, 1))
    censored[::2] = [1.0, 2.0]
    stack.set_params(cv=KFold(3)).fit(X, censored)
    cdf = stack.predict_cdf(X[:1], [0.99, 2.0, 2.99, 1e300])[0]
    assert cdf[0] == 0.0 and cdf[1] == cdf[2] == cdf[3] and 0.4 < cdf[1] < 0.6
    quantiles = stack.predict_quantiles(X[:1], [0.01, 0.3, 0.7])[0]
    assert 1.0 <= quantiles[0] <= quantiles[1] <= 2.0 and quantiles[2] == np.inf


def test_with_one_forest_member_read_out_of_bag_the_stack_s_distribution_is_its():
    X, y, _ = heteroscedastic(150, 1, censored=0.3)
    strategy = SpreadDistribution(random_state=5)
    forest = MMITForest(random_state=0, distribution=strategy)
    stack = IntervalStackingRegressor([("forest", forest)], out_of_fold="free",
                                      distribution=strategy, random_state=1).fit(X, y)
    forest.fit(X, y)
    # the stack's location is the forest's: so are its residuals and spread forest
    np.testing.assert_array_equal(stack.weights_, [1.0])
    np.testing.assert_array_equal(stack.cv_predictions_[:, 0],
                                  stack.named_estimators_.forest.oob_prediction_)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    np.testing.assert_array_equal(stack.predict_quantiles(X, levels),
                                  forest.predict_quantiles(X, levels))
    np.testing.assert_array_equal(stack.predict_cdf(X, [-1.0, 0.5, 2.0]),
                                  forest.predict_cdf(X, [-1.0, 0.5, 2.0]))


def test_the_residuals_are_the_stack_s_out_of_fold_ones():
    X, y, truth = heteroscedastic(400, 2)
    stack = IntervalStackingRegressor(small_members(), random_state=0).fit(X, y)
    # the spread forest weighs residuals of the weighted out-of-fold predictions
    samples = stack.distribution_.fitted(stack).samples
    location = stack.cv_predictions_ @ stack.weights_
    np.testing.assert_allclose(samples.lower, truth - location, atol=1e-12)
    # and its splits find the feature that moves the spread
    X_test, _, truth_test = heteroscedastic(2000, 3)
    width = np.diff(stack.predict_interval(X_test, 0.8), axis=1)[:, 0]
    wide = X_test[:, 2] > 0
    assert np.median(width[wide]) > 2.5 * np.median(width[~wide])
    coverage = interval_coverage(truth_test, stack.predict_interval(X_test, 0.8))
    assert 0.7 < coverage.covered < 0.9


def test_survival_curves_of_survival_targets():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, size=(200, 2))
    time = np.exp(1 + X[:, 0] + 0.3 * rng.normal(size=200))
    y = intervals_from_survival(rng.random(200) < 0.6, time, log=True)
    stack = IntervalStackingRegressor(small_members(), cv=3, random_state=0).fit(X, y)
    times = np.array([0.5, 2.0, 3.0, 6.0, 40.0])
    curves = stack.predict_survival(X[:10], times, log=True)
    np.testing.assert_array_equal(curves, 1.0 - stack.predict_cdf(X[:10], np.log(times)))
    assert np.all((curves >= 0) & (curves <= 1)) and np.all(np.diff(curves, axis=1) <= 0)
    late = stack.predict_survival(np.array([[0.1, 0.5], [0.9, 0.5]]), [6.0], log=True)
    assert late[0, 0] < late[1, 0]


def test_model_files_and_threads_keep_the_distributions(tmp_path):
    X, y, _ = heteroscedastic(200, 5, censored=0.4)
    one = IntervalStackingRegressor(random_state=0, n_jobs=1).fit(X, y)
    two = IntervalStackingRegressor(random_state=0, n_jobs=2).fit(X, y)
    levels = [0.1, 0.5, 0.9]
    expected = one.predict_quantiles(X, levels)
    np.testing.assert_array_equal(two.predict_quantiles(X, levels), expected)
    save_model(two, tmp_path / "stack.mmit")
    loaded = load_model(tmp_path / "stack.mmit")
    np.testing.assert_array_equal(loaded.predict_quantiles(X, levels), expected)
    np.testing.assert_array_equal(loaded.predict_cdf(X, [0.0, 1.0]),
                                  one.predict_cdf(X, [0.0, 1.0]))


def test_data_frames_with_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"x": rng.normal(size=200),
                          "site": pd.Categorical(rng.choice(["a", "b", "c"], 200))})
    y = frame["x"].to_numpy() + 2.0 * (frame["site"] == "a") + 0.2 * rng.normal(size=200)
    stack = IntervalStackingRegressor(cv=3, random_state=0).fit(frame, y)
    quantiles = stack.predict_quantiles(frame.iloc[:20], [0.1, 0.5, 0.9])
    assert np.all(np.diff(quantiles, axis=1) >= 0)
    # the spread forest reads the labels as the stack's members do
    reordered = frame.iloc[:20].copy()
    reordered["site"] = reordered["site"].cat.reorder_categories(["c", "b", "a"])
    np.testing.assert_array_equal(stack.predict_quantiles(reordered, [0.1, 0.5, 0.9]),
                                  quantiles)


def test_bad_inputs():
    X, y, _ = heteroscedastic(60, 7)
    with pytest.raises(NotFittedError):
        IntervalStackingRegressor(small_members()).predict_quantiles(X)
    stack = IntervalStackingRegressor(small_members(), cv=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="quantiles must lie in"):
        stack.predict_quantiles(X, [1.5])
    with pytest.raises(ValueError, match="X has 2 features"):
        stack.predict_quantiles(X[:, :2])
    without = IntervalStackingRegressor(small_members(), cv=3, distribution=None).fit(X, y)
    assert without.distribution_ is None
    with pytest.raises(ValueError, match="no predictive distributions"):
        without.predict_interval(X)
    with pytest.raises(ValueError, match="distribution"):
        IntervalStackingRegressor(small_members(), distribution="location").fit(X, y)


def test_the_predictive_distribution_plot_takes_the_stack():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from mmit.plot import plot_predictive_distribution

    X, y, _ = heteroscedastic(80, 8)
    stack = IntervalStackingRegressor(small_members(), cv=3, random_state=0).fit(X, y)
    ax = plot_predictive_distribution(stack, X[:10], X[:10, 0], y[:10],
                                      coverages=(0.5, 0.9))
    bands = [container for container in ax.containers
             if container.get_label().endswith("interval")]
    assert [band.get_label() for band in bands] == ["90% interval", "50% interval"]
    heights = [np.array([bar.get_height() for bar in band]) for band in bands]
    assert np.all(heights[0] >= heights[1] - 1e-12)
    matplotlib.pyplot.close("all")
