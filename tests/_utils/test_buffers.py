"""Working arrays kept between builds (mmit._utils._buffers): a builder's second
build gives the tree a fresh builder gives."""

import numpy as np

from mmit._loss._loss import LOSSES
from mmit._utils._buffers import Buffers
from mmit.tree._builder import TreeBuilder
from mmit.tree._criterion import HingeTargets
from mmit.tree._features import Features


def test_buffers_hand_out_views_of_one_array_per_name():
    buffers = Buffers()
    first = buffers.empty("a", 10)
    second = buffers.empty("a", (2, 3))
    assert second.shape == (2, 3) and np.shares_memory(first, second)
    assert not np.shares_memory(first, buffers.empty("b", 10))
    grown = buffers.empty("a", 11)
    assert grown.shape == (11,) and not np.shares_memory(first, grown)
    assert buffers.empty("a", 4, np.int32).dtype == np.int32


def test_a_builder_reuses_its_buffers_and_builds_one_tree_at_a_time():
    """Two builds of one builder give the trees of two fresh builders (the
    working arrays kept between them are refilled); the leaf values a build
    hands back are the tree's predictions of its rows."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 3))
    targets = [HingeTargets(X[:, 0] - shift, X[:, 0] + shift, 0.1) for shift in (0.5, 2.0)]
    features = Features(X, True)
    weight = rng.uniform(0.0, 2.0, 120)
    weight[::10] = 0.0
    shared = TreeBuilder(LOSSES["squared_hinge"], 4, 2, 1, 3, -1, 0.0, 0)
    for target in targets:
        values = np.full(120, np.nan)
        tree = shared.build(features, target, weight, 1, values)
        fresh = TreeBuilder(LOSSES["squared_hinge"], 4, 2, 1, 3, -1, 0.0, 0).build(
            features, target, weight, 1)
        np.testing.assert_array_equal(tree.value, fresh.value)
        np.testing.assert_array_equal(tree.threshold, fresh.threshold)
        grown = weight > 0
        np.testing.assert_array_equal(values[grown], tree.predict(X)[grown])
        assert np.isnan(values[~grown]).all()
