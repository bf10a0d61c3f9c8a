"""MMITCV: margin, loss and pruning of an MMIT chosen by cross-validation."""

import time
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.model_selection import check_cv
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions

from ._base import IntervalRegressorMixin
from ._classes import MMIT
from ._criterion import HingeTargets
from ._fitting import (
    MAX_SEED,
    TREE_PARAMETER_CONSTRAINTS,
    TrainingData,
    draw_seed,
    prepare_features,
    resolve_max_features,
    set_fitted_attributes,
    validate_training_data,
)
from ._pruning import leaf_alphas, prune_at, subtree_predictions
from ._validation import LOSSES, check_margin
from .metrics import get_scorer
# predictions scored at once: bounds the (n_validation, n_alphas) block in memory
_PREDICTION_BLOCK = 2**22


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
    finite = np.concatenate([lower[np.isfinite(lower)], upper[np.isfinite(upper)]])
    spread = float(np.std(finite)) if finite.size > 1 else 0.0
    if spread == 0.0:
        return np.zeros(1)
    return np.r_[0.0, spread * np.logspace(-3, 0, n_margins - 1)]


class _FixedPredictions(RegressorMixin, BaseEstimator):
    """Stands in for a pruned subtree in a scorer: returns its predictions."""

    def __init__(self, predictions):
        self.predictions = predictions

    def predict(self, X):
        return self.predictions


def _grow_with_path(features, lower, upper, params, loss, margin, sample_weight, seed):
    """Unpruned tree, as ``MMIT(..., random_state=seed).fit`` would grow it,
    its nodes' leaf alphas, its pruning path, seconds taken."""
    start = time.perf_counter()
    data = TrainingData(features, HingeTargets(lower, upper, margin))
    tree = MMIT(**params, loss=loss, margin=margin)._fit(
        data, sample_weight, draw_seed(check_random_state(seed))).tree_
    leaf_alpha, ccp_alphas = leaf_alphas(tree)
    return tree, leaf_alpha, ccp_alphas, time.perf_counter() - start


