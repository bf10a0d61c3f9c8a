"""Survival data as interval targets, and survival analysis in
scikit-survival's form for every estimator (:class:`SurvivalRegressor`)."""

from math import sqrt
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_array, check_consistent_length, check_is_fitted

from .._utils._base import set_init_parameters
from .._utils._constraints import MONOTONIC_CST_CONSTRAINT
from .._utils._dask_collections import by_partitions
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._sparse import by_row_blocks
from .._utils._validation import check_times
from ..ensemble._boosting import MMITBoost
from ..ensemble._forest import MMITForest
from ._concordance import concordance_index


def intervals_from_survival(event, time, *, log=False):
    """Interval targets from right-censored survival data.

    An observed event at time ``t`` is the exact value ``[t, t]``; a
    censored time ``t`` (the event happened later, if ever) is ``[t, inf)``.

    Parameters
    ----------
    event : array-like of shape (n_samples,)
        True (or 1) where the event was observed, False (or 0) where the
        time is censored.
    time : array-like of shape (n_samples,)
        Event or censoring times (finite; positive when ``log``).
    log : bool, default=False
        Take the logarithm of the times first, so that a model of the
        targets is an accelerated failure time model.

    Returns
    -------
    y : ndarray of shape (n_samples, 2)
        Lower and upper bounds, as ``MMIT.fit`` takes them.

    Examples
    --------
    >>> from mmit import intervals_from_survival
    >>> intervals_from_survival([True, False], [2.0, 5.0])
    array([[ 2.,  2.],
           [ 5., inf]])
    >>> intervals_from_survival([1, 0], [1.0, 10.0], log=True).round(3)
    array([[0.   , 0.   ],
           [2.303,   inf]])
    """
    event = check_array(event, ensure_2d=False, dtype=None, input_name="event")
    time = check_array(time, ensure_2d=False, dtype=np.float64, input_name="time")
    check_consistent_length(event, time)
    if event.ndim != 1 or time.ndim != 1:
        raise ValueError("event and time must be 1-D.")
    if not np.all(np.isin(event, [0, 1])):
        raise ValueError("event must hold booleans (or 0 and 1).")
    event = event.astype(bool)
    if log:
        check_times(time, log)
        time = np.log(time)
    return np.column_stack([time, np.where(event, time, np.inf)])


def survival_target(y, log):
    """Interval targets (on log times with ``log``), and the intervals of
    times they come from, from scikit-survival's
    structured array of (event, time), or from an (n, 2) array of interval
    times (lower, upper; 0 a lower bound at the time origin, inf an upper
    bound for a right-censored time). ValueError naming the rows of
    negative times (and of zero times with ``log``, but a lower bound of
    0); TypeError for an event field that is not boolean."""
    y = np.asarray(y)
    if y.dtype.names is not None:
        if len(y.dtype.names) != 2 or y.ndim != 1:
            raise ValueError("y must be a structured array of two fields (event, time), "
                             "as sksurv.util.Surv.from_arrays makes it.")
        event, times = (y[name] for name in y.dtype.names)
        if event.dtype != np.bool_:
            raise TypeError(f"the event field {y.dtype.names[0]!r} of y must be boolean, "
                            f"not {event.dtype}.")
        lower, upper = intervals_from_survival(event, times).T
        check_times(lower, log)  # the event or censoring times
    else:
        y = check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False,
                        input_name="y")
        if y.ndim != 2 or y.shape[1] != 2:
            raise ValueError("y must be scikit-survival's structured array (event, time) "
                             f"or an (n_samples, 2) array of interval times, not shape "
                             f"{y.shape}.")
        lower, upper = y[:, 0].copy(), y[:, 1].copy()
        if np.any(np.isnan(y)) or np.any(lower > upper) or np.any(np.isinf(lower)):
            raise ValueError("interval times need finite lower bounds, no NaN and "
                             "lower <= upper.")
        # a lower bound of 0: the time origin (left-censored on log times)
        check_times(np.column_stack([lower, upper]), log)
    times = np.column_stack([lower, upper])
    if not log:
        return times, times
    with np.errstate(divide="ignore"):
        return np.log(times), times


# the model-file format version that reads a front-end (mmit 0.2.0)
SURVIVAL_FILE_VERSION = 8

