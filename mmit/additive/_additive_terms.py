"""The explanation of a fitted additive model (IntervalGAM, IntervalGAMCV):
its exact SHAP values and SHAP interaction values from its centred terms,
each interaction split between its two features by the Shapley values of
their game (:class:`AdditiveTerms`, the model's ``__mmit_shap__``).
"""

from dataclasses import dataclass

import numpy as np

from .._utils._base import rows_as_read
from .._utils._protocols import Explainer


def interaction_marginals(design, coef, X):
    """For each interaction term ``g(a, b)`` of a fitted model's ``design``
    (its centred coefficients ``coef``), its means over the training rows'
    values of one of its features, at the rows of ``X`` as read: ``E_B g(a,
    B)`` and ``E_A g(A, b)``, the rows by their weights."""
    for term in design.pairs:
        shape = tuple(basis.n_splines for basis in term.bases)
        tensor = coef[term.column:term.column + term.n_basis].reshape(shape)
        # the value of a row missing either feature (0 without such rows)
        missing = coef[term.column + term.n_basis] if term.missing else 0.0
        left_mean, right_mean = term.means
        marginals = []
        for margin, product, other_mean in zip(
                term.margins(X), (tensor @ right_mean, tensor.T @ left_mean),
                (right_mean, left_mean), strict=True):
            present = np.asarray(margin.sum(axis=1)).ravel()  # 1, or 0 if missing
            missing_share = present * (1.0 - other_mean.sum()) + (1.0 - present)
            marginals.append(margin @ product + missing * missing_share)
        yield term, *marginals


@dataclass(frozen=True)
class AdditiveTerms(Explainer):
    """A fitted additive model's prediction as its centred terms plus its
    intercept: its exact SHAP values, the training rows (by their weights)
    as the background, the base value the intercept (the mean training
    prediction). A feature's own term is its own; an interaction ``g(a, b)``
    gives ``a`` the Shapley value of the two-player game, ``(E_B g(a, B) +
    g(a, b) - E_A g(A, b)) / 2`` (``AdditiveTerms`` of
    ``interaction_marginals``), and ``b`` the rest; as SHAP interaction
    values, ``E_B g(a, B)`` on ``a``'s diagonal and half of ``g - E_B g(a, B)
    - E_A g(A, b)`` on each side of it."""

    model: object

    def rows(self, X):
        return rows_as_read(self.model, X)

    def contributions(self, X, interactions, n_threads):
        model = self.model
        terms = model.term_values(X)
        X = self.rows(X)
        values = terms[:, :model.n_features_in_].copy()
        if interactions:
            values = np.einsum("ij,jk->ijk", values, np.eye(values.shape[1]))
        for term, left, right in interaction_marginals(model.design_, model.coef_, X):
            a, b = term.features
            value = terms[:, term.slot]
            if interactions:
                values[:, a, a] += left
                values[:, b, b] += right
                values[:, a, b] += (value - left - right) / 2.0
                values[:, b, a] += (value - left - right) / 2.0
            else:
                values[:, a] += (left + value - right) / 2.0
                values[:, b] += (right + value - left) / 2.0
        return values, float(model.intercept_)
