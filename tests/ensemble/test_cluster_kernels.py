"""The kernels of the booster's fit on a cluster, against brute force: the
exact optimum of hinges split between partitions, the grouping of hinges by
node, per-node histograms, the routing of rows and the split of a summed
histogram."""

import functools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mmit._loss._loss import LOSSES, weighted_loss
from mmit._loss._solver import (
    group_hinges,
    group_minimisers,
    grouped_minima,
    hinge_positions,
    optimal_constant,
)
from mmit.ensemble import _dask_boosting as cluster
from mmit.tree._binning import MISSING_BIN
from mmit.tree._histogram_splitter import (
    best_histogram_split,
    child_keys,
    feature_order,
    node_histograms,
    route_rows,
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


def solved_on_partitions(lower, upper, weight, parts, margin, loss):
    """The optimum as the cluster fit finds it: each partition's own optimum,
    then its hinges near the optima's range, solved on the client."""
    states = []
    for k in range(3):
        rows = np.flatnonzero(parts == k)
        state = cluster.PartitionRows(np.zeros((rows.size, 1), np.uint8), lower[rows],
                                      upper[rows], weight[rows], np.zeros(rows.size))
        state = cluster.begin_stage(state, None, None, 0.1, margin, loss.tag)
        states.append(cluster.grow_level(state, None, 1, False, False, loss.tag, 1))
    _, lows, highs, _, _ = functools.reduce(cluster.add_level_summaries,
                                            [state.summary for state in states])
    near = functools.reduce(cluster.add_near_hinges,
                            [cluster.hinges_near(state, lows, highs).summary
                             for state in states])
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


@settings(max_examples=300, deadline=None)
@given(split_intervals(max_rows=12), st.sampled_from([0.0, 0.25]),
       st.sampled_from(sorted(LOSSES)), st.integers(0, 2**31 - 1))
def test_a_selected_minimiser_minimises_hinges_in_any_order(data, margin, name, seed):
    lower, upper, weight, _ = data
    loss = LOSSES[name]
    lower_position, upper_position = hinge_positions(lower, upper, margin)
    positions = np.r_[lower_position, upper_position]
    parity = np.repeat(np.array([0, 1], dtype=np.int32), lower.size)
    weights = np.r_[weight, weight]
    finite = np.flatnonzero(np.isfinite(positions))
    order = np.random.default_rng(seed).permutation(finite)
    minimiser = group_minimisers(positions[order], weights[order], parity[order],
                                 np.array([0, order.size], dtype=np.intp), loss.tag)[0]
    _, cost = optimal_constant(lower, upper, margin, loss.tag, weight)
    if not np.any(weights[finite] > 0):
        assert np.isnan(minimiser)
        return
    value = weighted_loss(lower_position, upper_position, np.full(lower.size, minimiser),
                          weight, loss.tag)
    assert value <= cost + 1e-9 * max(1.0, cost)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 3), min_size=1, max_size=30), st.integers(0, 2**31 - 1))
def test_hinges_are_grouped_by_slot_in_their_order(slots, seed):
    slots = np.array(slots, dtype=np.int32)
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, slots.size, size=2 * slots.size).astype(np.intp)
    positions, weights = np.sort(rng.normal(size=rows.size)), rng.random(rows.size)
    parity = rng.integers(0, 2, size=rows.size).astype(np.int32)
    grouped_rows, grouped_positions, grouped_weights, grouped_parity, starts = group_hinges(
        slots, rows, positions, weights, parity, 4)
    kept = np.flatnonzero(slots[rows] >= 0)
    order = kept[np.argsort(slots[rows][kept], kind="stable")]
    np.testing.assert_array_equal(grouped_rows, rows[order])
    np.testing.assert_array_equal(grouped_positions, positions[order])
    np.testing.assert_array_equal(grouped_weights, weights[order])
    np.testing.assert_array_equal(grouped_parity, parity[order])
    np.testing.assert_array_equal(starts, np.searchsorted(slots[rows][order],
                                                          np.arange(5)))


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


def test_histograms_and_routes_of_rows_by_slot():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 6, size=(50, 3)).astype(np.uint8)
    codes[rng.random(codes.shape) < 0.1] = MISSING_BIN
    slots = rng.integers(-1, 2, size=50).astype(np.int32)
    gradient, hessian = rng.normal(size=50), rng.random(50)
    sums = node_histograms(codes, slots, gradient, hessian, 2, 2)
    for slot in range(2):
        for j in range(3):
            rows = slots == slot
            for column, values in enumerate((gradient, hessian, np.ones(50))):
                expected = np.bincount(codes[rows, j], weights=values[rows], minlength=256)
                np.testing.assert_allclose(sums[slot, j, :, column], expected, atol=1e-12)
    routed = route_rows(codes, slots, np.array([2, -1]), np.array([3, 0]),
                        np.array([1, 0], dtype=np.uint8), np.array([0, 0], dtype=np.int32),
                        np.array([1, 1], dtype=np.int32))
    code = codes[:, 2]
    expected = np.where(slots != 0, -1,
                        np.where(np.where(code == MISSING_BIN, True, code <= 3), 0, 1))
    np.testing.assert_array_equal(routed, expected)


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
    sums = node_histograms(codes, np.zeros(40, dtype=np.int32), gradient, hessian, 1)[0]
    n_bins = np.full(3, 5, dtype=np.int32)
    order = feature_order(seed, 3)
    feature, bin_, missing_left, _, gain = best_histogram_split(sums, n_bins, min_leaf,
                                                                order)
    expected = brute_force_split(sums, n_bins, min_leaf, order)
    assert (feature, bin_, missing_left) == expected[:3]
    assert gain == (expected[3] if feature >= 0 else 0.0) or abs(gain - expected[3]) < 1e-9


def test_a_nodes_feature_order_follows_from_its_path():
    """The order is a permutation drawn from the node's key alone; a child's
    key from its parent's and its side."""
    orders = {tuple(feature_order(key, 7)) for key in range(200)}
    assert all(sorted(order) == list(range(7)) for order in orders)
    assert len(orders) > 100  # keys draw different orders
    np.testing.assert_array_equal(feature_order(12345, 7), feature_order(12345, 7))
    left, right = child_keys(12345)
    assert left != right and child_keys(12345) == (left, right)
    assert child_keys(2**64 - 1)[0] < 2**64
    assert feature_order(3, 0).shape == (0,)
    with np.testing.assert_raises_regex(ValueError, "every feature once"):
        best_histogram_split(np.zeros((2, 256, 3)), np.full(2, 3, dtype=np.int32), 1,
                             np.array([0, 0], dtype=np.intp))
