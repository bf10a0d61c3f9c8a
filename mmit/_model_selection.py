"""Model selection: MMITCV (an MMIT by cross-validation) and MMITForestCV (a
forest chosen out of bag)."""

import itertools
import sys
import time
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import IntervalRegressorMixin
from ._classes import MMIT
from ._criterion import HingeTargets
from ._fitting import (
    MAX_SEED,
    TREE_PARAMETER_CONSTRAINTS,
    TrainingData,
    check_leaf_model_growth,
    draw_seed,
    grows_until_leaves_fit,
    prepare_features,
    resolve_max_features,
    set_fitted_attributes,
    validate_training_data,
)
from ._forest import MMITForest, rows_without_out_of_bag_prediction_ignored
from ._leaf_models import LEAF_MODELS, leaf_model_of
from ._loss import LOSSES
from ._pruning import leaf_alphas, prune_at, subtree_predictions
from ._validation import check_margin
from .metrics import _distance_outside, _interval_scores

# predictions scored at once: bounds the (n_validation, n_alphas) block in memory
_PREDICTION_BLOCK = 2**22


def bounds_spread(lower, upper, sample_weight=None):
    """Standard deviation of all finite bounds, each weighted by its row's
    weight when given (0 with fewer than two, or no weight)."""
    weight = np.ones(lower.shape[0]) if sample_weight is None else sample_weight
    bounds = np.concatenate([lower, upper])
    weights = np.concatenate([weight, weight])[np.isfinite(bounds)]
    bounds = bounds[np.isfinite(bounds)]
    if bounds.size < 2 or weights.sum() <= 0:
        return 0.0
    mean = np.average(bounds, weights=weights)
    return float(np.sqrt(np.average((bounds - mean) ** 2, weights=weights)))


# the candidate parameters that leave a tree's growth unchanged
LEAF_PARAMETERS = ("leaf_model", "leaf_shrinkage")


def _checked_shrinkages(shrinkages):
    shrinkages = np.ravel(np.asarray(shrinkages, dtype=np.float64))
    if shrinkages.size == 0 or not np.all(shrinkages > 0.0) or not np.isfinite(
            shrinkages).all():
        raise ValueError(f"leaf_shrinkages must be positive numbers, got {shrinkages}.")
    return [float(value) for value in shrinkages]


def default_margins(lower, upper, n_margins=8):
    """0 and a log-spaced grid up to the spread of the finite bounds.

    The spread is the standard deviation of all finite bounds; the grid
    runs from 1e-3 to 1 times it.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit._model_selection import default_margins
    >>> default_margins(np.array([0.0, 2.0]), np.array([2.0, np.inf]), n_margins=4)
    array([0.        , 0.00094281, 0.02981424, 0.94280904])
    """
    spread = bounds_spread(lower, upper)
    if spread == 0.0:
        return np.zeros(1)
    return np.r_[0.0, spread * np.logspace(-3, 0, n_margins - 1)]


class _FixedPredictions(RegressorMixin, BaseEstimator):
    """Stands in for a pruned subtree in a scorer: returns its predictions."""

    def __init__(self, predictions):
        self.predictions = predictions

    def predict(self, X):
        return self.predictions


def _grow_with_paths(features, lower, upper, params, loss, margin, leaves, sample_weight,
                     seed):
    """The unpruned trees of the candidates (loss, margin, leaf model) that
    share ``loss`` and ``margin``, as ``MMIT(..., random_state=seed)`` grows
    them before pruning: one tree of constants grown once, then each leaf
    model of ``leaves`` (linear ones in every node). For each: the tree, its
    nodes' leaf alphas, its pruning path, seconds taken (the growth's
    included)."""
    start = time.perf_counter()
    data = TrainingData(features, HingeTargets(lower, upper, margin))
    grower = MMIT(**params, loss=loss, margin=margin)
    grown = grower._grow(data, sample_weight, draw_seed(check_random_state(seed)))
    growth_seconds = time.perf_counter() - start
    results = []
    for leaf in leaves:
        start = time.perf_counter()
        leaf_model = leaf_model_of(leaf)
        tree = leaf_model.fit(grown, features.rows, data.targets, sample_weight, loss,
                              all_nodes=True)
        leaf_alpha, ccp_alphas = leaf_alphas(tree)
        if leaf_model.limits_growth and grows_until_leaves_fit(params, len(lower)):
            # the unpruned tree's linear leaves are its constants: MMIT.fit
            # refuses that candidate, a duplicate of constant leaves
            ccp_alphas = ccp_alphas[ccp_alphas > 0.0]
        # +inf: the root alone in every fold, whose own path may end later
        # (with linear leaves the root alone is the linear model, often the best)
        results.append((tree, leaf_alpha, np.r_[ccp_alphas, np.inf],
                        growth_seconds + time.perf_counter() - start))
    return results


