"""IntervalGAM and IntervalGAMCV: generalized additive models of interval
targets, ``f(x) = a + f_1(x_1) + ... + f_p(x_p)``, each numeric term a
penalized B-spline (P-spline), each categorical term an effect per level,
a missing value an effect of its own, and optional pairwise interactions
``f_jk(x_j, x_k)`` (pure tensor products of splines, ``_splines``).

The model (:class:`_AdditiveDesign`) is linear in its parameters: the
columns of the terms' bases (B-spline functions, category indicators,
missing-value indicators) times the coefficients, which the parameters
give (a spline's coefficients are the cumulative sums of its parameters,
``_splines``). The fit minimises ``sum_i w_i h_i(f(x_i)) + lam *
penalty``, ``h_i`` the squared hinge of row ``i`` outside its margin-shrunk
interval, by the generalised Newton method (:func:`penalized_newton`): the
loss is piecewise quadratic, so each step minimises the quadratic of the
rows outside their margins plus the penalty (one Cholesky solve, or with
monotone terms a box-constrained quadratic solved exactly by an active set,
:func:`box_quadratic`), and an Armijo search on the true objective keeps the
steps descending. It converges when a full step leaves the same hinges
active (finite, as for the linear model's solver).

The terms' bands come from the penalized fit's Bayesian covariance (Wahba
1983, as mgcv and pygam give theirs, :func:`coefficient_covariance`): the
squared hinge of a row outside its interval taken as a Gaussian
log-likelihood of its distance to the nearest bound, a row inside its
interval (zero curvature) informing nothing, and the penalty as a Gaussian
prior: ``V = sigma^2 (X_A' W X_A + lam S)^{-1}`` on the parameters, ``X_A``
the rows outside their intervals, ``sigma^2`` their weighted squared
distances over their weight less the effective degrees of freedom. The
monotone terms' sign constraints are left out of it (a band of a monotone
term is that of the free fit at the same coefficients).

Cost: O(n (p (d + 1))^2) a Newton step for the Gram matrix of the active
rows (row blocks of the sparse design, dense products), O(M^3) for its
solve (``M = p (n_splines - 1)`` parameters); a few to twenty steps.
"""

import itertools
import sys
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from joblib import Parallel, delayed
from scipy.stats import norm
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import check_cv
from sklearn.utils import Bunch, _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._loss._loss import LOSSES
from .._utils._base import IntervalRegressorMixin, rows_as_read, set_init_parameters
from .._utils._blas import single_threaded_blas
from .._utils._categorical import CATEGORICAL_FEATURES_CONSTRAINT, fitted_encoding
from .._utils._constraints import MONOTONIC_CST_CONSTRAINT, monotonic_constraints
from .._utils._dask_collections import by_partitions
from .._utils._docstrings import fill_doc
from .._utils._protocols import Explainer
from .._utils._scores import interval_scores
from .._utils._sparse import by_row_blocks
from .._utils._validation import bounds_spread, check_fold_weights, validate_training_data
from ..ensemble._distribution_strategies import SpreadDistribution
from ..ensemble._distributions import ForestDistribution
from ..ensemble._held_out_distributions import (
    HeldOutDistributionMixin,
    held_out_distribution,
)
from ..ensemble._predictive import PredictiveDistributionMixin
from ._splines import (
    SplineBasis,
    cumulative_map,
    row_tensor,
    shrunk_penalty,
    spline_penalty,
    tensor_map,
    tensor_penalty,
)

#: Rows of the design made dense at a time for the Gram matrix.
GRAM_BLOCK_ROWS = 4096
#: The ridge on every parameter but the intercept, in the objective (whose
#: loss is a mean): keeps the problem strictly convex where the data leave a
#: direction free (a basis function without rows, collinear terms, more
#: parameters than rows), so that its minimum is one, the same for integer
#: weights as for repeated rows.
REGULARISATION = 1e-7
#: The Armijo condition's share of the predicted decrease, and the halvings
#: of a step the line search tries.
ARMIJO, MAX_HALVINGS = 1e-4, 40
#: The relative rounding of the objective: a step predicted to lower it by
#: less has converged.
ROUNDING = 1e-14
#: The least damping of a damped Newton step, relative to the Hessian's mean
#: diagonal (:func:`penalized_newton`).
MIN_DAMPING = 1e-6

