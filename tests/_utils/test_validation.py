"""Validation of targets, times, and the scales derived from them."""

import numpy as np
import pytest

from mmit._utils._validation import check_times, default_margins


def test_default_margins_include_zero_and_scale_with_the_bounds():
    lower = np.array([0.0, 1.0, -np.inf, 5.0])
    upper = np.array([2.0, np.inf, 3.0, 9.0])
    margins = default_margins(lower, upper)
    assert margins[0] == 0.0 and len(margins) == 8
    assert np.all(np.diff(margins) > 0)
    np.testing.assert_allclose(default_margins(10 * lower, 10 * upper), 10 * margins)
    assert default_margins(np.zeros(3), np.zeros(3)).tolist() == [0.0]


def test_one_check_of_times_for_samples_grids_and_domains():
    # each sample's time, or interval of times (a lower bound 0 on log times:
    # the time origin)
    np.testing.assert_array_equal(check_times([0.0, 2.0]), [0.0, 2.0])
    check_times(np.array([[0.0, 1.0], [2.0, np.inf]]), log=True)
    with pytest.raises(ValueError, match="log=True needs positive times; rows 0 are not"):
        check_times([0.0, 2.0], log=True)
    with pytest.raises(ValueError, match="positive times; rows 1 are not"):
        check_times(np.array([[0.0, 1.0], [0.0, 0.0]]), log=True)
    with pytest.raises(ValueError, match="non-negative times; rows 0, 2 are not"):
        check_times(np.array([[-1.0, 1.0], [0.0, 0.0], [-2.0, -1.0]]))
    # a grid
    np.testing.assert_array_equal(check_times(1.0, grid=True), [1.0])
    for bad in ([], [np.nan], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="grid must be a non-empty 1-D list"):
            check_times(bad, name="grid", grid=True)
    for bad in ([2.0, 1.0], [1.0, 1.0], [-1.0, 2.0], [1.0, np.inf]):
        with pytest.raises(ValueError, match="must increase from a non-negative"):
            check_times(bad, grid=True)
    check_times([0.0, 1.0], grid=True)
    with pytest.raises(ValueError, match="positive first time"):
        check_times([0.0, 1.0], log=True, grid=True)
    # a domain
    np.testing.assert_array_equal(check_times(2.0, domain=(1.0, 3.0)), [2.0])
    with pytest.raises(ValueError, match=r"times must lie within the domain \[1.0, 3.0\]"):
        check_times([1.0, 3.5], domain=(1.0, 3.0))


@pytest.mark.parametrize("name", ["IntervalLinearRegressionCV", "IntervalGAMCV"])
def test_a_fold_of_weightless_training_rows_gets_a_clear_error(name):
    import mmit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.column_stack([X[:, 0] - 0.1, X[:, 0] + 0.1])
    weight = np.ones(60)
    weight[:20] = 0.0
    folds = [(np.arange(20), np.arange(20, 60)), (np.arange(20, 60), np.arange(20))]
    with pytest.raises(ValueError, match="fold 0 all have sample_weight 0"):
        getattr(mmit, name)(cv=folds).fit(X, y, sample_weight=weight)
