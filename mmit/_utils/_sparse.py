"""Rows of a sparse X as the walks down trees read them.

The fit of a tree reads a sparse X as compressed columns (``mmit.tree._features``);
a walk down a tree reads rows, float64 and C-contiguous. The training rows a
fit walks (out-of-bag rows, held-out rows, the leaves of the training rows)
come from :func:`dense_rows` and :func:`row_blocks`, which densify the rows
of a sparse X a block at a time and pass a dense X through unchanged; the
predictions of a sparse X are made a block of rows at a time
(:func:`by_row_blocks`).
"""

import functools

import numpy as np
import scipy.sparse as sp

#: Rows of a sparse X densified at once by :func:`row_blocks`.
ROWS_PER_BLOCK = 8192


def dense_rows(X, rows=slice(None)):
    """``X[rows]`` as a float64, C-contiguous ndarray (a dense ``X`` is
    indexed as it is: a view for a slice)."""
    if sp.issparse(X):
        return X[rows].toarray(order="C")
    return np.ascontiguousarray(X[rows], dtype=np.float64)


def row_blocks(X):
    """Yield ``(rows, dense)``: slices of the rows of ``X`` and those rows as
    :func:`dense_rows` gives them; one block holding every row for a dense
    ``X``, blocks of ``ROWS_PER_BLOCK`` rows for a sparse one."""
    n_samples = X.shape[0]
    step = ROWS_PER_BLOCK if sp.issparse(X) else max(n_samples, 1)
    if sp.issparse(X):
        X = X.tocsr()
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        yield rows, dense_rows(X, rows)


def by_row_blocks(method):
    """Make ``method(self, X, ...)``, whose output's first axis is the rows
    of X, run on a sparse X of more than ``ROWS_PER_BLOCK`` rows a block of
    rows at a time (each densified alone by the method's validation), its
    outputs concatenated: the memory of a prediction bounded by a block's."""

    @functools.wraps(method)
    def blockwise(self, X, *args, **kwargs):
        if not sp.issparse(X) or X.shape[0] <= ROWS_PER_BLOCK:
            return method(self, X, *args, **kwargs)
        X = X.tocsr()
        return np.concatenate([
            method(self, X[start:start + ROWS_PER_BLOCK], *args, **kwargs)
            for start in range(0, X.shape[0], ROWS_PER_BLOCK)])

    return blockwise
