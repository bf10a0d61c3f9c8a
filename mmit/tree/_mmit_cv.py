"""MMITCV: an MMIT whose loss, margin, leaf model and pruning are chosen by
cross-validation, all pruned subtrees scored from one grown tree per fold
(a monotone tree's growth prefixes, for ``max_leaf_nodes``)."""

import itertools
import time
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions

from .._loss._loss import LOSSES
from .._utils._base import set_init_parameters
from .._utils._categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    fitted_encoding,
    n_categories,
)
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._scores import interval_scores
from .._utils._search import IntervalSearch
from .._utils._sparse import dense_rows
from .._utils._validation import check_margin, default_margins, validate_training_data
from ._builder import bounded_by_other_nodes
from ._classes import MMIT
from ._criterion import HingeTargets
from ._growing import (
    CATEGORICAL_PENALTY,
    MAX_SEED,
    TREE_PARAMETER_CONSTRAINTS,
    TrainingData,
    draw_seed,
    grow_unpruned,
    grows_until_leaves_fit,
    prepare_features,
    resolve_constraints,
)
from ._leaf_models import LEAF_MODELS, LEAF_PARAMETERS
from ._pruning import (
    growth_alphas,
    growth_prefix,
    leaf_alphas,
    prefix_alpha,
    prune_at,
    subtree_predictions,
)

# predictions scored at once: bounds the (n_validation, n_alphas) block in memory
_PREDICTION_BLOCK = 2**22

# a monotone tree's candidate leaf counts: about this many, log-spaced
_GROWTH_CANDIDATES = 64


class _FixedPredictions(RegressorMixin, BaseEstimator):
    """Stands in for a pruned subtree in a scorer: returns its predictions."""

    def __init__(self, predictions):
        self.predictions = predictions

    def predict(self, X):
        return self.predictions


def _growth_candidates(n_leaves):
    """The leaf counts scored for a monotone tree of ``n_leaves`` leaves:
    about ``_GROWTH_CANDIDATES`` log-spaced counts from ``n_leaves`` down to 2
    (the order of increasing alpha; MMIT's least ``max_leaf_nodes``, the
    whole tree when it has a single leaf)."""
    counts = np.geomspace(2, max(n_leaves, 2), _GROWTH_CANDIDATES)
    return np.unique(np.round(counts).astype(np.intp))[::-1]


def _grow_with_paths(features, lower, upper, params, loss, margin, leaves, sample_weight,
                     seed, by_prefixes=False):
    """The unpruned trees of the candidates (loss, margin, leaf model) that
    share ``loss`` and ``margin``, as ``MMIT(..., random_state=seed)`` grows
    them before pruning: one tree of constants grown once, then the leaf
    model of each of ``leaves`` (the candidates' parameters) fitted in every
    node (:func:`grow_unpruned`). For each: the tree, its nodes' leaf
    alphas, its path (the ``ccp_alpha`` values of its pruning path, or,
    ``by_prefixes``, the ``max_leaf_nodes`` values of its growth's
    prefixes), seconds taken (the growth's included)."""
    start = time.perf_counter()
    data = TrainingData(features, HingeTargets(lower, upper, margin))
    targets_seconds = time.perf_counter() - start
    results = []
    for leaf, (tree, seconds) in zip(leaves, grow_unpruned(
            {**params, "loss": loss}, leaves, data, sample_weight,
            draw_seed(check_random_state(seed)), prunable=not by_prefixes), strict=True):
        if by_prefixes:
            results.append((tree, growth_alphas(tree), _growth_candidates(tree.n_leaves),
                            targets_seconds + seconds))
            continue
        leaf_alpha, ccp_alphas = leaf_alphas(tree)
        if (LEAF_MODELS[leaf["leaf_model"]].limits_growth
                and grows_until_leaves_fit(params, len(lower))):
            # the unpruned tree's models are its constants: MMIT.fit refuses
            # that candidate, a duplicate of constant leaves
            ccp_alphas = ccp_alphas[ccp_alphas > 0.0]
        # +inf: the root alone in every fold, whose own path may end later
        # (with linear leaves the root alone is the linear model, often the best)
        results.append((tree, leaf_alpha, np.r_[ccp_alphas, np.inf],
                        targets_seconds + seconds))
    return results


