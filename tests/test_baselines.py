"""The baselines: the constant and Interval-CART."""


import numpy as np

from mmit.baselines import ConstantRegressor, IntervalCART, interval_cart_rows


def test_baselines():
    X = np.arange(8.0).reshape(-1, 1)
    y = np.column_stack([np.r_[np.zeros(4), np.full(4, 5.0)],
                         np.r_[np.ones(4), np.full(4, 6.0)]])
    constant = ConstantRegressor().fit(X, y)
    assert np.all(constant.predict(X) == constant.constant_)
    cart = IntervalCART(max_depth=1).fit(X, y)
    np.testing.assert_allclose(cart.predict(X), np.r_[np.full(4, 0.5), np.full(4, 5.5)])
    rows, targets = interval_cart_rows(np.array([0.0, -np.inf]), np.array([1.0, 2.0]), 0.25)
    np.testing.assert_array_equal(rows, [0, 0, 1])
    np.testing.assert_array_equal(targets, [0.25, 0.75, 1.75])
