"""The histogram split search (MMITBoost(splitter="hist")): its splits against
a brute-force Newton criterion, exact leaves, monotone training loss,
missing values and weights (the binning: test_binning.py)."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmit import MMITBoost, load_model, save_model
from mmit._loss._loss import LOSSES


def problem(n=120, p=3, seed=0, missing=0.0, distinct=None, censoring=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if distinct is not None:
        X = np.round(X * distinct) / distinct
    center = np.sin(2 * X[:, 0]) + X[:, 1]
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < censoring / 2] = -np.inf
    upper[rng.random(n) < censoring / 2] = np.inf
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, np.column_stack([lower, upper])


def one_stage(loss, **params):
    return MMITBoost(n_estimators=1, learning_rate=1.0, splitter="hist", loss=loss,
                     margin=0.0, early_stopping=False, random_state=0, **params)


def brute_force_root_split(X, y, loss, baseline, weight):
    """The Newton gain of every threshold between distinct values of every
    feature, missing rows on either side; the best (feature, threshold,
    missing side, gain)."""
    entry = LOSSES[loss]
    gradient = weight * entry.gradient(y[:, 0], y[:, 1], np.full(len(X), baseline))
    curvature = weight * entry.curvature(y[:, 0], y[:, 1], np.full(len(X), baseline))
    if not curvature.any():
        curvature = weight.copy()

    def score(rows):
        h = curvature[rows].sum()
        return gradient[rows].sum() ** 2 / h if h > 0 else 0.0

    everything = np.ones(len(X), dtype=bool)
    best = (None, None, None, 0.0)
    for j in range(X.shape[1]):
        column = X[:, j]
        missing = np.isnan(column)
        values = np.unique(column[~missing])
        thresholds = list((values[:-1] + values[1:]) / 2)
        if missing.any():
            thresholds.append(np.inf)
        for threshold in thresholds:
            for missing_left in ([False, True] if missing.any() else [False]):
                left = (column <= threshold) | (missing & missing_left)
                if left.all() or not left.any():
                    continue
                gain = score(left) + score(~left) - score(everything)
                if gain > best[3] + 1e-9 * abs(gain):
                    best = (j, threshold, missing_left, gain)
    return best


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("seed", range(4))
def test_one_stage_finds_the_brute_force_newton_split(loss, seed):
    """With a bin per distinct value, the root split is the one of largest
    Newton gain over all thresholds (the loss's gradient and curvature at
    the baseline; weights as curvature for the linear hinge)."""
    X, y = problem(seed=seed, missing=0.1 if seed % 2 else 0.0)
    weight = np.random.default_rng(seed).uniform(0.5, 2.0, len(X))
    model = one_stage(loss, max_depth=1).fit(X, y, weight)
    tree = model.estimators_[0].tree_
    feature, threshold, missing_left, _ = brute_force_root_split(
        X, y, loss, model.baseline_prediction_, weight)
    assert tree.node_count == 3
    assert tree.feature[0] == feature
    assert tree.threshold[0] == pytest.approx(threshold, rel=1e-12)
    if np.isnan(X[:, feature]).any():
        assert tree.missing_go_to_left[0] == missing_left


def brute_force_node_partitions(X, y, loss, baseline, weight, tree):
    """For every split node of a one-stage tree: the rows it holds, the rows
    its split sends left, and the rows the brute-force Newton split of its
    rows sends left."""
    paths = tree.decision_path(np.ascontiguousarray(X)).toarray().astype(bool)
    for node in np.flatnonzero(tree.children_left != -1):
        rows = np.flatnonzero(paths[:, node])
        left = paths[rows, tree.children_left[node]]
        feature, threshold, missing_left, _ = brute_force_root_split(
            X[rows], y[rows], loss, baseline, weight[rows])
        column = X[rows, feature]
        best = (column <= threshold) | (np.isnan(column) & missing_left)
        yield node, left, best


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("growth", [{"max_depth": 3}, {"max_leaf_nodes": 6,
                                                       "max_depth": None}])
@pytest.mark.parametrize("seed", range(3))
def test_every_node_split_is_the_brute_force_newton_split(loss, growth, seed):
    """Below the root, one sibling's histogram is its parent's minus the
    other's (built from its rows): each node still splits its rows as the
    brute-force Newton criterion on them does (depth-first and best-first
    growth, missing values)."""
    X, y = problem(n=160, seed=seed, missing=0.1 if seed else 0.0)
    weight = np.random.default_rng(seed).uniform(0.5, 2.0, len(X))
    model = one_stage(loss, **growth).fit(X, y, weight)
    tree = model.estimators_[0].tree_
    assert tree.node_count >= 5
    for node, left, best in brute_force_node_partitions(
            X, y, loss, model.baseline_prediction_, weight, tree):
        assert np.array_equal(left, best), node


def test_threads_share_the_histograms():
    """Features split between two threads (from about 1e6 rows times
    features), rows routed in blocks and children solved in parallel (from
    about 1.3e5 rows): each feature's bins summed in the same order, the
    blocks' sums added in order, the same fit."""
    X, y = problem(n=140_000, p=8, seed=4, missing=0.05)
    params = dict(n_estimators=3, learning_rate=0.3, max_depth=3, splitter="hist",
                  early_stopping=False, random_state=0)
    one = MMITBoost(**params, n_jobs=1).fit(X, y)
    two = MMITBoost(**params, n_jobs=2).fit(X, y)
    for a, b in zip(one.estimators_, two.estimators_, strict=True):
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    np.testing.assert_array_equal(one.train_score_, two.train_score_)


