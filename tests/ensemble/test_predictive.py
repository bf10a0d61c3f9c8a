"""Predictive distributions of MMITForest (mmit.ensemble._predictive): the empirical
distribution in the simplest case, the shape of quantiles and CDFs,
censored mass, weights, out of bag, and the checks of the inputs."""

import pickle
from concurrent.futures import ThreadPoolExecutor
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from mmit import (
    LocationDistribution,
    MMITForest,
    MMITForestCV,
    SpreadDistribution,
    intervals_from_survival,
)
from mmit.ensemble._distributions import NPMLE_TOLERANCE
from mmit.ensemble._turnbull import weighted_npmle
from mmit.metrics import interval_coverage, pinball_loss


def heteroscedastic(n, seed, censored=0.0):
    """Location from x0, spread from x1 only; a share of the values known
    only between inspection times (a grid whose offset depends on x2)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.sin(X[:, 0]) + (0.1 + 0.6 * (X[:, 1] > 0)) * rng.normal(size=n)
    lower, upper = y.copy(), y.copy()
    hidden = rng.random(n) < censored
    offset = 0.2 * np.sin(3 * X[:, 2])
    cell = np.floor((y - offset) / 0.5)
    lower[hidden] = (offset + 0.5 * cell)[hidden]
    upper[hidden] = lower[hidden] + 0.5
    return X, np.column_stack([lower, upper]), y


def test_one_leaf_gives_the_weighted_empirical_distribution():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.round(rng.normal(size=40), 1)
    weight = rng.integers(0, 4, 40).astype(float)
    weight[0] = 1.0
    forest = MMITForest(1, bootstrap=False, min_samples_split=100,
                        distribution="location").fit(X, y, weight)
    thresholds = np.linspace(-3, 3, 61)
    expected = np.array([weight[y <= t].sum() for t in thresholds]) / weight.sum()
    cdf = forest.predict_cdf(X[:5], thresholds)
    np.testing.assert_allclose(cdf, np.tile(expected, (5, 1)), atol=1e-12)
    median = forest.predict_quantiles(X[:1], [0.5])[0, 0]
    assert weight[y <= median].sum() >= 0.5 * weight.sum()
    assert weight[y < median].sum() < 0.5 * weight.sum()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), censored=st.sampled_from([0.0, 0.5, 1.0]),
       distribution=st.sampled_from(["spread", "location"]))
def test_quantiles_and_cdfs_are_monotone(seed, censored, distribution):
    X, y, _ = heteroscedastic(120, seed, censored)
    forest = MMITForest(10, random_state=seed, distribution=distribution).fit(X, y)
    levels = np.linspace(0, 1, 11)
    quantiles = forest.predict_quantiles(X[:20], levels)
    assert np.all(np.diff(quantiles, axis=1) >= 0)
    cdf = forest.predict_cdf(X[:20], np.linspace(-4, 4, 17))
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.diff(cdf, axis=1) >= -1e-12)


def test_a_censored_value_keeps_its_mass_inside_its_bounds():
    X = np.zeros((3, 1))
    y = np.array([[1.0, 2.0], [1.0, 2.0], [-np.inf, 3.0]])
    forest = MMITForest(1, bootstrap=False, distribution="location").fit(X, y)
    cdf = forest.predict_cdf(X[:1], [0.99, 1.0, 1.5, 2.0, 2.5])[0]
    np.testing.assert_allclose(cdf, [0.0, 0.0, 0.5, 1.0, 1.0])
    low, high = forest.predict_interval(X[:1], 0.9)[0]
    assert 1.0 <= low <= high <= 2.0


def test_censored_rows_give_the_average_of_the_trees_leaves_estimates():
    """With censored rows, a query's distribution is the average over the
    trees of the NPMLE of the rows in its leaf (here without bootstrap: every
    row of weight 1 in each tree, the trees differing by their features)."""
    X, y, _ = heteroscedastic(150, 11, 0.6)
    y[:10, 0] = -np.inf
    y[10:20, 1] = np.inf
    forest = MMITForest(4, bootstrap=False, max_features=1, min_samples_leaf=15,
                        distribution="location", random_state=0).fit(X, y)
    thresholds = np.linspace(-2.5, 2.5, 21)
    cdf = forest.predict_cdf(X[:8], thresholds)
    expected = np.zeros_like(cdf)
    for tree in forest.estimators_:
        train_leaves, query_leaves = tree.apply(X), tree.apply(X[:8])
        for q, leaf in enumerate(query_leaves):
            held = train_leaves == leaf
            left, right, mass = weighted_npmle(y[held, 0], y[held, 1],
                                               np.ones(held.sum()),
                                               tolerance=NPMLE_TOLERANCE)
            # a bounded interval's mass spread evenly over it, one unbounded
            # below at -inf, one unbounded above at +inf
            bounded = np.isfinite(left) & np.isfinite(right)
            low, high, inside = left[bounded], right[bounded], mass[bounded]
            for k, t in enumerate(thresholds):
                share = np.where(high <= t, 1.0, np.clip(
                    (t - low) / np.where(high > low, high - low, 1.0), 0.0, 1.0))
                expected[q, k] += inside @ share + mass[left == -np.inf].sum()
    np.testing.assert_allclose(cdf, expected / len(forest.estimators_), atol=1e-9)


@pytest.mark.parametrize("distribution", ["location", "spread"])
def test_integer_weights_equal_repeated_rows(distribution):
    X, y, _ = heteroscedastic(60, 3, 0.3)
    counts = np.random.default_rng(3).integers(0, 4, 60)
    counts[0] = 1
    # without bootstrap nor feature sampling, every tree is the same tree
    params = dict(n_estimators=2, bootstrap=False, max_features=None)
    if distribution == "spread":  # the residuals need out-of-bag rows
        params = dict(n_estimators=30, max_samples=0.5)
    weighted = MMITForest(**params, distribution=distribution, random_state=0).fit(
        X, y, counts.astype(float))
    repeated = MMITForest(**params, distribution=distribution, random_state=0).fit(
        np.repeat(X, counts, axis=0), np.repeat(y, counts, axis=0))
    levels = [0.1, 0.5, 0.9]
    if distribution == "location":
        np.testing.assert_allclose(weighted.predict_quantiles(X, levels),
                                   repeated.predict_quantiles(X, levels), atol=1e-9)
    else:  # bootstrap draws: equal in distribution, not draw for draw
        assert np.all(np.isfinite(weighted.predict_quantiles(X, levels)))


def test_the_spread_follows_the_feature_that_moves_it():
    """x1 moves the spread, not the location: the 'spread' distributions
    widen with it, and score better than the location weights'."""
    X, y, _ = heteroscedastic(3000, 0)
    X_test, _, y_test = heteroscedastic(3000, 1)
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    losses = {}
    for distribution in ("spread", "location"):
        forest = MMITForest(50, random_state=0, distribution=distribution,
                            n_jobs=2).fit(X, y)
        quantiles = forest.predict_quantiles(X_test, levels)
        losses[distribution] = pinball_loss(y_test, quantiles, levels)
        if distribution == "spread":
            width = quantiles[:, -1] - quantiles[:, 0]
            assert np.median(width[X_test[:, 1] > 0]) > 3 * np.median(
                width[X_test[:, 1] <= 0])
            for coverage in (0.5, 0.8, 0.9):
                shares = interval_coverage(y_test, forest.predict_interval(X_test,
                                                                           coverage))
                assert abs(shares.covered - coverage) < 0.04
    assert losses["spread"] < losses["location"]


