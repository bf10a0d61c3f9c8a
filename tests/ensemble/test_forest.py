"""MMITForest: determinism across backends, warm start, OOB, accuracy."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from joblib import parallel_config
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from mmit import MMIT, MMITForest
from mmit.datasets import load_dataset
from mmit.metrics import interval_mse


def tree_states(forest):
    return [pickle.dumps(tree.tree_.__getstate__()) for tree in forest.estimators_]


def small_problem(n=120, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    center = np.sin(2 * X[:, 0]) + X[:, 1]
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < 0.2] = -np.inf
    upper[rng.random(n) < 0.2] = np.inf
    return X, np.column_stack([lower, upper])


def test_same_forest_with_one_or_two_jobs():
    X, y = small_problem()
    one = MMITForest(n_estimators=15, random_state=3, n_jobs=1).fit(X, y)
    two = MMITForest(n_estimators=15, random_state=3, n_jobs=2).fit(X, y)
    assert tree_states(one) == tree_states(two)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    assert tree_states(one) != tree_states(MMITForest(15, random_state=4).fit(X, y))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dask_cluster_grows_the_same_forest():
    distributed = pytest.importorskip("distributed")
    X, y = small_problem()
    local = MMITForest(n_estimators=8, random_state=5).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            with parallel_config(backend="dask"):
                remote = MMITForest(n_estimators=8, random_state=5).fit(X, y)
    assert tree_states(local) == tree_states(remote)
    np.testing.assert_array_equal(local.predict(X), remote.predict(X))


def test_pickle_round_trip():
    X, y = small_problem()
    forest = MMITForest(n_estimators=30, random_state=0, oob_score=True).fit(X, y)
    restored = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(forest.predict(X), restored.predict(X))
    assert restored.oob_score_ == forest.oob_score_


def test_warm_start_adds_trees_without_changing_the_first():
    X, y = small_problem()
    forest = MMITForest(n_estimators=5, random_state=1, warm_start=True).fit(X, y)
    first = tree_states(forest)
    forest.set_params(n_estimators=12).fit(X, y)
    assert len(forest.estimators_) == 12
    assert tree_states(forest)[:5] == first
    at_once = MMITForest(n_estimators=12, random_state=1).fit(X, y)
    assert tree_states(forest) == tree_states(at_once)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        forest.fit(X, y)
    with pytest.raises(ValueError, match="n_estimators"):
        forest.set_params(n_estimators=3).fit(X, y)


def test_oob_score_matches_a_hand_computation():
    X, y = small_problem(n=40)
    forest = MMITForest(n_estimators=30, max_samples=0.7, random_state=2,
                        oob_score=True).fit(X, y)
    total, count = np.zeros(40), np.zeros(40)
    for tree in forest.estimators_:
        rows = np.random.default_rng(tree.random_state).integers(0, 40, 28)
        drawn = np.bincount(rows, minlength=40)
        for i in np.flatnonzero(drawn == 0):
            total[i] += tree.predict(X[i:i + 1])[0]
            count[i] += 1
    assert count.min() > 0
    np.testing.assert_allclose(forest.oob_prediction_, total / count)
    assert forest.oob_score_ == pytest.approx(-interval_mse(y, total / count))


def test_trees_predict_on_their_own_and_average_to_the_forest():
    data = load_dataset("servo", as_frame=True)
    forest = MMITForest(n_estimators=10, random_state=0).fit(data.data, data.target)
    predictions = [tree.predict(data.data) for tree in forest.estimators_]
    np.testing.assert_allclose(forest.predict(data.data), np.mean(predictions, axis=0))
    assert all(isinstance(tree, MMIT) for tree in forest.estimators_)
    assert forest.estimators_[0].feature_names_in_.tolist() == list(data.data.columns)
    assert forest.feature_importances_.sum() == pytest.approx(1.0)


def test_bootstrap_draws_integer_weights():
    X, y = small_problem()
    no_bootstrap = MMITForest(n_estimators=3, bootstrap=False, max_features=None,
                              random_state=0).fit(X, y)
    # without bootstrap nor feature sampling all trees see the same problem
    assert no_bootstrap.estimators_[0].tree_.n_node_samples[0] == len(X)
    bagged = MMITForest(n_estimators=3, random_state=0).fit(X, y)
    root_weights = [tree.tree_.weighted_n_node_samples[0] for tree in bagged.estimators_]
    assert root_weights == [len(X)] * 3  # bootstrap counts sum to n_samples
    assert all(tree.tree_.n_node_samples[0] < len(X) for tree in bagged.estimators_)


def test_weights_draw_the_bootstrap_like_repetitions():
    # as in scikit-learn >= 1.9: rows are drawn with probability proportional
    # to their weight and each tree weighs a row by its count
    X, y = small_problem(n=60)
    weight = np.tile([0.0, 1.0, 3.0], 20)
    forest = MMITForest(n_estimators=200, max_features=None, random_state=0,
                        oob_score=True).fit(X, y, sample_weight=weight)
    counts = np.zeros(60)
    for tree in forest.estimators_:
        root_weight = tree.tree_.weighted_n_node_samples[0]
        assert root_weight == 60  # counts, not weights times counts
        generator = np.random.default_rng(tree.random_state)
        counts += np.bincount(generator.choice(60, 60, p=weight / weight.sum()),
                              minlength=60)
    assert counts[weight == 0].sum() == 0
    # a weight-3 row is drawn three times as often as a weight-1 row
    ratio = counts[weight == 3].sum() / counts[weight == 1].sum()
    assert ratio == pytest.approx(3.0, rel=0.05)
    # zero-weight rows are always out of bag but count for nothing
    assert np.isfinite(forest.oob_prediction_[weight == 0]).all()


def test_equal_weights_grow_the_unweighted_forest():
    X, y = small_problem()
    unweighted = MMITForest(n_estimators=5, random_state=0).fit(X, y)
    doubled = MMITForest(n_estimators=5, random_state=0).fit(
        X, y, sample_weight=np.full(len(X), 2.0))
    assert tree_states(unweighted) == tree_states(doubled)
    np.testing.assert_array_equal(unweighted.predict(X), doubled.predict(X))


def test_max_samples_fraction_is_of_the_total_weight():
    X, y = small_problem(n=50)
    forest = MMITForest(n_estimators=3, max_samples=0.5, random_state=0)
    forest.fit(X, y, sample_weight=np.full(50, 2.0))
    assert [t.tree_.weighted_n_node_samples[0] for t in forest.estimators_] == [50] * 3
    forest.fit(X, y)
    assert [t.tree_.weighted_n_node_samples[0] for t in forest.estimators_] == [25] * 3


def test_trees_grown_by_folds_never_see_their_fold():
    X, _ = small_problem(n=60)
    # narrow finite intervals: no two splits cost the same, so the features'
    # order (the trees' seeds) cannot matter
    center = np.random.default_rng(1).normal(size=60) + X[:, 0]
    y = np.column_stack([center - 0.01, center + 0.01])
    folds = KFold(4, shuffle=True, random_state=0)
    forest = MMITForest(n_estimators=10, max_features=None, max_depth=3, random_state=3,
                        oob_score=True, cv=folds).fit(X, y)
    tests = [test for _, test in folds.split(X)]
    row_folds = np.empty(60, dtype=int)
    for k, test in enumerate(tests):
        row_folds[test] = k
    np.testing.assert_array_equal(forest.row_folds_, row_folds)
    total, count = np.zeros(60), np.zeros(60)
    oob_total, oob_count = np.zeros(60), np.zeros(60)
    for t, tree in enumerate(forest.estimators_):
        # tree t draws 60 rows among those outside fold t % 4, as an MMIT on
        # those counts grows it
        outside = np.flatnonzero(row_folds != t % 4)
        generator = np.random.default_rng(tree.random_state)
        counts = np.bincount(outside[generator.integers(0, len(outside), 60)],
                             minlength=60)
        assert tree.tree_.weighted_n_node_samples[0] == 60
        assert counts[tests[t % 4]].sum() == 0
        drawn = counts > 0  # (elsewhere, equal splits may route rows apart)
        alone = clone(tree).fit(X, y, sample_weight=counts.astype(float))
        np.testing.assert_allclose(alone.predict(X[drawn]), tree.predict(X[drawn]))
        total[tests[t % 4]] += tree.predict(X[tests[t % 4]])
        count[tests[t % 4]] += 1
        oob_total[counts == 0] += tree.predict(X[counts == 0])
        oob_count[counts == 0] += 1
    # fold predictions: the trees of each row's fold; out of bag: every tree
    # whose sample left the row out, its held-out fold included
    np.testing.assert_allclose(forest.cv_predictions_, total / count)
    assert sorted(set(count)) == [2, 3]  # 10 trees over 4 folds
    np.testing.assert_allclose(forest.oob_prediction_, oob_total / oob_count)
    # the forest predicts with all its trees; an ordinary fit drops the folds
    np.testing.assert_allclose(forest.predict(X), np.mean(
        [tree.predict(X) for tree in forest.estimators_], axis=0))
    forest.set_params(cv=None, oob_score=False).fit(X, y)
    assert not hasattr(forest, "row_folds_") and not hasattr(forest, "cv_predictions_")


def test_grown_by_folds_with_weights_without_bootstrap_and_distributions():
    X, y = small_problem(n=80)
    weight = np.tile([0.0, 1.0, 2.0, 1.0], 20)
    folds = [(np.setdiff1d(np.arange(80), test), test)
             for test in np.array_split(np.arange(80), 5)]
    forest = MMITForest(n_estimators=10, random_state=0, cv=folds).fit(
        X, y, sample_weight=weight)
    for t, tree in enumerate(forest.estimators_):
        generator = np.random.default_rng(tree.random_state)
        outside = np.flatnonzero(forest.row_folds_ != t % 5)
        p = weight[outside] / weight[outside].sum()
        drawn = outside[generator.choice(len(outside), 80, p=p)]
        assert forest.row_folds_[drawn].tolist().count(t % 5) == 0
        assert tree.tree_.weighted_n_node_samples[0] == 80
    quantiles = forest.predict_quantiles(X[:5], [0.1, 0.5, 0.9])
    assert np.all(np.diff(quantiles, axis=1) >= 0)
    # a sparse X grows the same forest, fold predictions and distributions
    X_sparse = X.copy()
    X_sparse[np.abs(X_sparse) < 0.5] = 0.0
    dense = MMITForest(n_estimators=10, random_state=0, cv=folds).fit(X_sparse, y, weight)
    sparse = MMITForest(n_estimators=10, random_state=0, cv=folds).fit(
        sp.csr_matrix(X_sparse), y, weight)
    np.testing.assert_array_equal(dense.cv_predictions_, sparse.cv_predictions_)
    np.testing.assert_array_equal(dense.predict_quantiles(X_sparse[:5], [0.1, 0.9]),
                                  sparse.predict_quantiles(X_sparse[:5], [0.1, 0.9]))
    # without bootstrap, tree t takes the rows outside fold t % 5 with their weights
    plain = MMITForest(n_estimators=5, bootstrap=False, max_features=None, random_state=0,
                       cv=folds).fit(X, y, sample_weight=weight)
    for t, tree in enumerate(plain.estimators_):
        assert tree.tree_.weighted_n_node_samples[0] == weight.sum() - weight[
            folds[t][1]].sum()
    assert np.all(np.isfinite(plain.cv_predictions_))


def test_bad_folds():
    X, y = small_problem(n=40)
    overlapping = [(np.arange(20, 40), np.arange(0, 25)), (np.arange(0, 20),
                                                          np.arange(20, 40))]
    with pytest.raises(ValueError, match="partition the rows"):
        MMITForest(n_estimators=4, cv=overlapping).fit(X, y)
    with pytest.raises(ValueError, match="partition the rows"):
        MMITForest(n_estimators=4, cv=[(np.arange(20, 40), np.arange(20))]).fit(X, y)
    with pytest.raises(ValueError, match="at least as many trees"):
        MMITForest(n_estimators=4, cv=5).fit(X, y)
    with pytest.raises(ValueError, match="warm_start"):
        MMITForest(n_estimators=5, cv=5, warm_start=True).fit(X, y)
    weight = np.r_[np.ones(8), np.zeros(32)]
    with pytest.raises(ValueError, match="no row of positive weight"):
        MMITForest(n_estimators=5, cv=5).fit(X, y, sample_weight=weight)


def test_progress_is_reported_on_stderr(capsys):
    X, y = small_problem()
    MMITForest(n_estimators=4, random_state=0, verbose=2).fit(X, y)
    captured = capsys.readouterr()
    assert "4/4 trees" in captured.err and "left" in captured.err
    assert captured.out == ""
    MMITForest(n_estimators=4, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("params, match", [
    ({"bootstrap": False, "oob_score": True}, "bootstrap"),
    ({"bootstrap": False, "max_samples": 0.5}, "bootstrap"),
    ({"max_samples": 10_000}, "max_samples"),
    ({"n_estimators": 0}, "n_estimators"),
])
def test_bad_parameters(params, match):
    X, y = small_problem()
    with pytest.raises(ValueError, match=match):
        MMITForest(**params).fit(X, y)


@pytest.mark.parametrize("name", ["servo", "H3K4me3_TDH_other_FPOP"])
def test_forest_beats_a_pruned_tree_on_real_data(name):
    data = load_dataset(name)
    fold_errors = {"forest": [], "tree": []}
    for fold in np.unique(data.folds):
        test = data.folds == fold
        X_train, y_train = data.data[~test], data.target[~test]
        path = MMIT(random_state=0).cost_complexity_pruning_path(X_train, y_train)
        alphas = np.unique(np.quantile(path.ccp_alphas, np.linspace(0, 1, 12)))
        tree = GridSearchCV(MMIT(random_state=0), {"ccp_alpha": alphas},
                            cv=KFold(3, shuffle=True, random_state=0)).fit(X_train, y_train)
        forest = MMITForest(n_estimators=50, random_state=0).fit(X_train, y_train)
        for key, model in (("forest", forest), ("tree", tree)):
            fold_errors[key].append(interval_mse(data.target[test],
                                                 model.predict(data.data[test])))
    assert np.mean(fold_errors["forest"]) < np.mean(fold_errors["tree"])
