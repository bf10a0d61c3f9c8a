"""Features standardised for the generalised Newton solvers (``_newton``):
each column by its weighted mean and standard deviation over the rows that
have it. A sparse X is never densified: its standardised rows
(:class:`SparseStandardised`) are made one at a time, when the path's
solver reads a row, from X's stored values and each column's mean and
scale (O(p) per row, as reading a dense row)."""

import numpy as np
import scipy.sparse as sp

from .._utils._checks import canonical_sparse


class StandardisedFeatures:
    """Features standardised by the weighted mean and standard deviation of
    each column over the rows that have it (a missing value, NaN, stays
    missing: at the mean once the model reads it as 0).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        A sparse X has no missing value.
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights, not all 0.
    overwrite_X : bool, default=False
        Standardise in X's memory when it is C-ordered.

    Attributes
    ----------
    mean : ndarray of shape (n_features,)
        The columns' weighted means (0 for a column missing everywhere).
    scale : ndarray of shape (n_features,)
        Their weighted standard deviations (1 where it is 0).
    Z : ndarray of shape (n_samples, n_features), C-ordered
        ``(X - mean) / scale`` (NaN where X is); a :class:`SparseStandardised`
        for a sparse X.
    """

    def __init__(self, X, sample_weight, overwrite_X=False):
        weight = sample_weight / sample_weight.sum()
        if sp.issparse(X):
            X = canonical_sparse(X, "csr")
            mean = X.T @ weight
            # sum_i w_i (x_ij - mean_j)^2: the stored values', and the zeros'
            centred = X.copy()
            centred.data = (X.data - mean[X.indices]) ** 2
            present = X.copy()
            present.data = np.ones_like(X.data)
            variance = centred.T @ weight + (1.0 - present.T @ weight) * mean**2
            scale = np.sqrt(np.maximum(variance, 0.0))
            scale[~(scale > 0.0)] = 1.0
            self.mean = mean
            self.scale = scale
            self.Z = SparseStandardised(X, mean, scale)
            return
        mean = weight @ X
        # a column with a missing value (a NaN mean here) is weighted by the
        # rows that have it
        incomplete = np.flatnonzero(np.isnan(mean))
        if incomplete.size:
            present = ~np.isnan(X[:, incomplete])
            total = weight @ present
            mean[incomplete] = _ratio(weight @ np.where(present, X[:, incomplete], 0.0),
                                      total)
        if overwrite_X and X.flags.c_contiguous:  # standardise in place
            Z = X
            Z -= mean
        else:
            Z = np.subtract(X, mean, order="C")
        variance = np.einsum("i,ij,ij->j", weight, Z, Z)
        if incomplete.size:
            centred = np.where(present, Z[:, incomplete], 0.0)
            variance[incomplete] = _ratio(weight @ (centred * centred), total)
        scale = np.sqrt(variance)
        scale[~(scale > 0.0)] = 1.0
        Z *= 1.0 / scale
        self.mean = mean
        self.scale = scale
        self.Z = Z

    def original_scale(self, coef, intercept):
        """Coefficients and intercept for the unstandardised features."""
        coef = coef / self.scale
        return coef, intercept - coef @ self.mean


class SparseStandardised:
    """``(X - mean) / scale`` of a sparse X, its rows made when read (the
    path's solver), never all at once.

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_features)
    mean, scale : ndarray of shape (n_features,)
    """

    def __init__(self, X, mean, scale):
        X = canonical_sparse(X, "csr")
        self.X = X
        self.mean = np.ascontiguousarray(mean, dtype=np.float64)
        self.inverse_scale = 1.0 / np.ascontiguousarray(scale, dtype=np.float64)
        # each feature's standardised 0
        self.zero = -self.mean * self.inverse_scale
        self.shape = X.shape

    def transpose_dot(self, vector):
        """``Z.T @ vector``."""
        return (self.X.T @ vector - self.mean * vector.sum()) * self.inverse_scale

    def _square_excess(self):
        """``Z[i, j] ** 2`` minus the square of the feature's standardised 0,
        at the stored entries (a matrix of X's layout; 0 elsewhere)."""
        columns = self.X.indices
        excess = self.X.copy()
        excess.data = (((self.X.data - self.mean[columns]) * self.inverse_scale[columns])
                       ** 2 - self.zero[columns] ** 2)
        return excess

    def row_squares(self):
        """``sum_j Z[i, j] ** 2`` of each row."""
        excess = np.asarray(self._square_excess().sum(axis=1)).ravel()
        return (self.zero @ self.zero) + excess

    def weighted_column_squares(self, weight):
        """``sum_i weight_i Z[i, j] ** 2`` of each column."""
        return self._square_excess().T @ weight + weight.sum() * self.zero**2


def transpose_dot(Z, vector):
    """``Z.T @ vector`` of standardised features (dense, or sparse)."""
    if isinstance(Z, SparseStandardised):
        return Z.transpose_dot(vector)
    return Z.T @ vector


def _ratio(numerator, denominator):
    """``numerator / denominator``, 0 where the denominator is 0."""
    return np.divide(numerator, denominator, out=np.zeros_like(numerator),
                     where=denominator > 0.0)
