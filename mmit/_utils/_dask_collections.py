"""Predictions of Dask collections, a partition at a time.

A fitted model's ``predict`` takes a Dask array or data frame of rows
(:func:`by_partitions`): each partition, every column of a block of rows, is
predicted where it lies as an ndarray or a pandas data frame would be, and
the result is a Dask array of one value per row, chunked as the rows
(chunks of unknown length for a data frame). Nothing is computed until the
user computes it. Dask is an optional extra: it is imported only when a
collection is passed.
"""

import functools
import sys

import numpy as np
from sklearn.utils.validation import check_is_fitted


def is_dask_collection(X):
    """Whether ``X`` is a Dask collection (never imports Dask)."""
    dask = sys.modules.get("dask")
    return dask is not None and dask.is_dask_collection(X)


def _partition_values(partition, estimator, name):
    """``estimator.<name>(partition)``; no rows, no values."""
    if partition.shape[0] == 0:
        return np.empty(0)
    return getattr(estimator, name)(partition)


def _rows_by_partition(estimator, name, X):
    """The Dask array of ``estimator.<name>`` of each partition of ``X``."""
    import dask.array

    values = functools.partial(_partition_values, estimator=estimator, name=name)
    meta = np.empty(0)
    if isinstance(X, dask.array.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D Dask array of rows, not one of {X.ndim} "
                             f"dimensions.")
        if X.shape[1] != estimator.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but "
                             f"{type(estimator).__name__} is expecting "
                             f"{estimator.n_features_in_} features as input.")
        if X.numblocks[1] > 1:  # a partition is a block of whole rows
            X = X.rechunk({1: -1})
        return X.map_blocks(values, drop_axis=1, dtype=np.float64, meta=meta)
    frames = sys.modules.get("dask.dataframe")  # imported when X is a data frame
    if frames is not None and isinstance(X, frames.DataFrame):
        return X.map_partitions(values, meta=meta)
    raise TypeError(f"Dask input must be a Dask array or data frame of rows, not a "
                    f"{type(X).__name__}.")


def by_partitions(method):
    """Make ``method(self, X)``, a fitted estimator's value per row of X, take
    a Dask array or data frame as well: it then returns a Dask array whose
    partitions are the method's values of ``X``'s partitions. Whether the
    estimator is fitted and, for an array, its number of features are checked
    at once; each partition's own validation runs when it is computed."""

    @functools.wraps(method)
    def partitionwise(self, X):
        if not is_dask_collection(X):
            return method(self, X)
        check_is_fitted(self)
        return _rows_by_partition(self, method.__name__, X)

    return partitionwise
