"""Monotone constraints: the constrained split search and leaf values against
a brute-force oracle, monotone predictions of every tree estimator, the
unconstrained trees unchanged, and the errors of bad constraints.

The oracle (independent of the solver and the builder) finds every node's
region from its ancestors' splits (per feature, the range of present values
and whether missing values reach it) and the pairs of leaves (of nodes, for
a tree grown to be pruned) that lie one below the other along a constrained
feature: their values must follow its direction. It scores every split of a
node with each part at its brute-force optimum, keeps the splits whose
parts follow the feature's direction, and checks the node's split against
it; each leaf's value must be its rows' optimum, or, beyond the optimum, the
value of a node below or above it (the leaf that bounded it when it
appeared, which may have split since).
"""

import numpy as np
import pytest
from brute_force import conventional_minimiser, minimum, objective
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from problems import grid_intervals, small_split_rows

from mmit import (
    MMIT,
    MMITCV,
    IntervalLinearRegression,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    MMITForestCV,
)
from mmit._loss._loss import LOSSES as LOSS_ENTRIES
from mmit.tree._builder import TreeBuilder
from mmit.tree._criterion import HingeTargets
from mmit.tree._features import Features

LOSSES = sorted(LOSS_ENTRIES)
INF = np.inf


def grow(X, lower, upper, weight, loss, margin, monotonic, *, presorted, max_depth,
         min_samples_leaf=1, seed=1, prunable=False):
    builder = TreeBuilder(LOSS_ENTRIES[loss], max_depth, 2, min_samples_leaf, X.shape[1],
                          -1, 0.0, 0 if presorted else 2**62, 0.0, monotonic,
                          prunable=prunable)
    return builder.build(Features(X, presorted), HingeTargets(lower, upper, margin),
                         weight, seed)


def clipped_part(rows, lower, upper, weight, loss, margin, low=-INF, high=INF):
    """The part's value (its conventional optimum clipped to [low, high];
    None without a finite bound) and its cost there."""
    best, left, right = minimum(lower[rows], upper[rows], margin, loss, weight[rows])
    if left is None:
        return None, 0.0
    value = min(max(conventional_minimiser(left, right), low), high)
    return value, objective(value, lower[rows], upper[rows], margin, loss, weight[rows])


def oracle_best(X, rows, lower, upper, weight, loss, margin, monotonic, min_samples_leaf):
    """The least cost of an admissible split of the node's ``rows``: its parts
    at their optima, which follow the direction of a constrained feature."""
    best = INF
    for feature in range(X.shape[1]):
        x = X[:, feature]
        missing = np.isnan(x) & rows
        present = ~np.isnan(x) & rows
        values = np.unique(x[present])
        partitions = [((x <= value) & present, missing_left, True)
                      for value in values[:-1]
                      for missing_left in ((False, True) if missing.any() else (False,))]
        if missing.any() and present.any():
            partitions.append((present, False, False))  # not ordered
        for left_present, missing_left, ordered in partitions:
            left = left_present | (missing & missing_left)
            right = rows & ~left
            if left.sum() < min_samples_leaf or right.sum() < min_samples_leaf:
                continue
            left_value, left_cost = clipped_part(left, lower, upper, weight, loss, margin)
            right_value, right_cost = clipped_part(right, lower, upper, weight, loss,
                                                   margin)
            sign = monotonic[feature] if ordered else 0
            if (sign != 0 and left_value is not None and right_value is not None
                    and sign * (right_value - left_value) < 0):
                continue
            best = min(best, left_cost + right_cost)
    return best


def node_rows(tree, X, weight):
    """Each node's training rows of positive weight (boolean masks)."""
    path = tree.decision_path(np.ascontiguousarray(X)).toarray().astype(bool)
    return [path[:, node] & (weight > 0) for node in range(tree.node_count)]


