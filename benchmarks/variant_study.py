"""What the evidence scripts that compare variants of one model share: the
data sets with their features changed, the variants' mean test MSE over the
splits, and the table they print (each variant's test interval MSE on each
data set, then its mean rank, median and worst ratio to the best variant of
each data set)."""

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata


def transformed_splits(splits, transform, rng):
    """The (X_train, y_train, X_test, y_test) splits with ``transform(X, rng)``
    applied to the training and test rows together."""
    out = []
    for X_train, y_train, X_test, y_test in splits:
        X = transform(np.vstack([X_train, X_test]), rng)
        out.append((X[:len(X_train)], y_train, X[len(X_train):], y_test))
    return out


def mean_test_mse(test_mse, variants, splits, n_jobs):
    """``test_mse(*variant, *split)`` of every variant (a tuple of arguments)
    on every split, in ``n_jobs`` processes; each variant's mean."""
    mse = Parallel(n_jobs=n_jobs)(delayed(test_mse)(*variant, *split)
                                  for variant in variants for split in splits)
    return np.array(mse).reshape(len(variants), -1).mean(axis=1)


def print_variant_table(title, by_set, names, width=18):
    """``by_set``: data set name -> array of the variants' test MSEs, in the
    order of ``names``."""
    mse = np.array(list(by_set.values()))
    ratio = mse / np.maximum(mse.min(axis=1, keepdims=True), 1e-300)
    ranks = np.array([rankdata(row) for row in mse])
    print(f"\n{title}")
    print(f"{'data set':<42}" + "".join(f"{v:>{width}}" for v in names))
    for name, row in by_set.items():
        print(f"{name:<42}" + "".join(f"{v:>{width}.4g}" for v in row))
    for label, values in (("mean rank", ranks.mean(axis=0)),
                          ("median ratio", np.median(ratio, axis=0)),
                          ("worst ratio", ratio.max(axis=0))):
        print(f"{label:<42}" + "".join(f"{v:>{width}.2f}" for v in values))
