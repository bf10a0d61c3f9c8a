"""IntervalStackingRegressor: the best convex combination of model families,
weighted by their out-of-fold predictions (stacked generalisation)."""

import itertools
import sys
import time
import warnings
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import KFold, check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch, _safe_indexing, check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metaestimators import _BaseComposition
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, validate_data

from .._utils._base import IntervalRegressorMixin, set_init_parameters
from .._utils._categorical import is_dataframe
from .._utils._constraints import MONOTONIC_CST_CONSTRAINT, monotonic_constraints
from .._utils._dask_collections import by_partitions
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._protocols import WeightedExplainer
from .._utils._scores import interval_scores
from .._utils._sparse import by_row_blocks
from .._utils._validation import held_out_fold_of_rows, validate_training_data
from ..linear_model._imputation import MeanImputer
from ..linear_model._linear import IntervalLinearRegressionCV
from ..tree._growing import draw_seed
from ._bagging import rows_without_out_of_bag_prediction_ignored
from ._boosting import MMITBoost
from ._combiner import simplex_weights
from ._distribution_strategies import SpreadDistribution
from ._distributions import ForestDistribution
from ._forest import MMITForest
from ._held_out_distributions import (  # noqa: F401 (pickles name _stacking.StackSpread)
    HeldOutDistributionMixin,
    StackSpread,
    held_out_distribution,
)

# the steps of a member fitted behind an imputer
IMPUTER_STEP, MEMBER_STEP = "impute", "model"

# out_of_fold="folds" fits every member on the folds below this many rows,
# and from there takes a forest's and a linear CV's from their one fit (the
# defaults page of the docs)
FOLDS_BELOW_ROWS = 200


def default_estimators(random_state, n_jobs):
    """The default members, each seeded from ``random_state`` (the evidence
    behind them: the defaults page of the docs)."""
    return [
        ("forest", MMITForest(n_jobs=n_jobs, random_state=draw_seed(random_state))),
        ("boost", MMITBoost(n_estimators=30, learning_rate=0.15,
                            random_state=draw_seed(random_state))),
        ("linear", IntervalLinearRegressionCV()),
    ]


def seeded(estimator, random_state):
    """A clone of ``estimator`` whose ``random_state`` parameters left at
    None (its own and its parts') are seeds drawn from ``random_state``."""
    estimator = clone(estimator)
    unset = sorted(key for key, value in estimator.get_params(deep=True).items()
                   if (key == "random_state" or key.endswith("__random_state"))
                   and value is None)
    return estimator.set_params(**{key: draw_seed(random_state) for key in unset})


def takes_intervals(estimator):
    """Whether ``estimator`` fits interval targets: an mmit estimator, or a
    pipeline or search ending in one."""
    if isinstance(estimator, IntervalRegressorMixin):
        return True
    if isinstance(estimator, Pipeline):
        return takes_intervals(estimator[-1])
    inner = getattr(estimator, "estimator", None)
    return inner is not None and takes_intervals(inner)


def is_imputed(estimator):
    """Whether a member is one the stack put behind its imputer."""
    return (isinstance(estimator, Pipeline) and len(estimator.steps) == 2
            and estimator.steps[0][0] == IMPUTER_STEP
            and isinstance(estimator.steps[0][1], MeanImputer))


def needs_imputer(estimator):
    """Whether a member goes behind a :class:`MeanImputer`: an estimator whose
    tags refuse NaN in X. A pipeline is used as given: its steps decide."""
    return (not isinstance(estimator, Pipeline)
            and not estimator.__sklearn_tags__().input_tags.allow_nan)


def one_fit_plan(estimator, out_of_fold, n_samples, cv):
    """How a member's one fit gives its out-of-fold predictions on the folds
    ``cv``, for the stack's ``out_of_fold`` and ``n_samples`` rows: what the
    member (or a pipeline's last step) says through the protocol
    ``__mmit_fold_predictions__(cv, out_of_fold)`` (``mmit._utils._protocols``:
    an :class:`MMITForest` grown by the folds or out of bag, an
    :class:`IntervalLinearRegressionCV` by its own CV on the folds). None,
    the member fitted on every fold and then on all rows: with "refit",
    with "folds" below FOLDS_BELOW_ROWS rows, and for a member that has no
    such fit."""
    if out_of_fold == "refit" or (out_of_fold == "folds" and n_samples < FOLDS_BELOW_ROWS):
        return None
    final = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    plan = getattr(final, "__mmit_fold_predictions__", None)
    return None if plan is None else plan(cv, out_of_fold)


