"""The split search against an exhaustive brute-force oracle.

The oracle tries every feature, every threshold between two distinct present
values, both sides for the rows missing the feature, and the split "present
versus missing", and scores each side with the brute-force minimum of
``brute_force.py`` (independent of the solver and of the builder). The
builder is run both ways it orders a node's rows (presorted lists, sorting on
demand), which must give the same tree.
"""

import pickle

import numpy as np
import pytest
from brute_force import minimum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from problems import small_split_rows

from mmit._loss._loss import LOSSES as LOSS_ENTRIES
from mmit.tree._builder import TreeBuilder
from mmit.tree._criterion import HingeTargets
from mmit.tree._features import Features
from mmit.tree._splitter import stable_partition_rows

LOSSES = sorted(LOSS_ENTRIES)
INF = np.inf
ALWAYS_PRESORTED, NEVER_PRESORTED = 0, 2**62


def grow(X, lower, upper, weight, loss, margin, *, presort_min_rows, max_depth=1,
         min_samples_leaf=1, max_features=None, seed=1):
    """A tree from the builder itself, its rows ordered the given way."""
    n_features = X.shape[1]
    builder = TreeBuilder(LOSS_ENTRIES[loss], max_depth, 2, min_samples_leaf,
                          max_features or n_features, -1, 0.0, presort_min_rows)
    features = Features(X, presort_min_rows <= X.shape[0])
    return builder.build(features, HingeTargets(lower, upper, margin), weight, seed)


def side_cost(rows, lower, upper, weight, loss, margin):
    return minimum(lower[rows], upper[rows], margin, loss, weight[rows])[0]


def oracle_splits(X, lower, upper, weight, loss, margin, min_samples_leaf):
    """Every valid split of the root: (cost, feature, goes_left mask)."""
    active = weight > 0
    splits = []
    for feature in range(X.shape[1]):
        x = X[:, feature]
        missing = np.isnan(x) & active
        present = ~np.isnan(x) & active
        values = np.unique(x[present])
        partitions = [((x <= value) & present, missing_left) for value in values[:-1]
                      for missing_left in ((False, True) if missing.any() else (False,))]
        if missing.any() and present.any():
            partitions.append((present, False))  # present left, missing right
        for left_present, missing_left in partitions:
            left = left_present | (missing & missing_left)
            right = active & ~left
            if left.sum() < min_samples_leaf or right.sum() < min_samples_leaf:
                continue
            cost = (side_cost(left, lower, upper, weight, loss, margin)
                    + side_cost(right, lower, upper, weight, loss, margin))
            splits.append((cost, feature, left))
    return splits


@st.composite
def split_problems(draw):
    """Few rows on a coarse grid (ties), NaN in X, censored targets, weights."""
    X, lower, upper, weight = draw(small_split_rows(
        10, kinds=("interval", "exact", "left", "right")))
    return (X, lower, upper, weight, draw(st.sampled_from(LOSSES)),
            draw(st.sampled_from([0.0, 0.5])), draw(st.sampled_from([1, 2])))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_problems(), st.sampled_from([ALWAYS_PRESORTED, NEVER_PRESORTED]))
def test_root_split_is_the_best_of_all_splits(problem, presort_min_rows):
    X, lower, upper, weight, loss, margin, min_leaf = problem
    tree = grow(X, lower, upper, weight, loss, margin, presort_min_rows=presort_min_rows,
                min_samples_leaf=min_leaf)
    root_cost = side_cost(weight > 0, lower, upper, weight, loss, margin)
    assert tree.cost[0] == pytest.approx(root_cost, rel=1e-9, abs=1e-12)
    splits = oracle_splits(X, lower, upper, weight, loss, margin, min_leaf)
    best = min((cost for cost, _, _ in splits), default=INF)
    tolerance = 1e-9 * (1.0 + root_cost)
    if not best < root_cost - tolerance:
        assert tree.node_count == 1
        return
    assert tree.node_count == 3
    assert tree.cost[1] + tree.cost[2] == pytest.approx(best, abs=tolerance)
    # the split the tree stores (threshold, missing side) is that partition
    goes_left = tree.apply(np.ascontiguousarray(X)) == 1
    feature = tree.feature[0]
    assert any(f == feature and np.array_equal(left, goes_left & (weight > 0))
               for cost, f, left in splits if cost <= best + tolerance)
    # children's costs are exact
    for child, side in ((1, goes_left), (2, ~goes_left)):
        rows = side & (weight > 0)
        assert tree.cost[child] == pytest.approx(
            side_cost(rows, lower, upper, weight, loss, margin), rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_problems(), st.integers(1, 2**31))
