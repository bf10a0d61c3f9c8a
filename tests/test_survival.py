"""The survival helper: (event, time) pairs as intervals."""

import numpy as np
import pytest

from mmit import MMIT, intervals_from_survival


def test_intervals_from_survival():
    y = intervals_from_survival([True, False, 1, 0], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(y, [[1, 1], [2, np.inf], [3, 3], [4, np.inf]])
    logged = intervals_from_survival([True, False], [np.e, 1.0], log=True)
    np.testing.assert_allclose(logged, [[1, 1], [0, np.inf]])
    with pytest.raises(ValueError, match="positive"):
        intervals_from_survival([True], [0.0], log=True)
    with pytest.raises(ValueError, match="event"):
        intervals_from_survival([2], [1.0])
    with pytest.raises(ValueError, match="inconsistent"):
        intervals_from_survival([True, False], [1.0])
    # a model fits them like any interval target
    X = np.arange(4.0).reshape(-1, 1)
    assert MMIT().fit(X, y).score(X, y) == 0.0
