"""Trees with linear leaves: the node-model solver against scipy, the
predictions against their formula, pruning, model selection, model files."""

import inspect
import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from mmit import MMIT, MMITCV, MMITBoost, MMITForest, MMITForestCV, load_model, save_model
from mmit._persistence._model_files import BASE_VERSION
from mmit.linear_model._ridge_newton import ridge_newton
from mmit.tree._growing import TREE_PARAMETER_CONSTRAINTS, grow_tree, training_data
from mmit.tree._leaf_models import (
    LEAF_MODELS,
    LEAF_PARAMETERS,
    LinearNodeModels,
    leaf_model_of,
)
from mmit.tree._tree import Tree


def linear_problem(n=200, p=3, seed=0, width=0.2, censored=0.2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, p))
    signal = 1.5 * X[:, 0] - 0.5 * X[:, 1] + np.where(X[:, 2] > 0, 1.0, -1.0)
    lower = signal - rng.exponential(width, n)
    upper = signal + rng.exponential(width, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    return X, np.column_stack([lower, upper]), signal


def ridge_objective(theta, A, offset, lower, upper, weight, shrinkage):
    prediction = offset + theta[0] + A @ theta[1:]
    below = np.maximum(lower - prediction, 0.0)
    above = np.maximum(prediction - upper, 0.0)
    return weight @ (below ** 2 + above ** 2) + shrinkage * theta @ theta


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), p=st.integers(1, 12),
       shrinkage=st.sampled_from([1e-3, 0.1, 1.0, 30.0]),
       censored=st.sampled_from([0.0, 0.3, 0.6]))