def test_out_of_bag_distributions():
    X, y, _ = heteroscedastic(300, 5, 0.3)
    forest = MMITForest(20, random_state=0).fit(X, y)
    quantiles = forest.oob_quantiles([(1 - 0.8) / 2, (1 + 0.8) / 2])
    interval = forest.oob_interval(0.8)
    np.testing.assert_array_equal(quantiles, interval)
    cdf = forest.oob_cdf([0.0])
    held = ~np.isnan(cdf[:, 0])
    assert held.mean() > 0.9 and np.isnan(quantiles[~held]).all()
    # out of bag, a row's distribution comes from trees that did not see it
    assert 0.6 < interval_coverage(y[held], interval[held]).covered + (
        interval_coverage(y[held], interval[held]).undecided) < 0.95


def test_the_search_gives_its_chosen_forest_s_distributions():
    X, y, _ = heteroscedastic(200, 7)
    search = MMITForestCV(n_estimators=10, param_grid={"min_samples_leaf": [1, 5]},
                          random_state=0).fit(X, y)
    np.testing.assert_array_equal(search.predict_interval(X[:5]),
                                  search.best_estimator_.predict_interval(X[:5]))


def test_survival_curves_of_survival_targets():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, size=(300, 2))
    time = np.exp(1 + X[:, 0] + 0.3 * rng.normal(size=300))
    y = intervals_from_survival(rng.random(300) < 0.6, time, log=True)
    forest = MMITForest(20, random_state=0).fit(X, y)
    times = np.array([0.5, 2.0, 3.0, 6.0, 40.0])
    curves = forest.predict_survival(X[:10], times, log=True)
    np.testing.assert_array_equal(curves, 1.0 - forest.predict_cdf(X[:10], np.log(times)))
    assert np.all((curves >= 0) & (curves <= 1)) and np.all(np.diff(curves, axis=1) <= 0)
    # early on nearly everyone survives; later rows (larger x0) survive longer
    assert np.all(curves[:, 0] > 0.95)
    late = forest.predict_survival(np.array([[0.1, 0.5], [0.9, 0.5]]), [6.0], log=True)
    assert late[0, 0] < late[1, 0]
    with pytest.raises(ValueError, match="positive times"):
        forest.predict_survival(X[:2], [0.0, 1.0], log=True)
    with pytest.raises(ValueError, match="times must"):
        forest.predict_survival(X[:2], [np.nan])
    np.testing.assert_array_equal(forest.predict_survival(X[:3], [1.0, 2.0]),
                                  1.0 - forest.predict_cdf(X[:3], [1.0, 2.0]))