def node_regions(tree):
    """Each node's region: per feature, present values in (low, high] and
    whether missing values reach it (arrays of shape (n_features,))."""
    n_features = tree.n_features
    regions = [None] * tree.node_count
    regions[0] = (np.full(n_features, -INF), np.full(n_features, INF),
                  np.ones(n_features, bool))
    for node in range(tree.node_count):  # parents come before their children
        left, right = tree.children_left[node], tree.children_right[node]
        if left < 0:
            continue
        low, high, missing = regions[node]
        feature, threshold = tree.feature[node], tree.threshold[node]
        missing_left = bool(tree.missing_go_to_left[node])
        regions[left] = (low.copy(), high.copy(), missing.copy())
        regions[right] = (low.copy(), high.copy(), missing.copy())
        regions[left][1][feature] = min(high[feature], threshold)
        regions[left][2][feature] = missing[feature] and missing_left
        regions[right][0][feature] = max(low[feature], threshold)
        regions[right][2][feature] = missing[feature] and not missing_left
    return regions


def below(a, b, feature):
    """Whether region ``a`` lies below region ``b`` along ``feature``: they
    meet along every other feature, and a's present values are below b's."""
    low_a, high_a, missing_a = a
    low_b, high_b, missing_b = b
    meet = (np.maximum(low_a, low_b) < np.minimum(high_a, high_b)) | (missing_a & missing_b)
    meet[feature] = True
    return (meet.all() and low_a[feature] < high_a[feature]
            and low_b[feature] < high_b[feature] and high_a[feature] <= low_b[feature])


def comparable_values(tree, monotonic, node, others, regions):
    """The values of ``others`` below and above ``node`` along a constrained
    feature that bound its value from below and from above."""
    lows, highs = [], []
    for other in others:
        for feature in np.flatnonzero(monotonic):
            sign = monotonic[feature]
            if below(regions[other], regions[node], feature):
                (lows if sign > 0 else highs).append(tree.value[other])
            if below(regions[node], regions[other], feature):
                (highs if sign > 0 else lows).append(tree.value[other])
    return lows, highs


def ancestors(tree, node):
    parents = {child: parent for parent in range(tree.node_count)
               for child in (tree.children_left[parent], tree.children_right[parent])
               if child >= 0}
    found = set()
    while node in parents:
        node = parents[node]
        found.add(node)
    return found


@st.composite
def constrained_problems(draw):
    """Few rows on a coarse grid (ties), NaN in X, censored targets, weights,
    a direction per feature."""
    X, lower, upper, weight = draw(small_split_rows(12))
    monotonic = np.array(draw(st.lists(st.sampled_from([-1, 0, 1]), min_size=X.shape[1],
                                       max_size=X.shape[1])), dtype=np.int8)
    return (X, lower, upper, weight, draw(st.sampled_from(LOSSES)),
            draw(st.sampled_from([0.0, 0.5])), monotonic)


@st.composite
def deeper_constrained_problems(draw):
    """More rows on a finer grid than ``constrained_problems``, two or three
    features (NaN among them), every feature constrained or free: trees of
    many leaves, some of them bounded by leaves of other branches."""
    n = draw(st.integers(8, 30))
    p = draw(st.integers(2, 3))
    X = np.array(draw(st.lists(st.lists(
        st.one_of(st.integers(0, 7).map(float), st.just(np.nan)), min_size=p, max_size=p),
        min_size=n, max_size=n)))
    lower, upper = draw(grid_intervals(n, st.integers(-8, 8).map(lambda k: k / 2),
                                       ("interval", "exact", "left", "right")))
    weight = np.ones(n)
    monotonic = np.array(draw(st.lists(st.sampled_from([-1, 1, 1, 0]), min_size=p,
                                       max_size=p)), dtype=np.int8)
    return (X, lower, upper, weight, draw(st.sampled_from(LOSSES)),
            draw(st.sampled_from([0.0, 0.5])), monotonic)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(constrained_problems(), deeper_constrained_problems()), st.booleans())
