"""Validation of targets and the scales derived from them."""

import numpy as np

from mmit._utils._validation import default_margins


def test_default_margins_include_zero_and_scale_with_the_bounds():
    lower = np.array([0.0, 1.0, -np.inf, 5.0])
    upper = np.array([2.0, np.inf, 3.0, 9.0])
    margins = default_margins(lower, upper)
    assert margins[0] == 0.0 and len(margins) == 8
    assert np.all(np.diff(margins) > 0)
    np.testing.assert_allclose(default_margins(10 * lower, 10 * upper), 10 * margins)
    assert default_margins(np.zeros(3), np.zeros(3)).tolist() == [0.0]