def test_node_model_solver_reaches_the_minimum(seed, n, p, shrinkage, censored):
    """Against L-BFGS-B on the same strictly convex problem (both sides of
    the rows-versus-columns Woodbury switch, censored and exact bounds,
    crossed breakpoints)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, p)) * rng.exponential(1.0, p)
    offset = rng.normal(size=n)
    lower = rng.normal(size=n) * 2
    # breakpoints a wide margin crossed (upper < lower) too: both hinges count
    upper = lower + rng.normal(0.5, 1.0, n) * (rng.random(n) < 0.7)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    weight = rng.exponential(1.0, n) + 0.01
    args = (A, offset, lower, upper, weight, shrinkage)
    b, w = ridge_newton(*args)
    reference = minimize(ridge_objective, np.zeros(p + 1), args=args, method="L-BFGS-B",
                         options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20_000})
    found = ridge_objective(np.r_[b, w], *args)
    assert found <= reference.fun + 1e-6 * max(1.0, abs(reference.fun))


def test_predictions_follow_the_stored_models():
    X, y, _ = linear_problem(seed=1)
    model = MMIT(max_depth=3, leaf_model="linear", random_state=0).fit(X, y)
    tree = model.tree_
    models = tree.node_models
    assert isinstance(models, LinearNodeModels) and np.any(models.models >= 0)
    X_test = np.random.default_rng(2).uniform(-2, 2, size=(300, 3))
    X_test[::4, 1] = np.nan
    leaves = tree.apply(X_test)
    offsets = np.nan_to_num(X_test - models.center)  # a missing value at the center
    expected = tree.value[leaves].copy()
    linear = models.models[leaves] >= 0
    expected[linear] += np.einsum("ij,ij->i", models.slopes[models.models[leaves[linear]]],
                                  offsets[linear])
    np.testing.assert_allclose(model.predict(X_test), expected, rtol=0, atol=1e-12)


def test_linear_leaves_follow_a_linear_signal():
    X, y, signal = linear_problem(n=600, seed=3, censored=0.0)
    constant = MMIT(max_depth=2, loss="squared_hinge", random_state=0).fit(X, y)
    weak, default = (MMIT(max_depth=2, loss="squared_hinge", leaf_model="linear",
                          random_state=0, **params).fit(X, y)
                     for params in ({"leaf_shrinkage": 1.0}, {}))
    error = {name: np.mean((model.predict(X) - signal) ** 2) for name, model in
             [("constant", constant), ("weak", weak), ("default", default)]}
    assert error["weak"] < 0.05 * error["constant"]
    # a stronger pull toward the constants: further from the line, still far
    # below the constants
    assert error["weak"] < error["default"] < 0.1 * error["constant"]
    linear = default
    # same splits, other leaves
    np.testing.assert_array_equal(linear.tree_.feature, constant.tree_.feature)
    np.testing.assert_array_equal(linear.tree_.threshold, constant.tree_.threshold)


def test_strong_shrinkage_keeps_the_constants():
    X, y, _ = linear_problem(seed=4)
    constant = MMIT(max_depth=3, loss="squared_hinge", random_state=0).fit(X, y)
    shrunk = MMIT(max_depth=3, loss="squared_hinge", leaf_model="linear",
                  leaf_shrinkage=1e12, random_state=0).fit(X, y)
    np.testing.assert_allclose(shrunk.predict(X), constant.predict(X), atol=1e-8)


def test_integer_weights_equal_repeated_rows():
    X, y, _ = linear_problem(seed=5)
    X[::9, 0] = np.nan
    weight = np.random.default_rng(5).integers(0, 4, len(X)).astype(float)
    rows = np.repeat(np.arange(len(X)), weight.astype(int))
    for params in [{"max_depth": 3}, {"ccp_alpha": 0.002}]:
        weighted = MMIT(leaf_model="linear", random_state=0, **params).fit(X, y, weight)
        repeated = MMIT(leaf_model="linear", random_state=0, **params).fit(X[rows], y[rows])
        np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-10)


def test_pruning_uses_the_linear_costs():
    X, y, _ = linear_problem(seed=6)
    model = MMIT(leaf_model="linear", random_state=0)
    path = model.cost_complexity_pruning_path(X, y)
    assert np.all(np.diff(path.ccp_alphas) >= 0) and np.all(np.diff(path.costs) >= -1e-12)
    assert path.ccp_alphas[0] == 0.0  # the full tree: refused by fit (its own test)
    for alpha, cost in zip(path.ccp_alphas[1:], path.costs[1:], strict=True):
        pruned = MMIT(leaf_model="linear", ccp_alpha=alpha, random_state=0).fit(X, y)
        tree = pruned.tree_
        leaves = tree.children_left == -1
        assert tree.cost[leaves].sum() / tree.weighted_n_node_samples[0] == \
            pytest.approx(cost, rel=1e-9, abs=1e-12)
        # each leaf's cost is its own model's loss on its rows
        leaf_of_row = pruned.apply(X)
        prediction = pruned.predict(X)
        outside = np.maximum(y[:, 0] - prediction, 0) + np.maximum(prediction - y[:, 1], 0)
        np.testing.assert_allclose(np.bincount(leaf_of_row, outside,
                                               minlength=tree.node_count)[leaves],
                                   tree.cost[leaves], rtol=1e-9, atol=1e-12)


def test_cv_scores_equal_grid_search_with_refits():
    X, y, _ = linear_problem(n=150, seed=7)
    cv = KFold(3, shuffle=True, random_state=0)
    search = MMITCV(margins=[0.0, 0.1], leaf_models=["constant", "linear"],
                    leaf_shrinkages=[0.1, 10.0], cv=cv, random_state=0).fit(X, y)
    results = search.cv_results_
    assert set(results["param_leaf_model"]) == {"constant", "linear"}
    grids = [{name: [param[name]] for name in ("margin", "leaf_model", "leaf_shrinkage")}
             | {"ccp_alpha": [param["ccp_alpha"]]} for param in results["params"]]
    grid = GridSearchCV(MMIT(random_state=0), grids, cv=cv).fit(X, y)
    np.testing.assert_allclose(results["mean_test_score"],
                               grid.cv_results_["mean_test_score"], rtol=1e-9)
    refit = MMIT(random_state=0, **search.best_params_).fit(X, y)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))


@pytest.mark.parametrize("make", [
    lambda: MMIT(max_depth=3, leaf_model="linear", random_state=0),
    lambda: MMIT(ccp_alpha=0.003, leaf_model="linear", random_state=0),
    lambda: MMITForest(5, min_samples_leaf=10, leaf_model="linear", random_state=0),
    lambda: MMITBoost(n_estimators=5, leaf_model="linear", random_state=0),
])
def test_model_files_keep_the_linear_models(tmp_path, make):
    X, y, _ = linear_problem(seed=8)
    model = make().fit(X, y)
    path = tmp_path / "model.npz"
    save_model(model, path)
    with np.load(path) as archive:
        assert json.loads(bytes(archive["metadata"]).decode())["version"] == BASE_VERSION
        assert "tree0_node_models_slopes" in archive.files
    X_test = X.copy()
    X_test[::5, 2] = np.nan
    np.testing.assert_array_equal(load_model(path).predict(X_test), model.predict(X_test))


def test_damaged_linear_models_are_refused():
    X, y, _ = linear_problem(seed=9)
    state = MMIT(max_depth=2, leaf_model="linear").fit(X, y).tree_.__getstate__()
    models = state["node_models"]
    for damage, message in [
        (dict(models=np.full(len(models["models"]), 99)), "invalid linear models"),
        (dict(slopes=models["slopes"][:, :2]), "wrong shape"),
        (dict(center=np.full(3, np.inf)), "invalid linear models"),
        (dict(kind="quadratic"), "unknown kind"),
    ]:
        with pytest.raises(ValueError, match=message):
            Tree(3).__setstate__({**state, "node_models": {**models, **damage}})
        # the flat layout of earlier pickles is checked alike
        flat = {**{key: value for key, value in state.items() if key != "node_models"},
                **{key: value for key, value in {**models, **damage}.items()
                   if key != "kind"}}
        if "kind" not in damage:
            with pytest.raises(ValueError, match=message):
                Tree(3).__setstate__(flat)


def test_pickles_of_trees_with_flat_linear_models_load():
    """Before model format 6 a tree's state held its linear models' arrays
    beside its nodes; they now nest under "node_models"."""
    X, y, _ = linear_problem(seed=10)
    tree = MMIT(max_depth=2, leaf_model="linear").fit(X, y).tree_
    state = tree.__getstate__()
    assert set(state["node_models"]) == {"kind", "models", "slopes", "center"}
    flat = {key: value for key, value in state.items() if key != "node_models"}
    flat.update({key: value for key, value in state["node_models"].items()
                 if key != "kind"})
    restored = Tree(3)
    restored.__setstate__(flat)
    np.testing.assert_array_equal(restored.predict(X), tree.predict(X))
    assert pickle.dumps(restored.__getstate__()) == pickle.dumps(state)


def test_invalid_leaf_parameters_are_refused():
    X, y, _ = linear_problem(n=30)
    with pytest.raises(ValueError, match="leaf_model"):
        MMIT(leaf_model="quadratic").fit(X, y)
    with pytest.raises(ValueError, match="leaf_shrinkage"):
        MMIT(leaf_model="linear", leaf_shrinkage=0.0).fit(X, y)
    with pytest.raises(ValueError, match="leaf_shrinkages"):
        MMITCV(leaf_models=["linear"], leaf_shrinkages=[-1.0], cv=2).fit(X, y)
    with pytest.raises(ValueError, match="leaf_models"):
        MMITCV(leaf_models=["cubic"], cv=2).fit(X, y)


@pytest.mark.parametrize("estimator", [MMIT, MMITForest, MMITBoost])
def test_tree_estimators_take_every_declared_leaf_parameter(estimator):
    """The leaf models declare their parameters; every tree estimator takes
    each with its declared default and constraint."""
    signature = inspect.signature(estimator).parameters
    assert LEAF_PARAMETERS  # the linear leaves' shrinkage at least
    assert estimator._parameter_constraints["leaf_model"] is \
        TREE_PARAMETER_CONSTRAINTS["leaf_model"]
    for name, parameter in LEAF_PARAMETERS.items():
        assert signature[name].default == parameter.default
        assert estimator._parameter_constraints[name] is parameter.constraint
        assert getattr(estimator(), name) == parameter.default


def test_the_cross_validation_grids_are_the_declared_ones():
    signature = inspect.signature(MMITCV).parameters
    for parameter in LEAF_PARAMETERS.values():
        assert signature[parameter.grid_name].default == parameter.grid_default
        assert parameter.grid_name in MMITCV._parameter_constraints
        # every default grid value is a valid parameter value
        assert parameter.grid_values(parameter.grid_default) == list(
            parameter.grid_default)
    defaults = {name: parameter.default for name, parameter in LEAF_PARAMETERS.items()}
    grids = {"leaf_shrinkages": [3, 0.5]}
    assert LEAF_MODELS["constant"].candidates(grids) == [
        {"leaf_model": "constant", **defaults}]
    linear = LEAF_MODELS["linear"].candidates(grids)
    assert linear == [{"leaf_model": "linear", "leaf_shrinkage": 3.0},
                      {"leaf_model": "linear", "leaf_shrinkage": 0.5}]
    assert all(type(candidate["leaf_shrinkage"]) is float for candidate in linear)
    assert leaf_model_of(linear[1]).shrinkage == 0.5


@pytest.mark.parametrize("shrinkages", [[], [-1.0], [0.0, 1.0], [np.inf], [np.nan],
                                        ["strong"]])
def test_invalid_grid_values_are_refused(shrinkages):
    X, y, _ = linear_problem(n=30)
    with pytest.raises(ValueError, match="leaf_shrinkages must be a non-empty list of "
                                         "leaf_shrinkage values"):
        MMITCV(leaf_models=["linear"], leaf_shrinkages=shrinkages, cv=2).fit(X, y)


def test_row_values_only_where_the_leaves_predict_their_values():
    """A booster's rows take their predictions from the build only when the
    tree predicts its leaves' values: constant leaves, nothing pruned."""
    X, y, _ = linear_problem(n=50)
    data = training_data(np.asfortranarray(X), np.ascontiguousarray(y[:, 0]),
                         np.ascontiguousarray(y[:, 1]), 0.0, None)
    params = MMIT(max_depth=2).get_params()
    row_values = np.empty(50)
    tree = grow_tree(params, data, np.ones(50), 1, row_values=row_values)
    np.testing.assert_array_equal(row_values, tree.predict(X))
    for changes in ({"leaf_model": "linear"}, {"ccp_alpha": 0.01}):
        with pytest.raises(ValueError, match="row_values are the predictions only"):
            grow_tree({**params, **changes}, data, np.ones(50), 1, row_values=row_values)


