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

Cost: O(n d^2) a design matrix (``d + 1`` values a row, Cox-de Boor on
equal knots).
"""

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
