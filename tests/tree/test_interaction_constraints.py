"""Interaction constraints (scikit-learn's ``interaction_cst``) of every tree
estimator: every root-to-leaf path of every tree splits only on features
of one group; one group of every feature grows the same model as no
constraint; bad groups and linear leaves are refused."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmit import MMIT, MMITCV, MMITBoost, MMITForest, MMITForestCV
from mmit._utils._constraints import interaction_groups


def trees_of(model):
    """The fitted trees of a tree, an ensemble or a search."""
    model = getattr(model, "best_estimator_", model)
    return [tree.tree_ for tree in getattr(model, "estimators_", [model])]


def path_feature_sets(model):
    """The set of features split on along each root-to-leaf path."""
    sets = set()
    for tree in trees_of(model):
        stack = [(0, frozenset())]
        while stack:
            node, used = stack.pop()
            if tree.children_left[node] < 0:
                sets.add(used)
                continue
            used = used | {int(tree.feature[node])}
            stack += [(tree.children_left[node], used), (tree.children_right[node], used)]
    return sets


ESTIMATORS = {
    "MMIT": lambda seed, **cst: MMIT(max_depth=5, random_state=seed, **cst),
    "MMITForest": lambda seed, **cst: MMITForest(n_estimators=5, max_depth=5,
                                                 random_state=seed, **cst),
    "MMITCV": lambda seed, **cst: MMITCV(max_depth=5, cv=2, random_state=seed, **cst),
    "MMITForestCV": lambda seed, **cst: MMITForestCV({"min_samples_leaf": [1, 5]},
                                                     n_estimators=4, random_state=seed,
                                                     **cst),
    "MMITBoost": lambda seed, **cst: MMITBoost(n_estimators=15, max_depth=4,
                                               learning_rate=0.3, random_state=seed,
                                               **cst),
    "MMITBoost-hist": lambda seed, **cst: MMITBoost(n_estimators=15, max_depth=4,
                                                    learning_rate=0.3, splitter="hist",
                                                    random_state=seed, **cst),
}


def data(seed, n=300, p=5, main_effects=0.0):
    """Two products and a main effect (``main_effects``: of every feature)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random((n, p)) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, 4]
                       + main_effects * X.sum(axis=1)) + rng.normal(size=n))
    return X, np.column_stack([y - 0.3, y + 0.3])


def groups_of(interaction_cst, p):
    """The groups as scikit-learn reads them (the unlisted features: one more)."""
    if interaction_cst == "no_interactions":
        return [{j} for j in range(p)]
    if interaction_cst == "pairwise":
        groups = [{i, j} for i in range(p) for j in range(i + 1, p)]
    else:
        groups = [set(group) for group in interaction_cst]
    unlisted = set(range(p)).difference(*groups)
    return groups + ([unlisted] if unlisted else [])


INTERACTION_CSTS = st.one_of(
    st.sampled_from(["pairwise", "no_interactions"]),
    st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=3), min_size=1, max_size=3))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), interaction_cst=INTERACTION_CSTS)
@pytest.mark.parametrize("name", ESTIMATORS)
def test_every_path_stays_within_a_group(name, seed, interaction_cst):
    X, y = data(seed)
    model = ESTIMATORS[name](seed, interaction_cst=interaction_cst).fit(X, y)
    groups = groups_of(interaction_cst, X.shape[1])
    for used in path_feature_sets(model):
        assert any(used <= group for group in groups), (used, groups)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_interactions_are_used_without_constraints_and_one_group_changes_nothing(name):
    X, y = data(1, main_effects=2.0)  # a search keeps deep trees
    free = ESTIMATORS[name](0).fit(X, y)
    assert max(map(len, path_feature_sets(free))) > 2
    whole = ESTIMATORS[name](0, interaction_cst=[list(range(5))]).fit(X, y)
    np.testing.assert_array_equal(whole.predict(X), free.predict(X))
    additive = ESTIMATORS[name](0, interaction_cst="no_interactions").fit(X, y)
    assert max(map(len, path_feature_sets(additive))) == 1


def test_a_tree_is_a_function_of_the_groups_of_its_root_feature():
    X, y = data(4)
    tree = MMIT(random_state=0, interaction_cst=[[0, 1], [1, 2], [3, 4]]).fit(X, y).tree_
    root = int(tree.feature[0])
    allowed = set().union(*(group for group in ({0, 1}, {1, 2}, {3, 4}) if root in group))
    assert set(tree.feature[tree.children_left >= 0]) <= allowed


def test_bitsets_of_the_groups():
    bitsets = interaction_groups([[0, 1], [1, 2]], 4)  # feature 3: a group of its own
    assert bitsets.dtype == np.uint64 and bitsets.shape == (4, 1)
    np.testing.assert_array_equal(bitsets[:, 0], [0b001, 0b011, 0b010, 0b100])
    many = interaction_groups("pairwise", 13)  # 78 groups: two words
    assert many.shape == (13, 2)
    assert interaction_groups(None, 3) is None


@pytest.mark.parametrize("interaction_cst", [[[0, 5]], [[0, -1]], [[0.5]], [3], [["a"]],
                                             [[True]]])
@pytest.mark.parametrize("estimator", [MMIT, MMITBoost])
def test_bad_groups_are_refused(estimator, interaction_cst):
    X, y = data(2)
    with pytest.raises(ValueError, match="interaction_cst must be a list of groups"):
        estimator(interaction_cst=interaction_cst).fit(X, y)


@pytest.mark.parametrize("estimator", [MMIT, MMITForest, MMITForestCV, MMITCV, MMITBoost])
def test_a_bad_interaction_cst_type_is_refused(estimator):
    X, y = data(3)
    with pytest.raises(ValueError, match="interaction_cst"):
        estimator(interaction_cst="all").fit(X, y)


@pytest.mark.parametrize("model", [
    MMIT(max_depth=3, leaf_model="linear", interaction_cst="pairwise"),
    MMITForest(n_estimators=2, max_depth=3, leaf_model="linear", interaction_cst=[[0]]),
    MMITCV(max_depth=3, leaf_models=["constant", "linear"], interaction_cst=[[0]]),
    MMITBoost(n_estimators=2, leaf_model="linear", interaction_cst="no_interactions")])
def test_linear_leaves_are_refused(model):
    X, y = data(5)
    with pytest.raises(ValueError, match="interaction_cst needs constant leaves"):
        model.fit(X, y)