def area_under_curves(model, X, times, log):
    """The restricted mean survival times from the curves themselves."""
    curves = model.predict_survival(X, times, log=log)
    return times[0] + curves[:, :-1] @ np.diff(times)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), censored=st.sampled_from([0.0, 0.5, 1.0]),
       distribution=st.sampled_from(["spread", "location"]),
       n_times=st.sampled_from([1, 2, 20, 2000]))
def test_restricted_means_equal_the_area_under_the_survival_curves(seed, censored,
                                                                   distribution, n_times):
    # interval-censored cells (ramps of the CDF), narrow or spanning many
    # times (term by term, or from prefix sums); times beyond the values
    X, y, _ = heteroscedastic(150, seed, censored)
    forest = MMITForest(10, random_state=seed, distribution=distribution).fit(X, y + 4.0)
    times = np.unique(np.round(np.linspace(0.5, 9.0, n_times), 3))
    expected = area_under_curves(forest, X[:30], times, False)
    np.testing.assert_allclose(forest.predict_restricted_mean(X[:30], times), expected,
                               rtol=1e-10)


@pytest.mark.parametrize("distribution", ["spread", "location"])
def test_restricted_means_over_ramps_spanning_many_times(distribution):
    # every value known within a cell of width 0.5: ramps over about a hundred
    # times each (summed from prefix sums)
    X, y, _ = heteroscedastic(150, 3, censored=1.0)
    forest = MMITForest(10, random_state=0, distribution=distribution).fit(X, y + 4.0)
    times = np.linspace(0.5, 9.0, 2000)
    np.testing.assert_allclose(forest.predict_restricted_mean(X[:30], times),
                               area_under_curves(forest, X[:30], times, False), rtol=1e-10)


@pytest.mark.parametrize("censored", [0.0, 1.0])
def test_restricted_means_on_times_crowded_in_places(censored):
    # most times within a millionth of each other: the searches' buckets hold
    # hundreds of them there (bisection) and at most one elsewhere (a scan),
    # values on the times themselves
    X, y, _ = heteroscedastic(150, 4, censored)
    y = np.round(y + 4.0, 2)
    crowded = 4.0 + 1e-6 * np.arange(500)
    times = np.unique(np.concatenate([np.linspace(0.5, 9.0, 40), crowded,
                                      np.unique(y[np.isfinite(y)])]))
    forest = MMITForest(10, random_state=0).fit(X, y)
    np.testing.assert_allclose(forest.predict_restricted_mean(X[:30], times),
                               area_under_curves(forest, X[:30], times, False), rtol=1e-10)


def test_restricted_means_of_right_censored_log_times():
    rng = np.random.default_rng(5)
    X = rng.uniform(0, 1, size=(400, 2))
    time = np.round(np.exp(1 + X[:, 0] + 0.3 * rng.normal(size=400)), 2)
    y = intervals_from_survival(rng.random(400) < 0.6, time, log=True)
    times = np.unique(time)
    for model in (MMITForest(20, random_state=0).fit(X, y),
                  MMITForest(20, random_state=0, distribution="location").fit(X, y),
                  MMITForestCV(n_estimators=10, param_grid={"min_samples_leaf": [1, 5]},
                               random_state=0).fit(X, y)):
        np.testing.assert_allclose(model.predict_restricted_mean(X[:50], times, log=True),
                                   area_under_curves(model, X[:50], times, True),
                                   rtol=1e-10)
    for bad in ([2.0, 1.0], [1.0, 1.0], [-1.0, 2.0], [np.nan], [1.0, np.inf]):
        with pytest.raises(ValueError, match="times must"):
            model.predict_restricted_mean(X[:2], bad)
    with pytest.raises(ValueError, match="positive first time"):
        model.predict_restricted_mean(X[:2], [0.0, 1.0], log=True)


