"""Minimal cost-complexity pruning: the path, and the subtree of each alpha."""


import numpy as np
import pytest
from problems import leaf_cost, random_intervals

from mmit import MMIT
from mmit._loss._loss import LOSSES
from mmit.tree._pruning import (
    growth_alphas,
    growth_prefix,
    prefix_alpha,
    subtree_predictions,
)


@pytest.mark.parametrize("loss", LOSSES)
def test_pruning_path_is_monotone_and_ends_at_the_root(loss):
    X, y = random_intervals(200, 3, seed=13)
    model = MMIT(loss=loss, margin=0.1, random_state=0)
    path = model.cost_complexity_pruning_path(X, y)
    assert path.ccp_alphas[0] == 0.0
    assert np.all(np.diff(path.ccp_alphas) >= 0)
    assert np.all(np.diff(path.costs) >= -1e-12)
    root_only = model.set_params(ccp_alpha=path.ccp_alphas[-1]).fit(X, y)
    assert root_only.get_n_leaves() == 1
    assert path.costs[-1] * 200 == pytest.approx(root_only.tree_.cost[0])


def test_ccp_alpha_gives_the_subtree_of_the_path():
    X, y = random_intervals(200, 3, seed=14)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, 200)
    model = MMIT(max_depth=6, random_state=0)
    path = model.cost_complexity_pruning_path(X, y, sample_weight=weight)
    full = MMIT(max_depth=6, random_state=0).fit(X, y, sample_weight=weight)
    previous_leaves = full.get_n_leaves() + 1
    for alpha, cost in zip(path.ccp_alphas, path.costs, strict=True):
        pruned = MMIT(max_depth=6, ccp_alpha=alpha, random_state=0).fit(
            X, y, sample_weight=weight)
        assert leaf_cost(pruned.tree_) / weight.sum() == pytest.approx(cost, rel=1e-12)
        assert pruned.get_n_leaves() <= previous_leaves
        previous_leaves = pruned.get_n_leaves()
        # a pruned tree is the full tree with some subtrees cut off
        np.testing.assert_array_equal(
            pruned.tree_.value[pruned.apply(X)],
            pruned.predict(X))


@pytest.mark.parametrize("seed", [15, 16])
def test_growth_prefixes_are_the_best_first_trees_of_fewer_leaves(seed):
    """A monotone tree's growth as subtrees: the prefix of k leaves (the tree
    cut down, and the subtree predictions at its alpha) is the tree grown
    with ``max_leaf_nodes=k``."""
    X, y = random_intervals(200, 3, seed=seed)
    monotonic = [1, 0, -1]
    full = MMIT(monotonic_cst=monotonic, random_state=0).fit(X, y)
    counts = np.array([full.get_n_leaves(), 17, 5, 2])
    at_once = subtree_predictions(full.tree_, X, growth_alphas(full.tree_),
                                  prefix_alpha(counts))
    for k, predictions in zip(counts, at_once.T, strict=True):
        grown = MMIT(monotonic_cst=monotonic, max_leaf_nodes=k, random_state=0).fit(X, y)
        prefix = growth_prefix(full.tree_, k)
        assert prefix.n_leaves == grown.get_n_leaves() == min(k, full.get_n_leaves())
        np.testing.assert_array_equal(prefix.predict(X), grown.predict(X))
        np.testing.assert_array_equal(predictions, grown.predict(X))