#: The Fellner-Schall iteration's relative tolerance on the penalties, its
#: updates at most and the range of its penalties around its start
#: (:func:`fellner_schall_penalties`).
FS_TOL, FS_MAX_ITER, FS_RANGE = 0.05, 10, 1e6
#: The degrees of freedom below which a term's penalty no longer matters to
#: the iteration's convergence.
FS_NEGLIGIBLE_EDF = 0.01
#: The penalty the Fellner-Schall iteration starts from, and the scales of
#: its penalties that IntervalGAMCV cross-validates.
FS_START, FS_SCALES = 1.0, np.geomspace(100.0, 0.01, 9)

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
        values = _column(X, self.feature)
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
        return tuple(basis.design(_column(X, feature))
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


class _AdditiveDesign:
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
        means = [np.asarray(basis.design(_column(X, j)).T @ sample_weight).ravel()
                 / sample_weight.sum()
                 for pair in pairs
                 for j, basis in zip(pair, _margins(low, high, pair, n_splines, order),
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
            values = _column(X, j)[positive]
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
                basis, kind = _spline(low, high, j, n_splines, order), SPLINE
            terms.append(Term(j, kind, basis, bool(missing[j]), column, parameter))
            column += terms[-1].n_columns
            parameter += terms[-1].n_parameters
        start = 0
        for k, pair in enumerate(pairs):
            bases = _margins(low, high, pair, n_splines, order)
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


def _spline(low, high, j, n_splines, order):
    """The spline basis of feature ``j`` on its training range."""
    ends = (0.0, 0.0) if np.isnan(low[j]) else (float(low[j]), float(high[j]))
    return SplineBasis(*ends, n_splines, order)


def _margins(low, high, pair, n_splines, order):
    """The bases of an interaction's two features: ``max(order + 1, n_splines
    // 2)`` splines each."""
    size = max(order + 1, n_splines // 2)
    return tuple(_spline(low, high, j, size, order) for j in pair)


def _column(X, j):
    """Feature ``j`` of ``X`` (an array or a sparse matrix) as a float array."""
    if sp.issparse(X):
        return np.asarray(X[:, [j]].toarray(), dtype=np.float64).ravel()
    return np.asarray(X[:, j], dtype=np.float64)


def active_gram(design, curvature):
    """``design' diag(curvature) design`` over the rows of positive curvature,
    as a dense matrix (row blocks made dense for the products)."""
    rows = np.flatnonzero(curvature > 0)
    gram = np.zeros((design.shape[1], design.shape[1]))
    for start in range(0, rows.size, GRAM_BLOCK_ROWS):
        block = rows[start:start + GRAM_BLOCK_ROWS]
        dense = design[block].toarray()
        gram += dense.T @ (curvature[block, np.newaxis] * dense)
    return gram


def box_quadratic(hessian, target, signs, start, max_iter):
    """The minimum of ``x' H x / 2 - target' x`` subject to ``signs * x >= 0``
    (free where ``signs`` is 0), by a primal active-set method from the
    feasible ``start``; exact (finite) for a positive definite ``H``."""
    constrained = signs != 0
    x = np.where(constrained & (signs * start <= 0), 0.0, start)
    at_bound = constrained & (x == 0)
    for _ in range(max_iter):
        free = ~at_bound
        point = np.zeros_like(x)
        point[free] = scipy.linalg.solve(hessian[np.ix_(free, free)], target[free],
                                         assume_a="pos")
        crossing = constrained & free & (signs * point < 0)
        if crossing.any():  # move to the first bound on the way
            share = x[crossing] / (x[crossing] - point[crossing])
            step = share.min()
            x = x + step * (point - x)
            hit = np.flatnonzero(crossing)[share <= step]
            x[hit] = 0.0
            at_bound[hit] = True
            continue
        x = point
        multiplier = signs * (hessian @ x - target)
        leaving = at_bound & (multiplier < -1e-12 * (1.0 + np.abs(target).max()))
        if not leaving.any():
            return x
        at_bound[np.flatnonzero(leaving)[np.argmin(multiplier[leaving])]] = False
    return x


@dataclass(frozen=True)
class Posterior:
    """The penalized fit's Gaussian approximation at its parameters (module
    doc): the inverse of ``X_A' W X_A + penalty`` (the raw weights of the
    rows outside their intervals), the effective degrees of freedom and the
    scale ``sigma^2`` (NaN where the rows outside their intervals weigh no
    more than the degrees of freedom)."""

    inverse: np.ndarray
    edf: float
    scale: float

    @classmethod
    def of_fit(cls, design, problem, parameters, lam, shrinkage, weight_sum):
        predictions = problem.predictions(parameters)
        objective = problem.objective
        # the raw weights of the rows outside their intervals (their curvature / 2)
        active_weight = problem.curvature(predictions) / 2.0 * weight_sum
        gram = active_gram(problem.parameter_columns, active_weight)
        hessian = gram + design.penalty(lam, shrinkage)
        hessian[1:, 1:] += REGULARISATION * weight_sum * np.eye(hessian.shape[0] - 1)
        if hessian[0, 0] <= 0.0:  # no row outside its interval: the level is free
            hessian[0, 0] = 1.0
        inverse = scipy.linalg.solve(hessian, np.eye(hessian.shape[0]), assume_a="pos")
        edf = float(np.sum(inverse * gram))  # trace(inverse @ gram), both symmetric
        distance = (np.maximum(predictions - objective.upper, 0.0)
                    + np.maximum(objective.lower - predictions, 0.0))
        residual_weight = active_weight.sum() - edf
        scale = (float(np.sum(active_weight * distance ** 2)) / residual_weight
                 if residual_weight > 0 else np.nan)
        return cls(inverse, edf, scale)


def coefficient_covariance(design, problem, parameters, lam, shrinkage, weight_sum):
    """The Bayesian covariance of the design's coefficients (n_columns,
    n_columns) at the fitted ``parameters`` (:class:`Posterior`) and the
    effective degrees of freedom."""
    posterior = Posterior.of_fit(design, problem, parameters, lam, shrinkage, weight_sum)
    return (posterior.scale * (problem.mapping @ posterior.inverse @ problem.mapping.T),
            posterior.edf)


def fellner_schall_penalties(fit, design, problem, lam, shrinkage, weight_sum, start,
                              tol=None, max_iter=None):
    """Each term's penalty by the generalized Fellner-Schall iteration (Wood
    and Fasiolo 2017), from ``lam`` and the parameters ``start``: with the
    rows outside their intervals as Gaussian (:class:`Posterior`), each
    update moves term ``j``'s penalty to ``sigma^2 (r_j - lam_j tr(H^-1
    S_j)) / (beta_j' S_j beta_j)`` (``r_j`` the rank of its penalty ``S_j``,
    ``H`` the penalized Hessian; the numerator is the term's degrees of
    freedom), which raises the restricted likelihood (REML), until no term
    of ``FS_NEGLIGIBLE_EDF`` degrees of freedom or more changes its penalty
    by a share above ``tol``, or ``max_iter`` updates (None: ``FS_TOL``,
    ``FS_MAX_ITER``; the cross-validated scale of the penalties makes a
    coarse estimate enough). ``fit(lams, start)`` returns the parameters at
    the penalties ``lams``. Returns the penalties (within ``FS_RANGE`` times ``lam``) and
    the parameters at them."""
    blocks = [(slice(term.parameter, term.parameter + term.n_parameters),
               term.penalty(shrinkage)) for term in design.terms]
    ranks = np.array([np.linalg.matrix_rank(penalty) for _, penalty in blocks])
    lams = np.full(len(blocks), float(lam))
    parameters = fit(lams, start)
    for _ in range(FS_MAX_ITER if max_iter is None else max_iter):
        posterior = Posterior.of_fit(design, problem, parameters, lams, shrinkage,
                                     weight_sum)
        if not np.isfinite(posterior.scale):
            break
        updated, freedom = np.empty_like(lams), np.empty_like(lams)
        for j, (block, penalty) in enumerate(blocks):
            size = float(parameters[block] @ penalty @ parameters[block])
            trace = float(np.sum(posterior.inverse[block, block] * penalty))
            freedom[j] = max(ranks[j] - lams[j] * trace, 0.0)
            updated[j] = posterior.scale * freedom[j] / size if size > 0 else np.inf
        updated = np.clip(updated, lam / FS_RANGE, lam * FS_RANGE)
        # a term of almost no degree of freedom left is shrunk to nothing: its
        # penalty's growth (slow, as the iteration's towards infinity) is moot
        change = np.max(np.abs(np.log(updated / lams))[freedom >= FS_NEGLIGIBLE_EDF],
                        initial=0.0)
        lams = updated
        parameters = fit(lams, parameters)
        if change < (FS_TOL if tol is None else tol):
            break
    return lams, parameters


@dataclass
class PenalizedProblem:
    """The fit's problem: the design ``columns`` (CSR) times the coefficient
    map, the objective's mean loss (``objective``, weights normalised) plus
    ``parameters' penalty parameters`` (the penalty over the weights' sum),
    the parameters' signs. ``parameter_columns`` is the design in the
    parameters (CSR: a spline's row has a value for each parameter up to its
    last non-zero basis function), made once: the Newton steps' products
    and Gram matrices are taken in it, not through the dense map."""

    columns: sp.csr_matrix
    mapping: np.ndarray
    objective: object
    signs: np.ndarray
    parameter_columns: sp.csr_matrix = field(init=False)

    def __post_init__(self):
        self.parameter_columns = sp.csr_matrix(self.columns @ sp.csr_matrix(self.mapping))

    def predictions(self, parameters):
        return self.parameter_columns @ parameters

    def curvature(self, predictions):
        """The generalised Hessian of the mean loss in each prediction: a hinge
        counts where the prediction is at its breakpoint too (an exact value's
        loss is quadratic there, and a row on its bound is taken as active,
        the line search correcting a step that moves it inside)."""
        objective = self.objective
        lower, upper = objective.lower, objective.upper
        active = ((predictions >= upper).astype(np.float64)
                  + (predictions <= lower).astype(np.float64))
        active[lower == upper] = 1.0
        return 2.0 * objective.weight * active

    def value(self, parameters, penalty):
        return float(self.objective(self.predictions(parameters))
                     + parameters @ penalty @ parameters)


def penalized_newton(problem, penalty, start, tol, max_iter, max_change):
    """The parameters minimising the problem's objective plus ``penalty``, by
    the generalised Newton method from ``start`` (module doc). Stops when an
    undamped full step moves no prediction by more than ``max_change *
    tol`` (or when no step along it lowers the objective beyond its
    rounding), or after ``max_iter`` steps. Returns the parameters, the steps
    taken and whether it converged.

    A step the line search must shorten makes the next steps damped
    (Levenberg-Marquardt: ``damping`` times the Hessian's mean diagonal
    added to it), a full step undamps them again: where the data leave
    directions almost free (few rows, no penalty), undamped steps would
    overshoot along them and move many rows across their breakpoints."""
    parameters = start.copy()
    constrained = bool(np.any(problem.signs))
    damping = 0.0
    for step in range(1, max_iter + 1):
        predictions = problem.predictions(parameters)
        gradient = problem.parameter_columns.T @ problem.objective.gradient(predictions)
        gradient += 2.0 * penalty @ parameters
        hessian = active_gram(problem.parameter_columns, problem.curvature(predictions))
        hessian += 2.0 * penalty
        if hessian[0, 0] <= 0.0:  # no hinge active: the intercept's gradient is 0 too
            hessian[0, 0] = 1.0
        current = problem.value(parameters, penalty)
        while True:
            direction = _newton_direction(hessian, gradient, damping, parameters,
                                          problem.signs if constrained else None)
            decrease = float(gradient @ direction)
            change = float(np.abs(problem.predictions(direction)).max(initial=0.0))
            # a step that lowers the objective by less than its rounding is none
            if decrease < -ROUNDING * current and change > tol * max_change:
                break
            if not damping:  # converged: an undamped full step changes nothing
                return parameters + (direction if decrease < 0 else 0.0), step, True
            damping = 0.0  # small because damped? see the undamped step
        share = 1.0
        for _ in range(MAX_HALVINGS):
            candidate = parameters + share * direction
            if problem.value(candidate, penalty) <= current + ARMIJO * share * decrease:
                break
            share /= 2.0
        else:  # no step lowers the objective beyond its rounding: converged
            return parameters, step, True
        if current - problem.value(candidate, penalty) <= ROUNDING * abs(current):
            return candidate, step, True  # the objective no longer moves
        damping = (0.0 if damping < MIN_DAMPING else damping / 4.0) if share == 1.0 \
            else max(4.0 * damping, MIN_DAMPING)
        parameters = candidate
    return parameters, max_iter, False


def _newton_direction(hessian, gradient, damping, parameters, signs):
    """The step to the minimum of the local quadratic model (its Hessian
    damped by ``damping`` times its mean diagonal), within the parameters'
    signs when given."""
    if damping:
        hessian = hessian + damping * np.mean(np.diag(hessian)) * np.eye(hessian.shape[0])
    if signs is None:  # Cholesky factor and solve (LAPACK's posv, without its
        # condition estimate, a third of the solve's time on small systems)
        return -scipy.linalg.cho_solve(scipy.linalg.cho_factor(hessian), gradient)
    target = hessian @ parameters - gradient
    return box_quadratic(hessian, target, signs, parameters,
                         10 * hessian.shape[0]) - parameters


def _row_deviations(rows, covariance):
    """The standard deviation of each row of the sparse ``rows`` times
    coefficients of ``covariance``."""
    variances = np.asarray(rows.multiply(rows @ covariance).sum(axis=1)).ravel()
    return np.sqrt(np.maximum(variances, 0.0))


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


class _AdditiveModel(IntervalRegressorMixin, BaseEstimator):
    """What the additive estimators share: the design, the fit at one
    penalty, the centred terms and the prediction."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _training_problem(self, X, y, sample_weight):
        """Validated training data (X as read, categories as codes), the
        problem of the fit on them (:meth:`_problem`) and the features'
        constraints."""
        if self.n_splines <= self.spline_order:
            raise ValueError(f"n_splines={self.n_splines} must exceed spline_order="
                             f"{self.spline_order}: a spline of order d has at least d + 1 "
                             "basis functions.")
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        constraints = monotonic_constraints(self)
        return (X, lower, upper, sample_weight, constraints,
                *self._problem(X, lower, upper, sample_weight, constraints))

    def _feature_index(self, entry, parameter):
        """The index of the feature ``entry`` names (an index, or a name of
        ``feature_names_in_``); a clear error naming ``parameter`` else."""
        names = getattr(self, "feature_names_in_", None)
        if isinstance(entry, str):
            if names is None or entry not in names:
                raise ValueError(f"{parameter} names a feature that is not in X: "
                                 f"{entry!r}.")
            return int(np.flatnonzero(names == entry)[0])
        if isinstance(entry, Integral) and 0 <= entry < self.n_features_in_:
            return int(entry)
        raise ValueError(f"{parameter} is {entry!r}, not a feature index below "
                         f"{self.n_features_in_} or a feature name.")

    def _term_features(self):
        """The features with a term, in order: every feature with
        ``terms="auto"``, else those ``terms`` lists (by index or name)."""
        if isinstance(self.terms, str):
            return list(range(self.n_features_in_))
        features = [self._feature_index(entry, "terms") for entry in self.terms]
        if len(set(features)) < len(features):
            raise ValueError(f"terms lists a feature twice: {list(self.terms)!r}.")
        return sorted(features)

    def _interaction_pairs(self, categories, constraints):
        """The pairs of features of ``interactions`` (indices), checked: two
        different numeric features without a monotone constraint, no pair
        twice."""
        if self.interactions is None:
            return []
        pairs = []
        for entry in self.interactions:
            if isinstance(entry, str) or np.ndim(entry) != 1 or len(entry) != 2:
                raise ValueError("interactions must be pairs of features, got "
                                 f"{entry!r}.")
            pair = tuple(self._feature_index(feature, "interactions") for feature in entry)
            if pair[0] == pair[1]:
                raise ValueError(f"interactions pairs a feature with itself: {entry!r}.")
            for j in pair:
                if categories is not None and categories[j] is not None:
                    raise ValueError(f"interactions pairs the categorical feature {j}: "
                                     "tensor terms are of numeric features.")
                if constraints is not None and constraints[j]:
                    raise ValueError(f"interactions pairs feature {j}, which has a "
                                     "monotone constraint: a tensor term is not "
                                     "monotone.")
            if set(pair) in [set(other) for other in pairs]:
                raise ValueError(f"interactions lists the pair {entry!r} twice.")
            pairs.append(pair)
        return pairs

    def _problem(self, X, lower, upper, sample_weight, constraints):
        """The design of validated rows, the problem of the fit on them, its
        start (the optimal constant) and the spread of the bounds."""
        categories = fitted_encoding(self)[1]
        design = _AdditiveDesign.of_rows(X, sample_weight, categories,
                                         self.n_splines, self.spline_order,
                                         self._term_features(),
                                         self._interaction_pairs(categories, constraints))
        loss = LOSSES[self.loss]
        problem = PenalizedProblem(design.design(X), design.coefficient_map(),
                                   loss.objective(lower, upper, self.margin, sample_weight),
                                   design.signs(constraints))
        start = np.zeros(design.n_parameters)
        start[0] = loss.optimal_constant(lower, upper, self.margin, sample_weight)
        spread = bounds_spread(lower, upper, sample_weight) or 1.0
        return design, problem, start, spread

    def _fit_at(self, design, problem, lam, weight_sum, start, spread):
        """The parameters at penalty ``lam`` (the objective's penalty is over
        the weights' sum, plus the regularising ridge), the steps and whether
        the solver converged."""
        penalty = design.penalty(lam, self.shrinkage) / weight_sum
        penalty[1:, 1:] += REGULARISATION * np.eye(penalty.shape[0] - 1)
        return penalized_newton(problem, penalty, start, self.tol, self.max_iter, spread)

    def _set_terms(self, design, problem, parameters, lam, X, sample_weight):
        """The fitted terms, centred on the training rows (their weighted mean
        moved into ``intercept_``), and the covariance of the centred
        coefficients."""
        covariance, self.edf_ = coefficient_covariance(design, problem, parameters, lam,
                                                       self.shrinkage, sample_weight.sum())
        self.design_ = design
        self.data_min_, self.data_max_, self.has_missing_effect_ = \
            _AdditiveDesign.parts_of_rows(X, sample_weight, fitted_encoding(self)[1])
        # centring is linear in the coefficients: a term's block minus its
        # weighted mean design row times the block, the means to the intercept
        # (a term's columns sum to one in every row it values)
        column_means = np.asarray(problem.columns.T @ sample_weight).ravel() / \
            sample_weight.sum()
        centring = np.eye(design.n_columns)
        for term in design.terms:
            block = slice(term.column, term.column + term.n_columns)
            centring[block, block] -= column_means[block]
            centring[0, block] = column_means[block]
        self.coef_ = centring @ (problem.mapping @ parameters)
        self.coef_covariance_ = centring @ covariance @ centring.T
        self.intercept_ = float(self.coef_[0])

    @property
    def interaction_margin_means_(self):
        """Each interaction's two margins' weighted mean basis rows over the
        training rows, in turn (those of the design's terms)."""
        return np.concatenate([np.zeros(0)] + [mean for term in self.design_.pairs
                                               for mean in term.means])

    def _n_term_values(self):
        return self.n_features_in_ + len(self.design_.pairs)

    def _term_values(self, X):
        """Each term's value at the rows of ``X`` as read (n_samples, n_features
        + n_interactions: a column per feature, then per interaction); a
        missing value without a missing-value effect, or a category unseen in
        fit, gives the term's mean (0)."""
        columns = self.design_.design(X)
        values = np.zeros((X.shape[0], self._n_term_values()))
        for term in self.design_.terms:
            block = slice(term.column, term.column + term.n_columns)
            values[:, term.slot] = columns[:, block] @ self.coef_[block]
        return values

    def _term_deviations(self, X):
        """Each term's standard deviation at the rows of ``X`` as read, from
        ``coef_covariance_``."""
        columns = self.design_.design(X)
        deviations = np.zeros((X.shape[0], self._n_term_values()))
        for term in self.design_.terms:
            block = slice(term.column, term.column + term.n_columns)
            deviations[:, term.slot] = _row_deviations(
                columns[:, block], self.coef_covariance_[block, block])
        return deviations

    def term_values(self, X, *, return_std=False):
        """Each feature's centred term at the rows of ``X``: ``predict(X)`` is
        their sum plus ``intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        return_std : bool, default=False
            Whether to return each term's standard deviation too (the
            penalized fit's Bayesian covariance, ``coef_covariance_``).

        Returns
        -------
        terms : ndarray of shape (n_samples, n_features)
        std : ndarray of shape (n_samples, n_features)
            With ``return_std``.
        """
        X = self._validate_X_predict(X)
        if return_std:
            return self._term_values(X), self._term_deviations(X)
        return self._term_values(X)

    def shape_function(self, feature, *, n_points=100, confidence=0.95):
        """One feature's term on a grid, with its pointwise band.

        Parameters
        ----------
        feature : int, str or pair of them
            The feature (its index, or its name in ``feature_names_in_``), or
            the two features of an interaction.
        n_points : int, default=100
            Points of a numeric term's grid (equally spaced over its training
            range; the term is constant beyond it), along each feature of an
            interaction.
        confidence : float, default=0.95
            The band's pointwise coverage under the fit's Gaussian
            approximation: the term plus or minus that normal quantile
            times its standard deviation.

        Returns
        -------
        shape : :class:`~sklearn.utils.Bunch`
            ``feature`` (its index, or the interaction's two), ``name``,
            ``kind`` ("spline", "categorical" or "tensor"), ``grid`` (the
            grid's values, or the categories; an interaction's two grids),
            ``term`` (the centred term there; an interaction's of shape
            (n_points, n_points), the first feature along the rows),
            ``lower`` and ``upper`` (the band), and ``missing`` (the
            missing-value effect and its band as a 3-tuple, or None).
        """
        check_is_fitted(self, "design_")
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {confidence!r}.")
        quantile = norm.ppf(0.5 + confidence / 2.0)
        if not isinstance(feature, str) and np.ndim(feature) == 1:
            return self._interaction_shape(feature, n_points, quantile)
        names = getattr(self, "feature_names_in_", None)
        feature = self._feature_index(feature, "feature")
        term = next((term for term in self.design_.terms
                     if term.kind != TENSOR and term.feature == feature), None)
        if term is None:
            raise ValueError(f"feature {feature!r} has no term (see terms).")
        if term.kind == SPLINE:
            grid = np.linspace(term.basis.low, term.basis.high, n_points)
            rows = term.basis.design(grid)
        else:
            grid = fitted_encoding(self)[1][feature]
            rows = sp.identity(term.n_basis, format="csr")
        block = slice(term.column, term.column + term.n_basis)
        values = rows @ self.coef_[block]
        spread = quantile * _row_deviations(rows, self.coef_covariance_[block, block])
        missing = None
        if term.missing:
            at = term.column + term.n_basis
            effect = float(self.coef_[at])
            half = quantile * np.sqrt(max(self.coef_covariance_[at, at], 0.0))
            missing = (effect, effect - half, effect + half)
        name = str(feature if names is None else names[feature])
        return Bunch(feature=feature, name=name, kind=term.kind, grid=grid, term=values,
                     lower=values - spread, upper=values + spread, missing=missing)

    def _interaction_shape(self, pair, n_points, quantile):
        """:meth:`shape_function` of the interaction of the features ``pair``."""
        features = tuple(self._feature_index(feature, "feature") for feature in pair)
        term = next((term for term in self.design_.pairs
                     if set(term.features) == set(features)), None)
        if term is None:
            raise ValueError(f"features {features!r} have no interaction term (see "
                             "interactions).")
        features = term.features  # in the term's order
        grids = tuple(np.linspace(basis.low, basis.high, n_points) for basis in term.bases)
        rows = row_tensor(*(basis.design(np.repeat(grid, n_points) if first
                                         else np.tile(grid, n_points))
                            for basis, grid, first in zip(term.bases, grids, (True, False),
                                                          strict=True)))
        block = slice(term.column, term.column + term.n_basis)
        values = (rows @ self.coef_[block]).reshape(n_points, n_points)
        spread = quantile * _row_deviations(
            rows, self.coef_covariance_[block, block]).reshape(n_points, n_points)
        names = getattr(self, "feature_names_in_", None)
        name = " x ".join(str(j if names is None else names[j]) for j in features)
        return Bunch(feature=features, name=name, kind=TENSOR, grid=grids, term=values,
                     lower=values - spread, upper=values + spread, missing=None)

    @property
    def shape_functions_(self):
        """The :meth:`shape_function` of every term (100 points, 95% bands):
        the features', then the interactions'."""
        return [self.shape_function(term.features if term.kind == TENSOR else term.feature)
                for term in self.design_.terms]

    @fill_doc
    @by_partitions
    @by_row_blocks
    def predict(self, X):
        """Predicted value of each sample: the intercept plus the terms.

        %(predict)s
        """
        X = self._validate_X_predict(X)
        return self.design_.design(X) @ self.coef_

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the centred terms."""
        check_is_fitted(self)
        return AdditiveTerms(self)

    #: the fitted arrays and values a model file holds beside the terms
    _state_arrays = ()
    _state_values = ("n_iter_", "edf_")

    def _export_state(self, writer):
        """The coefficients, the features' training ranges and missing-value
        effects (the design), for a model file (``mmit._persistence._model_files``)."""
        writer.array("coef", self.coef_)
        writer.array("coef_covariance", self.coef_covariance_)
        writer.array("data_min", self.data_min_)
        writer.array("data_max", self.data_max_)
        writer.array("has_missing_effect", self.has_missing_effect_)
        writer.array("interaction_margin_means", self.interaction_margin_means_)
        for name in self._state_arrays:
            writer.array(name.rstrip("_"), getattr(self, name))
        return {"values": {name: getattr(self, name) for name in self._state_values}}

    def _import_state(self, state, reader):
        """The fitted model of a model file (``n_features_in_`` and the
        categories set), checked: finite coefficients, one per column of the
        design of the file's training ranges."""
        shape = (self.n_features_in_,)
        low = reader.array("data_min", np.float64, shape)
        high = reader.array("data_max", np.float64, shape)
        missing = reader.array("has_missing_effect", np.bool_, shape)
        if np.any(high < low):
            raise ValueError("a feature's training range is empty")
        categories = fitted_encoding(self)[1]
        pairs = self._interaction_pairs(categories, monotonic_constraints(self))
        margin_means = reader.array("interaction_margin_means", np.float64, (sum(
            basis.n_splines for pair in pairs
            for basis in _margins(low, high, pair, self.n_splines, self.spline_order)),))
        design = _AdditiveDesign.of_parts(
            low, high, missing, categories, self.n_splines, self.spline_order,
            self._term_features(), pairs, margin_means)
        self.coef_ = reader.array("coef", np.float64, (design.n_columns,))
        if not np.all(np.isfinite(self.coef_)):
            raise ValueError("an additive model's coefficients are not finite")
        self.coef_covariance_ = reader.array("coef_covariance", np.float64,
                                             (design.n_columns, design.n_columns))
        for name in self._state_arrays:
            setattr(self, name, reader.array(name.rstrip("_"), np.float64))
        for name in self._state_values:
            setattr(self, name, state["values"][name])
        self.design_ = design
        self.data_min_, self.data_max_, self.has_missing_effect_ = low, high, missing
        self.intercept_ = float(self.coef_[0])


GAM_PARAMETER_CONSTRAINTS = {
    "terms": [StrOptions({"auto"}), "array-like"],
    "interactions": ["array-like", None],
    "n_splines": [Interval(Integral, 2, None, closed="left")],
    "shrinkage": [Interval(Real, 0.0, None, closed="left")],
    "spline_order": [Interval(Integral, 1, None, closed="left")],
    "loss": [StrOptions({"squared_hinge"})],
    "margin": [Interval(Real, 0.0, None, closed="left")],
    "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
    "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
    "tol": [Interval(Real, 0.0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "verbose": ["verbose"],
}


@fill_doc
class IntervalGAM(_AdditiveModel):
    """A generalized additive model of interval targets: penalized splines.

    Fits ``f(x) = a + f_1(x_1) + ... + f_p(x_p)``: each numeric feature's
    term a cubic B-spline on equal knots over its training range (P-splines,
    Eilers and Marx 1996), each categorical feature's an effect per
    category, a missing value an effect of its own, minimising the squared
    hinge of ``f`` outside each interval shrunk by ``margin`` (the loss of
    ``MMIT(loss="squared_hinge")``: censored bounds and exact values alike)
    plus ``lam`` times the squared second differences of every spline's
    coefficients (and ``shrinkage`` times its squared slope) and the squares
    of the categorical effects:

    ``sum_i w_i h_i(f(x_i)) + lam * sum_j (|D beta_j|^2 + shrinkage s_j^2)``.

    Parameters
    ----------
    lam : float or array-like of shape (n_terms,), default=1.0
        The penalty's strength (0: unpenalized splines; large: terms shrunk
        to 0, or with ``shrinkage=0`` straight lines, and constant
        categorical terms); one for every term, or one per term (the
        features' terms in order, then the interactions'), as
        :class:`IntervalGAMCV` chooses them (its ``lam_``).
    terms : "auto" or list of int or str, default="auto"
        The features with a term: "auto", every feature; else the listed
        ones (indices, or names of ``feature_names_in_``), the others left
        out of the model (their SHAP values 0).
    interactions : list of pairs of int or str, default=None
        Pairs of numeric features (indices or names) with an interaction
        term: a tensor product of cubic splines of ``max(spline_order + 1,
        n_splines // 2)`` functions a feature, penalized by ``lam`` times
        its coefficients' squared second differences along each feature,
        holding no function of one feature alone (the features' own terms
        hold those). Its value in a row missing either feature is a
        constant (0 where no training row missed one). Monotone features
        cannot interact.
    n_splines : int, default=10
        Basis functions of each numeric feature's spline.
    spline_order : int, default=3
        The splines' degree (3: cubic); less than ``n_splines``.
    shrinkage : float, default=0.1
        The penalty of what the second differences leave free (a spline's
        slope, an interaction's bilinear part), as a share of ``lam``: with
        0 a large ``lam`` makes each numeric term a straight line (the
        linear model), with more it shrinks the terms of uninformative
        features towards 0 (mgcv's shrinkage smoothers). The default comes
        from the bundled interval data sets and simulated shapes.
    loss : {"squared_hinge"}, default="squared_hinge"
        The hinge loss (the linear hinge is not differentiable: the Newton
        solver needs the curvature).
    margin : float, default=0.0
        Margin of the hinges, see :class:`MMIT`.
    monotonic_cst : array-like of int or dict, default=None
        -1, 0 or 1 per feature (or a dict by feature name): the term of a
        feature with 1 is non-decreasing, with -1 non-increasing, exactly
        (its spline's coefficient differences are sign-constrained in the
        solver). Numeric features only.
    %(categorical_features)s
    tol : float, default=1e-6
        The solver stops when a full Newton step moves no prediction by more
        than ``tol`` times the standard deviation of the finite bounds.
    max_iter : int, default=300
        Newton steps at most (a penalized fit takes a few to thirty; an
        unpenalized one, ``lam=0``, on data that many splines fit, up to a
        few hundred: the directions the loss leaves free are then fixed by
        the solver's tiny ridge, one breakpoint at a time).
    verbose : int, default=0
        With 1 or more, the Newton steps taken on stderr.

    Attributes
    ----------
    intercept_ : float
        The mean training prediction (the terms are centred on the training
        rows, by their weights).
    coef_ : ndarray of shape (n_columns,)
        The coefficients of the design's columns: the intercept, then per
        feature its basis functions (B-splines, or one per category) and,
        where training rows were missing it, its missing-value effect.
    coef_covariance_ : ndarray of shape (n_columns, n_columns)
        The coefficients' Bayesian covariance (module doc of
        ``mmit.additive._gam``: the rows outside their intervals as
        Gaussian, the penalty as a prior; NaN when those rows weigh no more
        than ``edf_``): the terms' bands (:meth:`shape_function`,
        ``term_values(X, return_std=True)``).
    edf_ : float
        The fit's effective degrees of freedom (the trace of its hat matrix
        on the rows outside their intervals).
    n_iter_ : int
        Newton steps taken.
    data_min_, data_max_ : ndarray of shape (n_features,)
        Each numeric feature's training range, its spline's span (NaN for a
        categorical feature).
    has_missing_effect_ : ndarray of shape (n_features,) of bool
        Whether a feature has a missing-value effect (some training row
        missed it).
    interaction_margin_means_ : ndarray of shape (n_margin_splines,)
        Each interaction's two margins' weighted mean basis rows over the
        training rows, in turn: the means that make the interactions pure.
    %(features_in)s
    %(categorical_attributes)s

    See Also
    --------
    IntervalGAMCV : ``lam`` chosen by cross-validation.
    IntervalLinearRegression : The linear model.

    Notes
    -----
    Out of its training range a term is constant (its value at the nearest
    end): a spline does not extrapolate. A missing value in a feature that
    had none in training, or a category unseen in fit, takes the term's
    mean (0). The terms are the model's exact SHAP values
    (:func:`~mmit.shap_values`).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalGAM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(200, 2))
    >>> center = np.sin(X[:, 0]) + X[:, 1] ** 2
    >>> y = np.column_stack([center - 0.1, center + 0.1])
    >>> model = IntervalGAM(lam=0.1).fit(X, y)
    >>> terms = model.term_values(X[:3])
    >>> bool(np.allclose(terms.sum(axis=1) + model.intercept_, model.predict(X[:3])))
    True
    """

    _parameter_constraints = {"lam": [Interval(Real, 0.0, None, closed="left"),
                                      "array-like"],
                              **GAM_PARAMETER_CONSTRAINTS}

    def __init__(self, lam=1.0, *, terms="auto", interactions=None, n_splines=10,
                 spline_order=3, shrinkage=0.1,
                 loss="squared_hinge", margin=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", tol=1e-6, max_iter=300, verbose=0):
        set_init_parameters(self, locals())

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the additive model on interval targets.

        %(fit_weighted_parameters)s

        Returns
        -------
        self : IntervalGAM
            The fitted estimator.
        """
        X, _, _, weight, _, design, problem, start, spread = self._training_problem(
            X, y, sample_weight)
        lam = self._term_lams(design)
        with single_threaded_blas():
            parameters, self.n_iter_, converged = self._fit_at(
                design, problem, lam, weight.sum(), start, spread)
        _report(self, lam, self.n_iter_, converged)
        self._set_terms(design, problem, parameters, lam, X, weight)
        return self

    def __getattr__(self, name):
        if name.startswith("predict_") and hasattr(PredictiveDistributionMixin, name):
            raise AttributeError(
                f"IntervalGAM has no {name}: a fit at a fixed lam has no held-out "
                "predictions to make predictive distributions of; IntervalGAMCV gives "
                "them (from its folds' residuals).")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _term_lams(self, design):
        """``lam``, one per term of ``design``, checked."""
        lam = np.asarray(self.lam, dtype=np.float64)
        if lam.ndim > 1 or (lam.ndim == 1 and lam.size != len(design.terms)):
            raise ValueError(f"lam must be a number or one per term ({len(design.terms)}: "
                             "the features' terms, then the interactions'), got shape "
                             f"{lam.shape}.")
        if not np.all(np.isfinite(lam) & (lam >= 0)):
            raise ValueError(f"lam must be non-negative and finite, got {self.lam!r}.")
        return np.broadcast_to(lam, len(design.terms)).copy()


def _report(model, lam, n_iter, converged):
    lam = np.unique(lam)
    lam = (f"lam={lam[0]:.4g}" if lam.size == 1 else
           f"lam per term from {lam[0]:.4g} to {lam[-1]:.4g}")
    if not converged:
        warnings.warn(f"{type(model).__name__} did not converge in max_iter="
                      f"{model.max_iter} Newton steps ({lam}).", ConvergenceWarning,
                      stacklevel=3)
    if model.verbose:
        print(f"[{type(model).__name__}] {lam}: {n_iter} Newton steps",
              file=sys.stderr, flush=True)


@fill_doc
class IntervalGAMCV(HeldOutDistributionMixin, _AdditiveModel):
    """IntervalGAM with its terms' penalties chosen by K-fold cross-validation.

    Each fold fits the path of ``lams`` (one penalty shared by every term)
    from the largest down, each fit started from the previous one's (warm
    starts), then (``term_penalties``) a penalty per term by the
    Fellner-Schall iteration on the fold's training rows (a REML estimate:
    the rows outside their intervals taken as Gaussian, as for the bands)
    and the path of those penalties times 100 down to 0.01 (9 scales); it
    scores each by the test interval MSE. The best penalties are refitted on
    all rows (the per-term ones estimated again there, times the best
    scale).

    Parameters
    ----------
    lams : array-like of float, default=None
        The candidate shared penalties; None: 15 from 1e4 down to 1e-3,
        log-spaced.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``KFold``).
    term_penalties : {"best", "shared", "per_term"}, default="best"
        Which penalties are candidates: "shared", the ``lams``; "per_term",
        the per-term ones times each scale (estimated from the constant
        model's start); "best", both. Per-term penalties
        let a rough term keep its detail while a smooth or uninformative one
        is shrunk. The default comes from the bundled interval data sets and
        simulated shapes.
    terms, interactions, n_splines, spline_order, shrinkage, loss, margin
        As for :class:`IntervalGAM`.
    monotonic_cst
        As for :class:`IntervalGAM`.
    tol, max_iter
        As for :class:`IntervalGAM`.
    %(categorical_features)s
    distribution : "spread", SpreadDistribution or None, default="spread"
        What the predictive distributions (:meth:`predict_quantiles`,
        :meth:`predict_interval`, :meth:`predict_cdf`,
        :meth:`predict_survival`) are made of: the model's prediction plus
        the residual intervals of the folds' held-out predictions at
        ``lam_``, weighed by a forest grown on the residuals' sizes, as for
        :class:`IntervalStackingRegressor`. Made on the first request (or by
        :func:`save_model`) from a copy of the training rows; None: no
        distributions.
    n_jobs : int, default=None
        Folds fitted in parallel (threads; numpy releases the GIL in its
        products), and the distributions' forest.
    random_state : int, RandomState instance or None, default=None
        Seeds the distributions' forest (the fit itself is deterministic).
    verbose : int, default=0
        With 1 or more, the chosen ``lam`` and the Newton steps on stderr.

    Attributes
    ----------
    lam_ : ndarray of shape (n_terms,)
        The chosen penalty of each term (the features' terms, then the
        interactions'; all equal when a shared one won): ``IntervalGAM(
        lam=lam_)`` fits the same model.
    lams_ : ndarray of shape (n_lams,)
        The candidate shared penalties, largest first (none with
        ``term_penalties="per_term"``).
    mse_path_ : ndarray of shape (n_lams, n_folds)
        Test interval MSE of every shared candidate and fold.
    per_term_scales_ : ndarray of shape (n_scales,)
        The scales of the per-term penalties tried, largest first (none with
        ``term_penalties="shared"``).
    per_term_mse_path_ : ndarray of shape (n_scales, n_folds)
        Test interval MSE of every scale and fold.
    intercept_, coef_, coef_covariance_, edf_, n_iter_
        Of the model refitted at ``lam_``, see :class:`IntervalGAM`.
    data_min_, data_max_, has_missing_effect_, interaction_margin_means_
        See :class:`IntervalGAM`.
    distribution_ : object or None
        The predictive distributions (see ``distribution``).
    %(features_in)s
    %(categorical_attributes)s

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalGAMCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(200, 2))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=200)
    >>> model = IntervalGAMCV(cv=3).fit(X, y)
    >>> model.mse_path_.shape
    (15, 3)
    """

    _state_arrays = ("lam_", "lams_", "mse_path_", "per_term_scales_",
                     "per_term_mse_path_")
    _state_values = ("n_iter_", "edf_")
    _parameter_constraints = {
        "lams": ["array-like", None], "cv": ["cv_object"],
        "term_penalties": [StrOptions({"shared", "per_term", "best"})],
        "distribution": [StrOptions({"spread"}), SpreadDistribution, None],
        "n_jobs": [Integral, None], "random_state": ["random_state"],
        **GAM_PARAMETER_CONSTRAINTS}

    def __init__(self, *, lams=None, cv=None, term_penalties="best", terms="auto",
                 interactions=None, n_splines=10, spline_order=3, shrinkage=0.1,
                 loss="squared_hinge", margin=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", tol=1e-6, max_iter=300,
                 distribution="spread", n_jobs=None, random_state=None, verbose=0):
        set_init_parameters(self, locals())

    def _candidate_lams(self):
        if self.lams is None:
            return np.geomspace(1e4, 1e-3, 15)
        lams = np.sort(np.ravel(np.asarray(self.lams, dtype=np.float64)))[::-1]
        if lams.size == 0 or not np.all(np.isfinite(lams)) or np.any(lams < 0):
            raise ValueError("lams must be non-negative finite numbers, got "
                             f"{self.lams!r}.")
        return lams

    def _penalty_path(self, design, problem, weight_sum, start, spread, lams, scales):
        """The fits of the candidate penalties in turn, each started from the
        previous one's: each of ``lams`` shared by the terms (largest first),
        then each of ``scales`` (largest first) times the per-term penalties of
        :func:`fellner_schall_penalties` (from the last fit). Yields each
        candidate's penalties (one per term), parameters, Newton steps and
        whether the solver converged."""
        for lam in lams:
            start, n_iter, converged = self._fit_at(design, problem, lam, weight_sum, start,
                                                     spread)
            yield np.full(len(design.terms), lam), start, n_iter, converged
        if scales.size:
            def fit(lam, start):
                return self._fit_at(design, problem, lam, weight_sum, start, spread)[0]

            term_lams, start = fellner_schall_penalties(fit, design, problem, FS_START,
                                                        self.shrinkage, weight_sum, start)
            for scale in scales:
                start, n_iter, converged = self._fit_at(design, problem, scale * term_lams,
                                                         weight_sum, start, spread)
                yield scale * term_lams, start, n_iter, converged

    def _fold_path_scores(self, X, lower, upper, weight, constraints, train, test, lams,
                          scales):
        """The test interval MSE of each candidate penalty of the path
        (:meth:`_penalty_path`) fitted on the rows ``train`` of the validated
        ``X`` (NaN when every test row weighs 0), and the test rows'
        predictions (n_candidates, n_test)."""
        design, problem, start, spread = self._problem(
            _safe_indexing(X, train), lower[train], upper[train], weight[train],
            constraints)
        test_columns = design.design(_safe_indexing(X, test))
        path = self._penalty_path(design, problem, weight[train].sum(), start, spread,
                                  lams, scales)
        predictions = np.array([test_columns @ (problem.mapping @ parameters)
                                for _, parameters, _, _ in path])
        if weight[test].sum() <= 0:
            return np.full(len(predictions), np.nan), predictions
        return interval_scores(lower[test], upper[test], predictions,
                               sample_weight=weight[test]), predictions

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Cross-validate the penalty and refit the best model on all rows.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, for fitting and for the test MSE.

        Returns
        -------
        self : IntervalGAMCV
            The fitted estimator.
        """
        lams = (np.empty(0) if self.term_penalties == "per_term"
                else self._candidate_lams())
        scales = np.empty(0) if self.term_penalties == "shared" else FS_SCALES
        X_rows, lower, upper, weight, constraints, design, problem, start, spread = \
            self._training_problem(X, y, sample_weight)
        folds = list(check_cv(self.cv).split(np.zeros((X_rows.shape[0], 1))))
        check_fold_weights(folds, weight)
        with single_threaded_blas():
            results = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(self._fold_path_scores)(X_rows, lower, upper, weight,
                                           constraints, train, test, lams, scales)
                for train, test in folds)
        scores = np.column_stack([scores for scores, _ in results])
        mean = (np.nanmean(scores, axis=1) if np.isnan(scores).any()
                else scores.mean(axis=1))
        best = int(np.argmin(mean))
        self.lams_, self.mse_path_ = lams, scores[:lams.size]
        self.per_term_scales_, self.per_term_mse_path_ = scales, scores[lams.size:]
        # the refit walks the path down to the chosen penalties, as the folds did
        path = self._penalty_path(design, problem, weight.sum(), start, spread, lams,
                                  scales)
        with single_threaded_blas():
            self.lam_, parameters, self.n_iter_, converged = next(
                itertools.islice(path, best, None))
        _report(self, self.lam_, self.n_iter_, converged)
        self._set_terms(design, problem, parameters, self.lam_, X_rows, weight)
        held_out = np.full(X_rows.shape[0], np.nan)
        for (_, test), (_, predictions) in zip(folds, results, strict=True):
            held_out[test] = predictions[best]
        self.distribution_ = held_out_distribution(self.distribution, X, lower, upper,
                                                   weight, held_out,
                                                   check_random_state(self.random_state))
        return self

    def _export_state(self, writer):
        """The additive model's state and its predictive distributions (made
        now if not yet), for a model file."""
        state = super()._export_state(writer)
        if self.distribution_ is not None:
            state["distribution"] = self.distribution_.fitted(self)._export_state(writer)
        return state

    def _import_state(self, state, reader):
        super()._import_state(state, reader)
        self.distribution_ = (ForestDistribution._from_state(self, state["distribution"],
                                                             reader)
                              if "distribution" in state else None)