def test_presorted_and_sorted_on_demand_grow_the_same_tree(problem, seed):
    X, lower, upper, weight, loss, margin, min_leaf = problem
    trees = [grow(X, lower, upper, weight, loss, margin, presort_min_rows=rows,
                  max_depth=64, min_samples_leaf=min_leaf, max_features=1, seed=seed)
             for rows in (ALWAYS_PRESORTED, 4, NEVER_PRESORTED)]
    states = [pickle.dumps(tree.__getstate__()) for tree in trees]
    assert states[0] == states[1] == states[2]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_problems(), st.integers(1, 2**31))
def test_the_layout_and_a_single_build_grow_the_same_tree(problem, seed):
    """Features read in row-major or column-major order, and the one build
    of single-build data (which takes their presorted order and sorted
    breakpoints), grow the tree of the other builds; a second build on the
    same features sorts on demand."""
    X, lower, upper, weight, loss, margin, min_leaf = problem
    builder = TreeBuilder(LOSS_ENTRIES[loss], 64, 2, min_leaf, X.shape[1], -1, 0.0,
                          ALWAYS_PRESORTED)

    def state(features, targets):
        tree = builder.build(features, targets, weight, seed)
        return pickle.dumps(tree.__getstate__())

    expected = state(Features(np.asfortranarray(X), True),
                     HingeTargets(lower, upper, margin))
    single = Features(np.ascontiguousarray(X), True, single_build=True)
    targets = HingeTargets(lower, upper, margin, single_build=True)
    assert state(single, targets) == expected
    assert single.presorted == (not np.all(weight > 0))  # the build took the order
    assert state(single, HingeTargets(lower, upper, margin)) == expected
    with pytest.raises(ValueError, match="serve one criterion"):
        state(single, targets)


@pytest.mark.parametrize("loss", LOSSES)
def test_same_tree_either_way_on_larger_data(loss):
    rng = np.random.default_rng(0)
    n, p = 600, 12
    X = np.round(rng.normal(size=(n, p)), 1)
    X[rng.random((n, p)) < 0.1] = np.nan
    center = np.sin(np.nan_to_num(X[:, 0])) + np.isnan(X[:, 1])
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < 0.2] = -INF
    upper[rng.random(n) < 0.2] = INF
    weight = rng.integers(0, 3, n).astype(float)
    trees = [grow(X, lower, upper, weight, loss, 0.1, presort_min_rows=rows,
                  max_depth=64, max_features=3, seed=7)
             for rows in (ALWAYS_PRESORTED, 50, NEVER_PRESORTED)]
    assert trees[0].node_count > 50
    states = [pickle.dumps(tree.__getstate__()) for tree in trees]
    assert states[0] == states[1] == states[2]


def test_presort_orders_like_a_stable_argsort():
    from mmit.tree._features import presort

    rng = np.random.default_rng(1)
    eps = np.finfo(float).eps
    columns = [
        rng.normal(size=500),
        np.round(rng.normal(size=500), 1),                # ties
        1.0 + rng.integers(0, 40, 500) * eps,             # close values
        np.where(rng.random(500) < 0.3, np.nan, rng.normal(size=500)),
        np.r_[[0.0, -0.0, 5e-324, -5e-324, 1e300, -1e300], rng.normal(size=494)],
    ]
    X = np.column_stack(columns)
    expected = np.argsort(X, axis=0, kind="stable").T
    for layout in (np.ascontiguousarray, np.asfortranarray):
        order, ranks = presort(layout(X))
        np.testing.assert_array_equal(order, expected)
        # the features with ties (0.0 and -0.0 are one value) rank their rows
        assert [rank is None for rank in ranks] == [True, False, False, True, False]
        for column, rank in zip(columns, ranks, strict=True):
            if rank is not None:
                present = ~np.isnan(column)
                values = np.unique(column[present])
                np.testing.assert_array_equal(rank[present],
                                              np.searchsorted(values, column[present]))


@settings(max_examples=200, deadline=None)
@given(sides=st.lists(st.booleans(), max_size=300), n_threads=st.integers(1, 5),
       seed=st.integers(0, 2**32 - 1))
def test_the_parallel_partition_is_the_stable_partition(sides, n_threads, seed):
    """On any number of threads: the rows going left first, each side in its
    order (the brute force: two filters of the rows)."""
    goes_left = np.array(sides, dtype=np.uint8)
    rows = np.random.default_rng(seed).permutation(len(sides)).astype(np.int32)
    expected = np.concatenate([rows[goes_left[rows] == 1], rows[goes_left[rows] == 0]])
    n_left = stable_partition_rows(rows, goes_left, n_threads)
    assert n_left == goes_left.sum()
    np.testing.assert_array_equal(rows, expected)


def test_a_partition_refuses_rows_out_of_range():
    with pytest.raises(ValueError, match="not a row"):
        stable_partition_rows(np.array([0, 3], dtype=np.int32), np.zeros(3, np.uint8), 2)
