"""SHAP values of mmit's models: why each prediction is what it is.

Shapley values are linear in the model, so every model is explained
through the parts its prediction adds up, which the model lists itself
(``__mmit_shap__()``, this module's protocol):

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

The protocol: a fitted model's ``__mmit_shap__()`` returns its parts, one
of an :class:`~mmit.tree.AdditiveTrees` (the tree models), a
``LinearTerms`` (the linear models), a list of ``(weight, model)`` pairs
(a stack's members) or another model explained in its place (a search's
chosen model). A scikit-learn ``Pipeline`` of imputers (steps with
``output_features``, as :class:`~mmit.MeanImputer`) and a linear model is
explained through its last step, each term going to the input feature its
column comes from.
"""

from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from sklearn.pipeline import Pipeline

from .._utils._base import rows_as_read
from .._utils._categorical import is_dataframe, non_numeric_columns, numeric_values
from ..linear_model._linear import LinearTerms
from ..tree._additive import AdditiveTrees
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
    data = data_of(estimator, X)
    names = getattr(estimator, "feature_names_in_", None)
    names = ([str(name) for name in names] if names is not None
             else [f"x{j}" for j in range(data.shape[1])])
    return Explanation(values, np.full(data.shape[0], base), data, names)


def parts_of(estimator):
    """What a fitted model's prediction adds up (this module's protocol,
    ``__mmit_shap__``); TypeError for a model it does not explain."""
    if isinstance(estimator, Pipeline):
        *imputers, model = (step for _, step in estimator.steps)
        parts = parts_of(model)
        if all(hasattr(step, "output_features") for step in imputers) and isinstance(
                parts, LinearTerms):
            return parts
    elif hasattr(estimator, "__mmit_shap__"):
        return estimator.__mmit_shap__()
    raise TypeError(f"shap_values explains {EXPLAINED}; not {type(estimator).__name__}.")


def check_explained(estimator):
    """TypeError unless ``estimator`` is a model :func:`shap_values` explains,
    its parts included; NotFittedError unless it is fitted."""
    parts = parts_of(estimator)
    if isinstance(parts, list):
        for _, member in parts:
            check_explained(member)
    elif not isinstance(parts, (AdditiveTrees, LinearTerms)):
        check_explained(parts)


def data_of(estimator, X):
    """The rows of ``X`` as numbers, the way the model reads them: a
    categorical feature as its category codes, NaN for a missing value (a
    stack: as its first member reads them)."""
    parts = parts_of(estimator)
    if isinstance(parts, list):
        return data_of(parts[0][1], X)
    if not isinstance(estimator, Pipeline):
        return rows_as_read(estimator, X)
    passed = non_numeric_columns(X)
    rows = numeric_values(estimator[0], X, passed, reset=False)
    if passed is not None and passed.any():  # the codes of the model behind
        codes = rows_as_read(estimator[-1], estimator[:-1].transform(X))
        rows[:, passed] = codes[:, :rows.shape[1]][:, passed]
    return rows


def contributions(estimator, X, interactions, n_threads):
    """The values (or interaction values) and the base value."""
    parts = parts_of(estimator)
    if isinstance(parts, list):
        return stack_contributions(estimator, parts, X, interactions, n_threads)
    if isinstance(parts, LinearTerms):
        values, base = linear_contributions(estimator, parts, X)
        return (np.einsum("ij,jk->ijk", values, np.eye(values.shape[1]))
                if interactions else values), base
    if not isinstance(parts, AdditiveTrees):  # another model in its place
        return contributions(parts, X, interactions, n_threads)
    X = rows_as_read(estimator, X)
    trees, weights = parts.trees, np.ascontiguousarray(parts.weights)
    values = np.zeros(X.shape)
    tree_shap(trees, weights, X, values, False, n_threads)
    if interactions:
        n_samples, n_features = X.shape
        pairs = np.zeros((n_samples, n_features * n_features))
        tree_shap(trees, weights, X, pairs, True, n_threads)
        pairs = pairs.reshape(n_samples, n_features, n_features)
        diagonal = np.arange(n_features)
        pairs[:, diagonal, diagonal] = values - pairs.sum(axis=2)
        values = pairs
    base = parts.constant + sum(weight * expected_value(tree)
                                for tree, weight in zip(trees, weights, strict=True))
    return values, base


def expected_value(tree):
    """A tree's prediction with no feature known: its leaves' values
    weighted by their covers (a linear leaf's terms are zero then)."""
    leaves = np.asarray(tree.children_left) < 0
    covers = np.asarray(tree.weighted_n_node_samples)
    return float(np.sum(np.asarray(tree.value)[leaves] * covers[leaves]) / covers[0])


def linear_contributions(estimator, terms, X):
    """A linear model's exact values (its ``terms`` summed per feature),
    behind the imputers of a pipeline if any."""
    model = terms.model
    Z, n_features = X, model.n_features_in_
    feature_of_input = np.arange(n_features)  # of the linear model's inputs
    if isinstance(estimator, Pipeline):
        n_features = estimator.n_features_in_
        for imputer in reversed(estimator[:-1]):
            feature_of_input = imputer.output_features()[feature_of_input]
        Z = estimator[:-1].transform(X)
    Z = rows_as_read(model, Z)
    feature_of_column = feature_of_input[terms.feature_of_column()]
    values = np.zeros((Z.shape[0], n_features))
    np.add.at(values.T, feature_of_column, terms.terms(Z).T)
    return values, terms.constant


def stack_contributions(stack, members, X, interactions, n_threads):
    """The weighted sum of the members' values and base values."""
    if not is_dataframe(X):
        X = rows_as_read(stack, X)
    total, base = 0.0, 0.0
    for weight, member in members:
        if weight > 0.0:
            values, member_base = contributions(member, X, interactions, n_threads)
            total = total + weight * values
            base += weight * member_base
    return total, base


def shap_tree_dictionary(estimator):
    """A tree model's trees in shap's ``TreeExplainer`` dictionary format
    (numeric splits and constant leaves), scaled by their weights, and its
    constant as ``base_offset``: shap's own TreeSHAP on the same trees."""
    parts = parts_of(estimator)
    described = []
    for tree, weight in zip(parts.trees, parts.weights, strict=True):
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
    return {"trees": described, "base_offset": parts.constant}
