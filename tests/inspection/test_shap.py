"""SHAP values (mmit.inspection._shap, the trees' mmit.tree._treeshap): equal
to a brute-force Shapley oracle over all feature subsets with the path-dependent value
function on small trees (missing values, linear leaves and interaction
values included), additive for every estimator, equal to shap's
TreeExplainer on the same trees, independent of the threads."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeRegressor

from mmit import MeanImputer, load_model, save_model
from mmit.ensemble import IntervalStackingRegressor, MMITBoost, MMITForest, MMITForestCV
from mmit.inspection import shap_values
from mmit.inspection._shap import shap_tree_dictionary
from mmit.linear_model import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit.tree import MMIT, MMITCV


def goes_left(tree, node, x):
    """The tree's routing of ``x`` at ``node``, from its public arrays."""
    value = x[tree.feature[node]]
    if np.isnan(value):
        return bool(tree.missing_go_to_left[node])
    return value <= tree.threshold[node]


def leaf_value(tree, x, known, node):
    """A leaf's value: its constant, and a linear leaf's terms of the known
    features (a missing one at the center, as the leaf predicts it)."""
    value = tree.value[node]
    models = tree.node_models
    if models is not None and models.models[node] >= 0:
        slopes = models.slopes[models.models[node]]
        for j in known:
            if not np.isnan(x[j]):
                value += slopes[j] * (x[j] - models.center[j])
    return value


def path_value(tree, x, known, node=0):
    """E[f(x) | x_known] under the path-dependent rule: known features follow
    x, the others split the weight by the children's covers."""
    left, right = tree.children_left[node], tree.children_right[node]
    if left < 0:
        return leaf_value(tree, x, known, node)
    if tree.feature[node] in known:
        return path_value(tree, x, known, left if goes_left(tree, node, x) else right)
    cover = tree.weighted_n_node_samples
    return (cover[left] * path_value(tree, x, known, left)
            + cover[right] * path_value(tree, x, known, right)) / cover[node]


def brute_force(tree, x):
    """Shapley values: every feature's weighted marginal contributions to
    every subset of the others."""
    p = x.shape[0]
    phi = np.zeros(p)
    for j in range(p):
        others = [k for k in range(p) if k != j]
        for size in range(p):
            weight = math.factorial(size) * math.factorial(p - size - 1) / math.factorial(p)
            for subset in itertools.combinations(others, size):
                phi[j] += weight * (path_value(tree, x, set(subset) | {j})
                                    - path_value(tree, x, set(subset)))
    return phi


def brute_force_interactions(tree, x):
    """Shapley interaction values: off the diagonal, half the weighted joint
    effects of each pair on every subset of the others; on it, each
    feature's Shapley value minus its interactions."""
    p = x.shape[0]
    phi = np.zeros((p, p))
    for j, k in itertools.permutations(range(p), 2):
        others = [m for m in range(p) if m not in (j, k)]
        for size in range(p - 1):
            weight = (math.factorial(size) * math.factorial(p - size - 2)
                      / (2 * math.factorial(p - 1)))
            for subset in map(set, itertools.combinations(others, size)):
                phi[j, k] += weight * (path_value(tree, x, subset | {j, k})
                                       - path_value(tree, x, subset | {j})
                                       - path_value(tree, x, subset | {k})
                                       + path_value(tree, x, subset))
    np.fill_diagonal(phi, brute_force(tree, x) - phi.sum(axis=1))
    return phi


# the draws of small_tree's trees but their number of features
SMALL_TREES = {"seed": st.integers(0, 10_000), "max_depth": st.integers(1, 4),
               "missing": st.sampled_from([0.0, 0.2]),
               "leaf_model": st.sampled_from(["constant", "linear"])}


def small_tree(seed, n_features, max_depth, missing, leaf_model):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, n_features))
    y = X[:, 0] + (X[:, -1] > 0) + 0.3 * rng.normal(size=120)
    X[rng.random(X.shape) < missing] = np.nan
    model = MMIT(max_depth=max_depth, loss="squared_hinge", leaf_model=leaf_model,
                 random_state=seed).fit(X, y)
    return model, X


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_features=st.integers(1, 6), **SMALL_TREES)
def test_tree_values_equal_the_brute_force_shapley_values(seed, n_features, max_depth,
                                                          missing, leaf_model):
    model, X = small_tree(seed, n_features, max_depth, missing, leaf_model)
    explanation = shap_values(model, X[:8])
    for i in range(8):
        np.testing.assert_allclose(explanation.values[i], brute_force(model.tree_, X[i]),
                                   atol=1e-10)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X[:8]), atol=1e-10)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_features=st.integers(2, 4), **SMALL_TREES)
def test_interaction_values_equal_the_brute_force_ones(seed, n_features, max_depth,
                                                       missing, leaf_model):
    model, X = small_tree(seed, n_features, max_depth, missing, leaf_model)
    explanation = shap_values(model, X[:5], interactions=True)
    assert explanation.values.shape == (5, n_features, n_features)
    for i in range(5):
        np.testing.assert_allclose(explanation.values[i],
                                   brute_force_interactions(model.tree_, X[i]), atol=1e-10)
    np.testing.assert_allclose(explanation.contributions,
                               shap_values(model, X[:5]).values, atol=1e-10)