def test_constrained_splits_and_values_are_the_brute_force_optima(problem, presorted):
    X, lower, upper, weight, loss, margin, monotonic = problem
    tree = grow(X, lower, upper, weight, loss, margin, monotonic, presorted=presorted,
                max_depth=4)
    rows = node_rows(tree, X, weight)
    regions = node_regions(tree)
    leaves = np.flatnonzero(tree.children_left < 0)
    tolerance = 1e-9 * (1.0 + tree.cost[0])
    for node in range(tree.node_count):
        value = tree.value[node]
        assert tree.cost[node] == pytest.approx(objective(
            value, lower[rows[node]], upper[rows[node]], margin, loss, weight[rows[node]]),
            rel=1e-9, abs=1e-12)
        left_child, right_child = tree.children_left[node], tree.children_right[node]
        oracle = oracle_best(X, rows[node], lower, upper, weight, loss, margin, monotonic,
                             1)
        if left_child < 0:
            # monotone: within the values of the leaves below and above it
            lows, highs = comparable_values(tree, monotonic, node, leaves, regions)
            assert max(lows, default=-INF) <= value <= min(highs, default=INF)
            # its optimum, or the value of a node bounding it on that side
            optimum, _ = clipped_part(rows[node], lower, upper, weight, loss, margin)
            others = [other for other in range(tree.node_count) if other != node
                      and other not in ancestors(tree, node)]
            lows, highs = comparable_values(tree, monotonic, node, others, regions)
            if optimum is not None and value != pytest.approx(optimum, rel=1e-9, abs=1e-12):
                assert value in (lows if value > optimum else highs)
            if len(ancestors(tree, node)) < 4 and rows[node].sum() >= 2:
                # a leaf of a node that could split: no admissible split lowers its cost
                assert not oracle < tree.cost[node] - tolerance
            continue
        # the split: the best admissible one, its parts at their optima
        split_cost = sum(clipped_part(rows[child], lower, upper, weight, loss, margin)[1]
                         for child in (left_child, right_child))
        assert split_cost == pytest.approx(oracle, abs=tolerance)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(constrained_problems(), deeper_constrained_problems()), st.booleans())
def test_every_subtree_of_a_prunable_constrained_tree_is_monotone(problem, presorted):
    """Grown to be pruned, any two nodes (but a node and its ancestors) one
    below the other follow the direction: every pruned subtree is monotone."""
    X, lower, upper, weight, loss, margin, monotonic = problem
    tree = grow(X, lower, upper, weight, loss, margin, monotonic, presorted=presorted,
                max_depth=4, prunable=True)
    regions = node_regions(tree)
    for node in range(tree.node_count):
        related = ancestors(tree, node) | {node}
        others = [other for other in range(tree.node_count)
                  if other not in related and node not in ancestors(tree, other)]
        lows, highs = comparable_values(tree, monotonic, node, others, regions)
        assert max(lows, default=-INF) <= tree.value[node] <= min(highs, default=INF)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(constrained_problems(), st.integers(1, 2**31))
def test_presorted_and_sorted_on_demand_grow_the_same_constrained_tree(problem, seed):
    X, lower, upper, weight, loss, margin, monotonic = problem
    trees = [grow(X, lower, upper, weight, loss, margin, monotonic, presorted=presorted,
                  max_depth=64, seed=seed) for presorted in (True, False)]
    assert trees[0].__getstate__().keys() == trees[1].__getstate__().keys()
    for name in ("children_left", "feature", "threshold", "value", "cost"):
        np.testing.assert_array_equal(getattr(trees[0], name), getattr(trees[1], name))


