"""SHAP values of mmit's models: why each prediction is what it is.

Tree models are explained exactly by path-dependent TreeSHAP
(``_treeshap``), in compiled code on threads: a model that is a weighted
sum of trees plus a constant (a tree, a forest's mean, boosting's shrunk
sum) has the same weighted sum of its trees' values, because Shapley
values are linear in the model.
"""

from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.validation import check_is_fitted

from ._boosting import MMITBoost
from ._classes import MMIT
from ._forest import MMITForest
from ._treeshap import tree_shap


@dataclass(frozen=True)
class Explanation:
    """SHAP values of a model's predictions.

    Attributes
    ----------
    values : ndarray of shape (n_samples, n_features)
        Each feature's contribution to each prediction.
    base_values : ndarray of shape (n_samples,)
        The model's expected prediction over its training data (the same for
        every row): ``values.sum(axis=1) + base_values`` is the prediction.
    data : ndarray of shape (n_samples, n_features)
        The rows explained, as the model read them.
    feature_names : list of str
        The features' names.
    """

    values: np.ndarray
    base_values: np.ndarray
    data: np.ndarray
    feature_names: list

    @property
    def importances(self):
        """Mean absolute contribution of each feature: a global importance."""
        return np.mean(np.abs(self.values), axis=0)

    def to_shap(self):
        """The same as a ``shap.Explanation``, for shap's plots (needs shap)."""
        try:
            import shap
        except ImportError as error:  # pragma: no cover - depends on the extra
            raise ImportError("to_shap needs shap: pip install shap") from error
        return shap.Explanation(values=self.values, base_values=self.base_values,
                                data=self.data, feature_names=self.feature_names)


def tree_terms(estimator):
    """The trees of a fitted tree model, each tree's weight in its prediction
    and the constant added: (trees, scales, offset)."""
    if isinstance(estimator, MMIT):
        return [estimator.tree_], np.ones(1), 0.0
    if isinstance(estimator, MMITForest):
        trees = [tree.tree_ for tree in estimator.estimators_]
        return trees, np.full(len(trees), 1.0 / len(trees)), 0.0
    trees = [tree.tree_ for tree in estimator.estimators_]  # MMITBoost
    return (trees, np.full(len(trees), estimator.learning_rate),
            float(estimator.baseline_prediction_))


def expected_value(tree):
    """A tree's mean prediction over its training weight (its leaves' values
    weighted by their covers)."""
    leaves = np.asarray(tree.children_left) < 0
    covers = np.asarray(tree.weighted_n_node_samples)
    return float(np.sum(np.asarray(tree.value)[leaves] * covers[leaves]) / covers[0])


def shap_values(estimator, X, *, n_jobs=None):
    """Exact SHAP values of a fitted model's predictions of ``X``.

    Parameters
    ----------
    estimator : MMIT, MMITForest or MMITBoost
        A fitted model of constant leaves.
    X : array-like of shape (n_samples, n_features)
        The rows to explain (NaN: a missing value, routed as the model
        routes it).
    n_jobs : int, default=None
        Threads over the rows (joblib semantics).

    Returns
    -------
    explanation : Explanation
    """
    if not isinstance(estimator, (MMIT, MMITForest, MMITBoost)):
        raise TypeError(f"shap_values explains MMIT, MMITForest and MMITBoost, not "
                        f"{type(estimator).__name__}.")
    check_is_fitted(estimator)
    trees, scales, offset = tree_terms(estimator)
    X = estimator._validate_X_predict(X)
    values = np.zeros(X.shape)
    tree_shap(trees, np.ascontiguousarray(scales, dtype=np.float64), X, values,
              effective_n_jobs(n_jobs))
    base = offset + sum(scale * expected_value(tree)
                        for tree, scale in zip(trees, scales, strict=True))
    names = getattr(estimator, "feature_names_in_", None)
    names = ([str(name) for name in names] if names is not None
             else [f"x{j}" for j in range(X.shape[1])])
    return Explanation(values, np.full(X.shape[0], base), X, names)