@pytest.mark.parametrize("model", [
    MMITForest(20, random_state=0),
    MMITBoost(n_estimators=25, random_state=0),
    MMITBoost(n_estimators=25, splitter="hist", random_state=0),
], ids=["forest", "boost", "boost hist"])
def test_ensembles_are_additive_with_missing_values(model):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=300)
    X[rng.random(X.shape) < 0.1] = np.nan
    model.fit(X, y)
    explanation = shap_values(model, X[:50])
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X[:50]), atol=1e-9)
    assert explanation.importances.shape == (5,)
    # threads do not change the values
    np.testing.assert_array_equal(shap_values(model, X[:50], n_jobs=2).values,
                                  explanation.values)


def additive(model, X, atol=1e-9):
    """The values and base values add up to the predictions, and the
    interaction values' rows to the values."""
    explanation = shap_values(model, X)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X), atol=atol)
    pairs = shap_values(model, X, interactions=True)
    np.testing.assert_allclose(pairs.values.sum(axis=2), explanation.values, atol=atol)
    np.testing.assert_allclose(pairs.values, pairs.values.transpose(0, 2, 1), atol=atol)
    return explanation


def nonlinear_data(seed, n=300, p=5, missing=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=n)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


@pytest.mark.parametrize("model", [
    MMITForest(20, random_state=0),
    MMITForest(10, leaf_model="linear", max_depth=3, random_state=0),
    MMITBoost(n_estimators=25, random_state=0),
    MMITBoost(n_estimators=25, splitter="hist", random_state=0),
    MMITCV(max_depth=3, cv=3),
    MMITForestCV(n_estimators=10, random_state=0),
    IntervalStackingRegressor(random_state=0),
], ids=["forest", "forest linear leaves", "boost", "boost hist", "MMITCV", "MMITForestCV",
        "stack"])
def test_every_tree_model_is_additive_with_missing_values(model):
    X, y = nonlinear_data(1)
    model.fit(X, y)
    explanation = additive(model, X[:30])
    assert explanation.importances.shape == (5,)
    assert explanation.data.shape == (30, 5)
    # threads do not change the values
    for interactions in (False, True):
        np.testing.assert_array_equal(
            shap_values(model, X[:30], interactions=interactions, n_jobs=2).values,
            shap_values(model, X[:30], interactions=interactions).values)


def test_a_search_is_explained_by_its_chosen_model():
    X, y = nonlinear_data(2)
    search = MMITCV(max_depth=3, cv=3).fit(X, y)
    np.testing.assert_array_equal(shap_values(search, X[:20]).values,
                                  shap_values(search.best_estimator_, X[:20]).values)


@pytest.mark.parametrize("clip_features", [True, False])
def test_linear_values_are_the_coefficients_times_the_offsets_from_the_mean(
        clip_features):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = X @ [1.0, -2.0, 0.0, 0.5] + 0.1 * rng.normal(size=200)
    weight = rng.integers(0, 3, 200).astype(float)
    for model in (IntervalLinearRegression(alpha=1e-3, clip_features=clip_features),
                  IntervalLinearRegressionCV(clip_features=clip_features)):
        model.fit(X, y, sample_weight=weight)
        X_test = np.vstack([X[:10], 5 * X[10:15]])  # beyond the training range
        explanation = additive(model, X_test, atol=1e-10)
        columns = np.clip(X_test, X[weight > 0].min(0), X[weight > 0].max(0)) \
            if clip_features else X_test
        expected = model.coef_ * (columns - np.average(X, axis=0, weights=weight))
        np.testing.assert_allclose(explanation.values, expected, atol=1e-12)
        interactions = shap_values(model, X_test, interactions=True).values
        np.testing.assert_allclose(interactions, expected[:, :, None] * np.eye(4),
                                   atol=1e-12)  # an additive model: the diagonal


def test_a_linear_model_behind_an_imputer_sums_a_feature_s_columns():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 3))
    y = X @ [1.0, -1.0, 2.0] + 0.1 * rng.normal(size=300)
    X[rng.random(300) < 0.3, 1] = np.nan
    pipeline = make_pipeline(MeanImputer(), IntervalLinearRegression(alpha=1e-3)).fit(X, y)
    explanation = additive(pipeline, X[:40], atol=1e-10)
    model = pipeline[-1]
    Z = pipeline[0].transform(X[:40])
    terms = model.coef_ * (np.clip(Z, model.data_min_, model.data_max_) - model.data_mean_)
    np.testing.assert_allclose(explanation.values,
                               terms[:, :3] + np.pad(terms[:, 3:], ((0, 0), (1, 1))),
                               atol=1e-12)
    np.testing.assert_array_equal(np.isnan(explanation.data), np.isnan(X[:40]))