# the default model of SurvivalRegressor (the survival page of the docs: with
# the forest's interval defaults, leaves of one or two censored times predict
# their censoring time and the ranking trails)
SURVIVAL_FOREST = {"min_samples_leaf": 15, "max_features": 0.5, "loss": "linear_hinge"}

# the booster beside it (early stopping finds its stages at every size; at
# this rate it ranks a little better than at the default 0.05, most on large
# data: the survival page)
SURVIVAL_BOOSTER = {"splitter": "hist", "n_estimators": 2000, "learning_rate": 0.025,
                    "early_stopping": True}

# the booster's share of the default model's prediction: half up to this many
# training rows, then 1 - 0.5 sqrt(EVEN_SHARE_ROWS / n_samples) (the survival
# page: the mean ranks best on small data, the booster more and more alone
# with the rows)
EVEN_SHARE_ROWS = 1000


def booster_share(n_samples):
    """The booster's share of the default model's prediction after a fit on
    ``n_samples`` rows (the forest has the rest)."""
    return 1.0 - 0.5 * min(1.0, sqrt(EVEN_SHARE_ROWS / n_samples))


class StepFunction:
    """A right-continuous step function ``a * y[k] + b`` on ``[x[k], x[k+1])``,
    defined on ``[x[0], x[-1]]``: scikit-survival's form of a survival or
    cumulative hazard function (called on an array of times).

    Parameters
    ----------
    x : ndarray of shape (n_points,)
        Increasing times.
    y : ndarray of shape (n_points,)
        The values from each time on.
    a, b : float, default=1.0, 0.0
    """

    def __init__(self, x, y, *, a=1.0, b=0.0):
        self.x, self.y, self.a, self.b = x, y, a, b

    @property
    def domain(self):
        """The first and last time."""
        return self.x[0], self.x[-1]

    def __call__(self, x):
        x = check_times(x, domain=self.domain)
        return self.a * self.y[np.searchsorted(self.x, x, side="right") - 1] + self.b

    def __repr__(self):
        return f"StepFunction(x={self.x!r}, y={self.y!r}, a={self.a!r}, b={self.b!r})"


def survival_model(front_end):
    """The model of a front-end: its ``estimator``, or (None) the survival
    forest on its ``n_jobs`` threads and of its ``random_state``."""
    if front_end.estimator is not None:
        if front_end.monotonic_cst is not None:
            raise ValueError("monotonic_cst constrains the default model; give the "
                             "estimator its own monotonic_cst instead.")
        return front_end.estimator
    return MMITForest(**SURVIVAL_FOREST, n_jobs=front_end.n_jobs,
                      random_state=front_end.random_state,
                      monotonic_cst=front_end.monotonic_cst)


def survival_booster(front_end):
    """The booster beside the survival forest (``estimator=None``), on the
    front-end's threads and of its seed; None beside a given model."""
    if front_end.estimator is not None:
        return None
    return MMITBoost(**SURVIVAL_BOOSTER, n_jobs=front_end.n_jobs,
                     random_state=front_end.random_state,
                     monotonic_cst=front_end.monotonic_cst)


def _has_curves(front_end):
    """Whether the fitted (or, unfitted, the given) model gives survival
    curves."""
    model = getattr(front_end, "estimator_", None)
    if model is None:
        model = survival_model(front_end)
    return hasattr(model, "predict_survival")


