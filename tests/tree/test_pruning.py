"""Minimal cost-complexity pruning: the path, and the subtree of each alpha
(against every subtree of small trees)."""


import numpy as np
import pytest
from brute_force import best_pruning
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import leaf_cost, random_intervals

from mmit import MMIT
from mmit._loss._loss import LOSSES
from mmit.tree._pruning import (
    growth_alphas,
    growth_prefix,
    prefix_alpha,
    prune_at,
    pruning_sequence,
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
        # a pruned tree is the full tree with some subtrees cut off: each
        # row's path in it is the start of its path in the full tree, the
        # same splits down to a leaf that predicts the full tree's node there
        assert_pruned_from(pruned.tree_, full.tree_, X)


def assert_pruned_from(pruned, full, X):
    pruned_paths, full_paths = pruned.decision_path(X), full.decision_path(X)
    for row in range(X.shape[0]):
        kept = pruned_paths.indices[pruned_paths.indptr[row]:pruned_paths.indptr[row + 1]]
        whole = full_paths.indices[full_paths.indptr[row]:full_paths.indptr[row + 1]]
        kept, whole = np.sort(kept), np.sort(whole)  # root first: ids grow downwards
        assert kept.size <= whole.size
        start = whole[:kept.size]
        np.testing.assert_array_equal(pruned.feature[kept[:-1]], full.feature[start[:-1]])
        np.testing.assert_array_equal(pruned.threshold[kept[:-1]],
                                      full.threshold[start[:-1]])
        assert pruned.value[kept[-1]] == full.value[start[-1]]
        assert pruned.children_left[kept[-1]] == -1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), max_depth=st.integers(1, 4),
       loss=st.sampled_from(sorted(LOSSES)), weighted=st.booleans())
def test_pruning_keeps_the_best_subtree_of_every_alpha(seed, max_depth, loss, weighted):
    """Against every subtree that keeps the root: at each alpha of the path
    the pruned tree reaches the least cost-complexity, and between the
    path's alphas (and beyond the last) it is the smallest subtree that
    does."""
    X, y = random_intervals(60, 2, seed=seed)
    weight = (np.random.default_rng(seed).uniform(0.5, 2.0, 60) if weighted
              else np.ones(60))
    full = MMIT(loss=loss, margin=0.1, max_depth=max_depth, random_state=0).fit(
        X, y, sample_weight=weight).tree_
    total = full.weighted_n_node_samples[0]
    _, alphas, _, _ = pruning_sequence(full, total)
    distinct = np.unique(alphas)
    between = [(a + b) / 2 for a, b in zip(distinct[:-1], distinct[1:], strict=True)
               if b - a > 1e-6 * b]
    for alpha in [*distinct, *between, 2.0 * distinct[-1] + 1.0]:
        pruned = prune_at(full, alpha)
        score = leaf_cost(pruned) / total + alpha * pruned.n_leaves
        best, fewest = best_pruning(full, alpha, total)
        assert score == pytest.approx(best, rel=1e-9, abs=1e-12)
        if alpha not in distinct:
            assert pruned.n_leaves == fewest
        assert_pruned_from(pruned, full, X)


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
