"""SHAP values of mmit's models: why each prediction is what it is.

Shapley values are linear in the model, so every model is explained
through the parts its prediction adds up:

- a tree model (a tree, a forest's mean of trees, boosting's constant plus
  shrunk trees; also the tree or forest a search chose) by exact
  path-dependent TreeSHAP over its trees (``_treeshap``, compiled, on
  threads), the node covers its training weights;
- a linear model, ``x.coef_ + intercept_`` on columns clipped to their
  training range, exactly: ``coef_ * (clip(x) - training mean)`` per
  column, a categorical feature's one-hot columns (and, behind a
  :class:`MeanImputer`, a feature's missing-value indicator) summed into
  their feature;
- a stack by the weighted sum of its members' values.

Interaction values follow the same sums; a linear model has none (its
values lie on the diagonal).
"""

from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from .._utils._categorical import fitted_encoding, is_dataframe, non_numeric_columns
from ..ensemble._boosting import MMITBoost
from ..ensemble._forest import MMITForest
from ..ensemble._forest_cv import MMITForestCV
from ..ensemble._stacking import IntervalStackingRegressor
from ..linear_model._imputation import MeanImputer
from ..linear_model._linear import _LinearPredictor, one_hot, one_hot_features
from ..tree._classes import MMIT
from ..tree._mmit_cv import MMITCV
from ._treeshap import tree_shap

EXPLAINED = ("MMIT, MMITForest, MMITBoost, MMITCV, MMITForestCV, "
             "IntervalLinearRegression(CV), IntervalStackingRegressor and pipelines of "
             "MeanImputer and a linear model")


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
        A fitted MMIT, MMITForest, MMITBoost, MMITCV, MMITForestCV,
        IntervalLinearRegression(CV) or IntervalStackingRegressor (its
        members any of these, or a linear model behind a MeanImputer).
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
    check_explained(estimator)
    values, base = contributions(estimator, X, interactions, effective_n_jobs(n_jobs))
    data = rows_as_read(estimator, X)
    names = getattr(estimator, "feature_names_in_", None)
    names = ([str(name) for name in names] if names is not None
             else [f"x{j}" for j in range(data.shape[1])])
    return Explanation(values, np.full(data.shape[0], base), data, names)


def check_explained(estimator):
    """TypeError unless ``estimator`` is a model :func:`shap_values` explains,
    its parts included; NotFittedError unless it is fitted."""
    if isinstance(estimator, (MMIT, MMITForest, MMITBoost, MMITCV, MMITForestCV,
                              _LinearPredictor)):
        check_is_fitted(estimator)
    elif isinstance(estimator, IntervalStackingRegressor):
        check_is_fitted(estimator)
        for member in estimator.estimators_:
            check_explained(member)
    elif (isinstance(estimator, Pipeline)
          and all(isinstance(step, MeanImputer) for _, step in estimator.steps[:-1])
          and isinstance(estimator[-1], _LinearPredictor)):
        check_is_fitted(estimator[-1])
    else:
        raise TypeError(f"shap_values explains {EXPLAINED}; not "
                        f"{type(estimator).__name__}.")


def rows_as_read(estimator, X):
    """The rows of ``X`` as numbers, the way the model reads them: a
    categorical feature as its category codes, NaN for a missing value (a
    stack: as its first member reads them)."""
    if isinstance(estimator, IntervalStackingRegressor):
        return rows_as_read(estimator.estimators_[0], X)
    if not isinstance(estimator, Pipeline):
        return estimator._validate_X_predict(X)
    imputer = estimator[0]
    passed = non_numeric_columns(X)
    rows = imputer._numeric(X, passed, reset=False)
    if passed is not None and passed.any():  # the codes of the model behind
        codes = estimator[-1]._validate_X_predict(estimator[:-1].transform(X))
        rows[:, passed] = codes[:, :rows.shape[1]][:, passed]
    return rows