def _column_scores(scoring, predictions, X_test, y_test):
    """Test score of each column of ``predictions`` (test rows x subtrees):
    the built-in scorers in one pass, a callable one subtree at a time."""
    if scoring is None or isinstance(scoring, str):
        accuracy = scoring == "interval_accuracy"
        scores = _interval_scores(y_test[:, 0], y_test[:, 1],
                                  np.ascontiguousarray(predictions.T), accuracy=accuracy)
        return scores if accuracy else -scores
    return [scoring(_FixedPredictions(column), X_test, y_test) for column in predictions.T]


def _fold_scores(features, lower, upper, X_test, y_test, params, loss, margin, leaves,
                 sample_weight, seed, ccp_alphas, scoring):
    """Scores on the test rows of every pruned subtree of one fold's trees
    (one per leaf model; ``ccp_alphas`` has the candidate alphas of each),
    and their fit times."""
    results = []
    block = max(1, _PREDICTION_BLOCK // max(len(X_test), 1))
    for (tree, leaf_alpha, _, fit_time), alphas_of_leaf in zip(
            _grow_with_paths(features, lower, upper, params, loss, margin, leaves,
                             sample_weight, seed), ccp_alphas, strict=True):
        scores = np.empty(len(alphas_of_leaf))
        for first in range(0, len(alphas_of_leaf), block):
            alphas = alphas_of_leaf[first:first + block]
            predictions = subtree_predictions(tree, X_test, leaf_alpha, alphas)
            scores[first:first + len(alphas)] = _column_scores(scoring, predictions,
                                                               X_test, y_test)
        results.append((scores, fit_time))
    return results


class MMITCV(IntervalRegressorMixin, BaseEstimator):
    """MMIT with margin, loss and pruning chosen by K-fold cross-validation.

    For every fold and every (loss, margin, leaf model) one tree is grown on
    the fold's training part, and every subtree on its minimal
    cost-complexity pruning path is scored on the fold's test part without
    refitting (each test row's path is walked once). The candidate
    ``ccp_alpha`` values of a (loss, margin, leaf model) are the pruning path
    of the tree grown on all data; the best candidate is that tree pruned at
    the best alpha, which is exactly what refitting on all data would give.
    The scores equal those of ``GridSearchCV(MMIT(...))`` over the same grid
    and folds, at the cost of one tree instead of one per alpha. With linear
    leaves every node of the trees holds its linear model, so that the
    pruned subtrees' leaves are linear too.

    Parameters
    ----------
    margins : array-like of float, default=None
        Candidate margins; None uses 0 and 7 log-spaced values from 1e-3 to
        1 times the standard deviation of the finite bounds.
    losses : list of {"linear_hinge", "squared_hinge"}, default=("linear_hinge",)
        Candidate losses.
    leaf_models : list of {"constant", "linear"}, default=("constant",)
        Candidate leaf models (see :class:`MMIT`).
    leaf_shrinkages : array-like of float, default=(1.0, 10.0, 100.0)
        Candidate ``leaf_shrinkage`` values of linear leaves. Chosen by
        ``benchmarks/leaf_shrinkage.py`` on the 12 data sets of the MMIT
        paper (their folds; squared hinge, constant leaves also in the
        grid) among (0.1, 1, 10), (0.3, 3, 30), (1, 10, 100) and 10 alone:
        it had the most wins (4 of 12), the smallest worst ratio to the best
        grid (1.29; the others 1.49-1.51) and the only test MSE never above
        the constant-leaf tree's (the others up to 1.10 and 1.50 times);
        its mean rank was 2.6 of 4 (the best: 2.2).
    max_depth, min_samples_split, min_samples_leaf, max_features, \
max_leaf_nodes, min_cost_decrease
        Parameters of the trees, see :class:`MMIT`.
    cv : int, cross-validation generator or iterable, default=None
        Folds, as in scikit-learn (None: 5-fold ``KFold``).
    scoring : str or callable, default=None
        ``"neg_interval_mse"`` (default), ``"interval_accuracy"`` or any
        scorer ``scorer(estimator, X, y)``; test scores are unweighted.
    n_jobs : int, default=None
        Parallel jobs over folds, losses and margins (threads).
    random_state : int, RandomState instance or None, default=None
        Seed of the trees' feature order (ties between splits).

    Attributes
    ----------
    best_estimator_ : MMIT
        The best tree on all data (predicts on its own).
    best_params_ : dict
        Its ``loss``, ``margin``, ``leaf_model``, ``leaf_shrinkage`` and
        ``ccp_alpha``.
    best_score_ : float
        Its mean test score.
    best_index_ : int
        Its index in ``cv_results_``. Candidates are ordered by loss (as in
        ``losses``), margin, leaf model (as in ``leaf_models``, linear ones
        by shrinkage), then increasing ``ccp_alpha``; equal mean scores go
        to the first, as in ``GridSearchCV``.
    cv_results_ : dict of ndarray
        As ``GridSearchCV``'s: ``param_loss``, ``param_margin``,
        ``param_leaf_model``, ``param_leaf_shrinkage`` (MMIT's default for
        constant leaves), ``param_ccp_alpha``, ``params``,
        ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
        ``mean_fit_time`` and ``std_fit_time`` (per fold tree, shared by the
        alphas of a loss and margin).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X was a DataFrame with string columns.

    See Also
    --------
    MMIT : The tree.

    Examples
    --------
    >>> from mmit import MMITCV
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> search = MMITCV(margins=[0.0, 0.01], cv=3, random_state=0)
    >>> search = search.fit(data.data, data.target)
    >>> sorted(search.best_params_)
    ['ccp_alpha', 'leaf_model', 'leaf_shrinkage', 'loss', 'margin']
    """

    _parameter_constraints = {
        **{name: TREE_PARAMETER_CONSTRAINTS[name] for name in (
            "max_depth", "min_samples_split", "min_samples_leaf", "max_features",
            "max_leaf_nodes", "min_cost_decrease", "random_state")},
        "margins": ["array-like", None],
        "losses": [list, tuple],
        "leaf_models": [list, tuple],
        "leaf_shrinkages": ["array-like"],
        "cv": ["cv_object"],
        "scoring": [StrOptions({"neg_interval_mse", "interval_accuracy"}), callable, None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        margins=None,
        losses=("linear_hinge",),
        leaf_models=("constant",),
        leaf_shrinkages=(1.0, 10.0, 100.0),
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        max_features=None,
        max_leaf_nodes=None,
        min_cost_decrease=0.0,
        cv=None,
        scoring=None,
        n_jobs=None,
        random_state=None,
    ):
        self.margins = margins
        self.losses = losses
        self.leaf_models = leaf_models
        self.leaf_shrinkages = leaf_shrinkages
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_cost_decrease = min_cost_decrease
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _tree_params(self):
        return {name: getattr(self, name) for name in (
            "max_depth", "min_samples_split", "min_samples_leaf", "max_features",
            "max_leaf_nodes", "min_cost_decrease")}

    def _candidate_grid(self, lower, upper):
        """The (loss, margin, leaf model) candidates, as MMIT parameters."""
        for loss in self.losses:
            if loss not in LOSSES:
                raise ValueError(f"losses must be among {tuple(LOSSES)}, got {loss!r}.")
        leaves = []
        for leaf_model in self.leaf_models:
            if leaf_model == "constant":
                # the shrinkage of constant leaves does nothing: MMIT's default
                leaves.append({"leaf_model": "constant",
                               "leaf_shrinkage": MMIT().leaf_shrinkage})
            elif leaf_model == "linear":
                leaves += [{"leaf_model": "linear", "leaf_shrinkage": shrinkage}
                           for shrinkage in _checked_shrinkages(self.leaf_shrinkages)]
            else:
                raise ValueError(f"leaf_models must be among {tuple(LEAF_MODELS)}, "
                                 f"got {leaf_model!r}.")
        if not leaves:
            raise ValueError("leaf_models must not be empty.")
        if self.margins is None:
            margins = default_margins(lower, upper)
        else:
            margins = np.array([check_margin(m) for m in np.ravel(self.margins)])
            if margins.size == 0:
                raise ValueError("margins must not be empty.")
        return [{"loss": loss, "margin": float(margin), **leaf}
                for loss in self.losses for margin in margins for leaf in leaves]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Cross-validate the candidates and keep the best tree on all data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training features; NaN marks a missing value (see
            :class:`MMIT`).
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Target intervals (lower, upper; infinite bounds allowed), or
            exact values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights for growing the trees.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group-aware ``cv``.

        Returns
        -------
        self : MMITCV
            The fitted estimator.
        """
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        candidates = self._candidate_grid(lower, upper)
        target = np.column_stack([lower, upper])
        splits = list(check_cv(self.cv).split(X, target, groups))
        random_state = self.random_state
        seed = (random_state if isinstance(random_state, Integral)
                else int(check_random_state(random_state).randint(MAX_SEED)))
        params = self._tree_params()
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads")

        # the candidates sharing a loss and margin share their trees' growth
        groups = [(loss, margin, [{name: candidate[name] for name in LEAF_PARAMETERS}
                                  for candidate in group])
                  for (loss, margin), group in itertools.groupby(
                      candidates, key=lambda candidate: (candidate["loss"],
                                                         candidate["margin"]))]
        features = prepare_features(X, self.max_features)
        full_groups = parallel(
            delayed(_grow_with_paths)(features, lower, upper, params, loss, margin, leaves,
                                      sample_weight, seed)
            for loss, margin, leaves in groups)
        fold_features = [prepare_features(X[train], self.max_features)
                         for train, _ in splits]
        X_contiguous = np.ascontiguousarray(X)
        folds = [result for group in parallel(
            delayed(_fold_scores)(
                fold_features[k], lower[train], upper[train], X_contiguous[test],
                target[test], params, loss, margin, leaves, sample_weight[train], seed,
                [ccp_alphas for _, _, ccp_alphas, _ in full_groups[g]], self.scoring)
            for k, (train, test) in enumerate(splits)
            for g, (loss, margin, leaves) in enumerate(groups)) for result in group]
        full = [result for group in full_groups for result in group]
        self._set_results(candidates, full, folds, len(splits))
        best = {name: self.best_params_[name] for name in candidates[0]}
        best_tree = full[candidates.index(best)][0]
        estimator = MMIT(**params, **self.best_params_, random_state=seed)
        estimator.tree_ = prune_at(best_tree, self.best_params_["ccp_alpha"])
        set_fitted_attributes(estimator, self.n_features_in_,
                              getattr(self, "feature_names_in_", None),
                              resolve_max_features(self.max_features, X.shape[1]))
        self.best_estimator_ = estimator
        return self

    def _set_results(self, candidates, full, folds, n_splits):
        n_candidates = len(candidates)
        params, fit_times, split_scores = [], [], []
        for c, candidate in enumerate(candidates):
            ccp_alphas = full[c][2]
            params += [{**candidate, "ccp_alpha": float(alpha)} for alpha in ccp_alphas]
            times = [folds[k * n_candidates + c][1] for k in range(n_splits)]
            fit_times.append(np.tile(times, (len(ccp_alphas), 1)))
            split_scores.append(np.column_stack(
                [folds[k * n_candidates + c][0] for k in range(n_splits)]))
        scores = np.vstack(split_scores)
        fit_times = np.vstack(fit_times)
        mean = scores.mean(axis=1)
        results = {
            f"param_{name}": np.array([param[name] for param in params],
                                      dtype=object if isinstance(first, str) else float)
            for name, first in params[0].items()
        }
        results["params"] = params
        for k in range(n_splits):
            results[f"split{k}_test_score"] = scores[:, k]
        results["mean_test_score"] = mean
        results["std_test_score"] = scores.std(axis=1)
        results["rank_test_score"] = rankdata(-mean, method="min").astype(np.int32)
        results["mean_fit_time"] = fit_times.mean(axis=1)
        results["std_fit_time"] = fit_times.std(axis=1)
        self.cv_results_ = results
        # the first best candidate, as GridSearchCV over the same ordered grid
        self.best_index_ = int(np.argmax(mean))
        self.best_params_ = results["params"][self.best_index_]
        self.best_score_ = float(mean[self.best_index_])

    def predict(self, X):
        """Predictions of the best tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        X = self._validate_X_predict(X)
        return self.best_estimator_.tree_.predict(X)


#: The MMITForest parameters MMITForestCV's grid may set.
FOREST_GRID_PARAMETERS = ("margin", "loss", "max_features", "min_samples_leaf", "max_depth",
                          "leaf_model", "leaf_shrinkage")


def default_forest_grid(lower, upper):
    """MMITForestCV's default candidates, each list in order of preference."""
    spread = bounds_spread(lower, upper)
    return {
        "margin": [0.0] + ([0.1 * spread] if spread > 0.0 else []),
        "loss": ["squared_hinge", "linear_hinge"],
        "max_features": [1.0, 1 / 3, "sqrt"],
        "min_samples_leaf": [1, 5],
    }


def _out_of_bag_errors(params, X, y, sample_weight, seed):
    """Squared distance of each row's out-of-bag prediction to its interval
    (NaN for a row in every bootstrap sample), and the fit time."""
    start = time.perf_counter()
    with rows_without_out_of_bag_prediction_ignored():
        forest = MMITForest(**params, oob_score=True, random_state=seed).fit(
            X, y, sample_weight)
    seconds = time.perf_counter() - start
    return _distance_outside(y[:, 0], y[:, 1], forest.oob_prediction_) ** 2, seconds


class MMITForestCV(IntervalRegressorMixin, BaseEstimator):
    """MMITForest with margin, loss, max_features and leaf size chosen out of bag.

    Each candidate of a small grid is one forest scored by its out-of-bag
    interval MSE: every tree predicts the rows left out of its bootstrap
    sample, so no inner folds are needed (one forest per candidate instead
    of one per candidate and fold). All candidates share the same bootstrap
    samples, so their out-of-bag errors compare row by row: the choice is
    the most preferred candidate (fewest parameters changed from the first
    value of each list, then grid order) whose out-of-bag MSE exceeds the
    best one by at most one standard error of their paired difference.
    Noise in the estimate, large on small data, thus does not move the
    choice away from the preferred values without evidence. The chosen
    forest is then grown on all data with ``n_jobs``.

    Parameters
    ----------
    param_grid : dict of lists, default=None
        Candidate values of ``margin``, ``loss``, ``max_features``,
        ``min_samples_leaf``, ``max_depth``, ``leaf_model`` and
        ``leaf_shrinkage``, each list in order of preference. None: margin 0
        and a tenth of the standard deviation of the finite training
        bounds, the squared and linear hinge,
        ``max_features`` 1.0 (all features), 1/3 and "sqrt",
        ``min_samples_leaf`` 1 and 5 (24 candidates, MMITForest's defaults
        first: the candidates of ``benchmarks/forest_defaults.py`` that were
        best on some data set). Parameters not in the grid keep
        MMITForest's defaults.
    n_estimators : int, default=100
        Trees per forest; with the default bootstrap each row is out of bag
        for about 37% of them.
    max_samples : int or float, default=None
        Size of each bootstrap sample, see :class:`MMITForest`.
    n_jobs : int, default=None
        Candidates grown in parallel (threads).
    random_state : int, RandomState instance or None, default=None
        Draws the one seed of every candidate forest: the same bootstrap
        samples for all.
    verbose : int, default=0
        With 1 or more, report each candidate's out-of-bag MSE on stderr.

    Attributes
    ----------
    best_estimator_ : MMITForest
        The chosen forest, grown on all data (with its ``oob_score_``).
    best_params_ : dict
        Its parameters from the grid.
    best_score_ : float
        Its out-of-bag score (negative interval MSE).
    best_index_ : int
        Its index in ``cv_results_``.
    cv_results_ : dict of ndarray
        ``params`` and ``param_<name>`` for every grid parameter (most
        preferred candidates first), ``mean_test_score`` (out-of-bag
        score), ``std_test_score`` (standard error of the paired difference
        with the best candidate's out-of-bag MSE), ``rank_test_score`` and
        ``mean_fit_time``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X was a DataFrame with string columns.

    See Also
    --------
    MMITForest : The forest.
    MMITCV : A single tree chosen by cross-validation.

    Examples
    --------
    >>> from mmit import MMITForestCV
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> grid = {"loss": ["linear_hinge", "squared_hinge"], "min_samples_leaf": [1, 5]}
    >>> search = MMITForestCV(grid, n_estimators=30, random_state=0)
    >>> search = search.fit(data.data, data.target)
    >>> sorted(search.best_params_), len(search.cv_results_["params"])
    (['loss', 'min_samples_leaf'], 4)
    """

    _parameter_constraints = {
        "param_grid": [dict, None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_samples": MMITForest._parameter_constraints["max_samples"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, param_grid=None, *, n_estimators=100, max_samples=None,
                 n_jobs=None, random_state=None, verbose=0):
        self.param_grid = param_grid
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _candidates(self, lower, upper):
        """Every combination of the grid's values, the most preferred first."""
        grid = (default_forest_grid(lower, upper) if self.param_grid is None
                else self.param_grid)
        unknown = sorted(set(grid) - set(FOREST_GRID_PARAMETERS))
        if unknown:
            raise ValueError(f"param_grid may set {list(FOREST_GRID_PARAMETERS)}, "
                             f"not {unknown}.")
        for name, values in grid.items():
            if isinstance(values, str) or not hasattr(values, "__len__") or not values:
                raise ValueError(f"param_grid[{name!r}] must be a non-empty list, "
                                 f"got {values!r}.")
        names = list(grid)
        indices = sorted(itertools.product(*(range(len(grid[name])) for name in names)),
                         key=lambda index: (sum(i > 0 for i in index), index))
        candidates = [{name: grid[name][i] for name, i in zip(names, index, strict=True)}
                      for index in indices]
        for params in candidates:
            forest = MMITForest(**params)
            forest._validate_params()
            check_leaf_model_growth(forest._tree_params(), lower.shape[0])
        return candidates

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow one forest per candidate and keep the one chosen out of bag.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training features; NaN marks a missing value.
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Target intervals (lower, upper; infinite bounds allowed), or
            exact values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the bootstrap samples (see
            :class:`MMITForest`) and in the out-of-bag MSE.

        Returns
        -------
        self : MMITForestCV
            The fitted estimator.
        """
        X_input = X
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        candidates = self._candidates(lower, upper)
        y = np.column_stack([lower, upper])
        seed = draw_seed(check_random_state(self.random_state))
        common = {"n_estimators": self.n_estimators, "max_samples": self.max_samples,
                  "n_jobs": 1}
        results = Parallel(n_jobs=self.n_jobs, prefer="threads", return_as="generator")(
            delayed(_out_of_bag_errors)({**common, **params}, X, y, sample_weight, seed)
            for params in candidates)
        errors, fit_times = [], []
        for number, (error, seconds) in enumerate(results):
            errors.append(error)
            fit_times.append(seconds)
            if self.verbose:
                mse = np.nanmean(error)
                print(f"[MMITForestCV] {number + 1}/{len(candidates)} "
                      f"{candidates[number]}: out-of-bag MSE {mse:.4g} ({seconds:.1f} s)",
                      file=sys.stderr, flush=True)
        self._choose(candidates, np.array(errors), sample_weight, fit_times)
        with rows_without_out_of_bag_prediction_ignored():
            self.best_estimator_ = MMITForest(
                **{**common, "n_jobs": self.n_jobs}, **self.best_params_, oob_score=True,
                random_state=seed, verbose=self.verbose).fit(X_input, y, sample_weight)
        return self

    def _choose(self, candidates, errors, sample_weight, fit_times):
        """Out-of-bag scores and the most preferred candidate within one
        standard error of the best."""
        scored = ~np.isnan(errors).any(axis=0) & (sample_weight > 0)
        if not scored.any():
            raise ValueError("No sample is out of bag in any tree: use more trees.")
        errors = errors[:, scored]
        weight = sample_weight[scored] / sample_weight[scored].sum()
        mse = errors @ weight
        best = int(np.argmin(mse))
        difference = errors - errors[best]
        mean_difference = difference @ weight
        variance = ((difference - mean_difference[:, np.newaxis]) ** 2) @ weight
        effective_size = 1.0 / np.sum(weight**2)
        standard_error = np.sqrt(variance / effective_size)
        chosen = next(c for c in range(len(candidates))
                      if mean_difference[c] <= standard_error[c])
        results = {"params": candidates}
        for name in candidates[0]:
            results[f"param_{name}"] = np.array([c[name] for c in candidates], dtype=object)
        results["mean_test_score"] = -mse
        results["std_test_score"] = standard_error
        results["rank_test_score"] = rankdata(mse, method="min").astype(np.int32)
        results["mean_fit_time"] = np.array(fit_times)
        self.cv_results_ = results
        self.best_index_ = chosen
        self.best_params_ = candidates[chosen]
        self.best_score_ = float(-mse[chosen])

    def predict(self, X):
        """Predictions of the chosen forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)