@pytest.mark.parametrize("model", [
    MMIT(leaf_model="linear"),
    MMIT(leaf_model="linear", min_samples_leaf=0.001),  # one row of the 60
    MMITForest(5, leaf_model="linear"),
    MMITBoost(n_estimators=5, max_depth=None, leaf_model="linear"),
])
def test_linear_leaves_on_fully_grown_trees_are_refused(model):
    """Grown until every leaf fits its rows, a tree's linear leaves would be
    its constants: the combination is refused, not silently constant."""
    X, y, _ = linear_problem(n=60)
    with pytest.raises(ValueError, match="needs trees whose growth is limited"):
        model.fit(X, y)
    if not isinstance(model, MMITBoost):  # (its margin leaves some leaf costs)
        # the same trees of constants: every leaf fits its rows, so a linear
        # model of a leaf (loss plus ridge) would be its constant exactly
        constant = clone(model).set_params(leaf_model="constant").fit(X, y)
        trees = [constant.tree_] if isinstance(constant, MMIT) else [
            tree.tree_ for tree in constant.estimators_]
        assert all(np.all(tree.cost[tree.children_left == -1] == 0.0) for tree in trees)
    # any limit on growth makes linear leaves differ from constant ones
    limited = clone(model).set_params(leaf_model="linear", min_samples_leaf=10).fit(X, y)
    assert not np.allclose(limited.predict(X), clone(limited).set_params(
        leaf_model="constant").fit(X, y).predict(X))


