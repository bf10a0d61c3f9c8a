"""MMITBoost: gradient boosting of Maximum Margin Interval Trees.

Stage 0 predicts the optimal constant ``F_0`` of all intervals (the solver).
Stage ``m`` grows an MMIT on the residual intervals ``[lower - F, upper -
F]`` of the current predictions ``F``: its splits minimise the exact hinge
loss of ``F + tree`` and its leaves hold the exact optimal residual of their
rows, and ``F`` moves by ``learning_rate`` times the tree. The features are
sorted (or binned) once for all stages, and so are the breakpoints of the
residual targets: one criterion serves every stage (``TreeBuilder.
stage_criterion``), each stage's tree moving every leaf's breakpoints by
its shrunk value, which keeps them in order, and a merge of the leaves'
lists making the next stage's sorted list (O(n log leaves), not a sort).
The merge's rounds cost more per breakpoint than a sort's pass, so it
serves trees of at most ``STAGE_MERGE_MAX_LEAVES`` leaves (the boosting
regime of shallow trees); deeper stages, and stages on ``subsample``'s
differing rows, sort their own.

Because the loss is convex and a leaf's value minimises the loss of its
rows, a stage with ``learning_rate <= 1`` never increases the training loss
of the rows it was grown on (all rows without ``subsample``).
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from .._loss._loss import LOSSES
from .._utils._base import rows_as_read, set_init_parameters
from .._utils._categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    fitted_encoding,
    n_categories,
)
from .._utils._dask_collections import is_dask_collection
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._sparse import dense_rows, walk_rows
from .._utils._validation import (
    bounds_spread,
    check_interval_target,
    check_sample_weight,
    validate_training_data,
)
from ..tree._binning import bin_features
from ..tree._classes import MMIT
from ..tree._criterion import HingeTargets
from ..tree._growing import (
    CATEGORICAL_PENALTY,
    TREE_PARAMETER_CONSTRAINTS,
    TrainingData,
    check_leaf_model_growth,
    draw_seed,
    grow_tree,
    prepare_features,
    resolve_constraints,
    resolve_max_features,
    tree_builder,
    tree_params,
)
from ..tree._leaf_models import LEAF_MODELS, LEAF_PARAMETERS, leaf_params_of
from ._base import Progress, TreeEnsemble
from ._dask_boosting import ClusterRows, ClusterValidation, check_dask_fit

# early_stopping="auto" holds rows out from this many on (as scikit-learn's
# HistGradientBoosting)
_AUTO_EARLY_STOPPING_ROWS = 10_000
# margin="auto": this times the spread of the finite training bounds (the
# defaults page of the docs)
AUTO_MARGIN_SCALE = 0.3
# stages of at most this many leaves merge their leaves' sorted breakpoints
# (the module doc); deeper ones sort them again: at 2e5 rows the merge of 32
# leaves costs what the sort does and more leaves cost more, while at 1e6 rows
# merging up to 64 leaves still saves a tenth of the fit (2026-12-01)
STAGE_MERGE_MAX_LEAVES = 32


def _stages_merge(params):
    """Whether stages grown with ``params`` merge their leaves' sorted
    breakpoints into the next stage's (module doc): their trees have at
    most ``STAGE_MERGE_MAX_LEAVES`` leaves."""
    most = np.inf if params["max_depth"] is None else 2 ** params["max_depth"]
    if params["max_leaf_nodes"] is not None:
        most = min(most, params["max_leaf_nodes"])
    return most <= STAGE_MERGE_MAX_LEAVES


class StageScores:
    """The scores of a booster's predictions as its stages are fitted (the
    negative mean loss of the training rows and, with held-out rows, of
    those), each stage's progress line, scikit-learn's rule for stopping
    early (``held_out``: with held-out rows), and the fitted attributes they
    end as: what the local fit and the fit on a cluster record alike (a warm
    start continues the scores so far, ``train`` and ``validation``)."""

    def __init__(self, booster, held_out, train=(), validation=()):
        self.booster, self.held_out = booster, held_out
        self.train, self.validation = list(train), list(validation)
        self.progress = Progress("MMITBoost", booster.n_estimators, "stages",
                                 booster.verbose, done=len(booster.estimators_))

    def add(self, train_loss, validation_loss=None):
        """Record the mean losses of the predictions (those of a stage, or the
        first ones)."""
        self.train.append(-train_loss)
        if validation_loss is not None:
            self.validation.append(-validation_loss)

    def report(self):
        """The progress line of the stage just recorded."""
        self.progress.step(f"train loss {-self.train[-1]:.5g}" + (
            f", validation loss {-self.validation[-1]:.5g}" if self.validation else ""))

    def stop_early(self):
        """Whether the held-out scores say to stop (never without them)."""
        return self.held_out and self.booster._no_improvement(self.validation)

    def finish(self):
        """The booster's ``n_iter_``, ``train_score_`` and ``validation_score_``."""
        self.booster.n_iter_ = len(self.booster.estimators_)
        self.booster.train_score_ = np.array(self.train)
        self.booster.validation_score_ = np.array(self.validation)


