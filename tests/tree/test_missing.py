"""Missing values (NaN) in X: fitting, predicting, saving, showing."""

import json
import pickle
import zipfile

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold

from mmit import MMIT, MMITCV, MMITForest, export_text, load_model, save_model
from mmit.metrics import interval_mse
from mmit.tree._tree import LEGACY_NODE_DTYPE, Tree

INF = np.inf


def missingness_problem(n=600, seed=0):
    """The target depends on whether x0 is missing; x1 carries signal too."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    missing = rng.random(n) < 0.3
    X[missing, 0] = np.nan
    center = np.where(missing, 4.0, np.sin(2 * X[:, 1]))
    lower = center - rng.exponential(0.2, n)
    upper = center + rng.exponential(0.2, n)
    lower[rng.random(n) < 0.15] = -INF
    upper[rng.random(n) < 0.15] = INF
    return X, np.column_stack([lower, upper]), missing


def heavier_child_walk(tree, row):
    """Leaf of ``row``, a missing value going to the heavier child."""
    node = 0
    while tree.children_left[node] != -1:
        left, right = tree.children_left[node], tree.children_right[node]
        x = row[tree.feature[node]]
        if np.isnan(x):
            weight = tree.weighted_n_node_samples
            node = left if weight[left] >= weight[right] else right
        else:
            node = left if x <= tree.threshold[node] else right
    return node


@pytest.mark.parametrize("loss", ["linear_hinge", "squared_hinge"])
def test_missingness_itself_is_learned(loss):
    X, y, _ = missingness_problem()
    train, test = np.arange(400), np.arange(400, 600)
    with_missing = MMIT(loss=loss, min_samples_leaf=5, random_state=0).fit(X[train],
                                                                           y[train])
    present = train[~np.isnan(X[train, 0])]
    dropped = MMIT(loss=loss, min_samples_leaf=5, random_state=0).fit(X[present],
                                                                      y[present])
    mse_missing = interval_mse(y[test], with_missing.predict(X[test]))
    mse_dropped = interval_mse(y[test], dropped.predict(X[test]))
    # the tree that saw the missing rows is an order of magnitude better
    assert mse_missing < 0.1 * mse_dropped


def test_forest_and_cross_validation_with_missing_values():
    X, y, missing = missingness_problem()
    train, test = np.arange(400), np.arange(400, 600)
    forest = MMITForest(n_estimators=30, max_features=None, random_state=0,
                        oob_score=True).fit(X[train], y[train])
    constant = interval_mse(y[test], np.full(len(test), np.median(y[train, 0])))
    assert interval_mse(y[test], forest.predict(X[test])) < 0.1 * constant
    assert np.isfinite(forest.oob_score_)
    search = MMITCV(margins=[0.0, 0.1], cv=3, random_state=0).fit(X[train], y[train])
    assert interval_mse(y[test], search.predict(X[test])) < 0.1 * constant


def test_cross_validation_scores_equal_grid_search_with_missing_values():
    X, y, _ = missingness_problem(n=150, seed=1)
    X[::7, 2] = np.nan
    cv = KFold(3, shuffle=True, random_state=0)
    search = MMITCV(margins=[0.0, 0.2], cv=cv, random_state=0).fit(X, y)
    alphas = search.cv_results_["param_ccp_alpha"]
    margins = search.cv_results_["param_margin"]
    grid = GridSearchCV(MMIT(random_state=0), [
        {"margin": [margin], "ccp_alpha": list(alphas[margins == margin])}
        for margin in (0.0, 0.2)], cv=cv).fit(X, y)
    order = np.lexsort((grid.cv_results_["param_ccp_alpha"].astype(float),
                        grid.cv_results_["param_margin"].astype(float)))
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  grid.cv_results_["mean_test_score"][order])


def test_missing_values_only_at_predict_time_follow_the_heavier_child():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    y = np.column_stack([np.sin(X[:, 0]) - 0.1, np.sin(X[:, 0]) + X[:, 1] ** 2])
    model = MMIT(max_depth=6, random_state=0).fit(X, y)
    tree = model.tree_
    internal = tree.children_left != -1
    weight = tree.weighted_n_node_samples
    np.testing.assert_array_equal(
        tree.missing_go_to_left[internal],
        weight[tree.children_left[internal]] >= weight[tree.children_right[internal]])
    X_test = rng.normal(size=(200, 4))
    X_test[rng.random((200, 4)) < 0.3] = np.nan
    leaves = [heavier_child_walk(tree, row) for row in X_test]
    np.testing.assert_array_equal(model.apply(X_test), leaves)
    np.testing.assert_array_equal(model.predict(X_test), tree.value[leaves])
    path = model.decision_path(X_test)
    assert np.all(path[np.arange(200), leaves] == 1)


def test_compact_walk_routes_rows_as_the_node_records():
    # predict and apply walk a compact copy of the nodes; decision_path walks
    # the node records: a deep, unbalanced tree with NaN sent to both sides
    X, y, _ = missingness_problem(n=800, seed=3)
    X[np.random.default_rng(4).random(X.shape) < 0.1] = np.nan
    model = MMIT(random_state=0).fit(X, y)
    tree = model.tree_
    internal = tree.children_left != -1
    assert tree.missing_go_to_left[internal].any() and not tree.missing_go_to_left[
        internal].all()
    X_test = np.random.default_rng(5).normal(size=(500, 3))
    X_test[np.random.default_rng(6).random(X_test.shape) < 0.3] = np.nan
    path = model.decision_path(X_test)
    leaves = path.indices[path.indptr[1:] - 1]
    np.testing.assert_array_equal(model.apply(X_test), leaves)
    np.testing.assert_array_equal(model.predict(X_test), tree.value[leaves])
    # the copy follows a new state of the same tree object
    other = MMIT(max_depth=3, random_state=0).fit(X, y[::-1]).tree_
    tree.__setstate__(other.__getstate__())
    np.testing.assert_array_equal(tree.predict(X_test), other.predict(X_test))
    np.testing.assert_array_equal(tree.apply(X_test), other.apply(X_test))


def test_nodes_store_the_cheaper_side_for_missing_values():
    # rows missing x0 belong with the high rows: the split on x0 sends them right
    X = np.array([[0.0], [1.0], [2.0], [3.0], [np.nan], [np.nan]])
    y = np.array([[0.0, 0.5], [0.0, 0.5], [0.0, 0.5], [5.0, 5.5], [5.0, 5.5], [5.0, 5.5]])
    model = MMIT(max_depth=1).fit(X, y)
    assert model.tree_.threshold[0] == 2.5
    assert not model.tree_.missing_go_to_left[0]
    np.testing.assert_array_equal(model.predict([[np.nan], [0.0], [9.0]]),
                                  [5.25, 0.25, 5.25])
    # the same with the missing rows low: they go left
    y[3:] = y[3:] - 10.0
    X[3] = -1.0
    model = MMIT(max_depth=1).fit(X, y)
    assert model.tree_.missing_go_to_left[0] and model.tree_.threshold[0] == -0.5
    assert model.predict([[np.nan]])[0] == model.predict([[-5.0]])[0]


def test_present_versus_missing_split():
    X = np.array([[1.0], [1.0], [1.0], [np.nan], [np.nan]])
    y = np.array([[0.0, 1.0]] * 3 + [[7.0, 8.0]] * 2)
    model = MMIT().fit(X, y)
    tree = model.tree_
    assert tree.node_count == 3 and tree.threshold[0] == INF
    assert not tree.missing_go_to_left[0]
    np.testing.assert_array_equal(model.predict([[1.0], [123.0], [np.nan]]),
                                  [0.5, 0.5, 7.5])
    text = export_text(model)
    assert "x0 is present" in text and "x0 is missing" in text


def test_columns_of_missing_values_are_never_split_on():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 3))
    X[:, 1] = np.nan
    y = np.column_stack([X[:, 0] - 0.2, X[:, 0] + 0.2])
    model = MMIT(random_state=0).fit(X, y)
    assert 1 not in model.tree_.feature
    assert model.feature_importances_[1] == 0.0
    everything_missing = MMIT().fit(np.full((5, 2), np.nan), np.arange(5.0))
    assert everything_missing.get_n_leaves() == 1
    assert everything_missing.predict([[np.nan, 1.0]])[0] == 2.0


def test_weights_equal_repeated_rows_with_missing_values():
    X, y, _ = missingness_problem(n=80, seed=4)
    counts = np.random.default_rng(5).integers(1, 4, size=80)
    weighted = MMIT(max_depth=4, random_state=0).fit(X, y, sample_weight=counts).tree_
    repeated = MMIT(max_depth=4, random_state=0).fit(np.repeat(X, counts, axis=0),
                                                     np.repeat(y, counts, axis=0)).tree_
    for name in ("children_left", "feature", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(weighted, name), getattr(repeated, name))
    np.testing.assert_allclose(weighted.value, repeated.value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weighted.threshold, repeated.threshold)


def test_saved_models_keep_the_missing_side(tmp_path):
    X, y, _ = missingness_problem(n=200)
    for model in (MMIT(random_state=0).fit(X, y),
                  MMITForest(n_estimators=5, random_state=0).fit(X, y)):
        path = tmp_path / "model.npz"
        save_model(model, path)
        np.testing.assert_array_equal(load_model(path).predict(X), model.predict(X))


def downgrade_to_version_1(path):
    """Rewrite a model file as mmit 0.1 wrote it: no missing-value side."""
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    metadata = json.loads(bytes(arrays["metadata"]).decode())
    metadata["version"] = 1
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    for key in arrays:
        if key.endswith("_nodes"):
            legacy = np.zeros(arrays[key].shape, dtype=LEGACY_NODE_DTYPE)
            for name in LEGACY_NODE_DTYPE.names:
                legacy[name] = arrays[key][name]
            arrays[key] = legacy
    np.savez_compressed(path, **arrays)


def test_model_files_of_version_1_load(tmp_path):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(150, 3))
    y = np.column_stack([X[:, 0] - 0.5, X[:, 0] + X[:, 1] ** 2])
    model = MMIT(max_depth=5, random_state=0).fit(X, y)
    path = tmp_path / "old.npz"
    save_model(model, path)
    downgrade_to_version_1(path)
    loaded = load_model(path)
    X_test = rng.normal(size=(100, 3))
    X_test[::3, 0] = np.nan
    # trees of version 1 were grown without missing values: NaN to the heavier child
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))


def test_model_files_of_unknown_versions_are_refused(tmp_path):
    path = tmp_path / "model.npz"
    save_model(MMIT(max_depth=2).fit(*missingness_problem(n=40)[:2]), path)
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    metadata = json.loads(np.lib.format.read_array(
        __import__("io").BytesIO(entries["metadata.npy"])).tobytes().decode())
    metadata["version"] = 99
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez_compressed(path, **arrays)
    with pytest.raises(ValueError, match="version 99.*reads versions 1, 2"):
        load_model(path)


def test_pickles_of_legacy_trees_load():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(100, 2))
    tree = MMIT(max_depth=4, random_state=0).fit(X, X[:, 0]).tree_
    state = tree.__getstate__()
    legacy = np.zeros(state["nodes"].shape, dtype=LEGACY_NODE_DTYPE)
    for name in LEGACY_NODE_DTYPE.names:
        legacy[name] = state["nodes"][name]
    restored = Tree(2)
    restored.__setstate__(dict(state, nodes=legacy))
    assert pickle.dumps(restored.__getstate__()) == pickle.dumps(state)


def test_infinite_features_are_refused():
    X = np.array([[0.0], [np.inf], [1.0]])
    with pytest.raises(ValueError, match="infinity"):
        MMIT().fit(X, [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="infinity"):
        MMITForest(n_estimators=2).fit(X, [0.0, 1.0, 2.0])