def contributions(estimator, X, interactions, n_threads):
    """The values (or interaction values) and the base value."""
    if isinstance(estimator, (MMITCV, MMITForestCV)):  # the model it chose
        return contributions(estimator.best_estimator_, X, interactions, n_threads)
    if isinstance(estimator, IntervalStackingRegressor):
        return stack_contributions(estimator, X, interactions, n_threads)
    if isinstance(estimator, (Pipeline, _LinearPredictor)):
        values, base = linear_contributions(estimator, X)
        return (np.einsum("ij,jk->ijk", values, np.eye(values.shape[1]))
                if interactions else values), base
    X = estimator._validate_X_predict(X)
    trees, scales, offset = tree_terms(estimator)
    scales = np.ascontiguousarray(scales, dtype=np.float64)
    values = np.zeros(X.shape)
    tree_shap(trees, scales, X, values, False, n_threads)
    if interactions:
        n_samples, n_features = X.shape
        pairs = np.zeros((n_samples, n_features * n_features))
        tree_shap(trees, scales, X, pairs, True, n_threads)
        pairs = pairs.reshape(n_samples, n_features, n_features)
        diagonal = np.arange(n_features)
        pairs[:, diagonal, diagonal] = values - pairs.sum(axis=2)
        values = pairs
    base = offset + sum(scale * expected_value(tree)
                        for tree, scale in zip(trees, scales, strict=True))
    return values, base


def tree_terms(estimator):
    """The trees of a fitted tree model, each tree's weight in its prediction
    and the constant added: (trees, scales, offset)."""
    if isinstance(estimator, MMIT):
        return [estimator.tree_], np.ones(1), 0.0
    trees = [tree.tree_ for tree in estimator.estimators_]
    if isinstance(estimator, MMITForest):
        return trees, np.full(len(trees), 1.0 / len(trees)), 0.0
    return (trees, np.full(len(trees), estimator.learning_rate),  # MMITBoost
            float(estimator.baseline_prediction_))


def expected_value(tree):
    """A tree's prediction with no feature known: its leaves' values
    weighted by their covers (a linear leaf's terms are zero then)."""
    leaves = np.asarray(tree.children_left) < 0
    covers = np.asarray(tree.weighted_n_node_samples)
    return float(np.sum(np.asarray(tree.value)[leaves] * covers[leaves]) / covers[0])


def linear_contributions(estimator, X):
    """A linear model's exact values, ``coef_ * (clip(x) - training mean)``
    summed per feature, behind the MeanImputers of a pipeline if any."""
    model = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    if getattr(model, "data_mean_", None) is None:
        raise ValueError("This linear model has no training means (a model file of an "
                         "older mmit): fit it again to explain it.")
    Z, n_features = X, model.n_features_in_
    feature_of_input = np.arange(n_features)  # of the linear model's inputs
    if isinstance(estimator, Pipeline):
        n_features = estimator.n_features_in_
        for imputer in reversed(estimator[:-1]):
            feature_of_input = imputer.output_features()[feature_of_input]
        Z = estimator[:-1].transform(X)
    Z = model._validate_X_predict(Z)
    categories = fitted_encoding(model)[1]
    columns = one_hot(Z, categories)
    if model.clip_features:
        columns = np.clip(columns, model.data_min_, model.data_max_)
    feature_of_column = feature_of_input[one_hot_features(categories, Z.shape[1])]
    values = np.zeros((Z.shape[0], n_features))
    np.add.at(values.T, feature_of_column, (model.coef_ * (columns - model.data_mean_)).T)
    return values, float(model.intercept_ + model.coef_ @ model.data_mean_)


def stack_contributions(stack, X, interactions, n_threads):
    """The weighted sum of the members' values and base values."""
    if not is_dataframe(X):
        X = stack._validate_X_predict(X)
    total, base = 0.0, 0.0
    for weight, member in zip(stack.weights_, stack.estimators_, strict=True):
        if weight > 0.0:
            values, member_base = contributions(member, X, interactions, n_threads)
            total = total + weight * values
            base += weight * member_base
    return total, base


def shap_tree_dictionary(estimator):
    """A tree model's trees in shap's ``TreeExplainer`` dictionary format
    (numeric splits and constant leaves), scaled by their weights, and its
    constant as ``base_offset``: shap's own TreeSHAP on the same trees."""
    trees, scales, offset = tree_terms(estimator)
    described = []
    for tree, scale in zip(trees, scales, strict=True):
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
            "values": (np.asarray(tree.value) * scale)[:, np.newaxis],
            "node_sample_weight": np.asarray(tree.weighted_n_node_samples)})
    return {"trees": described, "base_offset": offset}