class SurvivalRegressor(MetaEstimatorMixin, BaseEstimator):
    """Survival analysis in scikit-survival's form with any mmit estimator.

    ``fit`` takes scikit-survival's structured array of (event, time) (or an
    (n_samples, 2) array of interval times, for interval-censored data),
    turns it into interval targets (:func:`intervals_from_survival`), on log
    times with ``log=True``, which makes the model an accelerated failure
    time model, and fits a clone of ``estimator`` on them. ``predict``
    gives a risk score as scikit-survival's models do (higher: an earlier
    event), ``score`` Harrell's concordance index, and, for models with
    predictive distributions (:class:`MMITForest`,
    :class:`IntervalStackingRegressor`), ``predict_survival_function`` and
    ``predict_cumulative_hazard_function`` give curves as
    scikit-survival's do, so that ``sksurv.metrics`` and ``GridSearchCV``
    work on it as on its own models.

    The estimators themselves keep interval targets and predict values:
    a front-end gives the survival conventions (a risk, where the interval
    models predict a time) to all of them at once.

    Parameters
    ----------
    estimator : estimator, default=None
        An mmit estimator (or pipeline or search ending in one); None is the
        survival forest, ``MMITForest(min_samples_leaf=15,
        max_features=0.5, loss="linear_hinge")`` (larger leaves than the
        interval default rank better on survival data, where a small leaf of
        censored times predicts their censoring time), with a binned
        booster beside it, ``MMITBoost(splitter="hist", n_estimators=2000,
        learning_rate=0.025, early_stopping=True)`` (``booster_``): the
        forest gives the curves, and the prediction (the risk,
        ``predict_time``) weighs the two's, the booster's share
        (``booster_share_``) a half up to 1000 training rows, then ``1 -
        0.5 * sqrt(1000 / n_samples)`` (0.84 at 1e4 rows, 0.95 at 1e5): the
        mean ranks best on small data, the booster better and better with
        the rows (:ref:`survival` in the user guide).
    log : bool, default=True
        Fit on log times (an accelerated failure time model; times must be
        positive). False fits on the times themselves.
    risk : {"auto", "restricted_mean", "prediction"}, default="auto"
        The risk score ``predict`` gives: minus the restricted mean survival
        time (the area under the survival curve up to its last time, for
        models with curves), or minus the model's prediction (a time, or a
        log time; the forest's and the booster's weighed by
        ``booster_share_`` for the default model). "auto" is the prediction
        for the default model (``estimator=None``), which ranks about as
        well as the restricted mean on small data and better on large data,
        at the cost of two interval predictions; the restricted mean for a
        given model with curves (it ranks a little better for the forest at
        its interval defaults and the stack); the prediction for models
        without curves (:ref:`survival` in the user guide).
    n_jobs : int, default=None
        Threads of the default model (``estimator=None``: the forest and the
        booster), which grows its trees, makes its distributions and
        predicts on them; None is one, -1 every core. A given ``estimator``
        keeps its own.
    random_state : int, RandomState instance or None, default=None
        The default model's seed (``estimator=None``: the forest's and the
        booster's), for a reproducible fit; a given ``estimator`` keeps its
        own.
    curve_times : int, array-like of shape (n_times,) or None, default=1000
        The times of the curves (``curve_times_``). An int m: every distinct
        training time when there are at most m, else m quantiles of the
        training times (every finite positive bound, with its repeats;
        the first and the last time among them), so that the curves of
        many rows on large data take (rows, m) values, not (rows, distinct
        times). None: every distinct training time, however many. An array:
        those times (increasing, positive with ``log``). The curves are the
        exact survival functions at those times either way, and the
        restricted mean (the risk ``predict`` gives) the area under them:
        on small data, at every distinct training time.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, \
default=None
        Monotone constraints of the default model (the forest and the
        booster, see :class:`MMIT`) on the predicted (log) time: -1 for a
        feature whose increase never lengthens the predicted time (never
        lowers the risk ``predict`` gives), 1 for one that never shortens
        it. A given ``estimator`` takes its own.

    Attributes
    ----------
    estimator_ : estimator
        The fitted clone of ``estimator`` (the survival forest for None).
    booster_ : MMITBoost or None
        The default model's fitted booster (``estimator=None``); None with a
        given estimator.
    booster_share_ : float
        The booster's share of the prediction (the forest's is the rest):
        0.5 up to 1000 training rows, then ``1 - 0.5 * sqrt(1000 /
        n_samples)``; 0 with a given estimator.
    unique_times_ : ndarray of shape (n_unique_times,)
        The distinct finite positive times of the training targets, where
        the restricted mean's step function steps.
    curve_times_ : ndarray of shape (n_times,)
        The times where the curves are given (``curve_times``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when the training X had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import MMITForest, SurvivalRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 3))
    >>> time = np.exp(1 + 2 * X[:, 0] + 0.3 * rng.normal(size=300))
    >>> y = np.array(list(zip(rng.random(300) < 0.7, time)),
    ...              dtype=[("event", bool), ("time", float)])
    >>> model = SurvivalRegressor(MMITForest(50, random_state=0)).fit(X, y)
    >>> risk = model.predict(X[:3])                 # higher: an earlier event
    >>> curves = model.predict_survival_function(X[:3], return_array=True)
    >>> curves.shape == (3, len(model.curve_times_)), bool(model.score(X, y) > 0.8)
    (True, True)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "log": ["boolean"],
        "risk": [StrOptions({"auto", "restricted_mean", "prediction"})],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "curve_times": [Interval(Integral, 2, None, closed="left"), "array-like", None],
        "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
    }

    def __init__(self, estimator=None, *, log=True, risk="auto", n_jobs=None,
                 random_state=None, curve_times=1000, monotonic_cst=None):
        set_init_parameters(self, locals())

    # the model-file state holds the fitted model, not the parameter
    _member_parameters = ("estimator",)

    def _export_state(self, writer):
        """The fitted model (its description; whether it is the default one)
        and the times, for a model file (``mmit._persistence``)."""
        writer.requires(SURVIVAL_FILE_VERSION)
        writer.array("unique_times", self.unique_times_)
        writer.array("curve_times", self.curve_times_)
        return {"model": writer.model("model", self.estimator_),
                "default_model": self.estimator is None,
                "booster": None if self.booster_ is None else writer.model(
                    "booster", self.booster_),
                "booster_share": self.booster_share_}

    def _import_state(self, state, reader):
        """The fitted front-end of a model file (``n_features_in_`` set),
        checked: its model of the same features, increasing times;
        ``estimator`` None for the default model, else an unfitted copy of
        the saved one."""
        self.estimator_ = reader.model("model", state["model"])
        if getattr(self.estimator_, "n_features_in_", self.n_features_in_) != \
                self.n_features_in_:
            raise ValueError("the survival model has the wrong number of features")
        self.estimator = None if state["default_model"] else clone(self.estimator_)
        # a default model saved before the booster ranks by its forest alone
        self.booster_ = (None if state.get("booster") is None else
                         reader.model("booster", state["booster"]))
        if self.booster_ is not None and (self.estimator is not None or getattr(
                self.booster_, "n_features_in_", None) != self.n_features_in_):
            raise ValueError("the survival booster does not match the model")
        # a file written before the share held the even mean
        self.booster_share_ = (0.0 if self.booster_ is None else
                               float(state.get("booster_share", 0.5)))
        if not 0.0 <= self.booster_share_ <= 1.0:
            raise ValueError("the survival booster's share must be in [0, 1]")
        self.unique_times_, self.curve_times_ = (
            check_times(reader.array(name, np.float64, (None,)), self.log, name=name,
                        grid=True)
            for name in ("unique_times", "curve_times"))

    def __setstate__(self, state):
        # a front-end pickled before curve_times gave its curves at every
        # distinct time
        state.setdefault("curve_times", None)
        state.setdefault("monotonic_cst", None)  # pickled before the constraints
        if "unique_times_" in state:
            state.setdefault("curve_times_", state["unique_times_"])
            state.setdefault("booster_", None)  # fitted before the booster
            # fitted before the share: the even mean
            state.setdefault("booster_share_", 0.0 if state["booster_"] is None else 0.5)
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        model_tags = survival_model(self).__sklearn_tags__().input_tags
        # X goes to the model as it is given: it takes what its model takes
        tags.input_tags.allow_nan = model_tags.allow_nan
        tags.input_tags.sparse = model_tags.sparse
        return tags

    @fit_method(nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the estimator on the survival targets as intervals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : structured array of shape (n_samples,) or array of shape (n_samples, 2)
            scikit-survival's (event: bool, time: float) records, or interval
            times (lower, upper; inf for a right-censored time).
        sample_weight : array-like of shape (n_samples,), default=None

        %(fit_returns)s
        """
        target, times = survival_target(y, self.log)
        check_consistent_length(X, target)
        model = survival_model(self)
        if self.risk == "restricted_mean" and not hasattr(model, "predict_survival"):
            raise ValueError(f"risk='restricted_mean' needs a model with predictive "
                             f"distributions; {type(model).__name__} has none.")
        fit_params = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.estimator_ = clone(model).fit(X, target, **fit_params)
        booster = survival_booster(self)
        self.booster_ = None if booster is None else booster.fit(X, target, **fit_params)
        self.booster_share_ = 0.0 if booster is None else booster_share(target.shape[0])
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self.estimator_, name):
                setattr(self, name, getattr(self.estimator_, name))
        times = times[np.isfinite(times) & (times > 0)]
        if times.size == 0:
            raise ValueError("y has no finite positive time.")
        self.unique_times_ = np.unique(times)
        self.curve_times_ = self._curve_grid(times)
        return self

    def _curve_grid(self, times):
        """The times of the curves (``curve_times``), from the training times
        ``times`` (finite, positive, with repeats)."""
        if self.curve_times is None or (isinstance(self.curve_times, Integral)
                                        and self.unique_times_.size <= self.curve_times):
            return self.unique_times_
        if isinstance(self.curve_times, Integral):
            levels = np.linspace(0.0, 1.0, self.curve_times)
            return np.unique(np.quantile(times, levels, method="inverted_cdf"))
        return check_times(self.curve_times, self.log, name="curve_times", grid=True)

    @by_partitions
    @by_row_blocks
    def predict(self, X):
        """Risk scores (higher: an earlier event), as scikit-survival's models
        give them: minus the restricted mean survival time or minus the
        predicted (log) time (``risk``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or a Dask array or data frame (the ``dask`` extra): its risks are
            computed a partition of rows at a time where it lies.

        Returns
        -------
        risk : ndarray of shape (n_samples,)
            A Dask array, chunked as the rows, for a Dask ``X``.
        """
        check_is_fitted(self)
        if self.risk == "prediction" or (self.risk == "auto" and (
                self.estimator is None or not _has_curves(self))):
            return -self._prediction(X)
        return -self.restricted_mean(X)

    def _prediction(self, X):
        """The model's predicted (log) times: for the default model, the
        forest's and the booster's weighed by ``booster_share_``."""
        prediction = self.estimator_.predict(X)
        if self.booster_ is not None:
            prediction = ((1.0 - self.booster_share_) * prediction
                          + self.booster_share_ * self.booster_.predict(X))
        return prediction

    @available_if(_has_curves)
    @fill_doc
    def restricted_mean(self, X):
        """Restricted mean survival times: the area under each survival
        curve (``predict_survival_function``, a step function at
        ``curve_times_``) from 0 to its last time (the last training time
        unless ``curve_times`` gives others), the curve taken as 1 before
        the first; computed from the model's leaves without the curves (the
        model's ``predict_restricted_mean``), in memory proportional to the
        rows.

        %(time_query)s
        """
        check_is_fitted(self)
        return self.estimator_.predict_restricted_mean(X, self.curve_times_, log=self.log)

    @fill_doc
    @by_row_blocks
    def predict_time(self, X):
        """Predicted times (the exponential of the predicted log times with
        ``log=True``).

        %(time_query)s
        """
        check_is_fitted(self)
        prediction = self._prediction(X)
        return np.exp(prediction) if self.log else prediction

    @available_if(_has_curves)
    @fill_doc
    @by_row_blocks
    def predict_survival_function(self, X, return_array=False):
        """Survival functions: P(time > t) under each sample's predictive
        distribution, at ``curve_times_``.

        %(curve_query)s

        Returns
        -------
        survival : ndarray of :class:`StepFunction` of shape (n_samples,), or
            ndarray of shape (n_samples, n_times)
            Non-increasing, in [0, 1].
        """
        check_is_fitted(self)
        curves = self.estimator_.predict_survival(X, self.curve_times_, log=self.log)
        return curves if return_array else self._step_functions(curves)

    @available_if(_has_curves)
    @fill_doc
    @by_row_blocks
    def predict_cumulative_hazard_function(self, X, return_array=False):
        """Cumulative hazard functions, ``-log`` of the survival functions
        (infinite where a survival function reaches 0), at
        ``curve_times_``.

        %(curve_query)s

        Returns
        -------
        hazard : ndarray of :class:`StepFunction` of shape (n_samples,), or
            ndarray of shape (n_samples, n_times)
            Non-decreasing, non-negative.
        """
        with np.errstate(divide="ignore"):
            hazards = -np.log(self.predict_survival_function(X, return_array=True))
        hazards = np.maximum(hazards, 0.0)  # -log(1) may round to -0
        return hazards if return_array else self._step_functions(hazards)

    def _step_functions(self, values):
        functions = np.empty(values.shape[0], dtype=object)
        for row, curve in enumerate(values):
            functions[row] = StepFunction(self.curve_times_, curve)  # one time axis
        return functions

    def score(self, X, y, sample_weight=None):
        """Harrell's concordance index of the risk scores
        (:func:`mmit.metrics.concordance_index`: the interval version for
        interval times).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : structured array or array of interval times, as in ``fit``
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        return concordance_index(survival_target(y, self.log)[0], -self.predict(X),
                                 sample_weight=sample_weight)
