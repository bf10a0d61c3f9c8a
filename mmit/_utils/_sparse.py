"""Rows of a sparse X as the walks down trees read them.

The fit of a tree reads a sparse X as compressed columns (``mmit.tree._features``);
a walk down a tree reads rows, float64 and C-contiguous. The training rows a
fit walks (out-of-bag rows, held-out rows, the leaves of the training rows)
come from :func:`dense_rows`, :func:`row_blocks` and :func:`walk_rows`,
which densify the rows of a sparse X a block at a time and pass a dense X
through unchanged; the predictions of a sparse X are made a block of rows
at a time (:func:`by_row_blocks`). A block holds at most ``ROWS_PER_BLOCK``
rows and ``VALUES_PER_BLOCK`` values (8 MiB): with many features, fewer
rows, so that what a walk densifies stays small beside the sparse X.
"""

import functools

import numpy as np
import scipy.sparse as sp

#: Rows of a sparse X densified at once, at most.
ROWS_PER_BLOCK = 8192
#: Values of a sparse X densified at once, at most (but a row at least).
VALUES_PER_BLOCK = 2**20


def block_rows(n_features):
    """Rows of a block of a sparse X of ``n_features`` features."""
    return max(1, min(ROWS_PER_BLOCK, VALUES_PER_BLOCK // max(n_features, 1)))


def dense_rows(X, rows=slice(None)):
    """``X[rows]`` as a float64, C-contiguous ndarray (a dense ``X`` is
    indexed as it is: a view for a slice)."""
    if sp.issparse(X):
        return X[rows].toarray(order="C")
    return np.ascontiguousarray(X[rows], dtype=np.float64)


def row_blocks(X):
    """Yield ``(rows, dense)``: slices of the rows of ``X`` and those rows as
    :func:`dense_rows` gives them; one block holding every row for a dense
    ``X``, blocks of :func:`block_rows` rows for a sparse one."""
    n_samples = X.shape[0]
    step = block_rows(X.shape[1]) if sp.issparse(X) else max(n_samples, 1)
    if sp.issparse(X):
        X = X.tocsr()
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        yield rows, dense_rows(X, rows)


def walk_rows(walk, X, rows=slice(None)):
    """``walk(dense_rows(X, rows))`` (an array of a value per row), made a
    block of rows at a time for a sparse ``X``."""
    if not sp.issparse(X):
        return walk(dense_rows(X, rows))
    X = X.tocsr()[rows]
    if X.shape[0] == 0:
        return walk(np.empty(X.shape))
    return np.concatenate([walk(block) for _, block in row_blocks(X)])


def by_row_blocks(method):
    """Make ``method(self, X, ...)``, whose output's first axis is the rows
    of X, run on a sparse X of more than :func:`block_rows` rows a block of
    rows at a time (each densified alone by the method's validation), its
    outputs concatenated: the memory of a prediction bounded by a block's."""

    @functools.wraps(method)
    def blockwise(self, X, *args, **kwargs):
        if not sp.issparse(X) or X.shape[0] <= block_rows(X.shape[1]):
            return method(self, X, *args, **kwargs)
        X = X.tocsr()
        step = block_rows(X.shape[1])
        return np.concatenate([method(self, X[start:start + step], *args, **kwargs)
                               for start in range(0, X.shape[0], step)])

    return blockwise
