"""SHAP values of mmit's models: why each prediction is what it is.

Shapley values are linear in the model, so every model is explained
through what its prediction adds up, which the model says itself: its
explainer (``__mmit_shap__()``, the protocol of
``mmit._utils._protocols``), which gives each row's exact values. The
explainers of mmit's models:

- a tree model (a tree, a forest's mean of trees, boosting's constant plus
  shrunk trees; also the tree or forest a search chose): exact
  path-dependent TreeSHAP over its trees (``mmit.tree._treeshap``,
  compiled, on threads), the node covers its training weights
  (:class:`~mmit.tree.AdditiveTrees`);
- a linear model, ``x.coef_ + intercept_`` on columns clipped to their
  training range, exactly: ``coef_ * (clip(x) - training mean)`` per
  column, a categorical feature's one-hot columns (and, behind a
  :class:`MeanImputer`, a feature's missing-value indicator) summed into
  their feature;
- a stack: the weighted sum of its members' values.

Interaction values follow the same sums; a linear model has none (its
values lie on the diagonal).
"""

from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs

from .._utils._protocols import explainer_of


@dataclass(frozen=True)
class Explanation:
    """SHAP values of a model's predictions (made by :func:`shap_values`).

    Attributes
    ----------
    values : ndarray of shape (n_samples, n_features) or \
(n_samples, n_features, n_features)
        Each feature's contribution to each prediction; with interactions,
        the SHAP interaction values, whose rows sum to the contributions
        (``values.sum(axis=2)``).
    base_values : ndarray of shape (n_samples,)
        The model's expected prediction (the same for every row):
        ``values.sum(axis=1) + base_values`` is the prediction.
    data : ndarray of shape (n_samples, n_features)
        The rows explained, as the model reads them (a categorical feature
        as its category codes, NaN for a missing value).
    feature_names : list of str
        The features' names (``x<j>`` when the model was fitted without).
    """

    values: np.ndarray
    base_values: np.ndarray
    data: np.ndarray
    feature_names: list

    @property
    def contributions(self):
        """The SHAP values, (n_samples, n_features), also when ``values``
        holds interactions."""
        return self.values if self.values.ndim == 2 else self.values.sum(axis=2)

    @property
    def importances(self):
        """Mean absolute contribution of each feature over the rows: a global
        importance, with the prediction's unit."""
        return np.mean(np.abs(self.contributions), axis=0)

    def to_shap(self):
        """The same values as a ``shap.Explanation``, for shap's plots
        (beeswarm, waterfall, scatter). Needs shap (``pip install
        scikit-mmit[explain]``)."""
        try:
            import shap
        except ImportError as error:
            raise ImportError("Explanation.to_shap needs shap: "
                              "pip install 'scikit-mmit[explain]'") from error
        return shap.Explanation(values=self.values, base_values=self.base_values,
                                data=self.data, feature_names=list(self.feature_names))


def shap_values(estimator, X, *, interactions=False, n_jobs=None):
    """Exact SHAP values of a fitted model's predictions of ``X``.

    The values of a row add up, with the base value, to its prediction.
    Tree models get path-dependent TreeSHAP (Lundberg et al. 2020): a
    feature left out of a coalition sends the row down both sides of its
    splits, in proportion to the training weight of each side, and a row
    follows the tree's own routing (missing values to their learned side,
    categorical splits by category). A forest's values are the mean of its
    trees' values; boosting's, the shrunk sum. A linear leaf's term
    ``slope_j * (x_j - center_j)`` counts when feature j is in the
    coalition and is zero when it is not (where the leaf puts a missing
    value). A linear model's values are ``coef_ * (x - training mean)``
    (the features clipped to their training range when the model clips
    them). A stack's values are the weighted sum of its members' values.

    Parameters
    ----------
    estimator : estimator
        A fitted mmit model that explains itself (its ``__mmit_shap__``:
        MMIT, MMITForest, MMITBoost, MMITCV, MMITForestCV,
        IntervalLinearRegression(CV), IntervalStackingRegressor, its
        members any of these), or a pipeline of MeanImputer and a linear
        model.
    X : array-like of shape (n_samples, n_features)
        The rows to explain, as the model's ``predict`` takes them.
    interactions : bool, default=False
        Give the SHAP interaction values, (n_samples, n_features,
        n_features), instead: entry (j, k) is half the effect of features j
        and k together beyond their separate effects, the diagonal each
        feature's own effect, and each row sums to the feature's value.
        O(n_features) times the cost of the values for trees.
    n_jobs : int, default=None
        Threads over the rows (joblib's convention: None is 1, -1 every
        core). The values do not depend on it.

    Returns
    -------
    explanation : Explanation
        ``values``, ``base_values``, ``data`` and ``feature_names``;
        ``explanation.to_shap()`` gives shap's own ``Explanation``.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import MMITForest, shap_values
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = np.column_stack([X[:, 0] - 1, X[:, 0] + 1])
    >>> forest = MMITForest(n_estimators=20, random_state=0).fit(X, y)
    >>> explanation = shap_values(forest, X[:5])
    >>> bool(np.allclose(explanation.values.sum(axis=1) + explanation.base_values,
    ...                  forest.predict(X[:5])))
    True
    >>> int(np.argmax(explanation.importances))
    0
    """
    if not isinstance(interactions, bool):
        raise TypeError(f"interactions must be True or False, not {interactions!r}.")
    explainer = explainer_of(estimator)
    values, base = explainer.contributions(X, interactions, effective_n_jobs(n_jobs))
    data = explainer.rows(X)
    names = getattr(estimator, "feature_names_in_", None)
    names = ([str(name) for name in names] if names is not None
             else [f"x{j}" for j in range(data.shape[1])])
    return Explanation(values, np.broadcast_to(base, data.shape[0]).astype(np.float64),
                       data, names)


def shap_tree_dictionary(estimator):
    """A tree model's trees in shap's ``TreeExplainer`` dictionary format
    (numeric splits and constant leaves), scaled by their weights, and its
    constant as ``base_offset``: shap's own TreeSHAP on the same trees."""
    trees = explainer_of(estimator).terms
    described = []
    for tree, weight in zip(trees.trees, trees.weights, strict=True):
        left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
        if tree.node_models is not None or np.any(tree.is_categorical):
            raise ValueError("shap's dictionary format holds numeric splits and "
                             "constant leaves only.")
        described.append({
            "children_left": left, "children_right": right,
            "children_default": np.where(np.asarray(tree.missing_go_to_left, bool),
                                         left, right),
            "features": np.where(left < 0, -2, np.asarray(tree.feature)),
            "thresholds": np.asarray(tree.threshold),
            "values": (np.asarray(tree.value) * weight)[:, np.newaxis],
            "node_sample_weight": np.asarray(tree.weighted_n_node_samples)})
    return {"trees": described, "base_offset": trees.constant}
