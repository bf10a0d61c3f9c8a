"""Categorical splits in the core: the exact splitter against an exhaustive
search over partitions and against the best split of the codes as numbers,
the histogram splitter's sets, routing of missing, absent and unseen
categories, weights, and the trees' storage of the sets."""

import itertools
import pickle

import numpy as np
import pytest
from brute_force import minimum
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import grid_intervals

from mmit import MMIT
from mmit.tree._binning import bin_features
from mmit.tree._criterion import HingeTargets
from mmit.tree._features import Features
from mmit.tree._growing import TrainingData, grow_tree, training_data, tree_builder
from mmit.tree._pruning import prune_at
from mmit.tree._tree import Tree

LOSSES = ["linear_hinge", "squared_hinge"]


def stump(X, lower, upper, n_categories, *, loss="squared_hinge", margin=0.0,
          weight=None, **params):
    """The exact splitter's tree of depth 1 (or as ``params`` say), the best
    split of every order scanned taken (no categorical penalty)."""
    params = MMIT(loss=loss, margin=margin, **{"max_depth": 1, "categorical_penalty": 0.0,
                                              **params}).get_params()
    data = training_data(X, lower, upper, margin, None, n_categories)
    weight = np.ones(X.shape[0]) if weight is None else weight
    return grow_tree(params, data, weight, 1)


def split_cost(tree):
    """Cost of the root's children (the root's own when it stayed a leaf)."""
    return tree.cost[1] + tree.cost[2] if tree.node_count == 3 else tree.cost[0]


def best_partition_cost(codes, lower, upper, margin, loss, weight):
    """Exhaustive search: the least cost of the two sides over every split
    of the categories present into two non-empty sets."""
    categories = np.unique(codes)
    best = minimum(lower, upper, margin, loss, weight)[0]
    for size in range(1, len(categories)):
        for left in itertools.combinations(categories[1:], size):
            side = np.isin(codes, left)
            cost = sum(minimum(lower[rows], upper[rows], margin, loss, weight[rows])[0]
                       for rows in (side, ~side))
            best = min(best, cost)
    return best


@st.composite
def categorical_problems(draw, kinds=("exact",), max_categories=5):
    n = draw(st.integers(3, 14))
    n_categories = draw(st.integers(2, max_categories))
    codes = np.array(draw(st.lists(st.integers(0, n_categories - 1), min_size=n,
                                   max_size=n)), dtype=np.float64)
    lower, upper = draw(grid_intervals(n, st.integers(-4, 4).map(float), kinds))
    weight = np.array(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)),
                      dtype=np.float64)
    return codes, lower, upper, weight, n_categories


