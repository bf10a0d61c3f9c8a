"""Penalized B-splines (P-splines, Eilers and Marx 1996) of one feature: the
basis on equally spaced knots, its design matrix, and the monotone
parametrisation that the additive model fits in.

A spline of order ``d`` (degree; 3: cubic) with ``n_splines`` basis
functions on ``[low, high]`` has ``n_splines - d`` equal intervals of width
``h`` and knots ``t_m = low + (m - d) h``; each basis function ``B_m`` is
non-zero on ``[t_m, t_{m + d + 1})``, ``d + 1`` of them at every point,
summing to one. A second-difference penalty on the coefficients ``beta``
leaves a straight line unpenalized (``sum_m m B_m(x)`` is linear in ``x`` on
equal knots).

The fit's parameters are the coefficient differences ``delta_m = beta_m -
beta_{m-1}`` (``beta_0 = 0``: the level goes to the intercept): a spline is
non-decreasing where every ``delta`` is non-negative, so that a monotone
term is a sign constraint on its parameters (exact), and the
second-difference penalty on ``beta`` is the first-difference penalty on
``delta``.

A pairwise interaction is the tensor product of two such bases (its
margins): its functions are the products ``B_k(x) C_l(z)``, its
coefficients a matrix ``beta_{kl}`` penalized by the second differences
along each of its axes. Each margin is restricted to the splines of mean 0
over the training rows (``Z``: an orthonormal basis of the coefficients
orthogonal to the margin's mean row, as mgcv's ``ti`` terms do), and the
parameters ``Delta`` give ``beta = Z_x Delta Z_z'``: the interaction is then
pure, its mean over either feature's training values 0 at every value of the
other (``E_Z g(x, Z) = 0``), so that the features' own terms hold all that
is a function of one of them.

Cost: O(n d^2) a design matrix (``d + 1`` values a row, Cox-de Boor on
equal knots); O(n d^2) a tensor product's (``(d + 1)^2`` values a row).
"""

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class SplineBasis:
    """The B-spline basis of a feature: ``n_splines`` functions of order
    ``order`` on equal knots spanning ``[low, high]`` (a feature of one value
    has ``high == low``: its basis functions are constant there)."""

    low: float
    high: float
    n_splines: int
    order: int

    @property
    def width(self):
        """The knots' spacing (1 for a feature of one value)."""
        n_intervals = self.n_splines - self.order
        return (self.high - self.low) / n_intervals if self.high > self.low else 1.0

    @property
    def knots(self):
        """The ``n_splines + order + 1`` knots."""
        return self.low + (np.arange(self.n_splines + self.order + 1) - self.order) * \
            self.width

    def design(self, values):
        """The basis functions at ``values`` (clipped to ``[low, high]``): a CSR
        matrix (n, n_splines), ``order + 1`` values a row, no value in a row
        whose value is NaN."""
        values = np.asarray(values, dtype=np.float64)
        present = ~np.isnan(values)
        u = (np.clip(values[present], self.low, self.high) - self.low) / self.width
        n_intervals = self.n_splines - self.order
        interval = np.minimum(np.floor(u), n_intervals - 1).astype(np.intp)
        r = u - interval
        basis = np.ones((r.size, 1))
        for q in range(1, self.order + 1):  # Cox-de Boor on equal knots
            grown = np.zeros((r.size, q + 1))
            for a in range(q + 1):
                if a >= 1:
                    grown[:, a] += (r + q - a) / q * basis[:, a - 1]
                if a < q:
                    grown[:, a] += (a + 1 - r) / q * basis[:, a]
            basis = grown
        columns = interval[:, np.newaxis] + np.arange(self.order + 1)
        counts = np.where(present, self.order + 1, 0)
        indptr = np.r_[0, np.cumsum(counts)]
        return sp.csr_matrix((basis.ravel(), columns.ravel(), indptr),
                             shape=(values.size, self.n_splines))


def cumulative_map(n_splines):
    """The matrix (n_splines, n_splines - 1) giving the coefficients
    ``beta`` of the parameters ``delta`` (``beta_m = sum_{i <= m} delta_i``,
    ``beta_0 = 0``)."""
    return np.tril(np.ones((n_splines, n_splines - 1)), k=-1)


def difference_penalty(n_parameters):
    """``D' D`` of the first differences of ``n_parameters`` values (the
    second-difference penalty of the coefficients, on their differences)."""
    difference = np.diff(np.eye(n_parameters), axis=0)
    return difference.T @ difference


@functools.lru_cache(maxsize=64)
def spline_penalty(n_parameters, shrinkage):
    """A spline's penalty block: :func:`difference_penalty` of its
    ``n_parameters`` differences, its null space shrunk by ``shrinkage``
    (:func:`shrunk_penalty`); computed once for each (made read-only: every
    penalty of a fit's path and its folds reuses it)."""
    block = shrunk_penalty(difference_penalty(n_parameters), shrinkage)
    block.flags.writeable = False
    return block


def second_difference_penalty(n_coefficients):
    """``D' D`` of the second differences of ``n_coefficients`` values."""
    difference = np.diff(np.eye(n_coefficients), n=2, axis=0)
    return difference.T @ difference


def row_tensor(left, right):
    """The row-wise Kronecker product of two CSR matrices with the same rows:
    column ``k * right.shape[1] + l`` is the product of their columns ``k``
    and ``l`` (a row without values in either has none)."""
    left, right = sp.csr_matrix(left), sp.csr_matrix(right)
    return sp.hstack([right.multiply(left[:, [k]]) for k in range(left.shape[1])],
                     format="csr")


def centred_map(mean):
    """An orthonormal basis (n, n - 1) of the coefficients of a margin whose
    spline has mean 0: those orthogonal to its ``mean`` design row."""
    orthogonal, _ = np.linalg.qr(np.asarray(mean, dtype=np.float64)[:, np.newaxis],
                                 mode="complete")
    return orthogonal[:, 1:]


def tensor_map(left_mean, right_mean):
    """The matrix (n_left n_right, (n_left - 1)(n_right - 1)) giving the
    flattened coefficients ``beta = Z_left Delta Z_right'`` (row-major) of
    the flattened parameters ``Delta`` of a tensor product whose margins have
    the mean design rows ``left_mean`` and ``right_mean`` (module doc)."""
    return np.kron(centred_map(left_mean), centred_map(right_mean))


def tensor_penalty(left_mean, right_mean):
    """The penalty on the parameters of a tensor product (module doc): the
    squared second differences of its coefficients along each axis."""
    n_left, n_right = len(left_mean), len(right_mean)
    coefficients = (np.kron(second_difference_penalty(n_left), np.eye(n_right))
                    + np.kron(np.eye(n_left), second_difference_penalty(n_right)))
    mapping = tensor_map(left_mean, right_mean)
    return mapping.T @ coefficients @ mapping


def shrunk_penalty(penalty, shrinkage):
    """``penalty`` plus ``shrinkage`` times the projector on its null space
    (the functions it leaves free: a spline's straight lines), so that a
    large penalty shrinks a term to zero rather than to a line (mgcv's
    shrinkage smoothers)."""
    if not shrinkage:
        return penalty
    values, vectors = np.linalg.eigh(penalty)
    free = vectors[:, values <= 1e-9 * max(values.max(initial=0.0), 1.0)]
    return penalty + shrinkage * (free @ free.T)
