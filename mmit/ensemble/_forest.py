"""MMITForest: bagged, feature-subsampled Maximum Margin Interval Trees."""

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from .._utils._base import set_init_parameters
from .._utils._categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    fitted_encoding,
    n_categories,
)
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._protocols import OneFitFoldPredictions
from .._utils._scores import interval_mse
from .._utils._validation import held_out_fold_of_rows, validate_training_data
from ..tree._growing import (
    CATEGORICAL_PENALTY,
    MAX_SEED,
    TREE_PARAMETER_CONSTRAINTS,
    check_leaf_model_growth,
    grow_tree,
    resolve_constraints,
    resolve_max_features,
    training_data,
    tree_params,
)
from ._bagging import (  # noqa: F401 (pickles of mmit._forest name TreeSamples)
    Bootstrap,
    FoldRows,
    TreeSamples,
    bootstrap_of,
    fold_predictions,
    out_of_bag_predictions,
    sample_of,
)
from ._base import Progress, TreeEnsemble
from ._distribution_strategies import (
    DISTRIBUTIONS,
    DeferredDistribution,
    LocationDistribution,
    SpreadDistribution,
    TrainingRows,
)
from ._distributions import ForestDistribution
from ._predictive import OutOfBagDistributionMixin, PredictiveDistributionMixin

#: The constraint of a forest's ``max_samples`` (also MMITForestCV's).
MAX_SAMPLES_CONSTRAINT = [
    None,
    Interval(RealNotInt, 0.0, 1.0, closed="right"),
    Interval(Integral, 1, None, closed="left"),
]


def _fit_tree(index, params, random_state, data, sample_weight, bootstrap, rows):
    """Grow the forest tree of ``params`` and seed ``random_state`` on its
    bootstrap counts (``bootstrap`` None: the tree is grown on
    ``sample_weight``), drawn among ``rows`` only when given (a forest grown
    by folds).

    Samples are drawn with probabilities proportional to ``sample_weight``
    and the tree weighs each sample by its count, as scikit-learn's forests
    do since 1.9: an integer weight behaves like as many repeated samples.
    Everything random comes from a numpy Generator seeded by the tree's own
    ``random_state`` (an int), so the tree, and its out-of-bag samples, can
    be regenerated from it. (A Generator is set up much faster than a
    RandomState, and this runs with the GIL held, once per tree.)
    """
    generator = np.random.default_rng(random_state)
    weight = sample_of(generator, sample_weight, bootstrap, rows)
    return index, grow_tree(params, data, weight, int(generator.integers(1, MAX_SEED)))