def test_forest_search_refuses_fully_grown_linear_leaves_before_fitting():
    X, y, _ = linear_problem(n=60)
    with pytest.raises(ValueError, match="needs trees whose growth is limited"):
        MMITForestCV({"leaf_model": ["constant", "linear"]}, n_estimators=5).fit(X, y)


def test_model_files_of_version_2_load(tmp_path):
    """Files written before linear leaves (format version 2: no model arrays)."""
    X, y, _ = linear_problem(seed=11)
    model = MMIT(max_depth=4, random_state=0).fit(X, y)
    path = tmp_path / "model.npz"
    save_model(model, path)
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    assert not any(key.endswith(("_models", "_slopes", "_center")) for key in arrays)
    metadata = json.loads(bytes(arrays["metadata"]).decode())
    metadata["version"] = 2
    del metadata["params"]["leaf_model"], metadata["params"]["leaf_shrinkage"]
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez_compressed(path, **arrays)
    loaded = load_model(path)
    assert loaded.leaf_model == "constant"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_ensembles_grow_linear_leaves():
    X, y, signal = linear_problem(n=300, seed=12, censored=0.0)
    forest = MMITForest(10, min_samples_leaf=20, leaf_model="linear", random_state=0)
    boost = MMITBoost(n_estimators=20, leaf_model="linear", random_state=0)
    for model in (forest.fit(X, y), boost.fit(X, y)):
        assert all(isinstance(tree.tree_.node_models, LinearNodeModels)
                   for tree in model.estimators_)
        constant = model.__class__(**{**model.get_params(), "leaf_model": "constant"})
        error = {name: np.mean((fitted.predict(X) - signal) ** 2)
                 for name, fitted in [("linear", model), ("constant", constant.fit(X, y))]}
        assert error["linear"] < error["constant"]
    search = MMITForestCV({"leaf_model": ["constant", "linear"], "min_samples_leaf": [20]},
                          n_estimators=10, random_state=0).fit(X, y)
    assert search.best_params_["leaf_model"] == "linear"
