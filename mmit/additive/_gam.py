"""IntervalGAM and IntervalGAMCV: generalized additive models of interval
targets, ``f(x) = a + f_1(x_1) + ... + f_p(x_p)``, each numeric term a
penalized B-spline (P-spline), each categorical term an effect per level,
a missing value an effect of its own, and optional pairwise interactions
``f_jk(x_j, x_k)`` (pure tensor products of splines, ``_splines``).

The fitted model they share (its terms' values, shapes and bands, the
prediction, model files) is ``_additive_model``; its terms and their basis
matrix are ``_additive_design``; the fit at one penalty (the penalized
Newton solver, the covariance of the bands, the Fellner-Schall penalties)
is ``_penalized_newton``; the SHAP values are ``_additive_terms``. This
module holds the two estimators: their parameters and fits, IntervalGAM at
its penalties and IntervalGAMCV's search of the penalty by
cross-validation.
"""

import itertools
import sys
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils._base import set_init_parameters
from .._utils._blas import single_threaded_blas
from .._utils._categorical import CATEGORICAL_FEATURES_CONSTRAINT
from .._utils._constraints import MONOTONIC_CST_CONSTRAINT
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._scores import interval_scores
from .._utils._validation import check_fold_weights
from ..ensemble._distribution_strategies import SpreadDistribution
from ..ensemble._distributions import ForestDistribution
from ..ensemble._held_out_distributions import (
    HeldOutDistributionMixin,
    held_out_distribution,
)
from ..ensemble._predictive import PredictiveDistributionMixin
from ._additive_design import AdditiveDesign as _AdditiveDesign  # noqa: F401 (old pickles)
from ._additive_design import PairTerm, Term  # noqa: F401 (old pickles name them here)
from ._additive_model import AdditiveModel
from ._penalized_newton import FS_SCALES, FS_START, fellner_schall_penalties

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
class IntervalGAM(AdditiveModel):
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

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Fit the additive model on interval targets.

        %(fit_weighted)s
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
class IntervalGAMCV(HeldOutDistributionMixin, AdditiveModel):
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

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Cross-validate the penalty and refit the best model on all rows.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, for fitting and for the test MSE.

        %(fit_returns)s
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
