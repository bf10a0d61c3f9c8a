"""Sums of trees: the compiled, cache-blocked sum and AdditiveTrees, behind
the forest's and the booster's predictions; the leaves of many trees
(tree_leaves), behind the predictive distributions."""

import numpy as np
import pytest
from problems import random_intervals

from mmit import MMITBoost, MMITForest
from mmit.tree import AdditiveTrees
from mmit.tree._additive import tree_leaves
from mmit.tree._tree import add_predictions, apply_trees


@pytest.fixture(scope="module")
def trees():
    """Trees of constants and of linear leaves, and rows with NaN."""
    X, y = random_intervals(300, 4)
    X[np.random.default_rng(1).random(X.shape) < 0.1] = np.nan
    constant = MMITForest(4, random_state=0).fit(X, y)
    linear = MMITForest(4, min_samples_leaf=20, leaf_model="linear",
                        random_state=0).fit(X, y)
    X_test = np.random.default_rng(2).normal(size=(200, 4))
    X_test[np.random.default_rng(3).random(X_test.shape) < 0.2] = np.nan
    return [model.tree_ for pair in zip(constant.estimators_, linear.estimators_,
                                        strict=True) for model in pair], X_test


def test_the_sum_adds_the_trees_in_order_however_the_work_is_cut(trees):
    trees, X_test = trees
    scales = np.linspace(0.5, 2.0, len(trees))
    expected = np.zeros(200)
    for tree, scale in zip(trees, scales, strict=True):
        expected += scale * tree.predict(X_test)
    largest = max(tree.node_count for tree in trees) * 16
    # one group of all trees, one tree per group, groups of a few trees; rows
    # in one block or blocks of a few (TRAVERSAL_BLOCK = 16) rows
    for group_bytes, row_block_bytes in [(10**9, 10**9), (1, 1), (2 * largest, 300)]:
        total = np.zeros(200)
        add_predictions(trees, scales, X_test, total, group_bytes, row_block_bytes)
        np.testing.assert_array_equal(total, expected)
    total = np.zeros(200)
    add_predictions(trees, scales, X_test[:77], total[:77])
    add_predictions(trees, scales, X_test[77:], total[77:])
    np.testing.assert_array_equal(total, expected)
    with pytest.raises(ValueError, match="entries"):
        add_predictions(trees, scales, X_test, np.zeros(199))
    with pytest.raises(ValueError, match="scales has 3 entries"):
        add_predictions(trees, scales[:3], X_test, np.zeros(200))
    with pytest.raises(ValueError, match="features"):
        add_predictions(trees, scales, X_test[:, :3].copy(), np.zeros(200))


def test_the_leaves_of_many_trees_are_each_trees_apply_however_the_work_is_cut(trees):
    trees, X_test = trees
    expected = np.column_stack([tree.apply(X_test) for tree in trees])
    largest = max(tree.node_count for tree in trees) * 16
    for group_bytes, row_block_bytes in [(10**9, 10**9), (1, 1), (2 * largest, 300)]:
        leaves = np.full((200, len(trees)), -7, dtype=np.int64)
        apply_trees(trees, X_test, leaves, group_bytes, row_block_bytes)
        np.testing.assert_array_equal(leaves, expected)
    for n_jobs in (None, 1, 2):
        leaves = tree_leaves(trees, X_test, n_jobs)
        assert leaves.dtype == np.int64
        np.testing.assert_array_equal(leaves, expected)
    assert tree_leaves(trees, X_test[:0]).shape == (0, len(trees))
    with pytest.raises(ValueError, match="out has shape"):
        apply_trees(trees, X_test, np.zeros((200, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="features"):
        apply_trees(trees, X_test[:, :3].copy(), np.zeros((200, len(trees)), np.int64))


def test_additive_trees_predict_their_sum_whatever_the_threads(trees):
    trees, X_test = trees
    summed = AdditiveTrees(trees, np.full(len(trees), 0.1), offset=2.0, divisor=4.0)
    expected = np.full(200, 2.0)
    for tree in trees:
        expected += 0.1 * tree.predict(X_test)
    for n_jobs in (None, 1, 2):
        np.testing.assert_array_equal(summed.predict(X_test, n_jobs), expected / 4.0)
    np.testing.assert_array_equal(summed.weights, np.full(len(trees), 0.025))
    assert summed.constant == 0.5
    stages = list(summed.staged_predict(X_test))
    assert len(stages) == len(trees)
    np.testing.assert_array_equal(stages[-1], expected / 4.0)
    assert not np.shares_memory(stages[0], stages[1])
    with pytest.raises(ValueError, match="scales"):
        AdditiveTrees(trees, np.ones(2))


def test_the_forest_and_the_booster_are_sums_of_their_trees():
    X, y = random_intervals(200, 4)
    forest = MMITForest(5, random_state=0).fit(X, y)
    expected = np.zeros(X.shape[0])
    for tree in forest.estimators_:
        expected += tree.predict(X)
    np.testing.assert_array_equal(forest.predict(X), expected / 5)
    assert forest.additive_trees_.divisor == 5
    boost = MMITBoost(n_estimators=6, random_state=0).fit(X, y)
    expected = np.full(X.shape[0], boost.baseline_prediction_)
    staged = []
    for tree in boost.estimators_:
        expected = expected + boost.learning_rate * tree.predict(X)
        staged.append(expected)
    np.testing.assert_array_equal(boost.predict(X), expected)
    for stage, expected_stage in zip(boost.staged_predict(X), staged, strict=True):
        np.testing.assert_array_equal(stage, expected_stage)
    assert boost.additive_trees_.constant == boost.baseline_prediction_