def test_bad_inputs():
    X, y, _ = heteroscedastic(50, 9)
    forest = MMITForest(5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="quantiles must lie in"):
        forest.predict_quantiles(X, [0.5, 1.5])
    with pytest.raises(ValueError, match="coverage must lie in"):
        forest.predict_interval(X, 1.0)
    with pytest.raises(TypeError, match="coverage must be a float"):
        forest.predict_interval(X, "wide")
    with pytest.raises(ValueError, match="thresholds"):
        forest.predict_cdf(X, [np.nan])
    with pytest.raises(ValueError, match="X has 2 features"):
        forest.predict_quantiles(X[:, :2])
    without = MMITForest(5, random_state=0, distribution=None).fit(X, y)
    with pytest.raises(ValueError, match="no predictive distributions"):
        without.predict_interval(X)
    with pytest.raises(ValueError, match="bootstrap=True"):
        MMITForest(5, bootstrap=False, distribution="spread").fit(X, y)
    with pytest.raises(ValueError, match="bootstrap=True"):
        MMITForest(5, bootstrap=False, distribution=SpreadDistribution()).fit(X, y)
    # too few rows for any to be out of bag: the first request names the parameter
    few = MMITForest(1, max_samples=1.0, random_state=0, distribution="spread").fit(
        X[:1], y[:1])
    with pytest.raises(ValueError, match="distribution='location'"):
        few.predict_quantiles(X[:1])


def test_the_string_options_are_shorthands_of_the_distribution_objects():
    X, y, _ = heteroscedastic(150, 11, 0.3)
    for name, strategy in (("spread", SpreadDistribution()),
                           ("location", LocationDistribution())):
        by_name = MMITForest(10, random_state=0, distribution=name).fit(X, y)
        by_object = MMITForest(10, random_state=0, distribution=strategy).fit(X, y)
        np.testing.assert_array_equal(by_name.predict_quantiles(X[:20]),
                                      by_object.predict_quantiles(X[:20]))
    # "auto": the spread with bootstrap, else the location
    spread = MMITForest(10, random_state=0, distribution="spread").fit(X, y)
    np.testing.assert_array_equal(
        MMITForest(10, random_state=0).fit(X, y).predict_quantiles(X[:20]),
        spread.predict_quantiles(X[:20]))
    without_bootstrap = MMITForest(2, bootstrap=False, random_state=0).fit(X, y)
    np.testing.assert_array_equal(
        without_bootstrap.predict_quantiles(X[:20]),
        MMITForest(2, bootstrap=False, random_state=0, distribution="location")
        .fit(X, y).predict_quantiles(X[:20]))


def test_the_spread_forest_s_settings_are_parameters():
    X, y, _ = heteroscedastic(400, 12)
    strategy = SpreadDistribution(tree_share=1.0, min_samples_leaf=10, max_features=None,
                                  max_draws=100)
    forest = MMITForest(8, random_state=0, distribution=strategy)
    clone(forest).fit(X, y)
    assert forest.get_params()["distribution"] is strategy
    assert clone(forest).get_params()["distribution"] == strategy
    default = MMITForest(8, random_state=0).fit(X, y).predict_quantiles(X[:50])
    other = forest.fit(X, y).predict_quantiles(X[:50])
    assert not np.array_equal(default, other)
    weighting = forest.distribution_.fitted(forest).weighting
    assert len(weighting.estimators_) == 8 and weighting.min_samples_leaf == 10
    assert weighting.max_features is None and weighting.max_samples == 100
    with pytest.raises(FrozenInstanceError):
        strategy.min_samples_leaf = 5
    for invalid, message in (({"tree_share": 0.0}, "tree_share"),
                              ({"min_samples_leaf": 0}, "min_samples_leaf"),
                              ({"max_features": "all"}, "max_features"),
                              ({"max_draws": 0.5}, "max_draws")):
        with pytest.raises(ValueError, match=message):
            SpreadDistribution(**invalid)
    with pytest.raises(ValueError, match="distribution"):
        MMITForest(distribution="wide").fit(X, y)


def test_distributions_are_made_on_the_first_request_from_a_copy_of_the_rows():
    X, _, y = heteroscedastic(300, 13)  # exact values: y itself holds the bounds
    weight = np.random.default_rng(13).integers(1, 3, len(X)).astype(float)
    expected = MMITForest(10, random_state=0).fit(X, y, weight).predict_quantiles(X)
    changed = [X.copy(), y.copy(), weight.copy()]
    forest = MMITForest(10, random_state=0).fit(*changed)
    for array in changed:  # after the fit: the distributions do not see it
        array[:] = 0.0
    restored = pickle.loads(pickle.dumps(forest))  # before the first request
    np.testing.assert_array_equal(restored.predict_quantiles(X), expected)
    # made once, whichever thread asks first
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: forest.predict_quantiles(X), range(4)))
    for quantiles in results:
        np.testing.assert_array_equal(quantiles, expected)
    assert forest.distribution_.rows is None  # the training rows let go once made
    copied = pickle.loads(pickle.dumps(forest))  # after it
    np.testing.assert_array_equal(copied.oob_cdf([0.0]), forest.oob_cdf([0.0]))