def constrained(name, estimator, constraints):
    """A member with the stack's monotone ``constraints`` (an int8 array per
    feature of X): set as its ``monotonic_cst``, or, behind the stack's
    imputer, at each fit (:func:`fit_member`). A member that cannot take
    them is refused: the combination would not be monotone."""
    if isinstance(estimator, Pipeline):
        raise ValueError(f"Member {name!r} is a pipeline: the stack cannot tell which "
                         "of its columns are X's features. Give its model its own "
                         "monotonic_cst and leave the stack's None.")
    if "monotonic_cst" not in estimator.get_params(deep=False):
        raise ValueError(f"Member {name!r} ({type(estimator).__name__}) takes no "
                         "monotonic_cst: the stack's combination would not be "
                         "monotone. Drop the member or constrain it yourself.")
    return estimator if needs_imputer(estimator) else clone(estimator).set_params(
        monotonic_cst=constraints)


def listed_members(composition, estimators, parameter):
    """The (name, estimator) pairs of a composition's list ``estimators`` (its
    parameter ``parameter``), checked: named pairs, unique valid names,
    estimators or "drop", at least one kept; the dropped ones left out."""
    if not estimators:
        raise ValueError(f"{parameter} must hold at least one (name, estimator) pair, "
                         "or be None for the default members.")
    try:
        names, models = zip(*estimators, strict=True)
    except (TypeError, ValueError):
        raise ValueError(f"{parameter} must be a list of (name, estimator) "
                         "pairs.") from None
    composition._validate_names(names)
    composition._check_estimators_are_instances(models)
    members = [(name, estimator) for name, estimator in estimators if estimator != "drop"]
    if not members:
        raise ValueError(f"All {parameter} are 'drop': at least one member is needed.")
    return members


def members_to_fit(members, given, random_state, exact_targets, constraints):
    """The (name, estimator) pairs a model of models fits: its ``members``
    (``given`` by the user, from :func:`listed_members`; else its defaults,
    seeded already) checked to fit interval targets (any regressor when every target is an
    ``exact_targets`` value) and seeded from ``random_state``, with the
    monotone ``constraints`` (None: none), and imputers in front of those
    that cannot take NaN."""
    for name, estimator in members:
        if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
            raise TypeError(f"Member {name!r} must be an estimator with fit and "
                            f"predict, got {estimator!r}.")
        if not exact_targets and not takes_intervals(estimator):
            raise ValueError(
                f"Member {name!r} ({type(estimator).__name__}) does not take "
                "interval targets: with censored or interval targets, members "
                "must be mmit estimators (or pipelines and searches ending in "
                "one); scikit-learn regressors can be members when every target "
                "is an exact value.")
    if given:
        members = [(name, seeded(estimator, random_state)) for name, estimator in members]
    if constraints is not None:
        members = [(name, constrained(name, estimator, constraints))
                   for name, estimator in members]
    return [(name, Pipeline([(IMPUTER_STEP, MeanImputer()), (MEMBER_STEP, estimator)])
             if needs_imputer(estimator) else estimator) for name, estimator in members]


def fit_once(index, estimator, plan, X, y, sample_weight, constraints):
    """One task: fit a clone of a member whose one fit gives its out-of-fold
    predictions (``plan``, a ``OneFitFoldPredictions``), and read them."""
    start = time.perf_counter()
    prefix = f"{estimator.steps[-1][0]}__" if isinstance(estimator, Pipeline) else ""
    model = clone(estimator).set_params(**{prefix + key: value
                                           for key, value in plan.params.items()})
    with rows_without_out_of_bag_prediction_ignored():
        fit_member(model, X, y, sample_weight, constraints)
    final = model[-1] if isinstance(model, Pipeline) else model
    return index, None, model, getattr(final, plan.attribute), time.perf_counter() - start


