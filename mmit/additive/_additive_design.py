"""The design of an additive model of interval targets: its terms (a
penalized B-spline per numeric feature, an effect per level of a
categorical one, a missing value's effect, pure tensor products of splines
for interactions, ``_splines``) and the sparse matrix of their bases.

The model is linear in its parameters: the columns of the terms' bases
(B-spline functions, category indicators, missing-value indicators) times
the coefficients, which the parameters give (a spline's coefficients are
the cumulative sums of its parameters, ``_splines``), so that a monotone
spline is a sign constraint on its parameters.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._splines import (
    SplineBasis,
    cumulative_map,
    row_tensor,
    shrunk_penalty,
    spline_penalty,
    tensor_map,
    tensor_penalty,
)

SPLINE, CATEGORICAL, TENSOR = "spline", "categorical", "tensor"


@dataclass(frozen=True)
class Term:
    """One feature's term: its kind, its basis (a :class:`SplineBasis`, or
    the number of categories) and whether it has a missing-value effect;
    ``column`` and ``parameter`` are where its columns and parameters start
    (the design's column 0 and parameter 0 are the intercept). Its value is
    column ``slot`` (its feature) of the model's term values."""

    feature: int
    kind: str
    basis: SplineBasis | int
    missing: bool
    column: int
    parameter: int

    @property
    def slot(self):
        return self.feature

    @property
    def n_basis(self):
        return self.basis.n_splines if self.kind == SPLINE else self.basis

    @property
    def n_columns(self):
        return self.n_basis + self.missing

    @property
    def n_effects(self):
        """The parameters of the basis (a spline's level is the intercept's)."""
        return self.n_basis - (self.kind == SPLINE)

    @property
    def n_parameters(self):
        return self.n_effects + self.missing

    def columns(self, X):
        """The term's columns at the rows of ``X`` (CSR)."""
        values = feature_column(X, self.feature)
        if self.kind == SPLINE:
            block = self.basis.design(values)
        else:
            codes = np.where(np.isnan(values), -1, values).astype(np.intp)
            known = (codes >= 0) & (codes < self.basis)
            block = sp.csr_matrix(
                (np.ones(known.sum()), (np.flatnonzero(known), codes[known])),
                shape=(X.shape[0], self.basis))
        if self.missing:
            block = sp.hstack([block, sp.csr_matrix(np.isnan(values)[:, np.newaxis],
                                                    dtype=np.float64)], format="csr")
        return block

    def coefficients(self):
        """The block (n_columns, n_parameters) of the coefficient map: a
        spline's cumulative sums, the categories' and the missing value's
        effects themselves."""
        block = np.zeros((self.n_columns, self.n_parameters))
        width = self.n_effects
        block[:self.n_basis, :width] = (cumulative_map(self.n_basis) if self.kind == SPLINE
                                        else np.eye(width))
        if self.missing:
            block[-1, -1] = 1.0
        return block

    def penalty(self, shrinkage):
        """The block (n_parameters, n_parameters) of the penalty: a spline's
        second differences and ``shrinkage`` times its slope's square (as a
        mean of its coefficient differences), the squares of the categorical
        effects; the missing-value effect free."""
        block = np.zeros((self.n_parameters, self.n_parameters))
        width = self.n_effects
        block[:width, :width] = (spline_penalty(width, float(shrinkage))
                                 if self.kind == SPLINE else np.eye(width))
        return block


@dataclass(frozen=True)
class PairTerm:
    """A pairwise interaction of two numeric features: the tensor product of
    a spline basis of each (``_splines``), pure (its mean over either
    feature's training values 0: ``means``, the margins' weighted mean
    design rows over the training rows, a row missing the feature counting
    as none). A row missing either feature has no value of it; where
    training rows of positive weight did (``missing``), a column of those
    rows without a parameter gives them the constant that centres the term
    (``_set_terms``). Its value is column ``slot`` of the model's term
    values (after the features')."""

    features: tuple
    bases: tuple
    means: tuple
    missing: bool
    slot: int
    column: int
    parameter: int

    kind = TENSOR

    @property
    def n_basis(self):
        return self.bases[0].n_splines * self.bases[1].n_splines

    @property
    def n_columns(self):
        return self.n_basis + self.missing

    @property
    def n_parameters(self):
        return (self.bases[0].n_splines - 1) * (self.bases[1].n_splines - 1)

    def margins(self, X):
        """Each feature's basis at the rows of ``X`` (two CSR matrices: no
        value in a row missing the feature)."""
        return tuple(basis.design(feature_column(X, feature))
                     for basis, feature in zip(self.bases, self.features, strict=True))

    def columns(self, X):
        margins = self.margins(X)
        block = row_tensor(*margins)
        if self.missing:  # the rows where a margin has no value
            either = np.minimum(*(margin.getnnz(axis=1) for margin in margins)) == 0
            block = sp.hstack([block, sp.csr_matrix(either[:, np.newaxis],
                                                    dtype=np.float64)], format="csr")
        return block

    def coefficients(self):
        mapping = tensor_map(*self.means)
        return np.vstack([mapping, np.zeros((int(self.missing), mapping.shape[1]))])

    def penalty(self, shrinkage):
        return shrunk_penalty(tensor_penalty(*self.means), shrinkage)


class AdditiveDesign:
    """The columns and parameters of an additive model's terms (module doc),
    made from the training rows: a spline basis for each numeric feature on
    its training range, an indicator per category, a missing-value indicator
    for each feature missing in some training row of positive weight, and
    a tensor product for each pair of interacting features."""

    def __init__(self, terms):
        self.terms = terms
        last = terms[-1] if terms else None
        self.n_columns = 1 if last is None else last.column + last.n_columns
        self.n_parameters = 1 if last is None else last.parameter + last.n_parameters

    @property
    def pairs(self):
        """The interaction terms."""
        return [term for term in self.terms if term.kind == TENSOR]

    @classmethod
    def of_rows(cls, X, sample_weight, categories, n_splines, order, features, pairs):
        """The design of the training rows ``X`` (validated, categories as
        codes), a term for each of ``features`` and each of ``pairs``."""
        low, high, missing = cls.parts_of_rows(X, sample_weight, categories)
        means = [np.asarray(basis.design(feature_column(X, j)).T @ sample_weight).ravel()
                 / sample_weight.sum()
                 for pair in pairs
                 for j, basis in zip(pair, margin_bases(low, high, pair, n_splines, order),
                                     strict=True)]
        return cls.of_parts(low, high, missing, categories, n_splines, order, features,
                            pairs, np.concatenate([np.zeros(0), *means]))

    @staticmethod
    def parts_of_rows(X, sample_weight, categories):
        """Each feature's training range (NaN for a categorical feature or one
        never present) and whether some training row of positive weight
        misses it."""
        positive = sample_weight > 0
        low, high = np.full(X.shape[1], np.nan), np.full(X.shape[1], np.nan)
        missing = np.zeros(X.shape[1], dtype=bool)
        for j in range(X.shape[1]):
            values = feature_column(X, j)[positive]
            present = values[~np.isnan(values)]
            missing[j] = present.size < values.size
            if (categories is None or categories[j] is None) and present.size:
                low[j], high[j] = present.min(), present.max()
        return low, high, missing

    @classmethod
    def of_parts(cls, low, high, missing, categories, n_splines, order, features, pairs,
                 margin_means):
        """The design of a term for each of ``features``, of training ranges
        ``low`` to ``high``, with a missing-value effect where ``missing``,
        categorical where ``categories`` has labels; then a tensor term for
        each of ``pairs`` (:func:`_margins`), its margins' mean design rows
        in turn in ``margin_means`` (flat)."""
        terms = []
        column = parameter = 1
        for j in features:
            labels = None if categories is None else categories[j]
            if labels is not None:
                basis, kind = len(labels), CATEGORICAL
            else:
                basis, kind = spline_basis(low, high, j, n_splines, order), SPLINE
            terms.append(Term(j, kind, basis, bool(missing[j]), column, parameter))
            column += terms[-1].n_columns
            parameter += terms[-1].n_parameters
        start = 0
        for k, pair in enumerate(pairs):
            bases = margin_bases(low, high, pair, n_splines, order)
            means = []
            for basis in bases:
                means.append(margin_means[start:start + basis.n_splines])
                start += basis.n_splines
            terms.append(PairTerm(tuple(pair), bases, tuple(means),
                                  bool(missing[list(pair)].any()), len(low) + k, column,
                                  parameter))
            column += terms[-1].n_columns
            parameter += terms[-1].n_parameters
        return cls(terms)

    def design(self, X):
        """The columns at the rows of ``X`` (validated, categories as codes): a
        CSR matrix (n_samples, n_columns)."""
        return sp.hstack([sp.csr_matrix(np.ones((X.shape[0], 1)))]
                         + [term.columns(X) for term in self.terms], format="csr")

    def coefficient_map(self):
        """The matrix (n_columns, n_parameters) of the columns' coefficients in
        the parameters."""
        mapping = np.zeros((self.n_columns, self.n_parameters))
        mapping[0, 0] = 1.0
        for term in self.terms:
            mapping[term.column:term.column + term.n_columns,
                    term.parameter:term.parameter + term.n_parameters] = term.coefficients()
        return mapping

    def penalty(self, lam, shrinkage):
        """The penalty's matrix on the parameters: ``lam`` (one, or one per
        term) times each term's (:meth:`Term.penalty`,
        :meth:`PairTerm.penalty`, their null spaces shrunk by ``shrinkage``);
        the intercept is free."""
        penalty = np.zeros((self.n_parameters, self.n_parameters))
        for term, term_lam in zip(self.terms, np.broadcast_to(lam, len(self.terms)),
                                  strict=True):
            block = slice(term.parameter, term.parameter + term.n_parameters)
            penalty[block, block] = term_lam * term.penalty(shrinkage)
        return penalty

    def signs(self, constraints):
        """The sign constraint of each parameter (+1: non-negative, -1:
        non-positive, 0: free): a monotone spline's differences, from
        ``constraints`` (one per feature, or None)."""
        signs = np.zeros(self.n_parameters, dtype=np.int8)
        if constraints is not None:
            for term in self.terms:
                if term.kind == SPLINE and constraints[term.feature]:
                    signs[term.parameter:term.parameter + term.n_effects] = \
                        constraints[term.feature]
        return signs


def spline_basis(low, high, j, n_splines, order):
    """The spline basis of feature ``j`` on its training range."""
    ends = (0.0, 0.0) if np.isnan(low[j]) else (float(low[j]), float(high[j]))
    return SplineBasis(*ends, n_splines, order)


def margin_bases(low, high, pair, n_splines, order):
    """The bases of an interaction's two features: ``max(order + 1, n_splines
    // 2)`` splines each."""
    size = max(order + 1, n_splines // 2)
    return tuple(spline_basis(low, high, j, size, order) for j in pair)


def feature_column(X, j):
    """Feature ``j`` of ``X`` (an array or a sparse matrix) as a float array."""
    if sp.issparse(X):
        return np.asarray(X[:, [j]].toarray(), dtype=np.float64).ravel()
    return np.asarray(X[:, j], dtype=np.float64)


