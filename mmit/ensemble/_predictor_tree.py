"""The fitted tree of a TreeOfPredictors (:class:`PredictorTree`): one entry
per node, each node's predictor (a member of the library, or the convex mix
of the members, :class:`MemberMix`, trained on a node of its path) and each
leaf's weights of the predictors on its path."""

from dataclasses import dataclass

import numpy as np

from .._utils._protocols import WeightedExplainer

LEAF = -1
MIX = -2  # a node's predictor that is the convex mix of the members


class MemberMix:
    """A node's predictor that mixes members: the convex combination
    ``weights`` of ``estimators`` (the library's members fitted on the
    rows of the node it was trained on, those of positive weight)."""

    def __init__(self, estimators, weights):
        self.estimators = estimators
        self.weights = np.asarray(weights, dtype=np.float64)

    @property
    def n_features_in_(self):
        return self.estimators[0].n_features_in_

    def predict(self, X):
        """The weighted sum of the members' predictions."""
        return sum(weight * estimator.predict(X)
                   for weight, estimator in zip(self.weights, self.estimators, strict=True))

    def __mmit_shap__(self):
        """The weighted sum of the members' explanations, of rows the tree of
        predictors has read (its first member, a pipeline of an imputer say,
        may refuse the NaN the tree takes)."""
        return WeightedExplainer(None, list(zip(self.weights, self.estimators,
                                                strict=True)))


@dataclass
class PredictorTree:
    """The fitted tree of a :class:`TreeOfPredictors`, one entry per node
    (node 0 the root; a parent before its children).

    Attributes
    ----------
    node_count : int
    children_left, children_right : ndarray of int
        The children of a split node (-1 at a leaf); the left child takes
        the rows whose feature value is at most the threshold.
    parent : ndarray of int
        -1 at the root.
    feature : ndarray of int
        The feature of the split (-1 at a leaf).
    threshold : ndarray of float
        The threshold of the split (NaN at a leaf).
    missing_left : ndarray of bool
        Whether a missing value of the feature goes left (the side of more
        training weight).
    algorithm : ndarray of int
        The node's predictor: its member of the library (an index of
        ``estimator_names_``), or -2 for the convex mix of the members (the
        stack of the node's region: ``member_weights``) ...
    trained_on : ndarray of int
        ... and the node whose training rows it was trained on (the node
        itself or an ancestor).
    member_weights : ndarray of shape (node_count, n_members)
        The weights of the members in the node's predictor (one 1 for a
        member; the mix's convex weights, fitted on the held-out predictions
        of the rows of the node it was trained on).
    n_node_samples : ndarray of int
        The training rows of the node.
    loss : ndarray of float
        The held-out loss of the node's predictor on the node's scored rows
        (weighted sum).
    gain : ndarray of float
        The node's loss minus its children's (0 at a leaf): positive at
        every split.
    path_weights : ndarray of shape (node_count, max_depth + 1)
        At a leaf, the weights of the predictors of its path, from the root
        to the leaf (non-negative, summing to one; 0 beyond the path); 0 at
        a split node.
    """

    children_left: np.ndarray
    children_right: np.ndarray
    parent: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    algorithm: np.ndarray
    trained_on: np.ndarray
    member_weights: np.ndarray
    n_node_samples: np.ndarray
    loss: np.ndarray
    gain: np.ndarray
    path_weights: np.ndarray

    ARRAYS = ("children_left", "children_right", "parent", "feature", "threshold",
              "missing_left", "algorithm", "trained_on", "member_weights", "n_node_samples",
              "loss", "gain", "path_weights")

    @property
    def node_count(self):
        return self.children_left.shape[0]

    def path(self, node):
        """The nodes from the root to ``node``."""
        nodes = [node]
        while self.parent[nodes[-1]] != LEAF:
            nodes.append(int(self.parent[nodes[-1]]))
        return nodes[::-1]

    def leaves_of(self, columns):
        """The leaf of every row of ``columns`` (a function of a feature index
        giving its values of the rows)."""
        leaf = np.zeros(columns(None), dtype=np.intp)
        for node in range(self.node_count):  # parents first
            if self.children_left[node] == LEAF:
                continue
            here = np.flatnonzero(leaf == node)
            if here.size == 0:
                continue
            values = columns(self.feature[node])[here]
            left = values <= self.threshold[node]
            if self.missing_left[node]:
                left |= np.isnan(values)
            leaf[here] = np.where(left, self.children_left[node], self.children_right[node])
        return leaf

    def check(self, n_features, n_algorithms):
        """ValueError unless the arrays make a tree of ``n_features`` features
        and ``n_algorithms`` members (a model file's)."""
        n = self.node_count
        if n < 1 or any(getattr(self, name).shape[0] != n for name in self.ARRAYS):
            raise ValueError("the tree's arrays do not match")
        split = self.children_left != LEAF
        nodes = np.flatnonzero(split)
        children = np.r_[self.children_left[split], self.children_right[split]]
        if (children.size != n - 1 or np.unique(children).size != children.size
                or np.any(children <= np.r_[nodes, nodes]) or np.any(children >= n)
                or np.any(self.parent[children] != np.r_[nodes, nodes])
                or self.parent[0] != LEAF):
            raise ValueError("the tree's nodes do not make a tree")
        if np.any((self.feature[split] < 0) | (self.feature[split] >= n_features)):
            raise ValueError("a split's feature is out of range")
        if (np.any(((self.algorithm < 0) & (self.algorithm != MIX))
                   | (self.algorithm >= n_algorithms))
                or self.member_weights.shape != (n, n_algorithms)):
            raise ValueError("a node's predictor is out of range")
        member = self.algorithm != MIX
        if (np.any(self.member_weights < 0)
                or np.any(np.abs(self.member_weights.sum(axis=1) - 1.0) > 1e-9)
                or np.any(self.member_weights[member, self.algorithm[member]] != 1.0)):
            raise ValueError("a node's member weights are not convex")
        for node in range(n):
            if self.trained_on[node] not in self.path(node):
                raise ValueError("a node's predictor was trained off its path")
        weights = self.path_weights[~split]
        if np.any(weights < 0) or np.any(np.abs(weights.sum(axis=1) - 1.0) > 1e-9):
            raise ValueError("the path weights are not convex")