def _fold_scores(features, lower, upper, X_test, y_test, params, loss, margin,
                 sample_weight, seed, ccp_alphas, scorer):
    """Scores on the test rows of every pruned subtree of one fold's tree."""
    tree, leaf_alpha, _, fit_time = _grow_with_path(
        features, lower, upper, params, loss, margin, sample_weight, seed)
    scores = np.empty(len(ccp_alphas))
    block = max(1, _PREDICTION_BLOCK // max(len(X_test), 1))
    for first in range(0, len(ccp_alphas), block):
        alphas = ccp_alphas[first:first + block]
        predictions = subtree_predictions(tree, X_test, leaf_alpha, alphas)
        for k in range(len(alphas)):
            scores[first + k] = scorer(_FixedPredictions(predictions[:, k]), X_test, y_test)
    return scores, fit_time


class MMITCV(IntervalRegressorMixin, BaseEstimator):
    """MMIT with margin, loss and pruning chosen by K-fold cross-validation.

    For every fold and every (loss, margin) one tree is grown on the fold's
    training part, and every subtree on its minimal cost-complexity pruning
    path is scored on the fold's test part without refitting (each test
    row's path is walked once). The candidate ``ccp_alpha`` values of a
    (loss, margin) are the pruning path of the tree grown on all data; the
    best candidate is that tree pruned at the best alpha, which is exactly
    what refitting on all data would give. The scores equal those of
    ``GridSearchCV(MMIT(...))`` over the same grid and folds, at the cost of
    one tree instead of one per alpha.

    Parameters
    ----------
    margins : array-like of float, default=None
        Candidate margins; None uses 0 and 7 log-spaced values from 1e-3 to
        1 times the standard deviation of the finite bounds.
    losses : list of {"linear_hinge", "squared_hinge"}, default=("linear_hinge",)
        Candidate losses.
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
        Its ``loss``, ``margin`` and ``ccp_alpha``.
    best_score_ : float
        Its mean test score.
    best_index_ : int
        Its index in ``cv_results_``. Candidates are ordered by loss (as in
        ``losses``), margin, then increasing ``ccp_alpha``; equal mean
        scores go to the first, as in ``GridSearchCV``.
    cv_results_ : dict of ndarray
        As ``GridSearchCV``'s: ``param_loss``, ``param_margin``,
        ``param_ccp_alpha``, ``params``, ``split{k}_test_score``,
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
    ['ccp_alpha', 'loss', 'margin']
    """

    _parameter_constraints = {
        **{name: TREE_PARAMETER_CONSTRAINTS[name] for name in (
            "max_depth", "min_samples_split", "min_samples_leaf", "max_features",
            "max_leaf_nodes", "min_cost_decrease", "random_state")},
        "margins": ["array-like", None],
        "losses": [list, tuple],
        "cv": ["cv_object"],
        "scoring": [StrOptions({"neg_interval_mse", "interval_accuracy"}), callable, None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        margins=None,
        losses=("linear_hinge",),
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
        for loss in self.losses:
            if loss not in LOSSES:
                raise ValueError(f"losses must be among {LOSSES}, got {loss!r}.")
        if self.margins is None:
            margins = default_margins(lower, upper)
        else:
            margins = np.array([check_margin(m) for m in np.ravel(self.margins)])
            if margins.size == 0:
                raise ValueError("margins must not be empty.")
        return [(loss, float(margin)) for loss in self.losses for margin in margins]

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
        scorer = get_scorer("neg_interval_mse" if self.scoring is None else self.scoring)
        random_state = self.random_state
        seed = (random_state if isinstance(random_state, Integral)
                else int(check_random_state(random_state).randint(MAX_SEED)))
        params = self._tree_params()
        parallel = Parallel(n_jobs=self.n_jobs, prefer="threads")

        features = prepare_features(X, self.max_features)
        full = parallel(
            delayed(_grow_with_path)(features, lower, upper, params, loss, margin,
                                     sample_weight, seed)
            for loss, margin in candidates
        )
        fold_features = [prepare_features(X[train], self.max_features)
                         for train, _ in splits]
        X_contiguous = np.ascontiguousarray(X)
        folds = parallel(
            delayed(_fold_scores)(
                fold_features[k], lower[train], upper[train], X_contiguous[test],
                target[test], params, loss, margin, sample_weight[train], seed,
                full[c][2], scorer)
            for k, (train, test) in enumerate(splits)
            for c, (loss, margin) in enumerate(candidates)
        )
        self._set_results(candidates, full, folds, len(splits))
        best_loss = self.best_params_["loss"]
        best_margin = self.best_params_["margin"]
        best_tree = full[candidates.index((best_loss, best_margin))][0]
        estimator = MMIT(**params, **self.best_params_, random_state=seed)
        estimator.tree_ = prune_at(best_tree, self.best_params_["ccp_alpha"])
        set_fitted_attributes(estimator, self.n_features_in_,
                              getattr(self, "feature_names_in_", None),
                              resolve_max_features(self.max_features, X.shape[1]))
        self.best_estimator_ = estimator
        return self

    def _set_results(self, candidates, full, folds, n_splits):
        n_candidates = len(candidates)
        losses, margins, alphas, fit_times, split_scores = [], [], [], [], []
        for c, (loss, margin) in enumerate(candidates):
            ccp_alphas = full[c][2]
            losses += [loss] * len(ccp_alphas)
            margins += [margin] * len(ccp_alphas)
            alphas.append(ccp_alphas)
            times = [folds[k * n_candidates + c][1] for k in range(n_splits)]
            fit_times.append(np.tile(times, (len(ccp_alphas), 1)))
            split_scores.append(np.column_stack(
                [folds[k * n_candidates + c][0] for k in range(n_splits)]))
        alphas = np.concatenate(alphas)
        scores = np.vstack(split_scores)
        fit_times = np.vstack(fit_times)
        mean = scores.mean(axis=1)
        results = {
            "param_loss": np.array(losses, dtype=object),
            "param_margin": np.array(margins),
            "param_ccp_alpha": alphas,
            "params": [{"loss": loss, "margin": margin, "ccp_alpha": float(alpha)}
                       for loss, margin, alpha in zip(losses, margins, alphas,
                                                      strict=True)],
        }
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