@fill_doc
class MMITBoost(TreeEnsemble):
    """Gradient boosting of Maximum Margin Interval Trees on interval targets.

    Each stage grows a small :class:`MMIT` on the residual intervals of the
    ensemble so far, ``[lower - F(x), upper - F(x)]``, with the exact MMIT
    criterion: the tree's splits minimise the true hinge loss of ``F +
    tree`` and its leaves hold the exact optimal residual of their rows
    (no gradient or Newton approximation). The prediction is the optimal
    constant plus ``learning_rate`` times the sum of the trees. Bounds may
    be negative (no log link) and infinite; ``X`` may hold NaN.

    Parameters
    ----------
    n_estimators : int, default=100
        Maximum number of boosting stages.
    learning_rate : float, default=0.05
        Shrinkage of each tree.
    max_depth : int or None, default=3
        Depth of each tree.
    max_leaf_nodes : int, default=None
        Grow each tree best-first to at most this many leaves.
    min_samples_leaf : int or float, default=1
        Minimum rows per leaf (a float: a fraction of ``n_samples``).
    loss : {"squared_hinge", "linear_hinge"}, default="squared_hinge"
        Hinge applied to the distance outside the shrunk interval.
    margin : float or "auto", default="auto"
        Margin of the hinges, see :class:`MMIT`. "auto": 0.3 times the
        (weighted) standard deviation of the finite training bounds (see
        Notes on the defaults).
    subsample : float, default=1.0
        Fraction of the rows, drawn without replacement at each stage, that
        grows its tree (stochastic gradient boosting); the others get a
        zero weight.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features evaluated per node.
    splitter : {"exact", "hist"}, default="exact"
        The split search of each stage. "exact": the MMIT criterion, every
        threshold between distinct values. "hist": each feature binned once
        (at most ``max_bins`` bins, quantiles of the values, and a bin for
        missing values), splits chosen by the Newton gain of the rows'
        gradients and curvatures summed per bin, each leaf's value then
        solved exactly on its residual intervals; for many rows. Needs
        ``leaf_model="constant"``.
    max_bins : int, default=255
        Bins of present values per feature with ``splitter="hist"`` (2 to
        255).
    leaf_model : {"constant", "linear"}, default="constant"
        What each stage's leaves predict (see :class:`MMIT`): "linear" fits a
        linear model of the residual intervals in every leaf.
    leaf_shrinkage : float, default=10.0
        Pull of linear leaves toward their constant (see :class:`MMIT`).
    early_stopping : "auto" or bool, default="auto"
        Hold out ``validation_fraction`` of the rows and stop when their
        loss has not improved by more than ``tol`` for ``n_iter_no_change``
        stages. "auto": on when there are more than 10 000 rows.
    validation_fraction : float, default=0.1
        Share of the rows held out for early stopping.
    n_iter_no_change : int, default=10
        Stages without improvement before stopping.
    tol : float, default=1e-7
        Improvement of the validation loss that counts.
    n_jobs : int, default=None
        Threads of the binned split search (``splitter="hist"``): they share
        the features of a histogram (from about a million rows times
        features) and the binning. None means 1 unless in a
        :func:`joblib.parallel_backend` context, -1 all processors. The fit
        is the same whatever the number of threads.
    random_state : int, RandomState instance or None, default=None
        Draws the validation rows, the subsamples and each tree's feature
        order.
    verbose : int, default=0
        With 1 or more, report the training (and validation) loss on stderr
        every 10 stages (every stage with 2).
    warm_start : bool, default=False
        Keep the fitted stages and add stages up to ``n_estimators``.
    %(categorical_features)s
    %(categorical_penalty)s
        With ``splitter="hist"``, a categorical feature has at most
        ``max_bins`` categories (each its own bin).
    %(monotonic_cst)s
        Every stage's tree is monotone, so is their sum. With
        ``splitter="hist"`` a split on a constrained feature is a candidate
        when the Newton steps of its sides follow the direction, and the
        leaves' exact values are clipped to their bounds.
    %(interaction_cst)s
        Each stage's tree is then a sum of functions of the groups'
        features, and so is the boosted sum: "no_interactions" fits an
        additive model.

    Attributes
    ----------
    estimators_ : list of MMIT
        The stages' trees (fitted on residuals: each predicts a correction).
    baseline_prediction_ : float
        The optimal constant of the training intervals, stage 0.
    margin_ : float
        The margin used (``margin``, or its "auto" value).
    n_iter_ : int
        Number of stages fitted.
    train_score_ : ndarray of shape (n_iter_ + 1,)
        Negative mean training loss before the first stage and after each
        (on the rows not held out).
    validation_score_ : ndarray of shape (n_iter_ + 1,)
        The same on the held-out rows; empty without early stopping.
    %(features_in)s
    %(categorical_attributes)s
    max_features_ : int
        Features evaluated per node.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Mean of the trees' normalised importances.

    See Also
    --------
    MMITForest : Bagged MMITs.

    Notes
    -----
    The defaults (100 stages, learning rate 0.05, depth 3,
    ``min_samples_leaf=1``, squared hinge, ``margin="auto"``) learn slowly
    enough that the test loss is flat around 100 stages, and the margin
    shrinks the residual intervals so that the stages do not stop at their
    edges. The measurements behind them are in the user guide
    (:ref:`defaults`).

    Examples
    --------
    >>> from mmit import MMITBoost
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> model = MMITBoost(n_estimators=50, random_state=0).fit(data.data, data.target)
    >>> model.n_iter_, bool(model.train_score_[-1] > model.train_score_[0])
    (50, True)
    """

    _parameter_constraints = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
        "max_depth": TREE_PARAMETER_CONSTRAINTS["max_depth"],
        "max_leaf_nodes": TREE_PARAMETER_CONSTRAINTS["max_leaf_nodes"],
        "min_samples_leaf": TREE_PARAMETER_CONSTRAINTS["min_samples_leaf"],
        "loss": TREE_PARAMETER_CONSTRAINTS["loss"],
        "margin": [*TREE_PARAMETER_CONSTRAINTS["margin"], StrOptions({"auto"})],
        "subsample": [Interval(RealNotInt, 0.0, 1.0, closed="right")],
        "max_features": TREE_PARAMETER_CONSTRAINTS["max_features"],
        "splitter": [StrOptions({"exact", "hist"})],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        **{name: TREE_PARAMETER_CONSTRAINTS[name] for name in ("leaf_model",
                                                                *LEAF_PARAMETERS)},
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "validation_fraction": [Interval(RealNotInt, 0.0, 1.0, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "categorical_penalty": TREE_PARAMETER_CONSTRAINTS["categorical_penalty"],
        **{name: TREE_PARAMETER_CONSTRAINTS[name] for name in ("monotonic_cst",
                                                                "interaction_cst")},
    }

    def __init__(
        self,
        *,
        n_estimators=100,
        learning_rate=0.05,
        max_depth=3,
        max_leaf_nodes=None,
        min_samples_leaf=1,
        loss="squared_hinge",
        margin="auto",
        subsample=1.0,
        max_features=None,
        splitter="exact",
        max_bins=255,
        leaf_model="constant",
        leaf_shrinkage=10.0,
        early_stopping="auto",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        categorical_features="from_dtype",
        categorical_penalty=CATEGORICAL_PENALTY,
        monotonic_cst=None,
        interaction_cst=None,
    ):
        set_init_parameters(self, locals())

    def _tree_params(self):
        """The parameters of the stages' MMITs (their seeds aside): the
        booster's tree parameters, its fitted margin, MMIT's defaults for the
        others."""
        return tree_params({
            **MMIT().get_params(), "margin": self.margin_, "loss": self.loss,
            "max_depth": self.max_depth, "min_samples_leaf": self.min_samples_leaf,
            "max_features": self.max_features, "max_leaf_nodes": self.max_leaf_nodes,
            **leaf_params_of(self), "categorical_penalty": self.categorical_penalty,
            "monotonic_cst": self.monotonic_cst, "interaction_cst": self.interaction_cst})

    def _sum_terms(self):
        """The shrunk sum: the baseline plus each stage at the learning rate."""
        return self.baseline_prediction_, self.learning_rate, 1.0

    def _validation_rows(self, n_samples, random_state):
        """Boolean mask of the held-out rows (none without early stopping)."""
        held_out = np.zeros(n_samples, dtype=bool)
        stopping = self.early_stopping
        if stopping == "auto":
            stopping = n_samples > _AUTO_EARLY_STOPPING_ROWS
        if not stopping:
            return held_out
        n_held_out = int(np.ceil(self.validation_fraction * n_samples))
        if n_held_out >= n_samples:
            raise ValueError(f"validation_fraction={self.validation_fraction} leaves no "
                             f"training rows out of {n_samples}.")
        held_out[random_state.permutation(n_samples)[:n_held_out]] = True
        return held_out

    @fit_method
    def fit(self, X, y, sample_weight=None, *, X_val=None, y_val=None,
            sample_weight_val=None):
        """Fit the boosting stages on interval targets.

        Parameters
        ----------
        %(fit_X)s
            Or a Dask array or data frame of rows, with ``splitter="hist"``
            (the ``dask`` extra): the booster is then fitted on the workers
            that hold the rows, through the session's Dask client (see the
            user guide's "On a Dask cluster"); ``y``, ``sample_weight`` and
            the validation data are Dask collections too.
        %(fit_y)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.
        X_val, y_val : array-like, default=None
            Held-out rows and their targets for early stopping, in place of
            ``validation_fraction`` of the training rows (as scikit-learn's
            ``HistGradientBoostingRegressor`` takes them); ``early_stopping``
            must not be False. A fit on Dask collections stops early only on
            these.
        sample_weight_val : array-like of shape (n_val_samples,), default=None
            Weights of the held-out rows.

        %(fit_returns)s
        """
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val are given together.")
        if X_val is None and sample_weight_val is not None:
            raise ValueError("sample_weight_val needs X_val and y_val.")
        if X_val is not None and self.early_stopping is False:
            raise ValueError("X_val and y_val are held-out rows for early stopping, "
                             "which early_stopping=False turns off.")
        if is_dask_collection(X):
            return self._fit_on_cluster(X, y, sample_weight, None if X_val is None
                                        else (X_val, y_val, sample_weight_val))
        previous = fitted_encoding(self)
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        if not sp.issparse(X):
            X = np.ascontiguousarray(X)  # rows walk the trees
        # the held-out rows depend on random_state only: the same across warm starts
        random_state = check_random_state(self.random_state)
        held_out = (self._validation_rows(X.shape[0], random_state) if X_val is None
                    else np.zeros(X.shape[0], dtype=bool))
        train = ~held_out
        if not np.any(sample_weight[train] > 0):
            raise ValueError("No training row (outside the validation rows) has a "
                             "positive weight.")
        if held_out.any():
            X_train, lower_train, upper_train = X[train], lower[train], upper[train]
            weight_train = sample_weight[train]
        else:  # no copies
            X_train, lower_train, upper_train, weight_train = X, lower, upper, sample_weight
        if X_val is None:
            X_held = X.tocsr()[held_out] if sp.issparse(X) else dense_rows(X, held_out)
            lower_held, upper_held = lower[held_out], upper[held_out]
            weight_held = sample_weight[held_out]
        else:
            X_held = rows_as_read(self, X_val)
            lower_held, upper_held = check_interval_target(y_val, X_held.shape[0])
            weight_held = check_sample_weight(sample_weight_val, X_held.shape[0],
                                              allow_all_zero=False)
        continuing = self._continues(previous)
        if not continuing:
            self.margin_ = (AUTO_MARGIN_SCALE
                            * bounds_spread(lower_train, upper_train, weight_train)
                            if self.margin == "auto" else float(self.margin))
            self.baseline_prediction_ = LOSSES[self.loss].optimal_constant(
                lower_train, upper_train, self.margin_, weight_train)
        params = resolve_constraints(self, self._tree_params())
        check_leaf_model_growth(params, X_train.shape[0])
        leaf_model = LEAF_MODELS[self.leaf_model]
        if self.splitter == "hist" and leaf_model.reads_feature_values:
            binned = " or ".join(f"leaf_model={name!r}"
                                 for name, model in LEAF_MODELS.items()
                                 if not model.reads_feature_values)
            raise ValueError(f"splitter='hist' grows trees on binned features, without "
                             f"the values that leaf_model={self.leaf_model!r} fits on: "
                             f"use {binned} or splitter='exact'.")
        loss = LOSSES[self.loss]
        n_threads = effective_n_jobs(self.n_jobs)
        train_objective = loss.objective(lower_train, upper_train, self.margin_,
                                         weight_train, n_threads)
        held_objective = (loss.objective(lower_held, upper_held, self.margin_,
                                         weight_held, n_threads)
                          if X_held.shape[0] else None)
        self.max_features_ = resolve_max_features(self.max_features, X.shape[1])
        categories = n_categories(self)
        features = (bin_features(X_train, weight_train, self.max_bins, n_threads=n_threads,
                                 n_categories=categories)
                    if self.splitter == "hist"
                    else prepare_features(X_train, self.max_features, categories))
        builder = tree_builder(params, *X_train.shape)
        # skip the draws of the stages already fitted: the same as fitting at once
        for _ in self.estimators_:
            self._draw_stage(random_state, X_train.shape[0])
        trees = self.additive_trees_
        train_prediction = trees.predict(X_train, self.n_jobs)
        held_prediction = trees.predict(X_held, self.n_jobs)
        held_out = held_objective is not None
        if continuing:  # the scores so far end with those of the predictions
            scores = StageScores(self, held_out, self.train_score_, self.validation_score_)
        else:
            scores = StageScores(self, held_out)
            scores.add(train_objective(train_prediction),
                       held_objective(held_prediction) if held_out else None)
        # the build gives each training row its leaf's value: its prediction,
        # unless the leaves hold models of their own
        row_values = np.empty(X_train.shape[0]) if leaf_model.predicts_leaf_values else None
        # with the same weights at every stage and a leaf's rows moved alike, one
        # criterion serves every stage: its hinges move with the predictions and
        # stay sorted (TreeBuilder.stage_criterion), instead of sorted each stage
        stage_criterion, weight_total = None, weight_train.sum()
        if row_values is not None and self.subsample >= 1.0 and _stages_merge(params):
            stage_criterion = builder.stage_criterion(
                features, HingeTargets(lower_train - train_prediction,
                                       upper_train - train_prediction, self.margin_,
                                       n_threads=n_threads), weight_train, n_threads)
        while len(self.estimators_) < self.n_estimators:
            seed, drawn = self._draw_stage(random_state, X_train.shape[0])
            weight = weight_train if drawn is None else weight_train * drawn
            if not np.any(weight > 0):
                weight = weight_train
            if stage_criterion is not None:
                targets = stage_criterion
            else:  # the previous stage's targets are done with: their arrays are reused
                buffers = builder.buffers
                targets = HingeTargets(
                    np.subtract(lower_train, train_prediction,
                                out=buffers.empty("stage.lower", len(lower_train))),
                    np.subtract(upper_train, train_prediction,
                                out=buffers.empty("stage.upper", len(upper_train))),
                    self.margin_, buffers, n_threads)
            tree = self._fitted_tree(grow_tree(params, TrainingData(features, targets),
                                               weight, seed, builder=builder,
                                               row_values=row_values, n_threads=n_threads),
                                     seed, params)
            self.estimators_.append(tree)
            self._advance(train_prediction, tree, X_train, weight, row_values)
            if held_out:
                held_prediction += self.learning_rate * walk_rows(tree.tree_.predict,
                                                                  X_held)
            scores.add(stage_criterion.advance(row_values, n_threads) / weight_total
                       if stage_criterion is not None  # moved by what _advance added
                       else train_objective(train_prediction),
                       held_objective(held_prediction) if held_out else None)
            scores.report()
            if scores.stop_early():
                break
        scores.finish()
        return self

    def _fit_on_cluster(self, X, y, sample_weight, validation):
        """Fit on Dask collections (``_dask_boosting``), the held-out rows
        ``validation`` (X, y, weights) or None: the stages a local binned fit
        makes with the same bins, the rows staying on the workers."""
        check_dask_fit(self)
        if self.early_stopping is True and validation is None:
            raise ValueError("early_stopping=True on Dask collections stops on held-out "
                             "rows given as X_val and y_val.")
        rows = ClusterRows(self, X, y, sample_weight, self.max_bins,
                           effective_n_jobs(self.n_jobs))
        loss = LOSSES[self.loss]
        self.margin_ = (AUTO_MARGIN_SCALE * rows.bounds_spread() if self.margin == "auto"
                        else float(self.margin))
        params = self._tree_params()
        # as a local fit, which keeps one criterion for every stage (no subsample)
        self.baseline_prediction_ = rows.optimal_constant(self.margin_, loss,
                                                          _stages_merge(params))
        held = (None if validation is None
                else ClusterValidation(*validation, self, self.baseline_prediction_,
                                       self.margin_, loss))
        builder = tree_builder(resolve_constraints(self, params), rows.n_samples,
                               rows.n_features)
        self.max_features_ = rows.n_features
        self.estimators_ = []
        random_state = check_random_state(self.random_state)
        scores = StageScores(self, held is not None)
        while True:
            scores.add(rows.next_stage(self.learning_rate,
                                       len(self.estimators_) == self.n_estimators),
                       None if held is None else held.mean_loss(
                           self.estimators_[-1].tree_ if self.estimators_ else None,
                           self.learning_rate))
            if self.estimators_:
                scores.report()
            if len(self.estimators_) == self.n_estimators or scores.stop_early():
                break
            seed = draw_seed(random_state)
            tree = rows.grow_stage_tree(builder, seed)
            self.estimators_.append(self._fitted_tree(tree, seed, params))
        scores.finish()
        return self

    def _advance(self, prediction, tree, X, weight, row_values):
        """Add a stage's shrunk tree to the predictions of the training rows:
        the values its build gave the rows it was grown on (``row_values``;
        without them, a walk down the tree), a walk for the others."""
        if row_values is None:
            prediction += self.learning_rate * walk_rows(tree.tree_.predict, X)
            return
        others = np.flatnonzero(weight == 0)
        if others.size:
            row_values[others] = walk_rows(tree.tree_.predict, X, others)
        row_values *= self.learning_rate
        prediction += row_values

    def _draw_stage(self, random_state, n_train):
        """A stage's tree seed and, with ``subsample``, its rows (0/1 weights)."""
        seed = draw_seed(random_state)
        if self.subsample >= 1.0:
            return seed, None
        drawn = np.zeros(n_train)
        n_drawn = max(1, int(round(self.subsample * n_train)))
        drawn[random_state.permutation(n_train)[:n_drawn]] = 1.0
        return seed, drawn

    def _no_improvement(self, scores):
        """Whether none of the last ``n_iter_no_change`` validation scores beat
        the one before them by more than ``tol`` (scikit-learn's rule)."""
        if len(scores) <= self.n_iter_no_change:
            return False
        reference = scores[-self.n_iter_no_change - 1]
        return all(score <= reference + self.tol
                   for score in scores[-self.n_iter_no_change:])

    def _export_state(self, writer):
        """The stages and the fitted values, for a model file
        (``mmit._persistence._model_files``)."""
        return {"max_features": self.max_features_, **self._trees_state(writer),
                "boosting": {"baseline_prediction_": self.baseline_prediction_,
                             "margin_": self.margin_, "train_score_": self.train_score_,
                             "validation_score_": self.validation_score_}}

    def _import_state(self, state, reader):
        """The fitted model of a model file (``n_features_in_`` and
        ``feature_names_in_`` set)."""
        boosting = state["boosting"]
        self.baseline_prediction_ = float(boosting["baseline_prediction_"])
        self.margin_ = float(boosting["margin_"])  # the stages' trees have it
        self.train_score_ = np.array(boosting["train_score_"], dtype=np.float64)
        self.validation_score_ = np.array(boosting["validation_score_"], dtype=np.float64)
        self.estimators_ = self._trees_from_state(state, reader)
        self.n_iter_ = len(self.estimators_)
        self.max_features_ = int(state["max_features"])

    def staged_predict(self, X):
        """Predictions after each stage, from the first to ``n_iter_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
        """
        yield from self.additive_trees_.staged_predict(self._validate_X_predict(X))