def interval_data(n, p, seed):
    """Censored intervals around an increasing function of feature 0 and a
    decreasing one of feature 1, some values missing."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    signal = X[:, 0] + np.sin(3 * X[:, 0]) - X[:, 1] ** 3 / 3
    y = signal + rng.normal(size=n)
    lower, upper = y - 0.3, y + 0.3
    lower[rng.random(n) < 0.25] = -INF
    upper[rng.random(n) < 0.25] = INF
    X[rng.random((n, p)) < 0.05] = np.nan
    return X, np.column_stack([lower, upper])


ESTIMATORS = {
    "tree": lambda: MMIT(min_samples_leaf=3, random_state=0),
    "tree_best_first": lambda: MMIT(max_leaf_nodes=12, loss="squared_hinge",
                                    random_state=0),
    "tree_cv": lambda: MMITCV(cv=3, margins=[0.0, 0.2], random_state=0),
    "forest": lambda: MMITForest(n_estimators=10, max_features=0.5, random_state=0),
    "forest_cv": lambda: MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=8,
                                      random_state=0),
    "boost_exact": lambda: MMITBoost(n_estimators=30, learning_rate=0.3, random_state=0),
    "boost_hist": lambda: MMITBoost(n_estimators=30, learning_rate=0.3, splitter="hist",
                                    max_bins=16, random_state=0),
    # the default members: a forest, a booster, a linear model behind an imputer
    "stack": lambda: IntervalStackingRegressor(random_state=0, distribution=None),
}


def assert_monotone_along_lines(model, X, monotonic, seed, n_lines=20):
    """Predictions along random lines parallel to each constrained feature's
    axis (through random points, some features missing) follow its sign."""
    rng = np.random.default_rng(seed)
    for feature in np.flatnonzero(monotonic):
        for _ in range(n_lines):
            point = X[rng.integers(X.shape[0])].copy()
            line = np.repeat(point[np.newaxis], 64, axis=0)
            line[:, feature] = np.sort(rng.normal(scale=2.0, size=64))
            steps = np.diff(model.predict(line)) * monotonic[feature]
            assert steps.min() >= -1e-12 * (1 + np.abs(model.predict(line)).max())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(ESTIMATORS)), st.integers(0, 2**16),
       st.lists(st.sampled_from([-1, 0, 1]), min_size=3, max_size=3))
def test_every_tree_estimator_is_monotone(name, seed, signs):
    X, y = interval_data(150, 3, seed)
    monotonic = np.array(signs)
    model = ESTIMATORS[name]().set_params(monotonic_cst=signs).fit(X, y)
    assert_monotone_along_lines(model, X, monotonic, seed)


# the search's pruned tree happens to be monotone on these data already
@pytest.mark.parametrize("name", sorted(set(ESTIMATORS) - {"tree_cv"}))
def test_constraints_hold_where_the_unconstrained_fit_breaks_them(name):
    X, y = interval_data(300, 3, 0)
    monotonic = np.array([1, -1, 0])
    free = ESTIMATORS[name]().fit(X, y)
    with pytest.raises(AssertionError):  # the noise makes the free fit non-monotone
        assert_monotone_along_lines(free, X, monotonic, 1)
    model = ESTIMATORS[name]().set_params(monotonic_cst=[1, -1, 0]).fit(X, y)
    assert_monotone_along_lines(model, X, monotonic, 1)
    # a constraint costs some training fit, not all of it
    assert np.corrcoef(model.predict(X), free.predict(X))[0, 1] > 0.5


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_no_constraint_grows_the_same_model(name):
    X, y = interval_data(200, 3, 2)
    free = ESTIMATORS[name]().fit(X, y)
    zero = ESTIMATORS[name]().set_params(monotonic_cst=[0, 0, 0]).fit(X, y)
    np.testing.assert_array_equal(zero.predict(X), free.predict(X))


def test_constraints_by_name():
    pandas = pytest.importorskip("pandas")
    X, y = interval_data(200, 3, 3)
    frame = pandas.DataFrame(X, columns=["dose", "age", "site"])
    by_name = MMIT(min_samples_leaf=3, random_state=0).set_params(
        monotonic_cst={"dose": 1, "age": -1}).fit(frame, y)
    by_position = MMIT(min_samples_leaf=3, monotonic_cst=[1, -1, 0],
                       random_state=0).fit(X, y)
    np.testing.assert_array_equal(by_name.predict(frame), by_position.predict(X))
    empty = MMIT(min_samples_leaf=3, monotonic_cst={}, random_state=0).fit(frame, y)
    np.testing.assert_array_equal(
        empty.predict(frame), MMIT(min_samples_leaf=3, random_state=0).fit(X, y).predict(X))


@pytest.mark.parametrize("constraint, message", [
    ([1, 0], "one entry per feature"),
    ([[1, 0, 0]], "one entry per feature"),
    ([2, 0, 0], "only -1, 0 or 1"),
    ([0.5, 0, 0], "only -1, 0 or 1"),
    ([True, 0, 0], "only -1, 0 or 1"),
    (["up", 0, 0], "only -1, 0 or 1"),
    ({"dose": 1}, "feature names"),
])
def test_bad_constraints_are_refused(constraint, message):
    X, y = interval_data(50, 3, 4)
    X = np.nan_to_num(X)  # the linear model takes no NaN
    for model in (MMIT(), MMITForest(n_estimators=2), MMITBoost(n_estimators=2),
                  MMITCV(cv=2), MMITForestCV(n_estimators=2), IntervalLinearRegression(),
                  IntervalStackingRegressor([("tree", MMIT())])):
        with pytest.raises(ValueError, match=message):
            model.set_params(monotonic_cst=constraint).fit(X, y)


def test_unknown_names_categorical_features_and_linear_leaves_are_refused():
    pandas = pytest.importorskip("pandas")
    X, y = interval_data(60, 2, 5)
    frame = pandas.DataFrame(X, columns=["dose", "age"])
    with pytest.raises(ValueError, match=r"not in X: \['weight'\]"):
        MMIT(monotonic_cst={"weight": 1}).fit(frame, y)
    frame["site"] = pandas.Categorical(np.arange(60) % 3)
    for model in (MMIT(), MMITBoost(n_estimators=2, splitter="hist")):
        with pytest.raises(ValueError, match=r"categorical features \['site'\]"):
            model.set_params(monotonic_cst={"site": 1}).fit(frame, y)
    MMIT(monotonic_cst={"dose": 1}).fit(frame, y)  # other features may be categorical
    for model in (MMIT(min_samples_leaf=5, leaf_model="linear"),
                  MMITCV(cv=2, leaf_models=["constant", "linear"])):
        with pytest.raises(ValueError, match="constant leaves"):
            model.set_params(monotonic_cst=[1, 0]).fit(X, y)


def test_the_stack_refuses_members_it_cannot_constrain():
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = interval_data(60, 2, 6)
    exact = np.where(np.isfinite(y[:, 0]), y[:, 0], 0.0)
    X = np.nan_to_num(X)
    with pytest.raises(ValueError, match="'ridge' .Ridge. takes no monotonic_cst"):
        IntervalStackingRegressor([("tree", MMIT()), ("ridge", Ridge())],
                                  monotonic_cst=[1, 0]).fit(X, exact)
    with pytest.raises(ValueError, match="'scaled' is a pipeline"):
        IntervalStackingRegressor([("scaled", make_pipeline(StandardScaler(), MMIT()))],
                                  monotonic_cst=[1, 0]).fit(X, exact)


def test_shap_values_of_constrained_models_add_up():
    from mmit import shap_values
    X, y = interval_data(200, 3, 7)
    for name in ("boost_hist", "forest"):
        model = ESTIMATORS[name]().set_params(monotonic_cst=[1, -1, 0]).fit(X, y)
        explanation = shap_values(model, X[:20])
        np.testing.assert_allclose(
            explanation.values.sum(axis=1) + explanation.base_values, model.predict(X[:20]),
            rtol=1e-9, atol=1e-9)
