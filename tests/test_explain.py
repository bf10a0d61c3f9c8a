"""SHAP values (mmit._explain, mmit._treeshap): equal to a brute-force
Shapley oracle over all feature subsets with the path-dependent value
function on small trees (missing values, linear leaves and interaction
values included), additive for every estimator, equal to shap's
TreeExplainer on the same trees, independent of the threads."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmit import MMIT, MMITBoost, MMITForest
from mmit._explain import shap_values


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


def small_tree(seed, n_features, max_depth, missing, leaf_model):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, n_features))
    y = X[:, 0] + (X[:, -1] > 0) + 0.3 * rng.normal(size=120)
    X[rng.random(X.shape) < missing] = np.nan
    model = MMIT(max_depth=max_depth, loss="squared_hinge", leaf_model=leaf_model,
                 random_state=seed).fit(X, y)
    return model, X


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_features=st.integers(1, 6),
       max_depth=st.integers(1, 4), missing=st.sampled_from([0.0, 0.2]),
       leaf_model=st.sampled_from(["constant", "linear"]))
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
@given(seed=st.integers(0, 10_000), n_features=st.integers(2, 4),
       max_depth=st.integers(1, 4), missing=st.sampled_from([0.0, 0.2]),
       leaf_model=st.sampled_from(["constant", "linear"]))
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


def test_bad_input():
    X = np.random.default_rng(2).normal(size=(50, 3))
    with pytest.raises(Exception, match="not fitted"):
        shap_values(MMIT(), X)
    model = MMIT(max_depth=2).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="3 features"):
        shap_values(model, X[:, :2])
    with pytest.raises(TypeError, match="explains"):
        shap_values(object(), X)


def test_categorical_splits_are_additive():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 8, 400).astype(float)
    X = np.column_stack([codes, rng.normal(size=400)])
    y = np.isin(codes, [1, 4, 6]) * 2.0 + X[:, 1] + 0.2 * rng.normal(size=400)
    model = MMIT(max_depth=4, categorical_features=[0], random_state=0).fit(X, y)
    assert model.tree_.is_categorical.any()
    X_test = np.vstack([X[:20], [[9.0, 0.1], [np.nan, -0.2], [2.5, 0.0]]])  # unseen codes
    explanation = shap_values(model, X_test)
    np.testing.assert_allclose(explanation.values.sum(axis=1) + explanation.base_values,
                               model.predict(X_test), atol=1e-10)


def shap_dictionary(model):
    """A forest's trees in shap's TreeExplainer dictionary format."""
    trees = []
    for estimator in model.estimators_:
        tree = estimator.tree_
        left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
        trees.append({
            "children_left": left, "children_right": right,
            "children_default": np.where(np.asarray(tree.missing_go_to_left, bool), left,
                                         right),
            "features": np.where(left < 0, -2, np.asarray(tree.feature)),
            "thresholds": np.asarray(tree.threshold),
            "values": np.asarray(tree.value)[:, np.newaxis] / len(model.estimators_),
            "node_sample_weight": np.asarray(tree.weighted_n_node_samples)})
    return {"trees": trees}


def test_equal_to_shap_s_tree_explainer_on_the_same_trees():
    shap = pytest.importorskip("shap")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 6))
    y = X[:, 0] * X[:, 1] + np.abs(X[:, 2]) + 0.2 * rng.normal(size=400)
    X[rng.random(X.shape) < 0.1] = np.nan
    forest = MMITForest(10, random_state=0).fit(X, y)
    theirs = shap.TreeExplainer(shap_dictionary(forest)).shap_values(
        X[:40], check_additivity=False)
    np.testing.assert_allclose(shap_values(forest, X[:40]).values, theirs, atol=1e-10)
