"""IntervalMARS: multivariate adaptive regression splines (Friedman 1991;
Hastie, Tibshirani and Friedman, section 9.4) of interval targets.

The model is a sum of basis terms, each a product of hinges ``max(0, x_j -
t)`` or ``max(0, t - x_j)`` (at most ``max_degree`` of them, of different
features), fitted on the squared hinge of every mmit model: the loss of a
prediction outside its margin-shrunk interval.

**Forward pass.** From the intercept alone, each step adds the pair of
hinges at a knot ``t`` of a feature ``j`` times a parent term ``B_m``
(``B_m (x_j - t)_+`` and ``B_m (t - x_j)_+``) that lowers the loss most,
then refits every coefficient exactly (the generalised Newton method of the
additive models, ``_penalized_newton``). A candidate is scored on the
local quadratic of the loss at the current fit (:func:`candidate_scores`):
the rows outside their intervals with their curvature as weights and the
bound they cross as target, a weighted least-squares problem in which the
new pair's decrease of the residual sum of squares, its columns taken
orthogonal to the current basis, is a 2 x 2 solve. The inner products it
needs are prefix sums over the rows in the order of ``x_j`` (a hinge's
inner product with any vector is ``S1(t) - t S0(t)``, both sums over the
rows beyond ``t``), so that every knot of a parent and a feature costs
O(1) after an O(n M) sweep: O(n p M^2) a step, as Friedman's updates. The
score is the loss's exact decrease while no row crosses a bound; a row that
the new pair moves into its interval (or out of it) is counted by the exact
refit, whose active rows the next step's scores use. With ``monotonic_cst``
the pair's two coefficients are sign-constrained in its score (an exact
two-variable quadratic program) and in the refit (the box-constrained
Newton steps of the additive models); a constrained feature's hinges are
terms of degree one and parents of none, so the fit is monotone in it
exactly.

**Backward pass.** From the forward pass's basis, each step deletes the
term (never the intercept) whose deletion leaves the least loss, every
deletion refitted exactly; the model kept is the one of least generalized
cross-validation along the way, ``GCV = loss / (1 - C(M) / n)^2``, ``C(M)
= M + penalty (M - 1) / 2`` for ``M`` terms (Friedman's; ``penalty`` 2 for
additive models, 3 with products), ``n`` the rows the loss sees: those on
or outside their breakpoints at the fit. GCV approximates the
leave-one-out loss of a linear smoother, ``r_i / (1 - h_ii)`` on each row;
a row inside its interval adds nothing to the fit, so that leaving it out
changes nothing, and the hat matrix's trace ``C(M)`` is shared among the
others alone (with ``n`` all the rows, a basis that fits a few rows
outside their intervals looked cheap: it chose models of many times the
linear model's test error on the censored genomics sets).

The fit is the loss plus ``RIDGE`` times the squared coefficients of the
standardised terms: the rows inside their intervals leave directions of
the basis free. The features are standardised for the fit (so that the
ridge and the sums' rounding do not depend on their units); the fitted
terms and coefficients are in the units of ``X``.
"""

import sys
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._loss._loss import LOSSES
from .._utils._base import IntervalRegressorMixin, set_init_parameters
from .._utils._blas import single_threaded_blas
from .._utils._categorical import non_numeric_columns
from .._utils._constraints import MONOTONIC_CST_CONSTRAINT, monotonic_constraints
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._validation import bounds_spread, validate_training_data
from ._hinge_terms import (
    BasisTerm,
    Hinge,
    MARSTerms,
    background_means,
    basis_matrix,
    decode_terms,
    encode_terms,
)
from ._penalized_newton import PenalizedProblem, penalized_newton

#: A candidate column whose part orthogonal to the basis keeps less than
#: this share of its squared norm lies in the basis: it adds nothing.
COLLINEAR = 1e-9
#: The ridge on the standardised terms' coefficients, in the objective (a
#: mean loss, so that it is free of the targets' units): the rows inside
#: their intervals leave directions of the basis free, along which the
#: additive models' tiny ridge let products of hinges carry censored rows'
#: predictions far off (test MSE many times the linear model's on the
#: genomics sets); 1e-4 has the best mean rank of 1e-7 ... 1e-2 on the
#: bundled sets and simulated shapes, and biases an exact fit by about
#: that share.
RIDGE = 1e-4
#: The significance of Friedman's rules for the knots' spacing (``min_span``
#: and ``end_span`` "auto").
SPAN_ALPHA = 0.05


