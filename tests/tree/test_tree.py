"""The MMIT estimator: reference trees, toy problems, weights, pruning, errors."""

import pickle

import numpy as np
import pytest
from brute_force import minimum
from problems import leaf_cost, random_intervals
from sklearn.exceptions import NotFittedError

from mmit import MMIT, MaxMarginIntervalTree, export_text
from mmit._loss._loss import LOSSES as LOSS_ENTRIES
from mmit.datasets import load_dataset, load_folder
from mmit.metrics import interval_mse

LOSSES = sorted(LOSS_ENTRIES)
INF = np.inf


def assert_same_tree(a, b):
    for name in ("children_left", "children_right", "feature", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("threshold", "value", "cost", "weighted_n_node_samples"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12,
                                   atol=1e-12, err_msg=name)


# --------------------------------------------------------------------------
# Reference outputs of the authors' implementation
# --------------------------------------------------------------------------

def test_matches_reference_trees(reference):
    for case in reference("trees.json"):
        X = np.array(case["X"])
        y = np.column_stack([case["lower"], case["upper"]])
        model = MMIT(loss=case["loss"], margin=case["margin"], max_depth=case["max_depth"],
                     random_state=0).fit(X, y)
        label = f"{case['pattern']} {case['loss']} margin={case['margin']} " \
                f"max_depth={case['max_depth']}"
        if case["tie_free"]:
            assert model.get_n_leaves() == case["n_leaves"], label
            assert model.get_depth() == case["depth"], label
            assert leaf_cost(model.tree_) == pytest.approx(case["train_cost"], rel=1e-9,
                                                           abs=1e-12), label
            np.testing.assert_allclose(model.predict(X), case["train_pred"], rtol=1e-9,
                                       atol=1e-12, err_msg=label)
        else:
            # the original broke ties at random: only the size and fit are comparable
            leaves_allowed = 0.05 * case["n_leaves"] + 2
            assert abs(model.get_n_leaves() - case["n_leaves"]) <= leaves_allowed, label
            assert abs(model.get_depth() - case["depth"]) <= 2, label
            assert leaf_cost(model.tree_) == pytest.approx(case["train_cost"], rel=1e-3,
                                                           abs=1e-5), label


def test_matches_reference_root_splits(reference, shared_data_dir):
    for case in reference("root_splits.json"):
        data = load_folder(shared_data_dir / case["dataset"])
        model = MMIT(loss=case["loss"], margin=case["margin"], max_depth=1,
                     random_state=0).fit(data.data, data.target)
        tree, split = model.tree_, case["split"]
        label = f"{case['dataset']} {case['loss']} margin={case['margin']}"
        assert tree.cost[0] == pytest.approx(case["root_cost"], rel=1e-9), label
        assert tree.value[0] == pytest.approx(case["root_pred"], rel=1e-9), label
        assert tree.cost[1] + tree.cost[2] == pytest.approx(split["cost"], rel=1e-9), label
        if not case["tie_free"]:
            continue
        assert tree.feature[0] == split["feature"], label
        assert tree.value[1] == pytest.approx(split["left_pred"], rel=1e-9), label
        assert tree.value[2] == pytest.approx(split["right_pred"], rel=1e-9), label
        n_left = int(np.sum(data.data[:, split["feature"]] <= split["threshold_value"]))
        assert n_left == split["n_left"], label
        if tree.n_node_samples[1] != n_left:
            # Another boundary of the same feature; allowed only if the two
            # partitions cost exactly the same (a tie the original broke by
            # rounding; we take the first boundary).
            goes_left = data.data[:, split["feature"]] <= split["threshold_value"]
            exact = sum(
                minimum(data.target[side, 0], data.target[side, 1], case["margin"],
                        case["loss"], np.ones(side.sum()))[0]
                for side in (goes_left, ~goes_left)
            )
            assert exact == pytest.approx(tree.cost[1] + tree.cost[2], rel=1e-14), label


# --------------------------------------------------------------------------
# Toy problems with known trees
# --------------------------------------------------------------------------

def test_step_function_is_split_at_the_step():
    X = np.arange(10.0).reshape(-1, 1)
    low = X[:, 0] < 4
    y = np.column_stack([np.where(low, 0.0, 10.0), np.where(low, 1.0, 11.0)])
    model = MMIT().fit(X, y)
    tree = model.tree_
    assert tree.node_count == 3
    assert tree.feature[0] == 0
    assert tree.threshold[0] == 3.5
    # root: six intervals [10, 11] outweigh four [0, 1] under the linear hinge
    np.testing.assert_array_equal(tree.value, [10.0, 0.5, 10.5])
    np.testing.assert_array_equal(tree.cost, [tree.cost[0], 0.0, 0.0])
    assert model.score(X, y) == 0.0


def test_zero_cost_root_is_a_leaf():
    X = np.arange(6.0).reshape(-1, 1)
    y = np.column_stack([np.zeros(6), np.full(6, 3.0)])
    model = MMIT().fit(X, y)
    assert model.get_n_leaves() == 1 and model.get_depth() == 0
    assert model.predict([[100.0]])[0] == 1.5


def test_uninformative_labels_cost_nothing_anywhere():
    X = np.arange(4.0).reshape(-1, 1)
    y = np.array([[0.0, 0.0], [-INF, INF], [-INF, INF], [1.0, 1.0]])
    model = MMIT().fit(X, y)
    # only the two exact values matter: one split separates them
    assert model.get_n_leaves() == 2 and model.tree_.threshold[0] == 0.5
    np.testing.assert_array_equal(model.predict(X), [0.0, 1.0, 1.0, 1.0])
    # no finite bound at all: one leaf predicting 0
    all_unknown = MMIT().fit(X, np.tile([-INF, INF], (4, 1)))
    assert all_unknown.get_n_leaves() == 1
    assert all_unknown.predict(X).tolist() == [0.0] * 4


def test_exact_values_behave_as_a_regression_tree():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = MMIT(max_depth=1).fit(X, [1.0, 1.0, 3.0, 4.0])
    np.testing.assert_array_equal(model.predict(X), [1.0, 1.0, 3.5, 3.5])


@pytest.mark.parametrize("loss", LOSSES)
def test_every_leaf_is_optimal_for_its_samples(loss):
    X, y = random_intervals(120, 3, seed=1)
    model = MMIT(loss=loss, margin=0.1, max_depth=3, random_state=0).fit(X, y)
    leaves = model.apply(X)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        best, _, _ = minimum(y[rows, 0], y[rows, 1], 0.1, loss, np.ones(rows.sum()))
        assert model.tree_.cost[leaf] == pytest.approx(best, rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------
# Weights, determinism, pickling
# --------------------------------------------------------------------------

@pytest.mark.parametrize("loss", LOSSES)
def test_integer_weights_equal_duplicated_rows(loss):
    X, y = random_intervals(80, 3, seed=2)
    counts = np.random.default_rng(3).integers(1, 4, size=80)
    weighted = MMIT(loss=loss, max_depth=4, random_state=0).fit(X, y, sample_weight=counts)
    repeated = MMIT(loss=loss, max_depth=4, random_state=0).fit(
        np.repeat(X, counts, axis=0), np.repeat(y, counts, axis=0))
    t_w, t_r = weighted.tree_, repeated.tree_
    for name in ("children_left", "children_right", "feature"):
        np.testing.assert_array_equal(getattr(t_w, name), getattr(t_r, name))
    for name in ("threshold", "value", "cost"):
        np.testing.assert_allclose(getattr(t_w, name), getattr(t_r, name), rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(t_w.weighted_n_node_samples, t_r.n_node_samples)


def test_zero_weight_samples_change_nothing():
    X, y = random_intervals(100, 4, seed=4)
    weight = np.ones(100)
    weight[::5] = 0.0
    with_zeros = MMIT(max_depth=5, random_state=0).fit(X, y, sample_weight=weight)
    without = MMIT(max_depth=5, random_state=0).fit(X[weight > 0], y[weight > 0])
    assert_same_tree(with_zeros.tree_, without.tree_)


def test_same_seed_same_tree_and_identical_pickles():
    X, y = random_intervals(150, 5, seed=5)
    first = MMIT(max_features=2, random_state=7).fit(X, y)
    second = MMIT(max_features=2, random_state=7).fit(X, y)
    assert pickle.dumps(first) == pickle.dumps(second)


def test_pickle_round_trip():
    X, y = random_intervals(100, 3, seed=6)
    model = MMIT(max_depth=4, random_state=0).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    assert_same_tree(model.tree_, restored.tree_)
    np.testing.assert_array_equal(model.predict(X), restored.predict(X))


def test_tree_state_is_checked_on_unpickling():
    tree = MMIT(max_depth=2).fit(*random_intervals(30, 2)).tree_
    state = tree.__getstate__()
    state["nodes"] = np.zeros(len(state["values"]), dtype=[("left_child", np.int32)])
    with pytest.raises(ValueError, match="layout"):
        type(tree)(2).__setstate__(state)


def test_tree_arrays_are_read_only_views():
    tree = MMIT(max_depth=3).fit(*random_intervals(50, 2)).tree_
    with pytest.raises(ValueError):
        tree.value[0] = 1.0
    assert tree.children_left.base is not None


# --------------------------------------------------------------------------
# Growth parameters
# --------------------------------------------------------------------------

def test_stop_rules_are_respected():
    X, y = random_intervals(300, 4, seed=7)
    model = MMIT(min_samples_leaf=10, min_samples_split=30, random_state=0).fit(X, y)
    tree = model.tree_
    leaves = tree.children_left == -1
    assert tree.n_node_samples[leaves].min() >= 10
    assert tree.n_node_samples[~leaves].min() >= 30
    assert MMIT(max_depth=2).fit(X, y).get_depth() <= 2


def test_min_cost_decrease_removes_weak_splits():
    X, y = random_intervals(300, 4, seed=8)
    full = MMIT(random_state=0).fit(X, y).tree_
    limited = MMIT(min_cost_decrease=0.01, random_state=0).fit(X, y).tree_
    internal = np.flatnonzero(limited.children_left != -1)
    decrease = (limited.cost[internal] - limited.cost[limited.children_left[internal]]
                - limited.cost[limited.children_right[internal]])
    assert np.all(decrease / 300 >= 0.01)
    assert limited.node_count < full.node_count


def test_best_first_growth_with_max_leaf_nodes():
    X, y = random_intervals(300, 4, seed=9)
    model = MMIT(max_leaf_nodes=6, random_state=0).fit(X, y)
    assert model.get_n_leaves() == 6
    stump = MMIT(max_depth=1, random_state=0).fit(X, y)
    two_leaves = MMIT(max_leaf_nodes=2, random_state=0).fit(X, y)
    assert_same_tree(stump.tree_, two_leaves.tree_)
    # each split taken is at least as good as any split left undone
    deeper = MMIT(max_leaf_nodes=7, random_state=0).fit(X, y)
    assert leaf_cost(deeper.tree_) <= leaf_cost(model.tree_)


def test_max_features_limits_the_search_but_still_splits():
    X, y = random_intervals(200, 6, seed=10)
    model = MMIT(max_features=1, max_depth=3, random_state=0).fit(X, y)
    assert model.max_features_ == 1 and model.get_depth() == 3
    assert MMIT(max_features="sqrt").fit(X, y).max_features_ == 2
    assert MMIT(max_features=0.5).fit(X, y).max_features_ == 3
    with pytest.raises(ValueError, match="max_features"):
        MMIT(max_features=7).fit(X, y)


def test_constant_features_are_never_split_on():
    X, y = random_intervals(100, 3, seed=11)
    X[:, 1] = 2.0
    tree = MMIT(random_state=0).fit(X, y).tree_
    assert 1 not in tree.feature


def test_feature_importances():
    X, y = random_intervals(300, 4, seed=12)
    X[:, 3] = 0.0
    model = MMIT(max_depth=4, random_state=0).fit(X, y)
    importances = model.feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    assert importances[3] == 0.0 and importances[0] > importances[2]


# --------------------------------------------------------------------------
# Estimator API
# --------------------------------------------------------------------------

def test_apply_decision_path_and_predict_agree():
    X, y = random_intervals(100, 3, seed=15)
    model = MMIT(max_depth=4, random_state=0).fit(X, y)
    leaves = model.apply(X)
    path = model.decision_path(X)
    assert path.shape == (100, model.tree_.node_count)
    assert np.all(path[np.arange(100), leaves] == 1)
    assert np.all(path[:, 0].toarray() == 1)
    depth_of_leaf = np.asarray(path.sum(axis=1)).ravel() - 1
    assert depth_of_leaf.max() == model.get_depth()
    np.testing.assert_array_equal(model.predict(X), model.tree_.value[leaves])


def test_dataframe_input_records_feature_names():
    pd = pytest.importorskip("pandas")
    data = load_dataset("servo", as_frame=True)
    model = MMIT(max_depth=2, random_state=0).fit(data.data, data.target)
    np.testing.assert_array_equal(model.feature_names_in_, data.data.columns)
    assert "X10 <=" in export_text(model)
    assert isinstance(data.target, pd.DataFrame)
    with pytest.warns(UserWarning, match="feature names"):
        np.testing.assert_array_equal(model.predict(data.data.to_numpy()),
                                      model.predict(data.data))


def test_score_is_the_negative_interval_mse():
    X, y = random_intervals(100, 3, seed=16)
    model = MMIT(max_depth=2, random_state=0).fit(X, y)
    assert model.score(X, y) == -interval_mse(y, model.predict(X))


def test_alias_for_users_of_the_original_package():
    assert MaxMarginIntervalTree is MMIT


@pytest.mark.parametrize(
    "X, y, kwargs, error, message",
    [
        ([[np.inf], [1.0]], [[0, 1], [0, 1]], {}, ValueError, "infinity"),
        ([[0.0], [1.0]], [[0, np.nan], [0, 1]], {}, ValueError, "NaN"),
        ([[0.0], [1.0]], [[2, 1], [0, 1]], {}, ValueError, "lower <= upper"),
        ([[0.0], [1.0]], [[0, 1, 2], [0, 1, 2]], {}, ValueError, "shape"),
        ([[0.0], [1.0]], [[0, 1]], {}, ValueError, "rows"),
        ([0.0, 1.0], [[0, 1], [0, 1]], {}, ValueError, "2D"),
        ([[0.0], [1.0]], [[0, 1], [0, 1]], {"sample_weight": [1, -1]}, ValueError,
         "[Nn]egative"),
        ([[0.0], [1.0]], [[0, 1], [0, 1]], {"sample_weight": [0, 0]}, ValueError,
         "positive"),
        ([[0.0], [1.0]], [[0, np.inf], [0, 1]], {}, None, None),
        ([[0.0], [1.0]], [0, np.inf], {}, ValueError, "finite"),
    ],
)
def test_bad_training_input_raises_clear_errors(X, y, kwargs, error, message):
    if error is None:
        MMIT().fit(X, y, **kwargs)
        return
    with pytest.raises(error, match=message):
        MMIT().fit(X, y, **kwargs)


def test_bad_parameters_and_prediction_input():
    X, y = random_intervals(30, 3)
    with pytest.raises(ValueError, match="margin"):
        MMIT(margin=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="margin"):
        MMIT(margin=np.inf).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        MMIT(loss="hinge").fit(X, y)
    with pytest.raises(NotFittedError):
        MMIT().predict(X)
    model = MMIT().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.full((2, 3), np.inf))