@fill_doc
class MMITForest(OutOfBagDistributionMixin, PredictiveDistributionMixin, TreeEnsemble):
    """A random forest of Maximum Margin Interval Trees.

    Each tree is an :class:`MMIT` grown on a bootstrap sample (drawn as
    integer sample weights, never by copying rows) with ``max_features``
    features drawn at every node; the forest predicts the mean of its
    trees. Features and breakpoints are sorted once per fit and shared,
    read only, by all trees, which grow in parallel threads (the Cython
    builder releases the GIL). Under ``joblib.parallel_config(backend=
    "dask")`` the trees grow on a Dask cluster instead. ``X`` may hold
    NaN for missing values, which every tree handles as :class:`MMIT` does.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    loss : {"linear_hinge", "squared_hinge"}, default="squared_hinge"
        Hinge applied to the distance outside the shrunk interval (see
        Notes on the defaults).
    margin, max_depth, min_samples_split, min_samples_leaf, \
max_leaf_nodes, min_cost_decrease, ccp_alpha, leaf_model, leaf_shrinkage, \
categorical_penalty, monotonic_cst, interaction_cst
        Parameters of each tree, see :class:`MMIT`. Linear leaves need a
        limit on the trees' growth (say ``min_samples_leaf=20``): fully
        grown trees are refused with ``leaf_model="linear"``, their leaves'
        linear models being their constants. With ``monotonic_cst`` every
        tree is monotone, so is their mean (the predictive distributions
        are not constrained); with ``interaction_cst`` each tree is a
        function of the groups holding its root's feature, and their mean
        a sum of functions of the groups ("no_interactions": an additive
        model).
    max_features : int, float, {"sqrt", "log2"} or None, default=1.0
        Features evaluated per node (a float is a fraction of them); 1.0 and
        None evaluate all.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample; otherwise on all samples
        (the trees then differ only through ``max_features``).
    max_samples : int or float, default=None
        Draws per bootstrap sample: ``n_samples`` when None, an int, or a
        fraction of the total sample weight (of ``n_samples`` without
        weights), as in scikit-learn.
    oob_score : bool, default=False
        Score the out-of-bag predictions (needs ``bootstrap``).
    cv : int, cross-validation generator, iterable or None, default=None
        Grow the trees by folds, for K-fold predictions at the cost of one
        fit: tree ``t`` draws its sample (or, without ``bootstrap``, takes
        its rows) only outside the test part of fold ``t % n_folds``, and
        ``cv_predictions_`` holds each row's mean prediction by the trees
        that never saw its fold. The forest predicts with all its trees.
        The folds as in scikit-learn (an int: that many ``KFold`` folds,
        not shuffled); their test parts must partition the rows, and there
        must be at least as many trees as folds. None: every tree draws
        from all rows. See Notes.
    n_jobs : int, default=None
        Parallel jobs for fit and predict (joblib semantics; threads).
    random_state : int, RandomState instance or None, default=None
        Draws the seed of every tree (its bootstrap sample and features).
    verbose : int, default=0
        With 1 or more, show progress (trees done, elapsed time and time
        left) on stderr while fitting.
    warm_start : bool, default=False
        Keep the fitted trees and add trees up to ``n_estimators``; the
        forest equals one fitted at once with the same ``random_state``.
    distribution : {"auto", "spread", "location"}, SpreadDistribution, \
LocationDistribution or None, default="auto"
        What the predictive distributions (:meth:`predict_quantiles`,
        :meth:`predict_interval`, :meth:`predict_cdf`,
        :meth:`predict_survival` and their out-of-bag versions) are made
        of: the average over the trees of the weighted nonparametric
        maximum-likelihood estimates (Turnbull's, for censored rows) of the
        training intervals in a sample's leaves. They are made on the first
        request (or by :func:`save_model`), from the training rows the fit
        keeps: a forest never asked for one fits as fast as with None.
        "spread" (:class:`SpreadDistribution` with its defaults): the
        forest's prediction plus its out-of-bag residual intervals, in the
        leaves of a second forest of half as many trees
        (``min_samples_leaf=40``, ``max_features="sqrt"``) grown on the
        residuals' sizes, so that the spread follows the features that
        change it (needs ``bootstrap``; the first request grows it: its cost
        is on :ref:`performance`). "location"
        (:class:`LocationDistribution`): the training intervals in the
        forest's own leaves (quantile regression forest; nothing more to
        fit), whose spread follows only what the splits chosen for the
        location see. "auto": "spread" when some rows are out of bag
        (``bootstrap``), else "location". None: no distributions (nor the
        copy of the training rows). See Notes.
    %(categorical_features)s

    Attributes
    ----------
    estimators_ : list of MMIT
        The fitted trees; each predicts on its own.
    %(features_in)s
    %(categorical_attributes)s
    max_features_ : int
        Number of features evaluated per node.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Mean of the trees' normalised importances.
    oob_prediction_ : ndarray of shape (n_samples,)
        Mean prediction of the trees for which a sample was out of bag
        (NaN if it never was); with ``oob_score=True``.
    oob_score_ : float
        Negative interval MSE of ``oob_prediction_`` (the samples with one),
        like :meth:`score`; with ``oob_score=True``.
    row_folds_ : ndarray of shape (n_samples,)
        With ``cv``: the fold in whose test part each training row lies.
    cv_predictions_ : ndarray of shape (n_samples,)
        With ``cv``: each training row's mean prediction by the trees grown
        without its fold (``n_estimators / n_folds`` of them).
    distribution_ : object or None
        What the predictive distributions read from, made on the first
        request (None with ``distribution=None``).

    See Also
    --------
    MMIT : A single tree.
    MMITForestCV : The forest with margin, loss, max_features and leaf size
        chosen out of bag.

    Notes
    -----
    The defaults (``max_features=1.0``, ``loss="squared_hinge"``,
    ``margin=0``, ``min_samples_leaf=1``, ``max_samples=None``) offer every
    feature to every node: where one feature carries the signal, a forest
    that offers each node a few features (``"sqrt"``) rarely splits on it.
    The measurements behind these defaults and behind
    ``distribution="spread"`` are in the user guide (:ref:`defaults`), the
    coverage and pinball loss of the predictive distributions on its
    accuracy page (:ref:`accuracy`).

    With ``cv``, each tree's sample has as many draws as without, from the
    rows it may see; its out-of-bag rows include its held-out fold. The
    fold predictions are made as a K-fold cross-validation makes them, by
    models that never saw the rows, each a forest of a K-th of the trees:
    what :class:`IntervalStackingRegressor` weighs its forest member by.

    The distributions are made on the first request rather than in ``fit``,
    so that a forest never asked for one fits as fast as with
    ``distribution=None`` (the fit's cost is on :ref:`performance`). They
    are the same distributions either way; making them on request keeps a
    copy of the training rows (``n_samples * n_features`` floats) until
    then, and the first request pays what the fit no longer does.

    Examples
    --------
    >>> from mmit import MMITForest
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> forest = MMITForest(n_estimators=20, random_state=0).fit(data.data, data.target)
    >>> len(forest.estimators_), forest.predict(data.data[:2]).shape
    (20, (2,))
    """

    _parameter_constraints = {
        **TREE_PARAMETER_CONSTRAINTS,
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "bootstrap": ["boolean"],
        "max_samples": MAX_SAMPLES_CONSTRAINT,
        "oob_score": ["boolean"],
        "cv": ["cv_object"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "distribution": [StrOptions({"auto", "spread", "location"}), SpreadDistribution,
                         LocationDistribution, None],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
    }

    def __init__(
        self,
        n_estimators=100,
        *,
        margin=0.0,
        loss="squared_hinge",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        max_features=1.0,
        max_leaf_nodes=None,
        min_cost_decrease=0.0,
        ccp_alpha=0.0,
        leaf_model="constant",
        leaf_shrinkage=10.0,
        bootstrap=True,
        max_samples=None,
        oob_score=False,
        cv=None,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        distribution="auto",
        categorical_features="from_dtype",
        categorical_penalty=CATEGORICAL_PENALTY,
        monotonic_cst=None,
        interaction_cst=None,
    ):
        set_init_parameters(self, locals())

    def _tree_params(self):
        """The parameters of the trees' MMITs (their seeds aside)."""
        return tree_params(self.get_params())

    def _sum_terms(self):
        """The trees' mean: each at scale 1, their sum divided by their number."""
        return 0.0, 1.0, len(self.estimators_)

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Grow the forest on interval targets.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights. With ``bootstrap``, samples are drawn with
            probabilities proportional to them and each tree weighs a sample
            by its count, so an integer weight acts like repeated samples (as
            in scikit-learn >= 1.9); without, each tree uses the weights.

        %(fit_returns)s
        """
        previous = fitted_encoding(self)
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        if self.oob_score and not self.bootstrap:
            raise ValueError("Out-of-bag estimates need bootstrap=True.")
        distribution = DISTRIBUTIONS.get(self.distribution, self.distribution)
        if isinstance(distribution, SpreadDistribution) and not self.bootstrap:
            raise ValueError("distribution='spread' needs bootstrap=True (out-of-bag "
                             "residuals); use distribution='location'.")
        params = resolve_constraints(self, self._tree_params())
        check_leaf_model_growth(params, X.shape[0])
        bootstrap = bootstrap_of(self, sample_weight)
        self.max_features_ = resolve_max_features(self.max_features, X.shape[1])
        fold_rows = self._fold_rows(X, lower, upper, sample_weight)
        self._continues(previous)
        n_new = self.n_estimators - len(self.estimators_)
        if n_new == 0:
            warnings.warn("Warm-start fitting without increasing n_estimators does not "
                          "fit new trees.", UserWarning, stacklevel=2)
        else:
            random_state = check_random_state(self.random_state)
            # skip the seeds of the trees already grown: the same forest as at once
            random_state.randint(MAX_SEED, size=len(self.estimators_))
            seeds = [int(seed) for seed in random_state.randint(MAX_SEED, size=n_new)]
            data = training_data(X, lower, upper, self.margin, self.max_features,
                                 n_categories(self))
            self.estimators_.extend(self._grow(params, seeds, data, sample_weight,
                                               bootstrap, fold_rows))
        # the distributions are made on the first request (a forest never asked
        # for one does not pay for them), from copies of the rows, the bounds
        # and the weights (the caller's arrays may change after the fit)
        if sp.issparse(X):  # rows for walks (dense_rows)
            X = X.tocsr(copy=distribution is not None)
        else:
            X = np.ascontiguousarray(X) if distribution is None else np.array(X, order="C")
        if fold_rows is not None:
            self.cv_predictions_ = fold_predictions(self, X)
        out_of_bag = (out_of_bag_predictions(self, X, sample_weight) if self.oob_score
                      else None)
        if self.oob_score:
            self._set_oob_score(out_of_bag, np.column_stack([lower, upper]), sample_weight)
        self.distribution_ = None if distribution is None else DeferredDistribution(
            distribution, TrainingRows(X, lower.copy(), upper.copy(), sample_weight.copy(),
                                       None if bootstrap is None else bootstrap.n_draws,
                                       out_of_bag))
        return self

    def _fold_rows(self, X, lower, upper, sample_weight):
        """With ``cv``, the :class:`FoldRows` of this fit, also set as
        ``row_folds_`` (checked: test parts that partition the rows, a tree
        per fold at least, rows of positive weight outside each fold);
        None without (``row_folds_`` removed)."""
        if self.cv is None:
            for stale in ("row_folds_", "cv_predictions_"):
                vars(self).pop(stale, None)
            return None
        if self.warm_start:
            raise ValueError("warm_start=True cannot add trees to a forest grown by "
                             "folds (cv): fit it at once.")
        splits = list(check_cv(self.cv).split(X, np.column_stack([lower, upper])))
        row_folds = held_out_fold_of_rows(splits, X.shape[0])
        if len(splits) > self.n_estimators:
            raise ValueError(f"cv has {len(splits)} folds: a forest grown by folds needs "
                             f"at least as many trees (n_estimators={self.n_estimators}).")
        if any(not np.any(sample_weight[row_folds != fold] > 0)
               for fold in range(len(splits))):
            raise ValueError("cv leaves no row of positive weight outside a fold: its "
                             "trees would have nothing to grow on.")
        self.row_folds_ = row_folds
        return FoldRows(row_folds)

    def _grow(self, params, seeds, data, sample_weight, bootstrap, fold_rows):
        """The fitted MMITs of the trees of ``seeds`` (``params``: the trees',
        their constraints resolved), tree t drawing among the rows of
        ``fold_rows`` for it when given."""
        progress = Progress("MMITForest", len(seeds), "trees", self.verbose)
        rows = ([None] * len(seeds) if fold_rows is None
                else fold_rows.rows_of_trees(len(seeds)))
        jobs = Parallel(n_jobs=self.n_jobs, prefer="threads",
                        return_as="generator_unordered")(
            delayed(_fit_tree)(index, params, seed, data, sample_weight, bootstrap,
                               rows[index])
            for index, seed in enumerate(seeds)
        )
        grown = [None] * len(seeds)
        for index, tree in jobs:
            grown[index] = self._fitted_tree(tree, seeds[index], params)
            progress.step()
        return grown

    def _set_oob_score(self, out_of_bag, y, sample_weight):
        scored = ~np.isnan(out_of_bag)
        if not scored.any():
            raise ValueError(f"No sample is out of bag in any tree (n_samples = "
                             f"{out_of_bag.shape[0]}): out-of-bag estimates need more "
                             "samples or more trees.")
        if not scored.all():
            warnings.warn("Some samples were in the bootstrap sample of every tree and "
                          "have no out-of-bag prediction; use more trees.", UserWarning,
                          stacklevel=3)
        self.oob_prediction_ = out_of_bag
        self.oob_score_ = -interval_mse(y[scored], out_of_bag[scored],
                                        sample_weight=sample_weight[scored])

    def __mmit_fold_predictions__(self, cv, out_of_fold):
        """How one fit gives out-of-fold predictions of every row (the
        protocol of ``mmit._utils._protocols``): with ``out_of_fold="folds"``
        the trees grown by the folds ``cv`` (not for a warm start), with
        "free" the out-of-bag predictions of a bagged forest; None
        otherwise."""
        if out_of_fold == "folds" and not self.warm_start:
            return OneFitFoldPredictions({"cv": cv}, "cv_predictions_", "grown by folds",
                                         own_threads=True)
        if out_of_fold == "free" and self.bootstrap:
            return OneFitFoldPredictions({"oob_score": True}, "oob_prediction_",
                                         "out of bag", allows_nan=True, own_threads=True)
        return None

    def _distribution_query(self, X, distribution):
        """``X`` validated, and the forest's predictions there for a "spread"
        ``distribution`` (see ``PredictiveDistributionMixin``)."""
        X = self._validate_X_predict(X)
        return X, (self.additive_trees_.predict(X, self.n_jobs)
                   if distribution.kind == "spread" else None)

    def _export_state(self, writer):
        """The trees and the predictive distributions (made now if not yet),
        for a model file (``mmit._persistence``)."""
        state = {"max_features": self.max_features_, **self._trees_state(writer)}
        if self.distribution_ is not None:
            state["distribution"] = self.distribution_.fitted(self)._export_state(writer)
        return state

    def _import_state(self, state, reader):
        """The fitted forest of a model file (``n_features_in_`` and
        ``feature_names_in_`` set)."""
        self.estimators_ = self._trees_from_state(state, reader)
        self.max_features_ = int(state["max_features"])
        self.distribution_ = (ForestDistribution._from_state(self, state["distribution"],
                                                             reader)
                              if "distribution" in state else None)