def span_rules(n_rows, n_features, min_span, end_span):
    """The knots' spacing in a parent term's ``n_rows`` rows (of positive
    weight): the rows between candidate knots (``min_span``) and kept from
    the ends (``end_span``), Friedman's (1991, eqs. 43 and 45) where
    "auto"."""
    if min_span == "auto":
        min_span = int(-np.log2(-np.log1p(-SPAN_ALPHA) / (n_features * max(n_rows, 1)))
                       / 2.5)
    if end_span == "auto":
        end_span = int(np.ceil(3.0 - np.log2(SPAN_ALPHA / n_features)))
    return max(int(min_span), 1), max(int(end_span), 0)


def candidate_knots(values, min_span, end_span):
    """The candidate knots of a feature's values in a parent's rows (sorted,
    repeats kept): every ``min_span``-th value, ``end_span`` rows kept from
    either end (so that a hinge has at least that many rows on either side),
    without repeats and below the largest value (the hinge above it would
    be 0)."""
    knots = np.unique(values[end_span:values.size - end_span:min_span])
    return knots[knots < values[-1]]


def quadratic_gain(g, H, signs):
    """The largest ``2 g'c - c'H c`` over the pairs' coefficients ``c``
    (``g`` (K, 2), ``H`` (K, 2, 2) positive semi-definite, a column of zero
    ``H`` unused), with ``signs`` (2,) the coefficients' signs (0: free): the
    exact optimum of the two-variable quadratic program, its faces tried in
    turn. Returns the gains and which coefficients are non-zero."""
    h1, h2, h12 = H[:, 0, 0], H[:, 1, 1], H[:, 0, 1]
    g1, g2 = g[:, 0], g[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        single1 = np.where(h1 > 0, g1 / h1, 0.0)
        single2 = np.where(h2 > 0, g2 / h2, 0.0)
        det = h1 * h2 - h12 ** 2
        pair = det > COLLINEAR * h1 * h2
        both1 = np.where(pair, (h2 * g1 - h12 * g2) / det, 0.0)
        both2 = np.where(pair, (h1 * g2 - h12 * g1) / det, 0.0)
    faces = [  # (gain, uses column 1, uses column 2, feasible)
        (np.zeros_like(g1), False, False, np.ones_like(pair)),
        (g1 * single1, True, False, (h1 > 0) & (signs[0] * single1 >= 0)),
        (g2 * single2, False, True, (h2 > 0) & (signs[1] * single2 >= 0)),
        (g1 * both1 + g2 * both2, True, True,
         pair & (signs[0] * both1 >= 0) & (signs[1] * both2 >= 0)),
    ]
    gain = np.zeros_like(g1)
    columns = np.zeros((g1.size, 2), dtype=bool)
    for value, first, second, feasible in faces:
        better = feasible & (value > gain)
        gain = np.where(better, value, gain)
        columns[better] = (first, second)
    return gain, columns


def candidate_scores(X, columns, parent, feature, weight, residual, orthonormal, knots,
                     order, signs=(0, 0)):
    """The decrease of ``sum_i a_i (r_i - (B delta + C c)_i)^2`` that adding the
    hinges of ``feature`` at each of ``knots`` times column ``parent`` of
    ``columns`` (``C``, beside the current columns ``B``) allows, ``a``
    (``weight``) the rows' curvature, ``r`` their residuals (module doc).
    ``orthonormal`` spans ``sqrt(a) B`` with orthonormal columns. The
    first knot is the linear term's, ``B_m (x - t_0)``, the least value of
    the parent's rows (only its first column), the others the pairs';
    ``order`` sorts the rows by the feature (stably; made once per fit);
    ``signs`` constrain the pair's coefficients. Returns the gains and the
    columns each one adds (from :func:`quadratic_gain`), in O(n M) for all
    the knots.

    Only the rows of positive weight and parent value count; they are
    swept in the order of the feature's values with prefix sums of the
    weighted residual and basis, so that each knot's inner products are
    differences of two prefix sums."""
    parent_values = columns[:, parent]
    rows = order[((weight > 0) & (parent_values != 0))[order]]
    if rows.size == 0:
        return np.zeros(knots.size), np.zeros((knots.size, 2), dtype=bool)
    x = X[rows, feature]
    scale = np.sqrt(weight[rows]) * parent_values[rows]
    targets = np.column_stack([np.sqrt(weight[rows]) * residual[rows], orthonormal[rows]])

    def prefix(values):
        sums = np.zeros((values.shape[0] + 1,) + values.shape[1:])
        np.cumsum(values, axis=0, out=sums[1:])
        return sums

    zero_sum = prefix(scale[:, None] * targets)
    first_sum = prefix((scale * x)[:, None] * targets)
    square = scale ** 2
    moments = [prefix(square * x ** k) for k in range(3)]
    above = np.searchsorted(x, knots, side="right")  # rows past the knot: x > t
    below = np.searchsorted(x, knots, side="left")  # rows before it: x < t
    t = knots[:, None]
    # inner products of (x - t)_+ and (t - x)_+ with each target column
    plus = (first_sum[-1] - first_sum[above]) - t * (zero_sum[-1] - zero_sum[above])
    minus = t * zero_sum[below] - first_sum[below]
    # squared norms of the two hinges: sums of (x - t)^2 on either side
    after = [moment[-1] - moment[above] for moment in moments]
    before = [moment[below] for moment in moments]
    norm_plus = after[2] - 2 * knots * after[1] + knots ** 2 * after[0]
    norm_minus = before[2] - 2 * knots * before[1] + knots ** 2 * before[0]
    norm_minus[0] = 0.0  # the linear term has one column
    projection = orthonormal.T @ (np.sqrt(weight) * residual)  # 0 at an exact fit
    g = np.column_stack([plus[:, 0] - plus[:, 1:] @ projection,
                         minus[:, 0] - minus[:, 1:] @ projection])
    H = np.empty((knots.size, 2, 2))
    H[:, 0, 0] = norm_plus - np.einsum("ij,ij->i", plus[:, 1:], plus[:, 1:])
    H[:, 1, 1] = norm_minus - np.einsum("ij,ij->i", minus[:, 1:], minus[:, 1:])
    H[:, 0, 1] = H[:, 1, 0] = -np.einsum("ij,ij->i", plus[:, 1:], minus[:, 1:])
    for k, norm in ((0, norm_plus), (1, norm_minus)):  # a column in the basis adds nothing
        unused = H[:, k, k] <= COLLINEAR * norm
        H[unused, k, :] = 0.0
        H[unused, :, k] = 0.0
        g[unused, k] = 0.0
    return quadratic_gain(g, H, np.asarray(signs))


@dataclass
class _Fit:
    """A fitted subset of the basis: its columns' indices, coefficients, the
    predictions and the curvature of the loss in them, and its loss (the
    objective's mean loss, without the solver's ridge)."""

    columns: list
    parameters: np.ndarray
    predictions: np.ndarray
    curvature: np.ndarray
    loss: float

    @property
    def n_active(self):
        """The rows the loss sees: of positive weight, on or outside their
        breakpoints."""
        return int(np.count_nonzero(self.curvature))


class _BasisFitter:
    """The exact refits of the passes on the standardised features: the basis'
    columns so far, their signs, the loss objective and the solver's
    settings."""

    def __init__(self, model, Z, objective, spread):
        self.model, self.Z, self.objective, self.spread = model, Z, objective, spread
        self.columns = np.ones((Z.shape[0], 1))
        self.signs = np.zeros(1, dtype=np.int8)
        self.converged = True
        self.most_steps = 0

    def add(self, values, sign):
        self.columns = np.column_stack([self.columns, values])
        self.signs = np.append(self.signs, np.int8(sign))

    def problem(self, columns):
        return PenalizedProblem(sp.csr_matrix(self.columns[:, columns]),
                                np.eye(len(columns)), self.objective, self.signs[columns])

    def fit(self, columns, start):
        """The exact fit of the given columns from ``start`` (:class:`_Fit`)."""
        problem = self.problem(columns)
        penalty = RIDGE * np.eye(len(columns))
        penalty[0, 0] = 0.0
        parameters, steps, converged = penalized_newton(
            problem, penalty, start, self.model.tol, self.model.max_iter, self.spread)
        self.converged &= converged
        self.most_steps = max(self.most_steps, steps)
        predictions = problem.predictions(parameters)
        return _Fit(list(columns), parameters, predictions, problem.curvature(predictions),
                    float(self.objective(predictions)))

    def quadratic(self, fit):
        """The local quadratic of the loss at ``fit`` (module doc): each row's
        weight (half its curvature), residual (to the bound it crosses) and an
        orthonormal basis of the weighted columns."""
        curvature = fit.curvature
        weight = curvature / 2.0
        residual = np.zeros_like(weight)
        active = curvature > 0
        residual[active] = (-self.objective.gradient(fit.predictions)[active]
                            / curvature[active])
        weighted = np.sqrt(weight)[:, None] * self.columns[:, fit.columns]
        left, values, _ = np.linalg.svd(weighted, full_matrices=False)
        kept = values > COLLINEAR * values.max(initial=0.0)
        return weight, residual, left[:, kept]


def forward_pass(model, fitter, constraints, max_terms):
    """The forward pass (module doc): the terms (standardised units) and the
    fit of them all."""
    Z = fitter.Z
    n_features = Z.shape[1]
    terms = [BasisTerm()]
    start = np.array([LOSSES[model.loss].optimal_constant(
        fitter.objective.lower, fitter.objective.upper, 0.0, fitter.objective.weight)])
    fit = fitter.fit([0], start)
    orders = [np.argsort(Z[:, j], kind="stable") for j in range(n_features)]
    while len(terms) + 2 <= max_terms and fit.loss > 0.0:
        weight, residual, orthonormal = fitter.quadratic(fit)
        least_decrease = model.forward_tol * fit.loss
        best = (least_decrease, None)
        for parent, term in enumerate(terms):
            if term.degree >= model.max_degree or any(constraints[list(term.features)]):
                continue
            support = (fitter.columns[:, parent] != 0) & (fitter.objective.weight > 0)
            for feature in range(n_features):
                direction = constraints[feature]
                if feature in term.features or (direction and term.degree):
                    continue
                order = orders[feature]
                values = Z[order[support[order]], feature]
                knots = np.concatenate([values[:1], candidate_knots(
                    values, *span_rules(values.size, n_features, model.min_span,
                                        model.end_span))])
                gains, used = candidate_scores(Z, fitter.columns, parent, feature, weight,
                                               residual, orthonormal, knots, order,
                                               (direction, -direction))
                k = int(np.argmax(gains))
                if gains[k] > best[0]:
                    best = (gains[k], (parent, feature, knots[k], used[k]))
        if best[1] is None:
            break
        parent, feature, knot, used = best[1]
        for direction, column_used in zip((1, -1), used, strict=True):
            if column_used:
                hinge = Hinge(feature, float(knot), direction)
                terms.append(BasisTerm(terms[parent].hinges + (hinge,)))
                fitter.add(fitter.columns[:, parent] * hinge.values(Z),
                           direction * constraints[feature])
        previous = fit.loss
        start = np.append(fit.parameters, np.zeros(len(terms) - fit.parameters.size))
        fit = fitter.fit(list(range(len(terms))), start)
        if model.verbose:
            print(f"[IntervalMARS] forward: {len(terms)} terms, loss {fit.loss:.6g}",
                  file=sys.stderr, flush=True)
        if previous - fit.loss < least_decrease:
            break
    return terms, fit


def backward_pass(fitter, fit):
    """The backward pass (module doc): the fits from all the forward pass's
    terms down to the intercept alone, each the best deletion of one term
    from the one before."""
    path = [fit]
    while len(fit.columns) > 1:
        deletions = []
        for k in range(1, len(fit.columns)):
            kept = fit.columns[:k] + fit.columns[k + 1:]
            deletions.append(fitter.fit(kept, np.delete(fit.parameters, k)))
        fit = min(deletions, key=lambda deletion: deletion.loss)
        path.append(fit)
    return path[::-1]


def gcv(loss, n_terms, penalty, n_active):
    """Friedman's generalized cross-validation of ``n_terms`` terms whose fit
    has ``n_active`` rows on or outside their breakpoints (module doc)."""
    if loss == 0.0:
        return 0.0
    complexity = n_terms + penalty * (n_terms - 1) / 2.0
    if complexity >= n_active:
        return np.inf
    return loss / (1.0 - complexity / n_active) ** 2


def _in_units_of_X(term, X, Z, scale):
    """A term of the standardised features ``Z`` in the units of ``X``, and
    the factor its coefficient is multiplied by (``(z - t)_+ = (x - x_t)_+ /
    s``, ``x_t`` the value of ``X`` whose standardised value is the knot
    ``t``)."""
    hinges = tuple(Hinge(h.feature, float(X[np.argmax(Z[:, h.feature] == h.knot),
                                            h.feature]), h.direction)
                   for h in term.hinges)
    return BasisTerm(hinges), 1.0 / np.prod([scale[h.feature] for h in term.hinges])


@fill_doc
class IntervalMARS(IntervalRegressorMixin, BaseEstimator):
    """Multivariate adaptive regression splines of interval targets.

    A sum of products of hinges, ``f(x) = a + sum_k c_k prod_i max(0, d_ki
    (x_j(ki) - t_ki))``, grown by a forward pass that adds the pair of
    hinges (parent term, feature, knot) lowering the loss most and pruned by
    a backward pass that deletes terms by generalized cross-validation
    (Friedman 1991), minimising the squared hinge of ``f`` outside each
    interval shrunk by ``margin`` (the loss of
    ``MMIT(loss="squared_hinge")``: censored bounds and exact values alike).
    It is smooth where trees make staircases and adapts where linear models
    are rigid.

    Parameters
    ----------
    max_terms : int, default=None
        The forward pass's terms at most, the intercept counted; None:
        ``min(200, max(20, 2 * n_features)) + 1`` (R's earth).
    max_degree : int, default=1
        Hinges in a term at most (1: an additive model of piecewise-linear
        terms; 2: also products of two features' hinges).
    penalty : float or "auto", default="auto"
        The cost of a knot in the GCV criterion of the backward pass
        (module doc of ``mmit.additive._mars``); "auto": 2 with
        ``max_degree=1``, 3 otherwise (Friedman's).
    min_span : int or "auto", default="auto"
        Rows between candidate knots of a parent term; "auto": Friedman's
        rule, from the parent's rows and the features.
    end_span : int or "auto", default="auto"
        Rows at either end of a feature that hold no knot; "auto":
        Friedman's rule.
    forward_tol : float, default=0.01
        The forward pass stops when a step lowers the loss by less than this
        share of the loss before it (not of the constant model's, as R's
        earth: interval targets can be fitted to almost no loss, and a
        share of the first loss stopped the pass long before; 0.01 has the
        best mean rank of 1e-3 and 0.01 of either rule on the bundled sets
        and simulated shapes).
    loss : {"squared_hinge"}, default="squared_hinge"
        The hinge loss (the forward pass' updates are those of least squares
        on the rows outside their intervals).
    margin : float, default=0.0
        Margin of the hinges, see :class:`MMIT`.
    monotonic_cst : array-like of int or dict, default=None
        -1, 0 or 1 per feature (or a dict by feature name): the fit is
        non-decreasing in a feature with 1 and non-increasing with -1,
        exactly (the feature's hinges are terms of their own, their
        coefficients sign-constrained).
    clip_features : bool, default=True
        Whether each feature is clipped to its training range before
        predicting (and explaining): beyond it, the terms stay at their
        values at the range's end instead of going on linearly (a product
        of hinges, quadratically), as :class:`IntervalLinearRegression`'s
        ``clip_features``.
    tol : float, default=1e-6
        The solver stops when a full Newton step moves no prediction by more
        than ``tol`` times the standard deviation of the finite bounds.
    max_iter : int, default=100
        Newton steps at most of each refit.
    verbose : int, default=0
        With 1 or more, the passes' steps on stderr.

    Attributes
    ----------
    intercept_ : float
        The constant term.
    basis_ : list of BasisTerm
        The model's terms (without the intercept), in the units of ``X``;
        :meth:`summary` lists them readably.
    coef_ : ndarray of shape (n_terms,)
        Their coefficients.
    forward_basis_ : list of BasisTerm
        The forward pass's terms, the backward pass' start.
    loss_path_ : ndarray of shape (n_forward_terms + 1,)
        The training loss (mean squared hinge) of the backward pass's model
        of each size: at index ``k``, of ``k`` terms beside the intercept.
    gcv_path_ : ndarray of shape (n_forward_terms + 1,)
        Their GCV; the model kept is the first of least GCV.
    gcv_ : float
        The kept model's GCV.
    n_iter_ : int
        The most Newton steps a refit took.
    data_min_, data_max_ : ndarray of shape (n_features,)
        Each feature's training range.
    background_means_ : list of ndarray
        Each term's hinges' products averaged over the training rows, by
        subset (the background of its SHAP values).
    %(features_in)s

    See Also
    --------
    IntervalGAMCV : Additive models of smooth splines.
    MMIT : Trees, whose linear leaves (``leaf_model="linear"``) are
        piecewise linear too.

    Notes
    -----
    The features must be numeric and without missing values (encode
    categorical features one-hot, impute missing values, e.g. with
    :class:`MeanImputer`); a sparse ``X`` is made dense. The
    SHAP values (:func:`~mmit.shap_values`) are exact: each term's value
    shared among its features.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalMARS
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(300, 2))
    >>> center = 2 * np.maximum(0, X[:, 0] - 0.5) + X[:, 1]
    >>> y = np.column_stack([center - 0.1, center + 0.1])
    >>> model = IntervalMARS().fit(X, y)
    >>> bool(np.mean((model.predict(X) - center) ** 2) < 0.01)
    True
    """

    _parameter_constraints = {
        "max_terms": [Interval(Integral, 1, None, closed="left"), None],
        "max_degree": [Interval(Integral, 1, None, closed="left")],
        "penalty": [Interval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        "min_span": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "end_span": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "forward_tol": [Interval(Real, 0.0, None, closed="left")],
        "loss": [StrOptions({"squared_hinge"})],
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
        "clip_features": ["boolean"],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, *, max_terms=None, max_degree=1, penalty="auto", min_span="auto",
                 end_span="auto", forward_tol=0.01, loss="squared_hinge", margin=0.0,
                 monotonic_cst=None, clip_features=True, tol=1e-6, max_iter=100,
                 verbose=0):
        set_init_parameters(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Fit the MARS model on interval targets.

        %(fit_weighted)s
        """
        not_numeric = non_numeric_columns(X)
        if not_numeric is not None:
            raise ValueError(f"IntervalMARS takes numeric features only; the columns "
                             f"{list(np.asarray(X.columns)[not_numeric])} are categories "
                             "or labels: one-hot encode them (pandas.get_dummies) first.")
        X, lower, upper, weight = validate_training_data(self, X, y, sample_weight,
                                                         allow_nan=False)
        X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X)
        n_features = X.shape[1]
        constraints = monotonic_constraints(self)
        if constraints is None:
            constraints = np.zeros(n_features, dtype=np.int8)
        self.data_min_, self.data_max_ = X.min(axis=0), X.max(axis=0)
        center = np.average(X, axis=0, weights=weight)
        scale = np.sqrt(np.average((X - center) ** 2, axis=0, weights=weight))
        scale[~(scale > 0)] = 1.0
        max_terms = (min(200, max(20, 2 * n_features)) + 1 if self.max_terms is None
                     else self.max_terms)
        penalty = (2.0 if self.max_degree == 1 else 3.0) if self.penalty == "auto" \
            else float(self.penalty)
        objective = LOSSES[self.loss].objective(lower, upper, self.margin, weight)
        spread = bounds_spread(lower, upper, weight) or 1.0
        Z = (X - center) / scale
        fitter = _BasisFitter(self, Z, objective, spread)
        with single_threaded_blas():
            terms, fit = forward_pass(self, fitter, constraints, max_terms)
            path = backward_pass(fitter, fit)
        if not fitter.converged:
            warnings.warn(f"IntervalMARS: a refit did not converge in max_iter="
                          f"{self.max_iter} Newton steps.", ConvergenceWarning,
                          stacklevel=2)
        self.n_iter_ = fitter.most_steps
        self.loss_path_ = np.array([step.loss for step in path])
        self.gcv_path_ = np.array([gcv(step.loss, len(step.columns), penalty,
                                       step.n_active) for step in path])
        kept = path[int(np.argmin(self.gcv_path_))]
        self.gcv_ = float(self.gcv_path_.min())
        units = [_in_units_of_X(term, X, Z, scale) for term in terms]
        self.forward_basis_ = [term for term, _ in units[1:]]
        self.basis_ = [units[k][0] for k in kept.columns[1:]]
        self.coef_ = np.array([kept.parameters[i] * units[k][1]
                               for i, k in enumerate(kept.columns) if k])
        self.intercept_ = float(kept.parameters[0])
        self.background_means_ = [background_means(term, X, weight)
                                  for term in self.basis_]
        if self.verbose:
            print(f"[IntervalMARS] backward: kept {len(self.basis_)} of "
                  f"{len(self.forward_basis_)} terms, GCV {self.gcv_:.6g}",
                  file=sys.stderr, flush=True)
        return self

    @fill_doc
    def predict(self, X):
        """Predicted value of each sample: the intercept plus the terms.

        %(predict)s
        """
        X = self._validate_X_predict(X)
        if not self.basis_:
            return np.full(X.shape[0], self.intercept_)
        return basis_matrix(self.basis_, X) @ self.coef_ + self.intercept_

    def _validate_X_predict(self, X):
        """The rows as the model reads them: dense, each feature clipped to
        its training range with ``clip_features``."""
        X = super()._validate_X_predict(X)
        X = X.toarray() if sp.issparse(X) else X
        return np.clip(X, self.data_min_, self.data_max_) if self.clip_features else X

    def summary(self):
        """The fitted model as text: the intercept and each term with its
        coefficient (features by name where the fit had names), and the
        backward pass's choice.

        Returns
        -------
        text : str
        """
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        lines = [f"IntervalMARS: {len(self.basis_)} of {len(self.forward_basis_)} forward "
                 f"terms kept (GCV {self.gcv_:.6g})",
                 f"{self.intercept_:>+14.6g}  (intercept)"]
        lines += [f"{coef:>+14.6g}  {term.describe(names)}"
                  for term, coef in zip(self.basis_, self.coef_, strict=True)]
        return "\n".join(lines)

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the terms' Shapley
        values."""
        check_is_fitted(self)
        return MARSTerms(self, self._validate_X_predict)

    def _export_state(self, writer):
        """The terms and coefficients, for a model file
        (``mmit._persistence._model_files``)."""
        width = max([term.degree for term in self.forward_basis_], default=1)
        for name, terms in (("basis", self.basis_), ("forward_basis", self.forward_basis_)):
            for part, array in zip(("features", "knots", "directions"),
                                   encode_terms(terms, width), strict=True):
                writer.array(f"{name}_{part}", array)
        writer.array("coef", self.coef_)
        writer.array("data_min", self.data_min_)
        writer.array("data_max", self.data_max_)
        writer.array("loss_path", self.loss_path_)
        writer.array("gcv_path", self.gcv_path_)
        writer.array("background_means", np.concatenate(
            [np.zeros(0)] + self.background_means_))
        return {"values": {"intercept_": self.intercept_, "gcv_": self.gcv_,
                           "n_iter_": self.n_iter_}}

    def _import_state(self, state, reader):
        """The fitted model of a model file (``n_features_in_`` set), checked."""
        for name in ("basis", "forward_basis"):
            features = reader.array(f"{name}_features", np.int64, (None, None))
            shape = features.shape
            knots = reader.array(f"{name}_knots", np.float64, shape)
            directions = reader.array(f"{name}_directions", np.int8, shape)
            setattr(self, f"{name}_", decode_terms(features, knots, directions,
                                                    self.n_features_in_))
        n_terms = len(self.basis_)
        self.coef_ = reader.array("coef", np.float64, (n_terms,))
        self.data_min_ = reader.array("data_min", np.float64, (self.n_features_in_,))
        self.data_max_ = reader.array("data_max", np.float64, (self.n_features_in_,))
        if not np.all(self.data_min_ <= self.data_max_):
            raise ValueError("a feature's training range is empty")
        n_path = len(self.forward_basis_) + 1
        self.loss_path_ = reader.array("loss_path", np.float64, (n_path,))
        self.gcv_path_ = reader.array("gcv_path", np.float64, (n_path,))
        sizes = [2 ** term.degree for term in self.basis_]
        means = reader.array("background_means", np.float64, (sum(sizes),))
        self.background_means_ = np.split(means, np.cumsum(sizes)[:-1]) if sizes else []
        self.intercept_ = float(state["values"]["intercept_"])
        self.gcv_ = float(state["values"]["gcv_"])
        self.n_iter_ = int(state["values"]["n_iter_"])
        if not (np.all(np.isfinite(self.coef_)) and np.isfinite(self.intercept_)
                and np.all(np.isfinite(means))):
            raise ValueError("an IntervalMARS' coefficients are not finite")