@pytest.mark.parametrize("splitter", ["hist", "exact"])
@pytest.mark.parametrize("subsample", [1.0, 0.6])
def test_training_predictions_follow_the_trees(splitter, subsample):
    """A stage adds the values its build gave the rows it was grown on (and
    walks the tree for the rows left out): the training scores are those of
    the model's own predictions."""
    X, y = problem(n=250, seed=8, missing=0.1)
    weight = np.random.default_rng(8).uniform(0.0, 2.0, len(X))
    weight[:20] = 0.0
    model = MMITBoost(n_estimators=15, learning_rate=0.3, splitter=splitter,
                      subsample=subsample, early_stopping=False,
                      random_state=0).fit(X, y, weight)
    objective = LOSSES[model.loss].objective(y[:, 0], y[:, 1], model.margin_, weight)
    for score, prediction in zip(model.train_score_[1:], model.staged_predict(X),
                                 strict=True):
        assert -score == pytest.approx(objective(prediction), rel=1e-12)


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_leaves_hold_the_exact_optima_of_their_residual_intervals(loss):
    X, y = problem(n=300, seed=5, missing=0.1)
    weight = np.random.default_rng(5).uniform(0.5, 2.0, len(X))
    model = MMITBoost(n_estimators=3, learning_rate=0.5, splitter="hist", loss=loss,
                      margin=0.05, max_depth=3, early_stopping=False,
                      random_state=0).fit(X, y, weight)
    entry = LOSSES[loss]
    prediction = np.full(len(X), model.baseline_prediction_)
    for stage in model.estimators_:
        tree = stage.tree_
        leaves = tree.apply(np.ascontiguousarray(X))
        for leaf in np.unique(leaves):
            rows = leaves == leaf
            optimum = entry.optimal_constant(y[rows, 0] - prediction[rows],
                                             y[rows, 1] - prediction[rows],
                                             model.margin_, weight[rows])
            objective = entry.objective(y[rows, 0] - prediction[rows],
                                        y[rows, 1] - prediction[rows], model.margin_,
                                        weight[rows])
            at_leaf = objective(np.full(rows.sum(), tree.value[leaf]))
            assert at_leaf <= objective(np.full(rows.sum(), optimum)) * (1 + 1e-9) + 1e-15
        prediction = prediction + model.learning_rate * tree.predict(
            np.ascontiguousarray(X))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), loss=st.sampled_from(sorted(LOSSES)),
       learning_rate=st.floats(0.05, 1.0), max_depth=st.integers(1, 4),
       missing=st.sampled_from([0.0, 0.2]), max_bins=st.sampled_from([2, 7, 255]))
