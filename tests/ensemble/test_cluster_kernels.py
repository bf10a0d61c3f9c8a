"""The kernels of the booster's fit on a cluster, against brute force: a
partition's levels (``LevelBuilder``: histograms, its own optimum of each
node, the hinges near a range, the leaves' moves), the exact optimum of
hinges split between partitions, and the split of a summed histogram."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmit._loss._loss import LOSSES, derivatives
from mmit._loss._solver import grouped_minima, hinge_positions, optimal_constant
from mmit.ensemble import _dask_boosting as cluster
from mmit.tree._binning import MISSING_BIN
from mmit.tree._features import BinnedFeatures
from mmit.tree._level_builder import (
    LevelBuilder,
    best_histogram_split,
    child_keys,
    draw_order,
)

GRID = st.sampled_from([-1.5, -0.5, 0.0, 0.25, 1.0, 2.0])


@st.composite
def split_intervals(draw, max_rows=9):
    """Intervals on a coarse grid (ties, exact values, infinite bounds), their
    weights and the partition of each row."""
    n = draw(st.integers(1, max_rows))
    lower = np.array(draw(st.lists(GRID, min_size=n, max_size=n)))
    width = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, np.inf]),
                                   min_size=n, max_size=n)))
    upper = lower + width
    lower[np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))] = -np.inf
    weight = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n,
                                    max_size=n)))
    parts = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    return lower, upper, weight, parts


def features_of(codes, n_bins=6, n_categories=None):
    """BinnedFeatures of codes (bins 0 .. n_bins - 1, MISSING_BIN; a
    categorical feature's bin its category)."""
    p = codes.shape[1]
    thresholds = np.full((p, MISSING_BIN), np.inf)
    thresholds[:, :n_bins - 1] = np.arange(n_bins - 1) + 0.5
    return BinnedFeatures(np.ascontiguousarray(codes, dtype=np.uint8), thresholds,
                          np.full(p, n_bins, dtype=np.int32), n_categories)


def builder_of(lower, upper, weight, margin, loss, codes=None, merge=True):
    codes = np.zeros((lower.size, 1), np.uint8) if codes is None else codes
    return LevelBuilder(features_of(codes), lower, upper, weight, margin, loss.tag, merge)


def solved_on_partitions(lower, upper, weight, parts, margin, loss):
    """The optimum as the cluster fit finds it: each partition's own optimum,
    then its hinges near the optima's range, solved on the client."""
    builders = [builder_of(lower[parts == k], upper[parts == k], weight[parts == k],
                           margin, loss) for k in range(3)]
    roots = [cluster.level_summary(builder.start(False)[1]) for builder in builders]
    _, lows, highs, *_ = functools.reduce(cluster.add_level_summaries, roots)
    near = functools.reduce(cluster.add_near_hinges, [
        builder.grow(lows, highs, *cluster.no_splits(1), False)[0] for builder in builders])
    values, costs, found = cluster.solve_near_hinges(near, loss.differentiable, loss.tag)
    return values[0], costs[0], found[0]


@settings(max_examples=300, deadline=None)
@given(split_intervals(), st.sampled_from([0.0, 0.25, 1.0]),
       st.sampled_from(sorted(LOSSES)))
def test_partitions_solve_a_node_as_the_solver_solves_all_its_rows(data, margin, name):
    lower, upper, weight, parts = data
    loss = LOSSES[name]
    value, cost, found = solved_on_partitions(lower, upper, weight, parts, margin, loss)
    expected_value, expected_cost = optimal_constant(lower, upper, margin, loss.tag, weight)
    finite = (np.isfinite(lower) | np.isfinite(upper)) & (weight > 0)
    assert found == finite.any()
    assert value == np.float64(expected_value) or abs(value - expected_value) < 1e-9
    assert abs(cost - expected_cost) < 1e-9 * max(1.0, expected_cost)


def brute_force_level(codes, lower_position, upper_position, weight, nodes, loss):
    """Per node (each an array of rows): histograms of the weighted gradients
    and curvatures (the weights when no row has curvature) and the rows at
    the residual 0, the optimum of its rows, their number and weight, its
    largest lower and smallest upper breakpoint."""
    _, gradient, curvature = derivatives(lower_position, upper_position,
                                         np.zeros(weight.size), loss.tag)
    gradient, curvature = gradient * weight, curvature * weight
    if not np.any(curvature > 0):
        curvature = weight
    histograms = np.zeros((len(nodes), codes.shape[1], 256, 3))
    optima, lowest, highest = [], [], []
    for k, rows in enumerate(nodes):
        for j in range(codes.shape[1]):
            for column, values in enumerate((gradient, curvature, np.ones(weight.size))):
                histograms[k, j, :, column] = np.bincount(
                    codes[rows, j], weights=values[rows], minlength=256)
        kept = rows[weight[rows] > 0]
        finite = np.isfinite(lower_position[kept]) | np.isfinite(upper_position[kept])
        optima.append(optimal_constant(lower_position[kept], upper_position[kept], 0.0,
                                       loss.tag, weight[kept])[0]
                      if finite.any() else np.nan)
        lowest.append(np.max(lower_position[kept], initial=-np.inf))
        highest.append(np.min(upper_position[kept], initial=np.inf))
    return (histograms, np.array(optima), np.array([rows.size for rows in nodes]),
            np.array([weight[rows].sum() for rows in nodes]), np.array(lowest),
            np.array(highest))


def assert_same_level(summary, expected):
    histograms, optima, rows, weights, lowest, highest = summary
    np.testing.assert_allclose(histograms, expected[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(optima, expected[1], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(rows, expected[2])
    np.testing.assert_allclose(weights, expected[3], rtol=1e-12)
    np.testing.assert_array_equal(lowest, expected[4])
    np.testing.assert_array_equal(highest, expected[5])


def brute_force_near(lower_position, upper_position, weight, rows, low, high):
    """A node's hinges near [low, high] (``LevelBuilder.grow``): the edges,
    the hinges within them (sorted), the sums below and above."""
    kept = rows[weight[rows] > 0]
    positions = np.r_[lower_position[kept], upper_position[kept]]
    parity = np.repeat([0, 1], kept.size)
    weights = np.r_[weight[kept], weight[kept]]
    finite = np.isfinite(positions)
    positions, parity, weights = positions[finite], parity[finite], weights[finite]
    low_edge = np.max(positions[positions < low], initial=-np.inf)
    high_edge = np.min(positions[positions > high], initial=np.inf)
    inside = (positions >= low_edge) & (positions <= high_edge)
    below = (positions < low_edge) & (parity == 1)
    above = (positions > high_edge) & (parity == 0)

    def sums(chosen):
        return np.array([weights[chosen].sum(), weights[chosen] @ positions[chosen],
                         weights[chosen] @ positions[chosen] ** 2])

    return ((low_edge, high_edge), np.sort(positions[inside]), sums(below), sums(above))


@st.composite
def partitions(draw):
    """A partition's rows: codes of 2 features in 4 bins (and missing),
    intervals, weights."""
    lower, upper, weight, _ = draw(split_intervals(max_rows=14))
    n = lower.size
    codes = np.array(draw(st.lists(st.lists(st.sampled_from([0, 1, 2, 3, MISSING_BIN]),
                                            min_size=2, max_size=2),
                                   min_size=n, max_size=n)), dtype=np.uint8)
    return codes, lower, upper, weight


@settings(max_examples=150, deadline=None)
@given(partitions(), st.sampled_from([0.0, 0.25]), st.sampled_from(sorted(LOSSES)),
       st.booleans(), st.integers(0, 2**31 - 1))
def test_a_partitions_levels_and_stages_are_the_brute_force_ones(data, margin, name, merge,
                                                                 seed):
    """Two stages of a depth-2 tree with random splits (the second feature
    categorical: random sets of its 4 categories): each level's summary and
    near hinges, and the loss after each stage, against brute force on the
    rows routed by their codes."""
    codes, lower, upper, weight = data
    loss = LOSSES[name]
    rng = np.random.default_rng(seed)
    builder = LevelBuilder(features_of(codes, 4, np.array([0, 4], dtype=np.int32)), lower,
                           upper, weight, margin, loss.tag, merge)
    lower_position, upper_position = hinge_positions(lower, upper, margin)
    prediction = np.zeros(lower.size)
    active = np.flatnonzero(weight > 0)
    # the breakpoints as the builder moves them: by each stage's shift, or
    # made again from the bounds moved by the predictions
    residual = (lower_position, upper_position)
    for _ in range(2):
        _, summary = builder.start(True)
        nodes, leaves = [active], []
        assert_same_level(summary, brute_force_level(codes, *residual, weight, nodes, loss))
        for depth in range(3):
            feature = np.where(rng.random(len(nodes)) < 0.7 if depth < 2 else False,
                               rng.integers(0, 2, len(nodes)), -1)
            bins = rng.integers(0, 4, len(nodes))
            missing_left = rng.integers(0, 2, len(nodes)).astype(np.uint8)
            lows = np.where(rng.random(len(nodes)) < 0.8, rng.normal(size=len(nodes)),
                            np.nan)
            highs = lows + rng.exponential(size=len(nodes))
            left_sets = rng.random((len(nodes), 4)) < 0.5
            categories = [np.array([left @ 2 ** np.arange(4), 15], dtype=np.uint32)
                          if feature[k] == 1 else None
                          for k, left in enumerate(left_sets)]
            near, summary = builder.grow(lows, highs, feature, bins, missing_left,
                                         categories, True)
            for k, rows in enumerate(nodes):
                listed = near[1][near[0] == k]
                if np.isnan(lows[k]):
                    assert listed.size == 0 and np.all(near[5][k] == 0)
                    continue
                edges, positions, below, above = brute_force_near(
                    *residual, weight, rows, lows[k], highs[k])
                assert tuple(near[4][k]) == edges
                np.testing.assert_array_equal(listed, positions)
                np.testing.assert_allclose(near[5][k], below, rtol=1e-12, atol=1e-12)
                np.testing.assert_allclose(near[6][k], above, rtol=1e-12, atol=1e-12)
            children = []
            for k, rows in enumerate(nodes):
                if feature[k] < 0:
                    leaves.append(rows)
                    continue
                code = codes[rows, feature[k]]
                goes_left = (left_sets[k][np.minimum(code, 3)] if feature[k] == 1
                             else code <= bins[k])
                left = np.where(code == MISSING_BIN, missing_left[k] == 1, goes_left)
                children += [rows[left], rows[~left]]
            nodes = children
            assert_same_level(summary, brute_force_level(codes, *residual, weight, nodes,
                                                         loss))
        assert not nodes
        values = rng.normal(size=len(leaves))
        shifts = np.zeros(lower.size)
        for rows, value in zip(leaves, values, strict=True):
            shifts[rows] = 0.5 * value
        prediction += shifts
        residual = ((residual[0] - shifts, residual[1] - shifts) if merge
                    else hinge_positions(lower - prediction, upper - prediction, margin))
        total = builder.finish(values, 0.5)
        expected = np.sum(weight * loss.value(lower_position, upper_position, prediction))
        assert total == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_the_curvature_of_other_partitions_rows():
    """A partition without curvature sums its weights, as a local splitter
    does, until the fit's other rows have some: then its zero curvatures."""
    loss = LOSSES["squared_hinge"]
    lower, upper = np.zeros(4), np.ones(4)  # every row at zero loss: no curvature
    builder = builder_of(lower, upper, np.array([1.0, 2.0, 0.0, 1.0]), 0.0, loss)
    curved, summary = builder.start(True)
    assert not curved
    np.testing.assert_array_equal(summary[0][0, 0, 0], [0.0, 4.0, 3.0])
    summary = builder.use_curvature()
    np.testing.assert_array_equal(summary[0][0, 0, 0], [0.0, 0.0, 3.0])


def test_a_builder_refuses_what_it_cannot_grow():
    loss = LOSSES["linear_hinge"]
    builder = builder_of(np.zeros(3), np.ones(3), np.ones(3), 0.0, loss)
    with pytest.raises(ValueError, match="one entry per row"):
        builder_of(np.zeros(3), np.ones(2), np.ones(3), 0.0, loss)
    builder.start(True)
    with pytest.raises(ValueError, match="one entry per node of the level"):
        builder.grow(*[np.zeros(2)] * 2, *cluster.no_splits(2), True)
    with pytest.raises(ValueError, match="split features"):
        builder.grow(np.zeros(1), np.zeros(1), np.array([3]), np.zeros(1, np.intp),
                     np.zeros(1, np.uint8), [None], True)
    with pytest.raises(ValueError, match="one entry per node of the level"):
        builder.near(np.zeros(2), np.zeros(2))
    categorical = LevelBuilder(features_of(np.zeros((3, 1), np.uint8), 4,
                                           np.array([4], dtype=np.int32)),
                               np.zeros(3), np.ones(3), np.ones(3), 0.0, loss.tag, True)
    categorical.start(False)
    with pytest.raises(ValueError, match="needs its sets: 2 words"):
        categorical.grow(np.zeros(1), np.zeros(1), np.zeros(1, np.intp),
                         np.zeros(1, np.intp), np.zeros(1, np.uint8), [None], False)
    with pytest.raises(ValueError, match="has not ended"):
        builder.finish(np.zeros(1), 0.1)
    builder.grow(np.zeros(1), np.zeros(1), *cluster.no_splits(1), False)
    with pytest.raises(ValueError, match="values has 2 entries for 1 leaves"):
        builder.finish(np.zeros(2), 0.1)


def test_grouped_minima_solve_each_group():
    rng = np.random.default_rng(0)
    lower = rng.normal(size=40)
    upper = lower + rng.exponential(size=40)
    group = rng.integers(0, 3, size=40)
    loss = LOSSES["squared_hinge"]
    positions = np.concatenate([lower + 0.1, upper - 0.1])
    hinges = np.r_[np.zeros(40), np.ones(40)].astype(np.int32)
    node = np.r_[group, group]
    order = np.lexsort((positions, node))
    starts = np.searchsorted(node[order], np.arange(4)).astype(np.intp)
    values, costs, found = grouped_minima(positions[order], np.ones(80), hinges[order],
                                          starts, loss.tag)
    for k in range(3):
        rows = group == k
        expected = optimal_constant(lower[rows], upper[rows], 0.1, loss.tag,
                                    np.ones(rows.sum()))
        np.testing.assert_allclose((values[k], costs[k]), expected, rtol=1e-12)
    assert found.all()


def brute_force_split(sums, n_bins, min_leaf, order):
    """The best split of a histogram by the splitter's rules, feature by
    feature in ``order`` (ties: the first), bin by bin, missing rows on each
    side."""
    best = (-1, -1, False, 0.0)
    total_g, total_h, m = sums[0].sum(axis=0)

    def score(g, h):
        return g * g / h if h > 1e-10 * total_h else 0.0

    parent = total_g * total_g / total_h if total_h > 0 else 0.0
    for j in order:
        missing = sums[j, MISSING_BIN]
        best_j = (-1, False, 0.0)
        for missing_left in ((False, True) if missing[2] > 0 else (False,)):
            left = missing.copy() if missing_left else np.zeros(3)
            for b in range(n_bins[j]):
                left = left + sums[j, b]
                if sums[j, b, 2] == 0 or left[2] >= m:
                    continue
                if left[2] < min_leaf or m - left[2] < min_leaf:
                    continue
                left_score, right_score = score(left[0], left[1]), score(
                    total_g - left[0], total_h - left[1])
                gain = left_score + right_score - parent
                if (gain > best_j[2] * (1 + 1e-10)
                        and gain > 1e-10 * (left_score + right_score)):
                    best_j = (b, missing_left, gain)
        if best_j[2] > best[3] * (1 + 1e-10):
            best = (j, best_j[0], best_j[1], best_j[2])
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 4), st.booleans())
def test_the_split_of_a_summed_histogram_is_the_brute_force_one(seed, min_leaf, twins):
    """Features tried in the node's order, ties (``twins``: two copies of a
    column) to the first in it."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 5, size=(40, 3)).astype(np.uint8)
    codes[rng.random(codes.shape) < 0.15] = MISSING_BIN
    if twins:
        codes[:, 2] = codes[:, 0]
    gradient, hessian = rng.normal(size=40), rng.random(40) + 0.1
    sums = np.stack([np.stack([np.bincount(codes[:, j], weights=values, minlength=256)
                               for values in (gradient, hessian, np.ones(40))], axis=1)
                     for j in range(3)])
    n_bins = np.full(3, 5, dtype=np.int32)
    order = draw_order(seed, 3)
    feature, bin_, missing_left, _, gain, categories = best_histogram_split(
        sums, n_bins, min_leaf, order, np.zeros(3, dtype=np.int32), 0.0)
    assert categories is None
    expected = brute_force_split(sums, n_bins, min_leaf, order)
    assert (feature, bin_, missing_left) == expected[:3]
    assert gain == (expected[3] if feature >= 0 else 0.0) or abs(gain - expected[3]) < 1e-9


def test_a_nodes_draw_order_follows_from_its_path():
    """The order is a permutation drawn from the node's key alone; a child's
    key from its parent's and its side."""
    orders = {tuple(draw_order(key, 7)) for key in range(200)}
    assert all(sorted(order) == list(range(7)) for order in orders)
    assert len(orders) > 100  # keys draw different orders
    np.testing.assert_array_equal(draw_order(12345, 7), draw_order(12345, 7))
    left, right = child_keys(12345)
    assert left != right and child_keys(12345) == (left, right)
    assert child_keys(2**64 - 1)[0] < 2**64
    assert draw_order(3, 0).shape == (0,)
    with np.testing.assert_raises_regex(ValueError, "every feature once"):
        best_histogram_split(np.zeros((2, 256, 3)), np.full(2, 3, dtype=np.int32), 1,
                             np.array([0, 0], dtype=np.intp), np.zeros(2, np.int32), 0.0)
