"""The fitted additive model that IntervalGAM and IntervalGAMCV share
(:class:`AdditiveModel`): its design and the fit at one penalty, the
centred terms with their bands, the terms' shape functions, the
prediction, its explanation and its model file. How the penalty is chosen
is the estimators' (``_gam``).
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.stats import norm
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from .._loss._loss import LOSSES
from .._utils._base import IntervalRegressorMixin
from .._utils._categorical import fitted_encoding
from .._utils._constraints import monotonic_constraints
from .._utils._methods import predict_method
from .._utils._validation import bounds_spread, validate_training_data
from ._additive_design import SPLINE, TENSOR, AdditiveDesign, margin_bases
from ._additive_terms import AdditiveTerms
from ._penalized_newton import (
    REGULARISATION,
    PenalizedProblem,
    coefficient_covariance,
    penalized_newton,
    row_deviations,
)
from ._splines import row_tensor


class AdditiveModel(IntervalRegressorMixin, BaseEstimator):
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
        design = AdditiveDesign.of_rows(X, sample_weight, categories,
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
            AdditiveDesign.parts_of_rows(X, sample_weight, fitted_encoding(self)[1])
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
            deviations[:, term.slot] = row_deviations(
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
        spread = quantile * row_deviations(rows, self.coef_covariance_[block, block])
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
        spread = quantile * row_deviations(
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

    @predict_method
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
        n_margin_splines = sum(
            basis.n_splines for pair in pairs
            for basis in margin_bases(low, high, pair, self.n_splines, self.spline_order))
        margin_means = reader.array("interaction_margin_means", np.float64,
                                    (n_margin_splines,))
        design = AdditiveDesign.of_parts(
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