def _column_scores(scoring, predictions, X_test, y_test):
    """Test score of each column of ``predictions`` (test rows x subtrees):
    the built-in scorers in one pass, a callable one subtree at a time."""
    if scoring is None or isinstance(scoring, str):
        accuracy = scoring == "interval_accuracy"
        scores = interval_scores(y_test[:, 0], y_test[:, 1],
                                 np.ascontiguousarray(predictions.T), accuracy=accuracy)
        return scores if accuracy else -scores
    return [scoring(_FixedPredictions(column), X_test, y_test) for column in predictions.T]


def _fold_scores(features, lower, upper, X_test, y_test, params, loss, margin, leaves,
                 sample_weight, seed, paths, scoring, by_prefixes=False):
    """Scores on the test rows of every pruned subtree of one fold's trees
    (one per leaf model; ``paths`` has the candidate ``ccp_alpha`` values of
    each, or, ``by_prefixes``, its ``max_leaf_nodes`` values), and their fit
    times."""
    results = []
    block = max(1, _PREDICTION_BLOCK // max(len(X_test), 1))
    for (tree, leaf_alpha, _, fit_time), path in zip(
            _grow_with_paths(features, lower, upper, params, loss, margin, leaves,
                             sample_weight, seed, by_prefixes), paths, strict=True):
        alphas_of_leaf = prefix_alpha(path) if by_prefixes else path
        scores = np.empty(len(alphas_of_leaf))
        for first in range(0, len(alphas_of_leaf), block):
            alphas = alphas_of_leaf[first:first + block]
            predictions = subtree_predictions(tree, X_test, leaf_alpha, alphas)
            scores[first:first + len(alphas)] = _column_scores(scoring, predictions,
                                                               X_test, y_test)
        results.append((scores, fit_time))
    return results


@fill_doc
class MMITCV(IntervalSearch):
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

    Monotone trees (``monotonic_cst`` on ordered features) are searched along
    their growth instead of their pruning path: a monotone tree grows
    best-first, each leaf bounded by the leaves it is compared with, and
    the tree after each of its splits is monotone, where a tree grown for
    pruning must bound every node by every other and fits its data less
    well. The candidates are then ``max_leaf_nodes`` values (about 64,
    log-spaced from two leaves to the unpruned tree's leaves), each scored
    from one grown tree per fold as the alphas are, and the best candidate
    is the full tree's prefix, ``MMIT(max_leaf_nodes=k)`` on all data.

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
        Candidate ``leaf_shrinkage`` values of linear leaves (the
        measurements behind the default: :ref:`defaults` in the user guide).
    max_depth, min_samples_split, min_samples_leaf, max_features, \
max_leaf_nodes, min_cost_decrease, categorical_penalty, monotonic_cst, \
interaction_cst
        Parameters of the trees, see :class:`MMIT` (the constraints with
        constant leaves only).
    %(categorical_features)s
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
        ``ccp_alpha`` (``max_leaf_nodes`` for a monotone tree).
    best_score_ : float
        Its mean test score.
    best_index_ : int
        Its index in ``cv_results_``. Candidates are ordered by loss (as in
        ``losses``), margin, leaf model (as in ``leaf_models``, linear ones
        by shrinkage), then increasing ``ccp_alpha`` (decreasing
        ``max_leaf_nodes``); equal mean scores go
        to the first, as in ``GridSearchCV``.
    cv_results_ : dict of ndarray
        As ``GridSearchCV``'s: ``param_loss``, ``param_margin``,
        ``param_leaf_model``, ``param_leaf_shrinkage`` (MMIT's default for
        constant leaves), ``param_ccp_alpha`` (``param_max_leaf_nodes``),
        ``params``,
        ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``,
        ``mean_fit_time`` and ``std_fit_time`` (per fold tree, shared by the
        alphas of a loss and margin).
    %(features_in)s
    %(categorical_attributes)s

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
            "max_leaf_nodes", "min_cost_decrease", "categorical_penalty",
            "monotonic_cst", "interaction_cst", "random_state")},
        "margins": ["array-like", None],
        "losses": [list, tuple],
        "leaf_models": [list, tuple],
        **{parameter.grid_name: ["array-like"] for parameter in LEAF_PARAMETERS.values()},
        "cv": ["cv_object"],
        "scoring": [StrOptions({"neg_interval_mse", "interval_accuracy"}), callable, None],
        "n_jobs": [Integral, None],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
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
        categorical_features="from_dtype",
        categorical_penalty=CATEGORICAL_PENALTY,
        monotonic_cst=None,
        interaction_cst=None,
        cv=None,
        scoring=None,
        n_jobs=None,
        random_state=None,
    ):
        set_init_parameters(self, locals())

    def _tree_params(self):
        return {name: getattr(self, name) for name in (
            "max_depth", "min_samples_split", "min_samples_leaf", "max_features",
            "max_leaf_nodes", "min_cost_decrease", "categorical_penalty", "monotonic_cst",
            "interaction_cst")}

    def _candidate_grid(self, lower, upper):
        """The (loss, margin, leaf model) candidates, as MMIT parameters."""
        for loss in self.losses:
            if loss not in LOSSES:
                raise ValueError(f"losses must be among {tuple(LOSSES)}, got {loss!r}.")
        leaves = []
        grids = {parameter.grid_name: getattr(self, parameter.grid_name)
                 for parameter in LEAF_PARAMETERS.values()}
        for leaf_model in self.leaf_models:
            if leaf_model not in LEAF_MODELS:
                raise ValueError(f"leaf_models must be among {tuple(LEAF_MODELS)}, "
                                 f"got {leaf_model!r}.")
            # the parameters of the other leaf models do nothing: their defaults
            leaves += LEAF_MODELS[leaf_model].candidates(grids)
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

    @fit_method
    def fit(self, X, y, sample_weight=None, groups=None):
        """Cross-validate the candidates and keep the best tree on all data.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Weights for growing the trees.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group-aware ``cv``.

        %(fit_returns)s
        """
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        candidates = self._candidate_grid(lower, upper)
        target = np.column_stack([lower, upper])
        splits = list(check_cv(self.cv).split(X, target, groups))
        random_state = self.random_state
        seed = (random_state if isinstance(random_state, Integral)
                else int(check_random_state(random_state).randint(MAX_SEED)))
        params = resolve_constraints(self, self._tree_params(), self.leaf_models)
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads")

        # the candidates sharing a loss and margin share their trees' growth
        groups = [(loss, margin, list(group))
                  for (loss, margin), group in itertools.groupby(
                      candidates, key=lambda candidate: (candidate["loss"],
                                                         candidate["margin"]))]
        categories = n_categories(self)
        features = prepare_features(X, self.max_features, categories)
        # monotone trees bounded by their leaves: max_leaf_nodes, not ccp_alpha
        by_prefixes = (params["monotonic_cst"] is not None
                       and bounded_by_other_nodes(features))
        full_groups = parallel(
            delayed(_grow_with_paths)(features, lower, upper, params, loss, margin, leaves,
                                      sample_weight, seed, by_prefixes)
            for loss, margin, leaves in groups)
        fold_features = [prepare_features(X[train], self.max_features, categories)
                         for train, _ in splits]
        folds = [result for group in parallel(
            delayed(_fold_scores)(
                fold_features[k], lower[train], upper[train], dense_rows(X, test),
                target[test], params, loss, margin, leaves, sample_weight[train], seed,
                [path for _, _, path, _ in full_groups[g]], self.scoring, by_prefixes)
            for k, (train, test) in enumerate(splits)
            for g, (loss, margin, leaves) in enumerate(groups)) for result in group]
        full = [result for group in full_groups for result in group]
        path_name = "max_leaf_nodes" if by_prefixes else "ccp_alpha"
        self._record(candidates, full, folds, len(splits), path_name)
        best = {name: self.best_params_[name] for name in candidates[0]}
        best_tree = full[candidates.index(best)][0]
        point = self.best_params_[path_name]
        self.best_estimator_ = MMIT.from_tree(
            growth_prefix(best_tree, point) if by_prefixes else prune_at(best_tree, point),
            **{**self._tree_params(), **self.best_params_},
            categorical_features=self.categorical_features,
            random_state=seed, feature_names_in=getattr(self, "feature_names_in_", None),
            categories=fitted_encoding(self)[1])
        return self

    def _record(self, candidates, full, folds, n_splits, path_name):
        """The results of every candidate and point of its path (``full``:
        each candidate's tree and path on all rows, values of ``path_name``;
        ``folds``: each fold's and candidate's scores of the path and fit
        time)."""
        n_candidates = len(candidates)
        params, fit_times, split_scores = [], [], []
        for c, candidate in enumerate(candidates):
            path = full[c][2]
            params += [{**candidate, path_name: point.item()} for point in path]
            times = [folds[k * n_candidates + c][1] for k in range(n_splits)]
            fit_times.append(np.tile(times, (len(path), 1)))
            split_scores.append(np.column_stack(
                [folds[k * n_candidates + c][0] for k in range(n_splits)]))
        self._set_results(params, np.vstack(split_scores), np.vstack(fit_times))