@settings(max_examples=150, deadline=None)
@given(categorical_problems())
def test_squared_error_split_is_the_best_partition(problem):
    # exact targets, squared hinge, margin 0: squared error, where ordering
    # the categories by their means finds the best partition (Fisher)
    codes, lower, upper, weight, n_categories = problem
    tree = stump(codes[:, None], lower, upper, [n_categories], weight=weight)
    oracle = best_partition_cost(codes, lower, upper, 0.0, "squared_hinge", weight)
    assert split_cost(tree) == pytest.approx(oracle, rel=1e-9, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(categorical_problems(kinds=("interval", "exact", "left", "right", "none"),
                            max_categories=6),
       st.sampled_from(LOSSES), st.sampled_from([0.0, 0.5]), st.booleans())
def test_never_worse_than_the_codes_as_numbers(problem, loss, margin, missing):
    codes, lower, upper, weight, n_categories = problem
    if missing:
        codes = codes.copy()
        codes[::4] = np.nan
    X = codes[:, None]
    native = stump(X, lower, upper, [n_categories], loss=loss, margin=margin,
                   weight=weight)
    ordinal = stump(X, lower, upper, None, loss=loss, margin=margin, weight=weight)
    assert split_cost(native) <= split_cost(ordinal) * (1 + 1e-9) + 1e-9
    present = ~np.isnan(codes)
    oracle = best_partition_cost(codes[present], lower[present], upper[present], margin,
                                 loss, weight[present])
    if not missing:  # and never better than every partition
        assert split_cost(native) >= oracle * (1 - 1e-9) - 1e-9


def shuffled_effects(n=600, n_categories=12, seed=0, missing=0.1):
    rng = np.random.RandomState(seed)
    codes = rng.randint(0, n_categories, n).astype(np.float64)
    effect = rng.permutation(n_categories).astype(np.float64)
    y = effect[codes.astype(int)] + rng.normal(0, 0.1, n)
    codes[rng.rand(n) < missing] = np.nan
    return np.c_[codes, rng.rand(n)], y, effect


def test_one_split_separates_the_categories_by_effect():
    X, y, effect = shuffled_effects(missing=0.0)
    tree = stump(X, y, y, [12, 0])
    assert tree.is_categorical[0] and not tree.is_categorical[1:].any()
    assert np.isnan(tree.threshold[0])
    left = tree.categories_left(0, 12)
    order = np.argsort(effect)
    assert set(left) in ({*order[:len(left)]}, {*order[-len(left):]})


@pytest.mark.parametrize("splitter", ["exact", "hist"])
def test_missing_absent_and_unseen_categories_follow_the_missing_side(splitter):
    X, y, _ = shuffled_effects()
    keep = X[:, 0] != 11  # category 11 never reaches the training rows
    tree = grown(splitter, X[keep], y[keep], [12, 0], max_depth=4)
    assert tree.is_categorical.sum() >= 2
    for x in np.unique(X[keep, 1])[::25]:
        rows = np.full((4, 2), x)
        rows[:, 0] = [np.nan, 11.0, 57.0, 2.5]  # missing, absent, unseen, not a code
        paths = tree.decision_path(rows).toarray()
        assert (paths == paths[0]).all()  # all go the same way
        for node in np.flatnonzero(paths[0] & tree.is_categorical):
            side = (tree.children_left if tree.missing_go_to_left[node]
                    else tree.children_right)[node]
            assert paths[0, side]
            assert (11 in tree.categories_left(node, 12)) == tree.missing_go_to_left[node]


def grown(splitter, X, y, n_categories, **params):
    params = MMIT(**{"categorical_penalty": 0.0, **params}).get_params()
    if splitter == "exact":
        return grow_tree(params, training_data(X, y, y, 0.0, None, n_categories),
                         np.ones(len(y)), 1)
    features = bin_features(X, np.ones(len(y)), 255, n_categories=n_categories)
    center = y - np.median(y)
    return tree_builder(params, *X.shape).build(
        features, HingeTargets(center, center, 0.0), np.ones(len(y)), 1, None, 1)


@pytest.mark.parametrize("splitter", ["exact", "hist"])
def test_training_rows_reach_the_side_of_their_category(splitter):
    X, y, _ = shuffled_effects(seed=3)
    tree = grown(splitter, X, y, [12, 0], max_depth=3)
    assert tree.is_categorical.any()
    path = tree.decision_path(np.ascontiguousarray(X)).toarray().astype(bool)
    for node in np.flatnonzero(tree.is_categorical):
        rows = path[:, node]
        left = np.isin(X[rows, 0], tree.categories_left(node, 12))
        missing = np.isnan(X[rows, 0])
        goes_left = np.where(missing, tree.missing_go_to_left[node], left)
        assert np.array_equal(path[rows, tree.children_left[node]], goes_left)


def test_integer_weights_equal_repeated_rows():
    X, y, _ = shuffled_effects(n=200, seed=5)
    weight = np.random.RandomState(1).randint(0, 4, len(y)).astype(np.float64)
    weighted = stump(X, y, y, [12, 0], weight=weight, max_depth=3)
    repeat = np.repeat(np.arange(len(y)), weight.astype(int))
    repeated = stump(X[repeat], y[repeat], y[repeat], [12, 0], max_depth=3)
    queries = np.ascontiguousarray(X)
    assert np.allclose(weighted.predict(queries), repeated.predict(queries))
    assert np.allclose(leaf_costs(weighted), leaf_costs(repeated))


def leaf_costs(tree):
    return np.sort(tree.cost[tree.children_left == -1])


def test_presorted_and_sorted_on_demand_grow_the_same_tree():
    X, y, _ = shuffled_effects(n=300, seed=7)
    X = np.c_[X, np.random.RandomState(2).rand(300, 6)]
    n_categories = [12] + [0] * 7
    params = MMIT(max_depth=5, max_features=2, categorical_penalty=0.0).get_params()
    presorted = training_data(X, y, y, 0.0, 2, n_categories)
    assert presorted.features.presorted
    on_demand = TrainingData(Features(X, False, n_categories), presorted.targets)
    one, other = (grow_tree(params, data, np.ones(300), 4)
                  for data in (presorted, on_demand))
    assert one.is_categorical.any()
    assert np.array_equal(one.value, other.value)
    assert np.array_equal(one.feature, other.feature)


def test_trees_keep_their_sets_through_pickles_and_pruning():
    X, y, _ = shuffled_effects(seed=9)
    tree = stump(X, y, y, [12, 0], max_depth=4)
    queries = np.ascontiguousarray(X)
    copy = pickle.loads(pickle.dumps(tree))
    assert np.array_equal(copy.predict(queries), tree.predict(queries))
    assert np.array_equal(copy.is_categorical, tree.is_categorical)
    pruned = stump(X, y, y, [12, 0], max_depth=4, ccp_alpha=0.5)
    assert 1 < pruned.node_count < tree.node_count
    assert pruned.is_categorical.any()
    by_hand = prune_at(tree, 0.5)
    assert np.array_equal(pruned.predict(queries), by_hand.predict(queries))
    assert np.array_equal(pruned.value, by_hand.value)


def test_a_damaged_category_set_is_refused():
    X, y, _ = shuffled_effects(seed=11)
    state = stump(X, y, y, [12, 0], max_depth=2).__getstate__()
    bad = dict(state, category_words=state["category_words"][:0])
    with pytest.raises(ValueError, match="category sets"):
        Tree(2).__setstate__(bad)
    nodes = state["nodes"].copy()
    nodes["category_set"][0] = 7
    with pytest.raises(ValueError, match="category sets"):
        Tree(2).__setstate__(dict(state, nodes=nodes))


def test_codes_are_checked():
    X = np.array([[0.0], [1.5], [2.0]])
    with pytest.raises(ValueError, match="integer codes in"):
        training_data(X, np.zeros(3), np.zeros(3), 0.0, None, [3])
    with pytest.raises(ValueError, match="integer codes in"):
        training_data(np.array([[0.0], [3.0]]), np.zeros(2), np.zeros(2), 0.0, None, [3])
    with pytest.raises(ValueError, match="at most max_bins=4"):
        bin_features(np.array([[0.0], [4.0]]), max_bins=4, n_categories=[5])


def test_linear_leaves_read_the_numeric_features_only():
    X, y, _ = shuffled_effects(seed=13, missing=0.0)
    y = y + 2.0 * X[:, 1]
    tree = stump(X, y, y, [12, 0], max_depth=2, leaf_model="linear")
    state = tree.node_models.state()
    assert np.all(state["slopes"][:, 0] == 0.0) and np.any(state["slopes"][:, 1] != 0.0)
    moved = X.copy()
    moved[:, 0] = np.where(np.isin(X[:, 0], tree.categories_left(0, 12)), 0.0, 11.0)
    # rows keep their leaves when their codes change within a side of each split
    leaves = tree.apply(np.ascontiguousarray(X))
    same = leaves == tree.apply(np.ascontiguousarray(moved))
    assert same.any()
    assert np.allclose(tree.predict(np.ascontiguousarray(X))[same],
                       tree.predict(np.ascontiguousarray(moved))[same])


@settings(max_examples=60, deadline=None)
@given(categorical_problems(kinds=("interval", "exact", "left", "right"),
                            max_categories=6),
       st.sampled_from(LOSSES), st.sampled_from([0.5, 4.0]))
def test_a_penalty_keeps_splits_between_the_codes_and_the_best_partition(
        problem, loss, penalty):
    codes, lower, upper, weight, n_categories = problem
    X = codes[:, None]
    native = stump(X, lower, upper, [n_categories], loss=loss, weight=weight,
                   categorical_penalty=penalty)
    ordinal = stump(X, lower, upper, None, loss=loss, weight=weight)
    free = stump(X, lower, upper, [n_categories], loss=loss, weight=weight)
    assert split_cost(free) <= split_cost(native) * (1 + 1e-9) + 1e-9
    assert split_cost(native) <= split_cost(ordinal) * (1 + 1e-9) + 1e-9


@pytest.mark.parametrize("splitter", ["exact", "hist"])
def test_the_penalty_is_the_bar_of_ordered_splits(splitter):
    # 40 categories of pure noise: their order fitted to the rows finds a
    # split; the penalty asks more of it than noise gives
    rng = np.random.RandomState(0)
    n, K = 800, 40
    X = np.c_[rng.randint(0, K, n).astype(np.float64)]
    y = rng.normal(size=n)
    free = grown(splitter, X, y, [K], max_depth=1)
    assert free.is_categorical[0]
    order_by_code = np.arange(K)
    left = free.categories_left(0, K)
    assert not np.array_equal(left, order_by_code[:len(left)])  # not a codes split
    bar = grown(splitter, X, y, [K], max_depth=1, categorical_penalty=4.0)
    if bar.node_count > 1:  # only the codes' own order may split it
        left = bar.categories_left(0, K)
        present = np.unique(X[:, 0]).astype(int)
        kept = np.isin(present, left)
        assert np.all(kept[:kept.sum()]) or np.all(~kept[:(~kept).sum()])
