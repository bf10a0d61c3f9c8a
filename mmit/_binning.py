"""Binning the features once per fit, for the histogram split search.

Each feature gets at most ``max_bins`` bins of present values, bounded by
thresholds between consecutive distinct values of the rows of positive
weight (the midpoints the exact split search uses): every distinct value
its own bin when there are at most ``max_bins`` of them, else bins of about
equal weight (weighted quantiles) of a subsample of the rows. Rows of
weight 0 take no part, and an integer weight counts as repeated rows. A
missing value (NaN) goes to bin 255. Codes are uint8, row-major: 1 byte per
value.
"""

import numpy as np

from ._features import BinnedFeatures

MISSING_BIN = 255
# rows the quantiles of a feature are taken from
SUBSAMPLE = 200_000


def midpoints(low, high):
    """Thresholds ``low <= t < high`` between consecutive distinct values (as
    the exact split search places them)."""
    threshold = low / 2.0 + high / 2.0
    keep = (threshold != high) & np.isfinite(threshold)
    return np.where(keep, threshold, low)


def bin_thresholds(values, weight, max_bins):
    """Upper edges of at most ``max_bins`` bins of the present ``values`` of
    positive ``weight`` (the last one +inf)."""
    present = ~np.isnan(values) & (weight > 0.0)
    distinct, inverse = np.unique(values[present], return_inverse=True)
    if distinct.size <= max_bins:
        cut = np.arange(distinct.size - 1)
    else:
        cumulative = np.cumsum(np.bincount(inverse, weights=weight[present]))
        targets = cumulative[-1] * np.arange(1, max_bins) / max_bins
        cut = np.unique(np.searchsorted(cumulative, targets))
        cut = cut[cut < distinct.size - 1]
    return np.r_[midpoints(distinct[cut], distinct[cut + 1]), np.inf]


def bin_features(X, sample_weight=None, max_bins=255, random_state=None):
    """BinnedFeatures of validated ``X`` (float64, NaN for missing values).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights (ones if None).
    max_bins : int, default=255
        Bins of present values per feature, 2 to 255.
    random_state : RandomState, default=None
        The subsample of the quantiles (rows beyond ``SUBSAMPLE``).

    Returns
    -------
    features : BinnedFeatures
    """
    if not 2 <= max_bins <= MISSING_BIN:
        raise ValueError(f"max_bins must be in [2, 255], got {max_bins}.")
    n_samples, n_features = X.shape
    weight = np.ones(n_samples) if sample_weight is None else sample_weight
    sample = np.arange(n_samples)
    if n_samples > SUBSAMPLE:
        generator = np.random.RandomState(0) if random_state is None else random_state
        sample = np.sort(generator.choice(n_samples, SUBSAMPLE, replace=False))
    thresholds = np.full((n_features, MISSING_BIN), np.inf)
    n_bins = np.ones(n_features, dtype=np.int32)
    codes = np.empty((n_samples, n_features), dtype=np.uint8)
    for j in range(n_features):
        edges = bin_thresholds(X[sample, j], weight[sample], max_bins)
        thresholds[j, :edges.size] = edges
        n_bins[j] = edges.size
        column = X[:, j]
        code = np.searchsorted(edges[:-1], column, side="left")
        code[np.isnan(column)] = MISSING_BIN
        codes[:, j] = code
    return BinnedFeatures(codes, thresholds, n_bins)
