"""MeanImputer: weighted means, indicators for the features missing in training."""

import numpy as np
import pytest

from mmit import MeanImputer


def test_fills_weighted_means_and_marks_training_gaps():
    X = np.array([[1.0, 10.0, np.nan],
                  [np.nan, 20.0, np.nan],
                  [3.0, 30.0, np.nan],
                  [np.nan, 40.0, np.nan]])
    weight = np.array([1.0, 1.0, 3.0, 0.0])
    imputer = MeanImputer().fit(X, sample_weight=weight)
    # feature 0: (1 * 1 + 3 * 3) / 4; feature 1: weighted mean; feature 2: never
    # present, filled with 0
    np.testing.assert_allclose(imputer.fill_values_, [2.5, (10 + 20 + 90) / 5, 0.0])
    # the row of weight 0 does not count: features 0 and 2 were missing elsewhere
    np.testing.assert_array_equal(imputer.indicator_features_, [0, 2])
    out = imputer.transform(np.array([[np.nan, np.nan, 5.0], [7.0, 8.0, np.nan]]))
    # a NaN in feature 1, never missing in training, is filled but not marked
    np.testing.assert_array_equal(out, [[2.5, 24.0, 5.0, 1.0, 0.0],
                                        [7.0, 8.0, 0.0, 0.0, 1.0]])


def test_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    X[rng.random(X.shape) < 0.3] = np.nan
    counts = rng.integers(0, 3, 30)
    weighted = MeanImputer().fit(X, sample_weight=counts.astype(float))
    repeated = MeanImputer().fit(np.repeat(X, counts, axis=0))
    np.testing.assert_allclose(weighted.fill_values_, repeated.fill_values_)
    np.testing.assert_array_equal(weighted.indicator_features_,
                                  repeated.indicator_features_)


def test_without_missing_training_values_no_column_is_added():
    X = np.arange(6.0).reshape(3, 2)
    imputer = MeanImputer().fit(X)
    assert imputer.indicator_features_.size == 0
    np.testing.assert_array_equal(imputer.transform([[np.nan, 1.0]]), [[2.0, 1.0]])
    with pytest.raises(ValueError, match="features"):
        imputer.transform(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="infinity"):
        imputer.transform([[np.inf, 1.0]])


def test_output_features_name_the_source_of_every_column():
    X = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 4.0], [5.0, 6.0, 7.0]])
    imputer = MeanImputer().fit(X)
    np.testing.assert_array_equal(imputer.output_features(), [0, 1, 2, 0, 1])
    assert imputer.output_features().shape[0] == imputer.transform(X).shape[1]
