"""The data every speed benchmark fits: the same for every process and option.

n samples, p continuous features uniform on [0, 10], interval targets
around a nonlinear signal of the first two features with 20% left- and 20%
right-censored labels; and their Interval-CART transform, what
scikit-learn's estimators are fitted on.
"""

import numpy as np

from mmit.baselines import interval_cart_rows

N_FEATURES = 20
MARGIN = 0.1


def interval_data(n, rng, n_features=N_FEATURES):
    X = rng.uniform(0.0, 10.0, size=(n, n_features))
    signal = np.sin(X[:, 0]) * 2.0 + np.abs(X[:, 1] - 5.0)
    lower = signal - rng.exponential(0.5, n)
    upper = signal + rng.exponential(0.5, n)
    censoring = rng.random(n)
    lower[censoring < 0.2] = -np.inf
    upper[censoring > 0.8] = np.inf
    return X, np.column_stack([lower, upper])


def benchmark_data(n, n_features, missing=0.0):
    """The data of one table row: the same for every process and option."""
    rng = np.random.default_rng([n, n_features])
    X, y = interval_data(n, rng, n_features)
    if missing > 0.0:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


def interval_cart_data(X, y, margin):
    """X and targets of the Interval-CART transform (one row per finite bound)."""
    rows, targets = interval_cart_rows(y[:, 0], y[:, 1], margin)
    return X[rows], targets
