"""A criterion kept from one boosting stage to the next
(``TreeBuilder.stage_criterion``, ``HingeCriterion.advance``): moved by each
stage's tree, its hinges are the residual breakpoints sorted, and the next
tree it grows is the tree grown on targets made afresh."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import small_split_rows

from mmit import MMITBoost
from mmit._loss._loss import LOSSES
from mmit.ensemble._boosting import STAGE_MERGE_MAX_LEAVES
from mmit.tree._binning import bin_features
from mmit.tree._builder import TreeBuilder
from mmit.tree._criterion import HingeCriterion, HingeTargets
from mmit.tree._features import Features
from mmit.tree._growing import (
    TrainingData,
    grow_tree,
    prepare_features,
    resolve_constraints,
    tree_builder,
)
from mmit.tree._stages import merge_moved_lists


def builder_of(loss, max_depth, n_features, max_leaf_nodes=-1):
    return TreeBuilder(LOSSES[loss], max_depth, 2, 1, n_features, max_leaf_nodes, 0.0, 0)


def features_of(X, weight, binned):
    return bin_features(X, weight, 4) if binned else Features(X, True)


def stage_shifts(tree, row_values, X, weight, rate):
    """What each row's prediction grows by: the rate times its leaf's value
    (the tree's walk for the rows the build left out)."""
    values = row_values.copy()
    values[weight == 0] = tree.predict(X)[weight == 0]
    return rate * values


def assert_same_tree(tree, fresh):
    for name in ("children_left", "children_right", "feature", "threshold"):
        np.testing.assert_array_equal(getattr(tree, name), getattr(fresh, name))
    np.testing.assert_allclose(tree.value, fresh.value, rtol=1e-12, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(rows=small_split_rows(40), loss=st.sampled_from(sorted(LOSSES)),
       binned=st.booleans(), max_depth=st.integers(1, 4), best_first=st.booleans(),
       stages=st.integers(1, 4), rate=st.sampled_from([0.1, 0.5, 1.0]))
def test_moved_hinges_are_the_residuals_sorted_and_grow_the_fresh_tree(
        rows, loss, binned, max_depth, best_first, stages, rate):
    """With margin 0 the breakpoints are the bounds: after each stage the kept
    criterion's hinges are the finite bounds of the positive-weight rows less
    the predictions so far (exactly, in increasing order, the weights
    alongside), its loss there the residuals' weighted loss at 0, and its
    next tree is the tree of fresh targets of those residuals (the same
    splits; values to rounding, ties in another order)."""
    X, lower, upper, weight = rows
    X = np.nan_to_num(X)  # binned features and the presort alike
    builder = builder_of(loss, max_depth, X.shape[1], 4 if best_first else -1)
    features = features_of(X, weight, binned)
    criterion = builder.stage_criterion(features, HingeTargets(lower, upper, 0.0), weight)
    for stage in range(stages):
        row_values = np.empty(len(X))
        tree = builder.build(features, criterion, weight, stage + 1, row_values)
        fresh = builder_of(loss, max_depth, X.shape[1], 4 if best_first else -1).build(
            features, HingeTargets(lower, upper, 0.0), weight, stage + 1)
        assert_same_tree(tree, fresh)
        shifts = stage_shifts(tree, row_values, X, weight, rate)
        total = criterion.advance(shifts, n_threads=2)
        lower, upper = lower - shifts, upper - shifts
        objective = LOSSES[loss].objective(lower, upper, 0.0, weight)
        np.testing.assert_allclose(total, objective(np.zeros(len(X))) * weight.sum(),
                                   rtol=1e-12, atol=1e-300)
        positions, weights, hinges = criterion.hinge_entries()
        bounds = np.column_stack([lower, upper]).ravel()
        expected = np.flatnonzero(np.isfinite(bounds) & (np.repeat(weight, 2) > 0))
        np.testing.assert_array_equal(np.sort(hinges), expected)
        np.testing.assert_array_equal(positions, bounds[hinges])
        np.testing.assert_array_equal(weights, weight[hinges >> 1])
        assert np.all(np.diff(positions) >= 0)


def test_the_merge_is_the_same_on_any_number_of_threads():
    """Enough hinges for the merge to be shared between threads: the same
    list on one thread and on two, in increasing order."""
    rng = np.random.default_rng(0)
    n = 60_000
    X = rng.normal(size=(n, 3))
    lower = X[:, 0] + rng.normal(size=n)
    upper = lower + rng.exponential(size=n)
    upper[rng.random(n) < 0.2] = np.inf
    weight = np.ones(n)
    lists = []
    for n_threads in (1, 2):
        builder = builder_of("squared_hinge", 3, 3)
        features = features_of(X, weight, True)
        criterion = builder.stage_criterion(features, HingeTargets(lower, upper, 0.1),
                                            weight)
        row_values = np.empty(n)
        tree = builder.build(features, criterion, weight, 1, row_values, n_threads)
        assert tree.node_count == 15
        criterion.advance(0.1 * row_values, n_threads)
        lists.append(criterion.hinge_entries())
    for one, two in zip(*lists, strict=True):
        np.testing.assert_array_equal(one, two)
    assert np.all(np.diff(lists[0][0]) >= 0)


def test_a_kept_criterion_refuses_what_it_does_not_serve():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 2))
    lower, upper = X[:, 0] - 1.0, X[:, 0] + 1.0
    weight = np.ones(50)
    builder = builder_of("linear_hinge", 2, 2)
    features = Features(X, True)
    criterion = builder.stage_criterion(features, HingeTargets(lower, upper, 0.1), weight)
    with pytest.raises(ValueError, match="do not cover its targets"):
        criterion.advance(np.zeros(50))  # no build since it was made
    other_weights = weight.copy()
    other_weights[0] = 2.0
    with pytest.raises(ValueError, match="features and weights it was made for"):
        builder.build(features, criterion, other_weights, 1)
    with pytest.raises(ValueError, match="features and weights it was made for"):
        builder.build(features_of(X, weight, True), criterion, weight, 1)
    builder.build(features, criterion, weight, 1)
    with pytest.raises(ValueError, match="entries for 50 rows"):
        criterion.advance(np.zeros(49))
    row_values = np.empty(50)
    builder.build(features, criterion, weight, 1, row_values)
    criterion.advance(row_values)
    with pytest.raises(ValueError, match="do not cover its targets"):
        criterion.advance(row_values)  # once per build
    one_build = HingeCriterion(HingeTargets(lower, upper, 0.1), weight,
                               LOSSES["linear_hinge"].tag)
    with pytest.raises(ValueError, match="keep_leaves=True"):
        one_build.advance(np.zeros(50))