def test_the_training_loss_never_increases(seed, loss, learning_rate, max_depth, missing,
                                           max_bins):
    X, y = problem(n=150, seed=seed, missing=missing)
    model = MMITBoost(n_estimators=8, learning_rate=learning_rate, max_depth=max_depth,
                      splitter="hist", max_bins=max_bins, loss=loss, early_stopping=False,
                      random_state=seed).fit(X, y)
    scores = model.train_score_  # negative losses, stage 0 first
    assert np.all(np.diff(scores) >= -1e-12 * np.abs(scores[:-1]).max())


def test_missing_values_learn_their_side_and_predict():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    informative = rng.random(400) < 0.3
    X[informative, 0] = np.nan  # missing means a high value
    center = np.where(informative, 3.0, X[:, 1])
    y = np.column_stack([center - 0.1, center + 0.1])
    model = MMITBoost(n_estimators=50, learning_rate=0.3, splitter="hist",
                      random_state=0).fit(X, y)
    predictions = model.predict(X)
    assert np.all(np.isfinite(predictions))
    assert np.mean(np.abs(predictions[informative] - 3.0)) < 0.2
    exact = MMITBoost(n_estimators=50, learning_rate=0.3, random_state=0).fit(X, y)
    assert np.mean(np.abs(exact.predict(X)[informative] - 3.0)) < 0.2


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("max_bins", [255, 6])
def test_integer_weights_equal_repeated_rows(loss, max_bins):
    """Zero weights leave rows out of the bins too; with fewer bins than
    values, the bins are weighted quantiles."""
    X, y = problem(n=80, seed=7, missing=0.1, distinct=4)
    counts = np.random.default_rng(7).integers(0, 4, len(X))
    counts[0] = 1
    params = dict(n_estimators=5, learning_rate=0.5, max_depth=3, splitter="hist",
                  max_bins=max_bins, loss=loss, early_stopping=False, random_state=0)
    weighted = MMITBoost(**params).fit(X, y, counts.astype(float))
    repeated = MMITBoost(**params).fit(np.repeat(X, counts, axis=0),
                                       np.repeat(y, counts, axis=0))
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-9,
                               atol=1e-12)


def test_bad_parameters():
    X, y = problem()
    with pytest.raises(ValueError, match="max_bins"):
        MMITBoost(splitter="hist", max_bins=256).fit(X, y)
    with pytest.raises(ValueError, match="leaf_model='constant'"):
        MMITBoost(splitter="hist", leaf_model="linear", max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="splitter"):
        MMITBoost(splitter="approx").fit(X, y)


def test_model_files_keep_the_binned_booster(tmp_path):
    X, y = problem(n=200, seed=9, missing=0.1)
    model = MMITBoost(n_estimators=10, splitter="hist", max_bins=16,
                      random_state=0).fit(X, y)
    save_model(model, tmp_path / "boost.npz")
    loaded = load_model(tmp_path / "boost.npz")
    assert loaded.splitter == "hist" and loaded.max_bins == 16
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("params", [
    {"max_leaf_nodes": 5, "max_depth": None},
    {"max_features": 1},
    {"subsample": 0.5},
    {"min_samples_leaf": 20},
    {"early_stopping": True, "n_estimators": 200},
])
def test_tree_parameters_with_the_binned_search(params):
    X, y = problem(n=300, seed=11, missing=0.05)
    model = MMITBoost(splitter="hist", random_state=0,
                      **{"n_estimators": 20, **params}).fit(X, y)
    trees = [stage.tree_ for stage in model.estimators_]
    if "max_leaf_nodes" in params:
        assert max(tree.n_leaves for tree in trees) <= params["max_leaf_nodes"]
    if "min_samples_leaf" in params:
        leaves = [tree.n_node_samples[tree.children_left == -1] for tree in trees]
        assert min(counts.min() for counts in leaves) >= params["min_samples_leaf"]
    if "subsample" not in params:  # stages fitted on every training row
        assert np.all(np.diff(model.train_score_) >= -1e-12)
    assert np.all(np.isfinite(model.predict(X)))
