"""Binning the features for the histogram split search: codes against a
plain binary search of the edges, every distinct value its own bin up to
max_bins, bins of about equal weight above, missing values last, rows of
weight 0 and integer weights, the edges against numpy's weighted quantiles,
threads, pickles."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from mmit.tree import _binning
from mmit.tree._binning import MISSING_BIN, bin_features


def quantile_edges(values, weight, max_bins):
    """The oracle of a feature's edges: numpy's sort of its distinct present
    values of positive weight, their weights summed by ``numpy.bincount``
    (in row order), the cuts where the cumulative weight reaches each
    ``k / max_bins`` of the total, and the midpoints there."""
    present = ~np.isnan(values) & (weight > 0.0)
    distinct, inverse = np.unique(values[present], return_inverse=True)
    if distinct.size <= max_bins:
        cut = np.arange(distinct.size - 1)
    else:
        cumulative = np.cumsum(np.bincount(inverse, weights=weight[present]))
        targets = cumulative[-1] * np.arange(1, max_bins) / max_bins
        cut = np.unique(np.searchsorted(cumulative, targets))
        cut = cut[cut < distinct.size - 1]
    low, high = distinct[cut], distinct[cut + 1]
    threshold = low / 2.0 + high / 2.0
    threshold = np.where((threshold != high) & np.isfinite(threshold), threshold, low)
    return np.r_[threshold, np.inf]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), n_distinct=st.integers(1, 40),
       max_bins=st.integers(2, 32), missing=st.floats(0.0, 0.5))
def test_codes_are_the_bins_whose_edges_hold_each_value(seed, n_distinct, max_bins,
                                                         missing):
    """Each value's code is the first bin whose upper edge is at least the
    value (NaN: MISSING_BIN); the edges separate distinct values, one bin
    each while there are at most max_bins of them; weights 0 take no part
    and integer weights bin as repeated rows."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_distinct, size=(80, 2)).astype(float) / 3.0
    X[rng.random(X.shape) < missing] = np.nan
    weight = rng.integers(0, 3, 80).astype(float)
    binned = bin_features(X, weight, max_bins=max_bins)
    codes, n_bins = np.asarray(binned.codes), np.asarray(binned.n_bins)
    thresholds = np.asarray(binned.thresholds)
    repeated = bin_features(np.repeat(X, weight.astype(int), axis=0), max_bins=max_bins)
    np.testing.assert_array_equal(np.asarray(repeated.thresholds), thresholds)
    for j in range(X.shape[1]):
        edges = thresholds[j, :n_bins[j]]
        assert np.all(np.diff(edges) > 0) and edges[-1] == np.inf
        present = ~np.isnan(X[:, j])
        expected = np.where(present, np.searchsorted(edges, np.nan_to_num(X[:, j])),
                            MISSING_BIN)
        np.testing.assert_array_equal(codes[:, j], expected)
        counted = np.unique(X[present & (weight > 0), j])
        if counted.size <= max_bins:  # each distinct value of the rows counted alone
            assert n_bins[j] == max(counted.size, 1)
            assert np.unique(np.searchsorted(edges, counted)).size == counted.size
        else:
            assert 2 <= n_bins[j] <= max_bins


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**16), n_rows=st.integers(0, 400), max_bins=st.integers(2, 255),
       scale=st.sampled_from([1e-300, 1e-3, 1.0, 1e300]), ties=st.booleans(),
       weights=st.sampled_from(["none", "integer", "real"]), sparse=st.booleans(),
       subsample=st.booleans())