@pytest.mark.parametrize("max_depth", [3, 6])
@pytest.mark.parametrize("splitter", ["exact", "hist"])
def test_a_booster_grows_the_trees_of_fresh_residual_targets(splitter, max_depth):
    """A booster's stages (one criterion kept from stage to stage while the
    trees have at most STAGE_MERGE_MAX_LEAVES leaves, targets sorted again
    at each stage for deeper trees) replayed with targets made afresh from
    the residuals at every stage, each stage with its tree's seed: the same
    trees, and predictions to rounding."""
    assert 2 ** 3 <= STAGE_MERGE_MAX_LEAVES < 2 ** 6
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 3))
    X[::9, 2] = np.nan
    center = np.sin(2 * X[:, 0]) + X[:, 1]
    y = np.column_stack([center - rng.exponential(0.3, 400),
                         center + rng.exponential(0.3, 400)])
    y[::7, 1] = np.inf
    y[::11, 0] = -np.inf
    y[::13, 1] = y[::13, 0] = center[::13]
    weight = rng.uniform(0.5, 2.0, 400)
    weight[::5] = 0.0
    booster = MMITBoost(n_estimators=25, learning_rate=0.2, max_depth=max_depth,
                        splitter=splitter, early_stopping=False, random_state=0)
    booster.fit(X, y, weight)
    params = resolve_constraints(booster, booster._tree_params())
    features = (bin_features(X, weight, booster.max_bins) if splitter == "hist"
                else prepare_features(X, None))
    prediction = np.full(400, booster.baseline_prediction_)
    for stage in booster.estimators_:
        targets = HingeTargets(y[:, 0] - prediction, y[:, 1] - prediction, booster.margin_)
        tree = grow_tree(params, TrainingData(features, targets), weight,
                         stage.random_state, builder=tree_builder(params, *X.shape))
        assert_same_tree(stage.tree_, tree)
        prediction += booster.learning_rate * tree.predict(np.ascontiguousarray(X))
    np.testing.assert_allclose(booster.predict(X), prediction, rtol=0, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(leaf_sizes=st.lists(st.integers(0, 12), min_size=1, max_size=9),
       data=st.data(), n_parts=st.integers(1, 4))
def test_the_merge_orders_by_moved_breakpoint_then_leaf(leaf_sizes, data, n_parts):
    """The merge of the leaves' lists, moved, in any number of parts: the
    brute force is a stable sort of the moved breakpoints, the leaves one
    after another (ties to the earlier leaf, then to the earlier entry); few
    distinct breakpoints and shifts make ties."""
    count = sum(leaf_sizes)
    leaf_of = np.repeat(np.arange(len(leaf_sizes)), leaf_sizes)
    n_rows = max(count, 1)
    rows = np.array(data.draw(st.permutations(range(n_rows))), dtype=np.int64)[:count]
    hinges = (2 * rows + data.draw(st.lists(st.integers(0, 1), min_size=count,
                                            max_size=count))).astype(np.int32)
    leaf_shift = np.array(data.draw(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 2.0]),
                                             min_size=len(leaf_sizes),
                                             max_size=len(leaf_sizes))))
    row_shifts = np.zeros(n_rows)
    row_shifts[rows] = leaf_shift[leaf_of]
    drawn = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=count,
                                        max_size=count)), dtype=np.float64)
    positions = np.concatenate([np.sort(drawn[leaf_of == k])
                                for k in range(len(leaf_sizes))] + [np.empty(0)])
    moved = positions - leaf_shift[leaf_of]
    order = np.argsort(moved, kind="stable")
    merged_positions, merged_hinges = merge_moved_lists(
        positions, hinges, np.cumsum(leaf_sizes), row_shifts, n_parts)
    np.testing.assert_array_equal(merged_positions, moved[order])
    np.testing.assert_array_equal(merged_hinges, hinges[order])


def test_the_merge_refuses_lists_it_cannot_merge():
    positions, hinges = np.array([1.0, 0.0]), np.array([0, 2], dtype=np.int32)
    with pytest.raises(ValueError, match="must increase"):
        merge_moved_lists(positions, hinges, np.array([2]), np.zeros(2), 1)
    with pytest.raises(ValueError, match="shifts"):
        merge_moved_lists(positions[::-1].copy(), hinges, np.array([2]),
                          np.array([0.0, 1.0]), 1)
    with pytest.raises(ValueError, match="leaf_ends"):
        merge_moved_lists(positions, hinges, np.array([1]), np.zeros(2), 1)
    with pytest.raises(ValueError, match="not one of the rows"):
        merge_moved_lists(positions, np.array([0, 4], dtype=np.int32), np.array([1, 2]),
                          np.zeros(2), 1)
    with pytest.raises(ValueError, match="n_parts"):
        merge_moved_lists(positions, hinges, np.array([1, 2]), np.zeros(2), 0)