def fit_member(estimator, X, y, sample_weight, constraints=None):
    """Fit a member, with ``sample_weight`` when given and the member takes
    it (through a pipeline: its steps that take it). A member behind the
    stack's imputer with the stack's monotone ``constraints`` is fitted step
    by step: its model's ``monotonic_cst`` is the constraints, then 0 (free)
    for the imputer's indicator columns, which the fit decides."""
    if constraints is not None and is_imputed(estimator):
        imputer, model = estimator.named_steps[IMPUTER_STEP], estimator.named_steps[
            MEMBER_STEP]
        columns = fit_member(imputer, X, y, sample_weight).transform(X)
        model.set_params(monotonic_cst=np.r_[constraints, np.zeros(
            len(imputer.indicator_features_), dtype=np.int8)])
        fit_member(model, columns, y, sample_weight)
        return estimator
    if sample_weight is None:
        return estimator.fit(X, y)
    if isinstance(estimator, Pipeline):
        params = {f"{name}__sample_weight": sample_weight
                  for name, step in estimator.steps
                  if step != "passthrough" and has_fit_parameter(step, "sample_weight")}
        return estimator.fit(X, y, **params)
    if has_fit_parameter(estimator, "sample_weight"):
        return estimator.fit(X, y, sample_weight=sample_weight)
    return estimator.fit(X, y)


def fit_and_predict(index, fold, estimator, X, y, sample_weight, train, test,
                     constraints):
    """One task: fit a clone of a member on ``train`` and predict ``test``
    (``test`` None: the refit on all rows, no predictions)."""
    start = time.perf_counter()
    weight = None if sample_weight is None else sample_weight[train]
    fitted = fit_member(clone(estimator), _safe_indexing(X, train),
                         _safe_indexing(y, train), weight, constraints)
    predictions = None if test is None else fitted.predict(_safe_indexing(X, test))
    return index, fold, fitted, predictions, time.perf_counter() - start


