"""Interaction constraints of the booster (scikit-learn's ``interaction_cst``):
every root-to-leaf path of every stage splits only on features of one
group; no constraint grows the same model; bad groups are refused."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmit import MMITBoost
from mmit._utils._constraints import interaction_groups


def path_feature_sets(model):
    """The set of features split on along each root-to-leaf path."""
    sets = set()
    for stage in model.estimators_:
        tree = stage.tree_
        stack = [(0, frozenset())]
        while stack:
            node, used = stack.pop()
            if tree.children_left[node] < 0:
                sets.add(used)
                continue
            used = used | {int(tree.feature[node])}
            stack += [(tree.children_left[node], used), (tree.children_right[node], used)]
    return sets


def data(seed, n=300, p=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random((n, p)) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, 4]) + rng.normal(size=n)
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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**16), st.sampled_from(["exact", "hist"]),
       st.one_of(st.sampled_from(["pairwise", "no_interactions"]),
                 st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=3),
                          min_size=1, max_size=3)))
def test_every_path_stays_within_a_group(seed, splitter, interaction_cst):
    X, y = data(seed)
    model = MMITBoost(n_estimators=15, max_depth=4, learning_rate=0.3, splitter=splitter,
                      interaction_cst=interaction_cst, random_state=seed).fit(X, y)
    groups = groups_of(interaction_cst, X.shape[1])
    for used in path_feature_sets(model):
        assert any(used <= group for group in groups), (used, groups)


@pytest.mark.parametrize("splitter", ["exact", "hist"])
def test_interactions_are_used_without_constraints_and_one_group_changes_nothing(splitter):
    X, y = data(1)
    free = MMITBoost(n_estimators=20, max_depth=4, splitter=splitter, random_state=0)
    free.fit(X, y)
    assert max(map(len, path_feature_sets(free))) > 2
    whole = MMITBoost(n_estimators=20, max_depth=4, splitter=splitter, random_state=0,
                      interaction_cst=[list(range(5))]).fit(X, y)
    np.testing.assert_array_equal(whole.predict(X), free.predict(X))
    additive = MMITBoost(n_estimators=20, max_depth=4, splitter=splitter, random_state=0,
                         interaction_cst="no_interactions").fit(X, y)
    assert max(map(len, path_feature_sets(additive))) == 1


def test_bitsets_of_the_groups():
    bitsets = interaction_groups([[0, 1], [1, 2]], 4)  # feature 3: a group of its own
    assert bitsets.dtype == np.uint64 and bitsets.shape == (4, 1)
    np.testing.assert_array_equal(bitsets[:, 0], [0b001, 0b011, 0b010, 0b100])
    many = interaction_groups("pairwise", 13)  # 78 groups: two words
    assert many.shape == (13, 2)
    assert interaction_groups(None, 3) is None


@pytest.mark.parametrize("interaction_cst", [[[0, 5]], [[0, -1]], [[0.5]], [3], [["a"]],
                                             [[True]]])
def test_bad_groups_are_refused(interaction_cst):
    X, y = data(2)
    with pytest.raises(ValueError, match="interaction_cst must be a list of groups"):
        MMITBoost(n_estimators=2, interaction_cst=interaction_cst).fit(X, y)


def test_a_bad_interaction_cst_type_is_refused():
    X, y = data(3)
    with pytest.raises(ValueError, match="interaction_cst"):
        MMITBoost(interaction_cst="all").fit(X, y)
