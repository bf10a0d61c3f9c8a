"""The checks the compiled kernels make of what they index by, before any code
without the GIL runs: they import nothing but these (the validation of
users' input, :mod:`mmit._utils._validation`, is the front-end's), and the
layout of the sparse matrices they read."""

import numpy as np
import scipy.sparse as sp

# rows whose hinges 2 * row + is_upper fit in an int32
MAX_ROWS = 2**30 - 1


def check_row_count(n_rows):
    """Raise ValueError for more rows than the compiled core numbers: each
    finite bound is a hinge ``2 * row + is_upper`` in a 32-bit integer."""
    if n_rows > MAX_ROWS:
        raise ValueError(f"mmit handles at most {MAX_ROWS} samples (2**30 - 1: each "
                         f"bound of a sample is numbered in 32 bits), got {n_rows}.")


def check_same_length(name, array, expected_name, expected):
    """Raise ValueError unless ``array`` has ``expected`` entries (the
    compiled entry points check every array they index by)."""
    if array.shape[0] != expected:
        raise ValueError(f"{name} has {array.shape[0]} entries, {expected_name} has "
                         f"{expected}.")


def canonical_sparse(X, layout):
    """A sparse X as the compiled core reads it: float64 ``layout`` ("csr" or
    "csc") with sorted, unique indices per row or column, copied only when
    it is not so already."""
    X = (sp.csr_matrix if layout == "csr" else sp.csc_matrix)(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # sorts the indices too
    return X

