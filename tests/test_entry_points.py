"""Every Python-callable entry of the Cython modules checks what it indexes by.

The hot loops run without bounds checks, so a wrong shape reaching them
would read or write out of bounds; each entry raises a ValueError first.
"""

import numpy as np
import pytest

from mmit import MMIT
from mmit._loss._loss import LOSSES
from mmit._loss._solver import hinge_positions, optimal_costs
from mmit._utils._checks import check_row_count
from mmit.tree._builder import TreeBuilder
from mmit.tree._criterion import HingeCriterion, HingeTargets
from mmit.tree._exact_splitter import ExactSplitter
from mmit.tree._features import Features, presort
from mmit.tree._pruning import prune, pruning_sequence, subtree_predictions
from mmit.tree._tree import Tree


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    lower, upper = X[:, 0] - 0.3, X[:, 0] + 0.3
    return X, (lower, upper), MMIT(max_depth=4, random_state=0).fit(
        X, np.column_stack([lower, upper])).tree_


def test_solver_entries(fitted):
    ones = np.ones(3)
    with pytest.raises(ValueError, match="upper has 2 entries"):
        hinge_positions(ones, np.ones(2), 0.0)
    with pytest.raises(ValueError, match="upper has 2 entries"):
        optimal_costs(ones, np.ones(2), 0.0, 0, ones)
    with pytest.raises(ValueError, match="sample_weight has 4 entries"):
        optimal_costs(ones, ones, 0.0, 0, np.ones(4))
    with pytest.raises(ValueError, match="unknown loss tag 7"):
        optimal_costs(ones, ones, 0.0, 7, ones)


def test_more_rows_than_32_bit_hinge_numbers_allow():
    check_row_count(2**30 - 1)
    with pytest.raises(ValueError, match="at most 1073741823 samples"):
        check_row_count(2**30)


def test_criterion_and_builder_entries(fitted):
    X, (lower, upper), _ = fitted
    targets = HingeTargets(lower, upper, 0.0)
    with pytest.raises(ValueError, match="upper has 79 entries"):
        HingeTargets(lower, upper[:-1], 0.0)
    with pytest.raises(ValueError, match="sample_weight has 79 entries"):
        HingeCriterion(targets, np.ones(79), LOSSES["squared_hinge"].tag)
    with pytest.raises(ValueError, match="unknown loss tag -1"):
        HingeCriterion(targets, np.ones(80), -1)
    criterion = HingeCriterion(targets, np.ones(80), LOSSES["linear_hinge"].tag)
    features = Features(X, True)
    with pytest.raises(ValueError, match="sample_weight has 81 entries"):
        ExactSplitter(criterion, features, np.ones(81), 3, 1, 0, 1)
    with pytest.raises(ValueError, match="criterion has 80 rows for 70"):
        ExactSplitter(criterion, Features(X[:70], True), np.ones(70), 3, 1, 0, 1)
    builder = TreeBuilder(LOSSES["linear_hinge"], 5, 2, 1, 3, -1, 0.0, 0)
    with pytest.raises(ValueError, match="sample_weight has 79 entries"):
        builder.build(features, targets, np.ones(79), 1)
    with pytest.raises(ValueError, match="sample_weight has 70 entries"):
        builder.build(Features(X[:70], True), targets, np.ones(70), 1)
    with pytest.raises(ValueError, match="positive weight"):
        builder.build(features, targets, np.zeros(80), 1)
    with pytest.raises(ValueError, match="row_values has 79 entries"):
        builder.build(features, targets, np.ones(80), 1, np.empty(79))
    with pytest.raises(ValueError, match="n_threads"):
        builder.build(features, targets, np.ones(80), 1, None, 0)
    with pytest.raises(ValueError, match="max_features=3 exceeds"):
        builder.build(Features(X[:, :2], True), targets, np.ones(80), 1)
    with pytest.raises(TypeError, match="must be an IntervalLoss"):
        TreeBuilder(object, 5, 2, 1, 3, -1, 0.0, 0)
    with pytest.raises(ValueError, match="invalid"):
        TreeBuilder(LOSSES["linear_hinge"], 5, 2, 0, 3, -1, 0.0, 0)
    with pytest.raises(ValueError, match="2-D"):
        Features(np.ones(3), True)
    order, ranks = presort(np.asfortranarray(np.ones((0, 2))))
    assert order.shape == (2, 0) and ranks == [None, None]


def test_tree_entries(fitted):
    X, _, tree = fitted
    for method in (tree.apply, tree.predict, tree.decision_path):
        with pytest.raises(ValueError, match="X has 2 features"):
            method(np.ascontiguousarray(X[:, :2]))
    with pytest.raises(ValueError, match="no nodes"):
        Tree(3).predict(X)
    with pytest.raises(ValueError, match="total_weight"):
        pruning_sequence(tree, 0.0)
    with pytest.raises(ValueError, match="not a node"):
        prune(tree, np.array([tree.node_count], dtype=np.intp))
    leaf_alpha = np.zeros(tree.node_count)
    with pytest.raises(ValueError, match="leaf_alpha has"):
        subtree_predictions(tree, X, leaf_alpha[:-1], np.zeros(2))
    with pytest.raises(ValueError, match="X has 2 features"):
        subtree_predictions(tree, np.ascontiguousarray(X[:, :2]), leaf_alpha, np.zeros(2))


def test_attributes_that_size_buffers_are_read_only(fitted):
    _, _, tree = fitted
    for name in ("max_depth", "node_count", "n_features", "capacity"):
        with pytest.raises(AttributeError):
            setattr(tree, name, 0)


def test_huge_max_leaf_nodes_grows_the_unlimited_tree():
    # the frontier grows with the tree instead of being allocated up front
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = np.column_stack([np.sin(2 * X[:, 0]) - 0.2, np.sin(2 * X[:, 0]) + X[:, 1] ** 2])
    unlimited = MMIT(random_state=0).fit(X, y).tree_
    huge = MMIT(max_leaf_nodes=10**9, random_state=0).fit(X, y).tree_
    # nodes are split in another order, so equally good splits of tiny nodes
    # may go to other features: the same number of leaves, the same cost
    assert huge.n_leaves == unlimited.n_leaves
    leaves = huge.children_left == -1
    assert huge.cost[leaves].sum() == pytest.approx(
        unlimited.cost[unlimited.children_left == -1].sum(), rel=1e-9, abs=1e-9)

