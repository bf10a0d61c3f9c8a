"""TreeOfPredictors: its search against brute force on small data, its path
weights, determinism, model files, explanations and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression

from mmit import (
    MMIT,
    IntervalLinearRegression,
    SurvivalRegressor,
    TreeOfPredictors,
    load_model,
    save_model,
    shap_values,
)
from mmit._loss._loss import LOSSES
from mmit.baselines import ConstantRegressor
from mmit.ensemble._predictor_tree_search import HoldoutRows
from mmit.tree._growing import draw_seed


def interval_data(seed, n=80, p=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, p))
    center = np.where(X[:, 0] > 0.5, 3.0, 0.0) + 2 * X[:, 1]
    lower = center - rng.uniform(0, 0.5, n)
    upper = center + rng.uniform(0, 0.5, n)
    upper[rng.random(n) < 0.2] = np.inf
    return X, np.column_stack([lower, upper])


def constant_library():
    return [("constant", ConstantRegressor(loss="squared_hinge"))]


def test_one_constant_predictor_at_depth_0_is_the_constant_model():
    X, y = interval_data(0)
    model = TreeOfPredictors(constant_library(), max_depth=0, random_state=0).fit(X, y)
    constant = ConstantRegressor(loss="squared_hinge").fit(X, y)
    np.testing.assert_allclose(model.predict(X), constant.predict(X))
    assert model.tree_.node_count == 1


def test_one_constant_predictor_is_constant_on_each_leaf():
    X, y = interval_data(1)
    model = TreeOfPredictors(constant_library(), max_depth=2, min_samples_leaf=10,
                             random_state=0).fit(X, y)
    leaf = model.tree_.leaves_of(lambda j: X.shape[0] if j is None else X[:, j])
    prediction = model.predict(X)
    assert model.tree_.node_count > 1
    for node in np.unique(leaf):
        assert np.ptp(prediction[leaf == node]) < 1e-12


def squared_loss(y, predictions, rows):
    return float(np.sum(LOSSES["squared_hinge"].value(y[rows, 0], y[rows, 1],
                                                      predictions[rows])))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_the_split_is_the_brute_force_best_of_held_out_loss(seed):
    """Holdout validation, a library of one constant (a single-leaf tree
    trained on a node's training rows), every threshold tried: the root's loss and its
    split's are those of a search over every split, the split kept only when
    it lowers the held-out loss."""
    X, y = interval_data(seed, n=60)
    model = TreeOfPredictors(constant_library(), max_depth=1,
                             min_samples_leaf=8, n_candidates=None, validation="holdout",
                             refit=False, random_state=seed).fit(X, y)
    roles = HoldoutRows(X.shape[0], draw_seed(np.random.RandomState(seed))).role
    every = np.arange(X.shape[0])

    def constant(rows):
        train = rows[roles[rows] == 0]
        return ConstantRegressor(loss="squared_hinge").fit(X[train], y[train]).predict(X)

    root = constant(every)
    scored = every[roles == 1]
    root_loss = squared_loss(y, root, scored)
    assert model.tree_.loss[0] == pytest.approx(root_loss, rel=1e-12, abs=1e-12)
    best = root_loss
    for feature in range(X.shape[1]):
        train = every[roles == 0]
        for threshold in np.unique(np.quantile(X[train, feature], model.thresholds,
                                               method="lower")):
            left = every[X[:, feature] <= threshold]
            right = every[X[:, feature] > threshold]
            if min(left.size, right.size) < 8 or any(
                    np.sum(roles[side] == 0) < 2 or not np.any(roles[side] == 1)
                    for side in (left, right)):
                continue
            loss = sum(min(squared_loss(y, constant(side), side[roles[side] == 1]),
                           squared_loss(y, root, side[roles[side] == 1]))
                       for side in (left, right))
            best = min(best, loss)
    if best < root_loss:
        assert model.tree_.node_count == 3
        children = model.tree_.children_left[0], model.tree_.children_right[0]
        assert model.tree_.loss[list(children)].sum() == pytest.approx(best, rel=1e-9,
                                                                       abs=1e-12)
        assert model.tree_.gain[0] > 0
    else:
        assert model.tree_.node_count == 1


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 10_000))
def test_path_weights_are_convex_and_gains_positive(seed):
    X, y = interval_data(seed)
    model = TreeOfPredictors([("tree", MMIT(max_depth=1)),
                              ("linear", IntervalLinearRegression(alpha=0.01))],
                             max_depth=2, min_samples_leaf=10, random_state=seed).fit(X, y)
    tree = model.tree_
    leaves = tree.children_left == -1
    assert np.all(tree.path_weights >= 0)
    np.testing.assert_allclose(tree.path_weights[leaves].sum(axis=1), 1.0)
    assert np.all(tree.path_weights[~leaves] == 0)
    assert np.all(tree.gain[~leaves] > 0)
    for node in range(tree.node_count):
        assert tree.trained_on[node] in tree.path(node)


def small_model(**params):
    return TreeOfPredictors([("tree", MMIT(max_depth=2, random_state=0)),
                             ("linear", IntervalLinearRegression(alpha=0.01))],
                            max_depth=2, min_samples_leaf=10, random_state=0, **params)


def test_a_nodes_mix_is_the_convex_combination_of_its_members_refitted():
    rng = np.random.default_rng(15)
    X = rng.uniform(-1, 1, size=(200, 2))
    # a step and a slope: the tree and the line err differently
    center = np.where(X[:, 0] > 0, 0.5, 0.0) + 1.5 * X[:, 1] + 0.1 * rng.normal(size=200)
    y = np.column_stack([center - 0.05, center + 0.05])
    library = [("tree", MMIT(max_depth=4, random_state=0)),
               ("linear", IntervalLinearRegression(alpha=0.0))]
    model = TreeOfPredictors(library, max_depth=0, random_state=0).fit(X, y)
    tree = model.tree_
    assert tree.algorithm[0] == -2 and np.all(tree.member_weights[0] > 0)
    np.testing.assert_allclose(tree.member_weights[0].sum(), 1.0)
    members = [estimator.fit(X, y) for _, estimator in library]
    expected = sum(w * m.predict(X) for w, m in zip(tree.member_weights[0], members,
                                                     strict=True))
    np.testing.assert_allclose(model.predict(X), expected, atol=1e-12)
    assert "mix of tree" in model.export_text()


def test_a_larger_gain_threshold_keeps_fewer_splits():
    X, y = interval_data(16, n=200)
    counts = [small_model(min_gain_se=z).fit(X, y).tree_.node_count
              for z in (0.0, 2.0, 1e6)]
    assert counts[0] >= counts[1] >= counts[2] == 1
    assert counts[0] > 1


def test_predictions_do_not_depend_on_n_jobs():
    X, y = interval_data(3, n=150)
    one = small_model(n_jobs=1).fit(X, y).predict(X)
    two = small_model(n_jobs=2).fit(X, y).predict(X)
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("validation", [5, "holdout"])
def test_model_file_round_trip(tmp_path, validation):
    X, y = interval_data(4, n=150)
    X[::7, 1] = np.nan
    model = small_model(validation=validation).fit(X, y)
    path = tmp_path / "tops.npz"
    save_model(model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.export_text() == model.export_text()
    assert loaded.get_params()["base_estimators"][0][0] == "tree"


def test_default_library_round_trip(tmp_path):
    X, y = interval_data(5, n=120)
    model = TreeOfPredictors(max_depth=1, random_state=0).fit(X, y)
    save_model(model, tmp_path / "tops.npz")
    loaded = load_model(tmp_path / "tops.npz")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.base_estimators is None


@pytest.mark.parametrize("validation", [5, "holdout"])
def test_distributions_are_the_held_out_residuals_around_the_prediction(validation):
    X, y = interval_data(11, n=160)
    model = small_model(validation=validation).fit(X, y)
    rows = model.distribution_.rows
    held = ~np.isnan(rows.out_of_bag)
    if validation == "holdout":  # the training set has no held-out prediction
        assert 0 < held.sum() < X.shape[0] * 0.3
    else:
        assert held.all()
    # the held-out predictions are the path-weighted predictions of the
    # members fitted without the rows: not the refitted tree's
    assert not np.allclose(rows.out_of_bag[held], model.predict(X)[held])
    quantiles = model.predict_quantiles(X[:30], [0.05, 0.5, 0.95])
    assert np.all(np.diff(quantiles, axis=1) >= 0)
    inside = (quantiles[:, 0] <= model.predict(X[:30])) & (
        model.predict(X[:30]) <= quantiles[:, 2])
    assert inside.mean() > 0.8
    cdf = model.predict_cdf(X[:5], [-10.0, 0.0, 10.0])
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.diff(cdf, axis=1) >= 0)


def test_distribution_none_refuses_quantiles_with_a_clear_error():
    X, y = interval_data(12, n=100)
    model = small_model(distribution=None).fit(X, y)
    with pytest.raises(ValueError, match="no predictive distributions"):
        model.predict_quantiles(X[:3])


def test_distributions_survive_the_model_file(tmp_path):
    X, y = interval_data(13, n=120)
    model = small_model().fit(X, y)
    save_model(model, tmp_path / "tops.npz")
    loaded = load_model(tmp_path / "tops.npz")
    np.testing.assert_array_equal(loaded.predict_interval(X[:10], 0.8),
                                  model.predict_interval(X[:10], 0.8))


def test_survival_regressor_takes_a_tree_of_predictors():
    rng = np.random.default_rng(14)
    X = rng.uniform(0, 1, size=(150, 3))
    time = np.exp(1.0 + 1.5 * (X[:, 0] > 0.5) + rng.normal(0, 0.3, 150))
    event = rng.random(150) < 0.7
    survival = np.array(list(zip(event, time, strict=True)),
                        dtype=[("event", bool), ("time", float)])
    model = SurvivalRegressor(small_model(), curve_times=20).fit(X, survival)
    risk = model.predict(X)
    # a longer predicted time is a lower risk: the split on x0 orders them
    assert risk[X[:, 0] > 0.5].mean() < risk[X[:, 0] <= 0.5].mean()
    curves = model.predict_survival_function(X[:4], return_array=True)
    assert curves.shape[0] == 4 and np.all(np.diff(curves, axis=1) <= 1e-12)


def assert_shap_values_add_up(model, X):
    explanation = shap_values(model, X)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X), atol=1e-9)


def test_shap_values_add_up_to_the_predictions():
    X, y = interval_data(6, n=150)
    model = small_model().fit(X, y)
    assert_shap_values_add_up(model, X[:20])


def test_shap_values_of_rows_with_nan_when_a_member_imputes_them():
    # a linear member first: the library fits it behind a MeanImputer, a
    # pipeline that refuses NaN, inside the nodes' mixes of members
    X, y = interval_data(9, n=150)
    X[::4, 1] = np.nan
    model = TreeOfPredictors([("linear", IntervalLinearRegression(alpha=0.01)),
                              ("tree", MMIT(max_depth=2, random_state=0))],
                             max_depth=1, min_samples_leaf=10, random_state=0).fit(X, y)
    assert_shap_values_add_up(model, X[:30])


def test_missing_values_follow_the_recorded_side():
    X, y = interval_data(7, n=150)
    X[::5, 0] = np.nan
    model = small_model().fit(X, y)
    assert np.all(np.isfinite(model.predict(X)))
    assert "node 0:" in model.export_text(feature_names=["a", "b"])


def test_sparse_input_predicts_as_dense():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    X, y = interval_data(8, n=120)
    X[X < 0.3] = 0.0
    dense = small_model().fit(X, y).predict(X)
    sparse = small_model().fit(scipy_sparse.csr_matrix(X), y).predict(
        scipy_sparse.csr_matrix(X))
    np.testing.assert_allclose(sparse, dense)


@pytest.mark.parametrize("params, message", [
    ({"base_estimators": []}, "at least one"),
    ({"base_estimators": [("ols", LinearRegression())]}, "does not take interval"),
    ({"thresholds": [0.0, 0.5]}, r"\(0, 1\)"),
    ({"thresholds": [0.5, 1.5]}, r"\(0, 1\)"),
    ({"min_gain_se": -1.0}, "min_gain_se"),
])
def test_bad_input_gets_a_clear_error(params, message):
    X, y = interval_data(9, n=40)
    with pytest.raises(ValueError, match=message):
        TreeOfPredictors(**params).fit(X, y)


def test_verbose_reports_every_node(capsys):
    X, y = interval_data(10, n=120)
    model = small_model(verbose=1).fit(X, y)
    reported = capsys.readouterr().err.count("[TreeOfPredictors] node")
    assert reported == model.tree_.node_count