@fill_doc
class IntervalStackingRegressor(HeldOutDistributionMixin, IntervalRegressorMixin,
                                _BaseComposition):
    """A convex combination of interval regressors, weighted by their
    out-of-fold predictions.

    Each row gets one prediction from each member made by a model that
    never saw the row's fold of ``cv`` (``cv_predictions_``). Below 200
    rows every member is fitted on the training part of each fold and
    predicts the held-out part; from 200 rows (``out_of_fold``), two
    members make theirs in their one fit on all rows, at the cost of one
    fit: an :class:`MMITForest` grows its trees by the folds (``cv``: the
    trees grown without a fold predict it, and the forest is all of them),
    and an :class:`IntervalLinearRegressionCV` runs its own CV on the
    stack's folds and gives its fold models' predictions at the chosen
    alpha and margin. The weights are non-negative, sum to one and minimise
    the weighted squared hinge loss (margin 0) of the combined out-of-fold
    prediction outside each interval, solved exactly (see Notes). The
    members fitted on all rows make the prediction, the weighted sum of
    theirs. Stacked generalisation (Wolpert 1992) with non-negative weights
    (Breiman 1996), the "super learner" of van der Laan, Polley and Hubbard
    (2007).

    Parameters
    ----------
    estimators : list of (str, estimator), default=None
        The members, by name. Any mmit estimator (or a pipeline or search
        ending in one); when every target is an exact value, any
        scikit-learn regressor too (it is fitted on the values). A member
        may be ``"drop"``. None: ``MMITForest()``, ``MMITBoost(n_estimators=30,
        learning_rate=0.15)`` and ``IntervalLinearRegressionCV()`` (see
        Notes).
    cv : int, cross-validation generator or iterable, default=5
        The folds of the out-of-fold predictions: an int (None: 5) is that
        many folds of ``KFold`` with the rows shuffled by ``random_state``;
        otherwise as in scikit-learn. The test folds must partition the
        rows.
    distribution : "spread", SpreadDistribution or None, default="spread"
        What the predictive distributions (:meth:`predict_quantiles`,
        :meth:`predict_interval`, :meth:`predict_cdf`,
        :meth:`predict_survival`) are made of: the stack's prediction plus
        its out-of-fold residual intervals (``[lower - P w, upper - P w]``,
        ``P w`` the weighted out-of-fold predictions), weighed by a second
        forest grown on the residuals' sizes (a :class:`SpreadDistribution`,
        as for :class:`MMITForest`, its trees a share of the default
        forest's 100). Made on the first request (or by
        :func:`save_model`) from a copy of the training rows, so that a
        stack never asked for one fits as fast as with None. See Notes.
    out_of_fold : {"folds", "refit", "free"}, default="folds"
        Where the members' out-of-fold predictions come from. "folds": as
        above, every prediction by a model that never saw the row's fold,
        the forest and the linear CV making theirs in their one fit from
        200 rows. "refit": every member fitted on every fold, then on all
        rows, at every size (a forest: six fits instead of one). "free": a
        bagged forest gives its out-of-bag predictions (each row predicted
        by the trees whose bootstrap sample left it out) and the linear CV
        its fold models', at every size. "auto" (deprecated, removed in
        0.3; model files of earlier versions hold it) is "folds". See Notes.
    n_jobs : int, default=None
        Fits run in parallel threads: the folds and refits of the members,
        and the trees of the default forest (joblib semantics).
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds (``cv`` an int) and seeds the members: the
        default ones, and the ``random_state`` parameters of given members
        (or of their parts) that are None; a member's own seed is kept.
    verbose : int, default=0
        With 1 or more, report each fit and the weights on stderr.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, \
default=None
        Monotone constraints (see :class:`MMIT`), passed to every member as
        its ``monotonic_cst`` (a linear model takes them as the signs of its
        coefficients, its imputer's indicator columns free): the weights
        being non-negative, the stack is monotone as its members are. A
        member without the parameter, or a pipeline, is refused.

    Attributes
    ----------
    estimators_ : list of estimators
        The members refitted on all rows (without the dropped ones), those
        that cannot take NaN behind an imputer in a pipeline (steps
        ``"impute"``, ``"model"``; see Notes).
    named_estimators_ : :class:`~sklearn.utils.Bunch`
        The same by name.
    weights_ : ndarray of shape (n_members,)
        The weight of each member: non-negative, summing to one.
    cv_predictions_ : ndarray of shape (n_samples, n_members)
        Each member's out-of-fold prediction of each row (with
        ``out_of_fold="free"``, a forest's out-of-bag one: NaN for a row that
        no tree left out of its bootstrap sample; such rows do not take part
        in the weights).
    cv_scores_ : ndarray of shape (n_members,)
        Negative interval MSE of each member's out-of-fold predictions
        (weighted; higher is better).
    distribution_ : object or None
        What the predictive distributions read from, made on the first
        request (None with ``distribution=None``).
    %(features_in)s

    See Also
    --------
    MMITForest, MMITBoost, IntervalLinearRegressionCV : The default members.

    Notes
    -----
    The weights minimise ``f(w) = sum_i s_i ([lower_i - P_i w]_+^2 + [P_i w
    - upper_i]_+^2)`` over the simplex, ``P`` the out-of-fold predictions
    and ``s`` the sample weights: a convex, piecewise-quadratic problem in
    as many variables as members. It is solved exactly by a generalised
    Newton method whose steps minimise the quadratic of the rows outside
    their interval over the simplex (an active-set method) and whose exact
    line search is the interval solver itself; it stops on a Frank-Wolfe
    gap below 1e-10 of the loss, which bounds the distance to the optimum.
    The rows are centred on the members' mean prediction first, so the
    weights do not depend on where the targets lie.

    Out-of-fold predictions: the combiner weighs each member by predictions
    made by models that never saw the rows, as its refitted self predicts
    new ones. From 200 rows a forest grown by the folds makes them in its
    one fit, its trees drawing from four fifths of the rows; each fold is
    predicted by a fifth of the trees. Below 200 rows, where a fit takes
    under a second, refitting every member on the folds ranks better (a
    fifth of a forest's trees predicts small data too noisily). With the
    default members a fit from 200 rows is one forest fit, one linear fit
    and six boosting fits (five folds and all rows); "refit" costs four
    more forest fits and five more linear CVs. The default members, the
    convex combiner and the out-of-fold predictions were chosen by
    measurement (:ref:`defaults` in the user guide; the fit's cost:
    :ref:`performance`).

    Predictive distributions: the residuals of the stack's own out-of-fold
    predictions measure its errors as the refitted stack makes them, so
    an interval narrows where the combination predicts well, whichever
    member does it; the forest grown on their sizes lets the spread
    follow the features that move it. With one bagged :class:`MMITForest`
    read out of bag (``out_of_fold="free"``) and the same
    :class:`SpreadDistribution`, the distributions are the forest's own.
    Their coverage and pinball loss against the forest's, NGBoost's and
    quantile-forest's are on :ref:`accuracy`.

    Missing values: ``X`` may hold NaN. Members that take NaN (the trees,
    forests and boosting) receive it; the others (the linear models, most
    scikit-learn regressors) are fitted behind an imputer that replaces NaN
    by the feature's weighted training mean and adds a 0/1 column for each
    feature that had missing training values (:class:`MeanImputer`). A
    pipeline member is used as given: its own steps handle missing values.
    The indicator columns let the linear model use informative missing
    values (a detection limit); :ref:`defaults` gives the measurements.

    Categorical features: a data frame goes to every member as it is, so
    that each declares its categorical features itself (by default its
    columns of a categorical dtype); the imputer passes the non-numeric
    columns through, for the linear models to one-hot encode.

    References
    ----------
    D. H. Wolpert, "Stacked generalization", Neural Networks 5, 1992.
    L. Breiman, "Stacked regressions", Machine Learning 24, 1996.
    M. J. van der Laan, E. C. Polley and A. E. Hubbard, "Super learner",
    Statistical Applications in Genetics and Molecular Biology 6, 2007.

    Examples
    --------
    >>> from mmit import IntervalStackingRegressor, MMIT, IntervalLinearRegressionCV
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> stack = IntervalStackingRegressor(
    ...     [("tree", MMIT(max_depth=4, random_state=0)),
    ...      ("linear", IntervalLinearRegressionCV(cv=3))], random_state=0)
    >>> stack = stack.fit(data.data, data.target)
    >>> bool(abs(stack.weights_.sum() - 1) < 1e-12), stack.cv_predictions_.shape
    (True, (167, 2))
    """

    _parameter_constraints = {
        "estimators": [list, None],
        "cv": ["cv_object"],
        "out_of_fold": [StrOptions({"folds", "refit", "free", "auto"},
                                   deprecated={"auto"})],
        "distribution": [StrOptions({"spread"}), SpreadDistribution, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
    }
    # the parameter whose models a model file holds in the stack's state
    _member_parameters = ("estimators",)

    def __init__(self, estimators=None, *, cv=5, out_of_fold="folds", distribution="spread",
                 n_jobs=None, random_state=None, verbose=0, monotonic_cst=None):
        set_init_parameters(self, locals())

    def get_params(self, deep=True):
        """Parameters, with those of the named members when ``deep``."""
        return self._get_params("estimators", deep=deep)

    def set_params(self, **params):
        """Set parameters, members by name and their parameters as
        ``<name>__<parameter>``."""
        return self._set_params("estimators", **params)

    def _members(self, random_state, exact_targets, constraints):
        """The (name, estimator) pairs to fit (:func:`members_to_fit`)."""
        if self.estimators is None:
            return members_to_fit(default_estimators(random_state, self.n_jobs), False,
                                  random_state, exact_targets, constraints)
        return members_to_fit(listed_members(self, self.estimators, "estimators"), True,
                              random_state, exact_targets, constraints)

    def _splits(self, X, y, groups, random_state):
        """The folds, and the same as a ``cv`` for the members that take the
        stack's folds (a KFold when ``cv`` is an int, else the folds)."""
        cv = 5 if self.cv is None else self.cv
        if isinstance(cv, Integral):
            cv = KFold(cv, shuffle=True, random_state=draw_seed(random_state))
        splits = list(check_cv(cv).split(X, y, groups))
        held_out_fold_of_rows(splits, X.shape[0])
        return splits, cv if type(cv) is KFold else splits

    @fit_method(nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Fit the members on every fold and on all rows, and their weights.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, passed to the members that take them and
            weighing the rows in the combiner.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group-aware ``cv``.

        %(fit_returns)s
        """
        # a DataFrame goes to the members as given (column names and types
        # for their own pipelines), other X as a checked array
        X, lower, upper, weight = validate_training_data(
            self, X, y, sample_weight, check_X=not is_dataframe(X))
        exact = bool(np.all(lower == upper))  # finite by validation
        y = lower if exact else np.column_stack([lower, upper])
        random_state = check_random_state(self.random_state)
        constraints = monotonic_constraints(self)
        members = self._members(random_state, exact, constraints)
        splits, member_cv = self._splits(X, y, groups, random_state)
        member_weight = None if sample_weight is None else weight
        n_samples, n_members = X.shape[0], len(members)

        predictions = np.full((n_samples, n_members), np.nan)
        fitted = [None] * n_members
        report = self._progress()
        out_of_fold = self.out_of_fold
        if out_of_fold == "auto":
            warnings.warn("out_of_fold='auto' is deprecated and will be removed in 0.3: "
                          "it is now 'folds', the default.", FutureWarning, stacklevel=2)
            out_of_fold = "folds"
        plans = [one_fit_plan(estimator, out_of_fold, n_samples, member_cv)
                 for _, estimator in members]
        # the one fits on threads of their own (the forests'), each in turn,
        # then one pool of threads for the other one fits (the linear CVs')
        # and every refit and fold of the other members, the longer first (a
        # one fit, then each member's refit on all rows before its folds); in
        # turn, not side by side: twice the threads on the cores cost more
        # than the pool's last task
        own_threads = [delayed(fit_once)(index, estimator, plans[index], X, y,
                                          member_weight, constraints)
                       for index, (_, estimator) in enumerate(members)
                       if plans[index] is not None and plans[index].own_threads]
        pooled = [delayed(fit_once)(index, estimator, plans[index], X, y, member_weight,
                                     constraints)
                  for index, (_, estimator) in enumerate(members)
                  if plans[index] is not None and not plans[index].own_threads]
        pooled += [delayed(fit_and_predict)(index, fold, estimator, X, y, member_weight,
                                             train, test, constraints)
                   for index, (_, estimator) in enumerate(members)
                   if plans[index] is None
                   for fold, (train, test) in [(None, (np.arange(n_samples), None)),
                                               *enumerate(splits)]]
        results = itertools.chain(
            [function(*args, **kwargs) for function, args, kwargs in own_threads],
            Parallel(n_jobs=self.n_jobs, prefer="threads",
                     return_as="generator_unordered")(pooled))
        for index, fold, model, member_predictions, seconds in results:
            name, plan = members[index][0], plans[index]
            if fold is None:
                fitted[index] = model
                if plan is None:
                    report(name, "all rows", seconds)
                else:
                    predictions[:, index] = checked_predictions(
                        member_predictions, name, allow_nan=plan.allows_nan)
                    report(name, f"{plan.source}, one fit", seconds)
            else:
                predictions[splits[fold][1], index] = checked_predictions(
                    member_predictions, name)
                report(name, f"fold {fold + 1}/{len(splits)}", seconds)

        scored = ~np.isnan(predictions).any(axis=1) & (weight > 0)
        if not scored.any():
            raise ValueError("No row has an out-of-fold prediction from every member.")
        self.weights_ = simplex_weights(predictions[scored], lower[scored], upper[scored],
                                        weight[scored])
        self.cv_predictions_ = predictions
        self.cv_scores_ = np.array([
            -interval_scores(lower[has], upper[has], predictions[has, j],
                             sample_weight=weight[has])
            for j in range(n_members)
            for has in [~np.isnan(predictions[:, j]) & (weight > 0)]])
        self.estimators_ = fitted
        self.named_estimators_ = Bunch(**{name: model for (name, _), model
                                          in zip(members, fitted, strict=True)})
        self.distribution_ = self._deferred_distribution(
            X, lower, upper, weight, predictions, random_state)
        if self.verbose:
            print("[IntervalStackingRegressor] weights: " + ", ".join(
                f"{name} {w:.3f}" for (name, _), w in zip(members, self.weights_,
                                                          strict=True)),
                  file=sys.stderr, flush=True)
        return self

    def _deferred_distribution(self, X, lower, upper, weight, predictions, random_state):
        """The predictive distributions (None with ``distribution=None``), made
        on the first request from a copy of the training rows and the
        stack's out-of-fold predictions (see Notes)."""
        used = self.weights_ > 0.0
        return held_out_distribution(self.distribution, X, lower, upper, weight,
                                     predictions[:, used] @ self.weights_[used],
                                     random_state)

    def _export_state(self, writer):
        """The weights, the out-of-fold predictions and scores, the fitted
        members (their descriptions) and the predictive distributions (made
        now if not yet), for a model file (``mmit._persistence._model_files``)."""
        writer.array("weights", self.weights_)
        writer.array("cv_predictions", self.cv_predictions_)
        writer.array("cv_scores", self.cv_scores_)
        state = {"default_members": self.estimators is None,
                 "members": [{"name": name, **writer.model(f"member{k}", member)}
                             for k, (name, member)
                             in enumerate(self.named_estimators_.items())]}
        if self.distribution_ is not None:
            state["distribution"] = self.distribution_.fitted(self)._export_state(writer)
        return state

    def _import_state(self, state, reader):
        """The fitted stack of a model file (``n_features_in_`` and
        ``feature_names_in_`` set), checked: convex weights, one per member,
        members of the stack's features."""
        members = [(member["name"], reader.model(f"member{k}", member))
                   for k, member in enumerate(state["members"])]
        self.estimators = None if state["default_members"] else members
        self._validate_params()
        self.weights_ = reader.array("weights", np.float64, (len(members),))
        if np.any(self.weights_ < 0) or abs(self.weights_.sum() - 1.0) > 1e-9:
            raise ValueError("the weights are not convex")
        self.cv_predictions_ = reader.array("cv_predictions")
        self.cv_scores_ = reader.array("cv_scores")
        for name, member in members:
            model = member[0] if isinstance(member, Pipeline) else member
            if model.n_features_in_ != self.n_features_in_:
                raise ValueError(f"member {name!r} has the wrong number of features")
        self.estimators_ = [member for _, member in members]
        self.named_estimators_ = Bunch(**dict(members))
        self.distribution_ = (ForestDistribution._from_state(self, state["distribution"],
                                                             reader)
                              if "distribution" in state else None)

    def _progress(self):
        """A function reporting each fit on stderr (with ``verbose``)."""
        start = time.perf_counter()

        def report(name, what, seconds):
            if self.verbose:
                print(f"[IntervalStackingRegressor] {name}: {what} fitted in "
                      f"{seconds:.1f} s ({time.perf_counter() - start:.1f} s elapsed)",
                      file=sys.stderr, flush=True)
        return report

    @by_partitions
    @by_row_blocks
    def predict(self, X):
        """The weighted sum of the members' predictions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            NaN marks a missing value. Or a Dask array or data frame (the
            ``dask`` extra): predicted a partition of rows at a time where it
            lies.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            A Dask array, chunked as the rows, for a Dask ``X``.
        """
        if is_dataframe(X):
            check_is_fitted(self)
            validate_data(self, X, reset=False, skip_check_array=True)
        else:
            X = self._validate_X_predict(X)
        prediction = np.zeros(X.shape[0])
        for weight, estimator in zip(self.weights_, self.estimators_, strict=True):
            if weight > 0.0:
                prediction += weight * estimator.predict(X)
        return prediction

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the weighted sum of the
        members' values."""
        check_is_fitted(self)
        return WeightedExplainer(self, list(zip(self.weights_, self.estimators_,
                                                strict=True)))


def checked_predictions(predictions, name, allow_nan=False):
    """A member's predictions as float64 (NaN, for no out-of-bag prediction,
    only with ``allow_nan``)."""
    predictions = np.asarray(predictions, dtype=np.float64)
    if predictions.ndim != 1:
        raise ValueError(f"Member {name!r} must predict one value per row, got "
                         f"predictions of shape {predictions.shape}.")
    if np.any(np.isinf(predictions)) or (not allow_nan and np.any(np.isnan(predictions))):
        raise ValueError(f"Member {name!r} predicted NaN or infinite values.")
    return predictions