def test_edges_are_numpys_weighted_quantiles_bit_for_bit(seed, n_rows, max_bins, scale,
                                                         ties, weights, sparse, subsample):
    """The radix sort's edges are the oracle's, bit for bit: values of every
    sign and magnitude (-0.0 and 0.0 one value), ties, weights of 0, integer
    or real weights (summed in row order), NaN, sparse columns, and the
    subsample of the rows above SUBSAMPLE."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, 3)) * scale
    if ties:
        X = np.round(X / scale, 1) * scale
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.1] = -0.0
    weight = {"none": None, "integer": rng.integers(0, 4, n_rows).astype(float),
              "real": rng.random(n_rows) * (rng.random(n_rows) > 0.2)}[weights]
    if sparse:
        X[np.isnan(X)] = 0.0
        X[rng.random(X.shape) < 0.5] = 0.0
    with pytest.MonkeyPatch.context() as patch:
        if subsample:
            patch.setattr(_binning, "SUBSAMPLE", max(n_rows // 3, 1))
        rows = _binning.binning_sample(n_rows)
        binned = bin_features(sp.csc_matrix(X) if sparse else X, weight, max_bins=max_bins)
    thresholds, n_bins = np.asarray(binned.thresholds), np.asarray(binned.n_bins)
    for j in range(X.shape[1]):
        expected = quantile_edges(X[rows, j], np.ones(n_rows)[rows] if weight is None
                                  else weight[rows], max_bins)
        assert n_bins[j] == expected.size
        np.testing.assert_array_equal(thresholds[j, :expected.size], expected)
        assert np.all(thresholds[j, expected.size:] == np.inf)


def test_edges_refuse_features_and_rows_outside_x():
    X, weight = np.zeros((4, 2)), np.ones(4)
    thresholds, n_bins = np.full((2, MISSING_BIN), np.inf), np.ones(2, dtype=np.int32)
    rows = np.arange(4, dtype=np.intp)
    with pytest.raises(ValueError, match="features"):
        _binning.numeric_edges(X, rows, weight, 255, np.array([2], dtype=np.intp),
                               thresholds, n_bins, 1)
    for bad in ([0, 4], [1, 1], [-1, 2]):
        with pytest.raises(ValueError, match="rows"):
            _binning.numeric_edges(X, np.array(bad, dtype=np.intp), weight, 255,
                                   np.array([0], dtype=np.intp), thresholds, n_bins, 1)
    with pytest.raises(ValueError, match="max_bins"):
        _binning.numeric_edges(X, rows, weight, 256, np.array([0], dtype=np.intp),
                               thresholds, n_bins, 1)


def test_binning_keeps_distinct_values_apart_and_missing_values_last():
    X = np.array([[0.0, 5.0], [1.0, np.nan], [1.0, 5.0], [3.0, 7.0], [np.nan, 6.0]])
    binned = bin_features(X)
    codes = np.asarray(binned.codes)
    np.testing.assert_array_equal(codes[:, 0], [0, 1, 1, 2, MISSING_BIN])
    np.testing.assert_array_equal(codes[:, 1], [0, MISSING_BIN, 0, 2, 1])
    np.testing.assert_array_equal(np.asarray(binned.n_bins), [3, 3])
    thresholds = np.asarray(binned.thresholds)
    np.testing.assert_array_equal(thresholds[0, :3], [0.5, 2.0, np.inf])
    # many distinct values: at most max_bins bins of about equal counts
    column = np.random.default_rng(0).normal(size=(10_000, 1))
    codes = np.asarray(bin_features(column, max_bins=16).codes)[:, 0]
    counts = np.bincount(codes)
    assert counts.size == 16 and counts.min() > 0.8 * counts.mean()


def test_binned_features_pickle_dense_or_sparse():
    """What a cluster's workers hold (and may spill to disk) pickles."""
    X = np.array([[0.0, 5.0], [1.0, np.nan], [0.0, 0.0], [3.0, 0.0], [np.nan, 6.0]])
    for values in (X, sp.csr_matrix(np.nan_to_num(X, nan=2.0))):
        binned = bin_features(values, n_categories=[0, 0])
        copy = pickle.loads(pickle.dumps(binned))
        assert copy.sparse == binned.sparse
        np.testing.assert_array_equal(copy.toarray(), binned.toarray())
        for name in ("thresholds", "n_bins", "n_categories", "zero_bins"):
            np.testing.assert_array_equal(np.asarray(getattr(copy, name)),
                                          np.asarray(getattr(binned, name)))


def test_binning_on_threads_places_values_as_on_one():
    # threads from about 1e6 rows times features
    X = np.random.default_rng(0).normal(size=(250_000, 5))
    X[::9, 2] = np.nan
    one, two = (np.asarray(bin_features(X, n_threads=k).codes) for k in (1, 2))
    np.testing.assert_array_equal(one, two)