def test_a_categorical_feature_gets_its_one_hot_columns():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)
    colour = rng.choice(["red", "green", "blue"], 300)
    frame = pd.DataFrame({"colour": pd.Categorical(colour), "x": rng.normal(size=300)})
    y = (colour == "red") * 2.0 + frame["x"].to_numpy() + 0.1 * rng.normal(size=300)
    frame.loc[::17, "x"] = np.nan
    stack = IntervalStackingRegressor(random_state=0).fit(frame, y)
    explanation = additive(stack, frame.iloc[:30])
    assert explanation.feature_names == ["colour", "x"]
    linear = stack.named_estimators_["linear"]
    alone = shap_values(linear, frame.iloc[:30])
    model = linear[-1]
    assert list(model.coef_names_[:3]) == ["colour_blue", "colour_green", "colour_red"]
    onehot = (explanation.data[:, [0]] == np.arange(3)).astype(float)
    np.testing.assert_allclose(alone.values[:, 0],
                               (model.coef_[:3] * (onehot - model.data_mean_[:3])).sum(1),
                               atol=1e-12)
    # the stack's values: its members' weighted by the stack's weights
    members = sum(weight * shap_values(member, frame.iloc[:30]).values
                  for weight, member in zip(stack.weights_, stack.estimators_, strict=True))
    np.testing.assert_allclose(explanation.values, members, atol=1e-12)


def test_saved_models_explain_the_same(tmp_path):
    X, y = nonlinear_data(8, missing=0.0)
    for model in (IntervalStackingRegressor(random_state=0).fit(X, y),
                  IntervalLinearRegression().fit(X, y)):
        save_model(model, tmp_path / "model.npz")
        np.testing.assert_array_equal(
            shap_values(load_model(tmp_path / "model.npz"), X[:10]).values,
            shap_values(model, X[:10]).values)
    model.data_mean_ = None  # as loaded from a file of an older mmit
    with pytest.raises(ValueError, match="no training means.*fit it again"):
        shap_values(model, X[:10])


def test_bad_input():
    X = np.random.default_rng(2).normal(size=(50, 3))
    with pytest.raises(Exception, match="not fitted"):
        shap_values(MMIT(), X)
    with pytest.raises(Exception, match="not fitted"):
        shap_values(IntervalStackingRegressor(), X)
    model = MMIT(max_depth=2).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="3 features"):
        shap_values(model, X[:, :2])
    with pytest.raises(ValueError, match="3 features"):
        shap_values(IntervalLinearRegression().fit(X, X[:, 0]), X[:, :2])
    with pytest.raises(TypeError,
                       match="explains mmit's models.*not DecisionTreeRegressor"):
        shap_values(DecisionTreeRegressor().fit(X, X[:, 0]), X)
    with pytest.raises(TypeError, match="explains mmit's models.*not Pipeline"):
        shap_values(make_pipeline(MeanImputer(), MMIT(max_depth=2)).fit(X, X[:, 0]), X)
    with pytest.raises(TypeError, match="interactions must be True or False"):
        shap_values(model, X, interactions="yes")
    with pytest.raises(ValueError, match="NaN"):
        shap_values(IntervalLinearRegression().fit(X, X[:, 0]),
                    np.where(X > 1, np.nan, X))


def test_categorical_splits_are_additive():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 8, 400).astype(float)
    X = np.column_stack([codes, rng.normal(size=400)])
    y = np.isin(codes, [1, 4, 6]) * 2.0 + X[:, 1] + 0.2 * rng.normal(size=400)
    model = MMIT(max_depth=4, categorical_features=[0], random_state=0).fit(X, y)
    assert model.tree_.is_categorical.any()
    X_test = np.vstack([X[:20], [[9.0, 0.1], [np.nan, -0.2], [2.5, 0.0]]])  # unseen codes
    additive(model, X_test, atol=1e-10)
    with pytest.raises(ValueError, match="numeric splits"):
        shap_tree_dictionary(model)


@pytest.mark.parametrize("model", [MMITForest(10, random_state=0),
                                   MMITBoost(n_estimators=20, random_state=0)],
                         ids=["forest", "boost"])
def test_equal_to_shap_s_tree_explainer_on_the_same_trees(model):
    shap = pytest.importorskip("shap")
    X, y = nonlinear_data(4, n=400, p=6)
    model.fit(X, y)
    explainer = shap.TreeExplainer(shap_tree_dictionary(model))
    explanation = shap_values(model, X[:40])
    np.testing.assert_allclose(explanation.values,
                               explainer.shap_values(X[:40], check_additivity=False),
                               atol=1e-10)
    expected = np.ravel(explainer.expected_value)[0]
    np.testing.assert_allclose(explanation.base_values, expected, atol=1e-10)
    np.testing.assert_allclose(shap_values(model, X[:10], interactions=True).values,
                               explainer.shap_interaction_values(X[:10]), atol=1e-10)
    as_shap = explanation.to_shap()
    assert isinstance(as_shap, shap.Explanation)
    np.testing.assert_array_equal(as_shap.values, explanation.values)
