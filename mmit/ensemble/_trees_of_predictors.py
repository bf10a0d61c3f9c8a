"""TreeOfPredictors: a tree whose every node holds the model of a library that
predicts its region best, its leaves weighing the models on their path
(trees of predictors, Yoon, Zame and van der Schaar 2018).

The search (:class:`_Grower`) grows the tree breadth first. Every node it
looks at gets, from each member of the library, held-out predictions of
its rows by the member trained on its rows: out-of-fold predictions on the
node's rows (``validation`` an int: the folds of all rows, restricted to
the node; a forest or a linear CV gives them in one fit through the
protocol ``__mmit_fold_predictions__``), or, with the paper's
``validation="holdout"``, predictions of the node's rows outside the
training set by the member trained on the node's training rows; the
node's mix of members is their convex combination fitted on those
predictions (the stack's combiner). A node's predictor is the pair (member
or mix, node trained on) among the node and its ancestors with the least
held-out loss on its scored rows; a split is kept
when its children's least losses sum to less than the node's. The
candidate splits are the features' quantiles (``thresholds``); with
``n_candidates`` they are first ranked by the exact MMIT criterion (the
optimal constants' cost of both sides, :func:`mmit.compute_optimal_costs`
over the sorted rows) and the library is trained on the best few.
"""

import sys
import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import _fit_context
from sklearn.model_selection import KFold
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import _BaseComposition
from sklearn.utils.validation import check_is_fitted, validate_data

from .._loss._loss import LOSSES, breakpoints
from .._utils._base import IntervalRegressorMixin, set_init_parameters
from .._utils._categorical import is_dataframe, validate_features
from .._utils._dask_collections import by_partitions
from .._utils._docstrings import fill_doc
from .._utils._protocols import RowWeightedExplainer, WeightedExplainer
from .._utils._sparse import by_row_blocks
from .._utils._validation import validate_training_data
from ..linear_model._linear import IntervalLinearRegressionCV
from ..tree._export import resolve_feature_names
from ..tree._growing import draw_seed
from ._bagging import rows_without_out_of_bag_prediction_ignored
from ._boosting import MMITBoost
from ._combiner import simplex_weights
from ._distribution_strategies import SpreadDistribution
from ._distributions import ForestDistribution
from ._forest import MMITForest
from ._held_out_distributions import HeldOutDistributionMixin, held_out_distribution
from ._stacking import (
    checked_predictions,
    fit_member,
    listed_members,
    members_to_fit,
    one_fit_plan,
)

#: The quantile levels of the candidate thresholds of a feature (the paper's
#: deciles).
DECILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: The paper's shares of the training set and of the two validation sets
#: (``validation="holdout"``).
HOLDOUT_SHARES = (0.75, 0.15, 0.10)
TRAINING, STRUCTURE, WEIGHTS = 0, 1, 2  # the holdout roles of the rows
LEAF = -1
MIX = -2  # a node's predictor that is the convex mix of the members


def default_library(random_state):
    """The default members, each seeded from ``random_state`` (the evidence
    behind them: the defaults page of the docs)."""
    return [
        ("linear", IntervalLinearRegressionCV()),
        ("forest", MMITForest(n_estimators=50, random_state=draw_seed(random_state))),
        ("boost", MMITBoost(n_estimators=30, learning_rate=0.15,
                            random_state=draw_seed(random_state))),
    ]


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


@dataclass
class _Node:
    """A node of the search: its rows (indices of all rows), its ancestors
    (search nodes, root first) and, once evaluated, each member's held-out
    predictions of every row (NaN off the node's held-out rows) and the
    members fitted on its rows (None for one fitted fold by fold)."""

    rows: np.ndarray
    ancestors: list
    predictions: np.ndarray = None
    fitted: list = None
    mix_weights: np.ndarray = None  # the convex mix of its members
    choice: tuple = None  # (member or the mix, index in the lineage of the node trained on)
    loss: float = np.inf
    split: tuple = None  # (feature, threshold, missing_left, left, right)
    index: int = -1

    @property
    def lineage(self):
        return [*self.ancestors, self]

    @property
    def depth(self):
        return len(self.ancestors)


class _KFoldRows:
    """Held-out predictions out of fold: the folds of all rows restricted to a
    node (each row predicted by the member fitted on the node's other
    folds)."""

    def __init__(self, n_folds, n_samples, seed):
        self.n_folds = n_folds
        self.fold = np.empty(n_samples, dtype=np.intp)
        for k, (_, test) in enumerate(KFold(n_folds, shuffle=True, random_state=seed)
                                      .split(np.zeros((n_samples, 1)))):
            self.fold[test] = k

    def node_splits(self, rows):
        """The (train, test) splits of a node's rows (positions in ``rows``),
        one per fold that holds some of them."""
        folds = self.fold[rows]
        return [(np.flatnonzero(folds != k), np.flatnonzero(folds == k))
                for k in np.unique(folds)]

    def admissible(self, rows):
        return np.unique(self.fold[rows]).size >= 2

    def scored(self, rows):
        return rows

    def weighting(self, rows):
        return rows

    def training(self, rows):
        return rows


class _HoldoutRows:
    """The paper's held-out predictions: the rows split once into a training
    set, a validation set of the structure and one of the path weights; a
    member is trained on a node's training rows and predicts its others."""

    def __init__(self, n_samples, seed):
        order = np.random.default_rng(seed).permutation(n_samples)
        ends = np.round(np.cumsum(HOLDOUT_SHARES) * n_samples).astype(np.intp)
        self.role = np.empty(n_samples, dtype=np.intp)
        self.role[order[:ends[0]]] = TRAINING
        self.role[order[ends[0]:ends[1]]] = STRUCTURE
        self.role[order[ends[1]:]] = WEIGHTS

    def admissible(self, rows):
        roles = self.role[rows]
        return np.sum(roles == TRAINING) >= 2 and np.any(roles == STRUCTURE)

    def scored(self, rows):
        return rows[self.role[rows] == STRUCTURE]

    def weighting(self, rows):
        return rows[self.role[rows] == WEIGHTS]

    def training(self, rows):
        return rows[self.role[rows] == TRAINING]


def _fit_member_on(key, estimator, plan, X, y, weight, train, test, keep=True):
    """One task: a clone of ``estimator`` fitted on the rows ``train`` (with
    ``plan``, a ``OneFitFoldPredictions``: the parameters its one fit needs),
    and its held-out predictions: those of the plan's attribute (of the
    rows ``train``), or its predictions of the rows ``test`` (None: none);
    the fitted model with ``keep`` (else None)."""
    model = estimator.__sklearn_clone__()
    if plan is not None:
        prefix = f"{model.steps[-1][0]}__" if hasattr(model, "steps") else ""
        model.set_params(**{prefix + key_: value for key_, value in plan.params.items()})
    with rows_without_out_of_bag_prediction_ignored():
        fit_member(model, _safe_indexing(X, train), _safe_indexing(y, train),
                   None if weight is None else weight[train])
    if plan is not None:
        final = model[-1] if hasattr(model, "steps") else model
        return key, train, getattr(final, plan.attribute), model
    kept = model if keep else None
    if test is None:
        return key, None, None, kept
    return key, test, model.predict(_safe_indexing(X, test)), kept


class _Grower:
    """The search of a :class:`TreeOfPredictors` on its training rows (module
    doc); ``grow()`` returns the kept nodes, parents first."""

    def __init__(self, owner, X, columns, splittable, y, lower, upper, weight,
                 member_weight, members, held_out, parallel):
        self.owner, self.X, self.columns, self.y = owner, X, columns, y
        self.splittable = splittable
        self.lower, self.upper, self.weight = lower, upper, weight
        self.member_weight = member_weight
        self.members, self.held_out, self.parallel = members, held_out, parallel
        self.loss = LOSSES[owner.loss]
        self.hinge_lower, self.hinge_upper = breakpoints(lower, upper, owner.margin)
        self.min_rows = owner.min_samples_leaf
        self.start = time.perf_counter()
        self.n_fits = 0

    # -- held-out predictions and losses ---------------------------------

    def evaluate(self, nodes):
        """Give each of ``nodes`` every member's held-out predictions (one
        batch of fits in parallel)."""
        tasks = []
        n_members = len(self.members)
        for position, node in enumerate(nodes):
            node.predictions = np.full((self.weight.shape[0], n_members + 1), np.nan)
            node.fitted = [None] * n_members
            tasks += self._tasks(position, node)
        self.n_fits += len(tasks)
        for (position, member), rows, predictions, model in self.parallel(tasks):
            node = nodes[position]
            if rows is not None:
                name = self.members[member][0]
                node.predictions[node.rows[rows], member] = checked_predictions(
                    predictions, name)
            if model is not None:
                node.fitted[member] = model
        for node in nodes:
            self._mix(node)

    def _mix(self, node):
        """The node's convex mix of its members (the stack of its region): the
        weights of their held-out predictions fitted on its scored rows
        (the last column of its predictions)."""
        rows = self.held_out.scored(node.rows)
        rows = rows[self.weight[rows] > 0]
        members = node.predictions[:, :len(self.members)]
        if rows.size == 0:
            node.mix_weights = np.eye(len(self.members))[0]
        else:
            node.mix_weights = simplex_weights(members[rows], self.lower[rows],
                                               self.upper[rows], self.weight[rows])
        node.predictions[node.rows, -1] = members[node.rows] @ node.mix_weights

    def _tasks(self, position, node):
        """The fits that give a node's held-out predictions: on its training
        rows (holdout), or in one fit or one per fold (out of fold)."""
        rows = node.rows
        data = (self.X_of(rows), self.y[rows], self.weights_of(rows))
        if isinstance(self.held_out, _HoldoutRows):
            train = np.flatnonzero(self.held_out.role[rows] == TRAINING)
            test = np.flatnonzero(self.held_out.role[rows] != TRAINING)
            return [delayed(_fit_member_on)((position, member), estimator, None, *data,
                                            train, test)
                    for member, (_, estimator) in enumerate(self.members)]
        splits = self.held_out.node_splits(rows)
        tasks = []
        for member, (_, estimator) in enumerate(self.members):
            plan = one_fit_plan(estimator, "folds", rows.size, splits)
            if plan is not None:
                tasks.append(delayed(_fit_member_on)((position, member), estimator, plan,
                                                     *data, np.arange(rows.size), None))
            else:
                tasks += [delayed(_fit_member_on)((position, member), estimator, None,
                                                  *data, train, test, keep=False)
                          for train, test in splits]
        return tasks

    def X_of(self, rows):
        return _safe_indexing(self.X, rows)

    def weights_of(self, rows):
        return None if self.member_weight is None else self.member_weight[rows]

    def held_out_loss(self, rows, predictions):
        """The weighted loss of ``predictions`` of ``rows``."""
        return float(self.weight[rows] @ self.loss.value(
            self.hinge_lower[rows], self.hinge_upper[rows], predictions))

    def choose(self, node):
        """The node's predictor: the (member or the mix, node trained on) of
        its lineage with the least held-out loss on its scored rows (the
        node's own members first, then its parent's, ...; the mix after the
        members: the first of equal losses)."""
        scored = self.held_out.scored(node.rows)
        best = (np.inf, None)
        for level in range(node.depth, -1, -1):
            source = node.lineage[level]
            for member in range(len(self.members) + 1):
                loss = self.held_out_loss(scored, source.predictions[scored, member])
                if loss < best[0]:
                    best = (loss, (member, level))
        node.loss, node.choice = best

    # -- candidate splits ------------------------------------------------

    def candidate_splits(self, node):
        """The (feature, threshold, missing_left) splits of a node that leave
        ``min_samples_leaf`` rows on each side with held-out rows, best first
        by the exact MMIT criterion (the first ``n_candidates``; all with
        None)."""
        training = self.held_out.training(node.rows)
        candidates, costs = [], []
        for feature in np.flatnonzero(self.splittable):
            values = self.columns(feature)
            node_values = values[node.rows]
            present = ~np.isnan(node_values)
            train_values = values[training]
            train_present = training[~np.isnan(train_values)]
            if train_present.size < 2:
                continue
            thresholds = np.unique(np.quantile(values[train_present],
                                               self.owner.thresholds, method="lower"))
            order = train_present[np.argsort(values[train_present], kind="stable")]
            sorted_values = values[order]
            forward = self._prefix_costs(order)
            backward = self._prefix_costs(order[::-1])
            for threshold in thresholds:
                left = present & (node_values <= threshold)
                right = present & ~left
                left_weight = self.weight[node.rows[left]].sum()
                missing_left = bool(left_weight >= self.weight[node.rows[right]].sum())
                if missing_left:
                    left |= ~present
                else:
                    right |= ~present
                left_rows, right_rows = node.rows[left], node.rows[right]
                if (left_rows.size < self.min_rows or right_rows.size < self.min_rows
                        or not self.held_out.admissible(left_rows)
                        or not self.held_out.admissible(right_rows)):
                    continue
                k = int(np.searchsorted(sorted_values, threshold, side="right"))
                if k == 0 or k == order.size:
                    continue
                costs.append(forward[k - 1] + backward[order.size - k - 1])
                candidates.append((int(feature), float(threshold), missing_left,
                                   left_rows, right_rows))
        ranked = np.argsort(np.asarray(costs), kind="stable")
        if self.owner.n_candidates is not None:
            ranked = ranked[:self.owner.n_candidates]
        return [candidates[i] for i in ranked]

    def _prefix_costs(self, rows):
        """The optimal constant's cost of each prefix of ``rows``."""
        _, costs, _ = self.loss.optimal_costs(
            np.ascontiguousarray(self.lower[rows]), np.ascontiguousarray(self.upper[rows]),
            self.owner.margin, np.ascontiguousarray(self.weight[rows]))
        return costs

    # -- growth ------------------------------------------------------------

    def grow(self):
        root = _Node(np.arange(self.weight.shape[0]), [])
        self.evaluate([root])
        self.choose(root)
        root.index = 0
        kept, queue = [root], [root]
        while queue:
            node = queue.pop(0)
            if node.depth < self.owner.max_depth:
                self._split(node)
            if node.split is not None:
                for child in node.split[3:]:
                    child.index = len(kept)
                    kept.append(child)
                    queue.append(child)
            self._report(node)
        return kept

    def _split(self, node):
        """Set ``node.split`` to its best candidate split if that lowers the
        held-out loss by more than ``min_gain_se`` standard errors of its
        rows' paired loss differences."""
        candidates = self.candidate_splits(node)
        children = [(_Node(left, node.lineage), _Node(right, node.lineage))
                    for _, _, _, left, right in candidates]
        self.evaluate([child for pair in children for child in pair])
        best, best_loss = None, node.loss
        for (feature, threshold, missing_left, _, _), (left, right) in zip(
                candidates, children, strict=True):
            self.choose(left)
            self.choose(right)
            if left.loss + right.loss < best_loss and self._significant(node, left, right):
                best, best_loss = (feature, threshold, missing_left, left, right), \
                    left.loss + right.loss
        node.split = best

    def _significant(self, node, left, right):
        """Whether the children's held-out loss is below the node's by more
        than ``min_gain_se`` standard errors of the sum of the rows' weighted
        loss differences (always with 0, the paper's rule)."""
        if self.owner.min_gain_se == 0:
            return True
        difference = np.concatenate([self._row_losses(node, child.rows)
                                     - self._row_losses(child, child.rows)
                                     for child in (left, right)])
        if difference.size < 2:
            return True
        error = np.sqrt(difference.size) * difference.std(ddof=1)
        return bool(difference.sum() > self.owner.min_gain_se * error)

    def _row_losses(self, node, rows):
        """The weighted held-out loss of each of the node's scored ``rows``
        by its predictor."""
        rows = self.held_out.scored(rows)
        member, level = node.choice
        predictions = node.lineage[level].predictions[rows, member]
        return self.weight[rows] * self.loss.value(self.hinge_lower[rows],
                                                   self.hinge_upper[rows], predictions)

    def _report(self, node):
        if not self.owner.verbose:
            return
        member, level = node.choice
        trained_on = node.lineage[level].index
        name = "the mix" if member == len(self.members) else self.members[member][0]
        what = ("leaf" if node.split is None else
                f"split x{node.split[0]} <= {node.split[1]:.4g} (gain "
                f"{node.loss - node.split[3].loss - node.split[4].loss:.4g})")
        print(f"[TreeOfPredictors] node {node.index} (depth {node.depth}, "
              f"{node.rows.size} rows): {name} trained on node "
              f"{trained_on}, held-out loss {node.loss:.4g}; {what}; {self.n_fits} fits, "
              f"{time.perf_counter() - self.start:.1f} s elapsed",
              file=sys.stderr, flush=True)

    # -- the fitted model --------------------------------------------------

    def predictors(self, kept, refit):
        """The fitted predictor of every kept node (nodes with the same
        (member or mix, node trained on) share it): each member it weighs
        fitted on all rows of the node trained on (``refit``), else the one
        fitted for its held-out predictions when that saw all of them; a
        mix is a :class:`MemberMix` of its members."""
        n_members = len(self.members)
        sources = {}
        for node in kept:
            choice, level = node.choice
            source = node.lineage[level]
            weights = self.member_weights(node)
            sources.setdefault((choice, source.index), (source, weights))
        needed = {(member, source.index): source
                  for source, weights in sources.values()
                  for member in np.flatnonzero(weights > 0)}
        tasks = []
        for (member, index), source in needed.items():
            if source.fitted[member] is None or refit:
                rows = source.rows
                tasks.append(delayed(_fit_member_on)(
                    (member, index), self.members[member][1], None, self.X_of(rows),
                    self.y[rows], self.weights_of(rows), np.arange(rows.size), None))
        self.n_fits += len(tasks)
        fitted = {key: model for key, _, _, model in self.parallel(tasks)}
        models = {key: fitted.get(key, source.fitted[key[0]])
                  for key, source in needed.items()}
        predictors = {}
        for (choice, index), (_, weights) in sources.items():
            if choice < n_members:
                predictors[choice, index] = models[choice, index]
            else:
                used = np.flatnonzero(weights > 0)
                predictors[choice, index] = MemberMix(
                    [models[member, index] for member in used], weights[used])
        return [predictors[node.choice[0], node.lineage[node.choice[1]].index]
                for node in kept]

    def member_weights(self, node):
        """The weights of the members in a node's predictor."""
        choice, level = node.choice
        if choice == len(self.members):
            return node.lineage[level].mix_weights
        return np.eye(len(self.members))[choice]

    def held_out_predictions(self, kept, tree):
        """The held-out prediction of every row by the fitted ``tree``: its
        leaf's path weights applied to its path predictors' held-out
        predictions (NaN for a row without them: the training set's with
        ``validation="holdout"``)."""
        location = np.full(self.weight.shape[0], np.nan)
        for node in kept:
            if node.split is None:
                location[node.rows] = (self.path_predictions(node, node.rows)
                                       @ tree.path_weights[node.index, :node.depth + 1])
        return location

    def path_predictions(self, node, rows):
        """The held-out predictions of ``rows`` by the predictors of a node's
        path (a column each, root first: a mix's the mix of its members')."""
        return np.column_stack([
            path_node.lineage[path_node.choice[1]].predictions[rows, path_node.choice[0]]
            for path_node in node.lineage])

    def path_weights(self, node):
        """The convex weights of the predictors of a leaf's path, minimising
        the squared hinge (margin 0) of their held-out predictions of its
        weighting rows; all on the leaf's own without such rows."""
        rows = self.held_out.weighting(node.rows)
        rows = rows[self.weight[rows] > 0]
        if rows.size == 0:
            return np.eye(node.depth + 1)[node.depth]
        return simplex_weights(self.path_predictions(node, rows), self.lower[rows],
                               self.upper[rows], self.weight[rows])


@fill_doc
class TreeOfPredictors(HeldOutDistributionMixin, IntervalRegressorMixin,
                       _BaseComposition):
    """A tree of predictors: every node holds the model of a library that
    predicts its region best, and a prediction weighs the models on the
    row's path.

    Stacking (:class:`IntervalStackingRegressor`) gives every region the
    same mix of model families; a tree of predictors lets the regions
    choose. Every node holds a predictor: a member of the library trained
    on the node's rows or on an ancestor's, or the convex mix of the members
    trained there (the stack of that region), the one whose held-out
    predictions of the node's rows have the least interval loss. A node is
    split at a feature's quantile when its children's best predictors lower
    the held-out loss; a leaf weighs the predictors of its path (convex
    weights fitted on held-out predictions of its rows). Trees of
    predictors (ToPs) of Yoon, Zame and van der Schaar (2018), on interval
    targets.

    Parameters
    ----------
    base_estimators : list of (str, estimator), default=None
        The library, by name: mmit estimators (or pipelines and searches
        ending in one; a member may be ``"drop"``), any scikit-learn
        regressor when every target is an exact value. None:
        ``IntervalLinearRegressionCV()``, ``MMITForest(n_estimators=50)``
        and ``MMITBoost(n_estimators=30, learning_rate=0.15)`` (see Notes).
    loss : {"squared_hinge", "linear_hinge"}, default="squared_hinge"
        The held-out loss that chooses the predictors and the splits, and
        the screening criterion's.
    margin : float, default=0.0
        The margin of that loss (as for :class:`MMIT`).
    max_depth : int, default=2
        The depth of the tree (0: the library's best member on all rows).
    min_samples_leaf : int, default=100
        The least training rows of a node.
    thresholds : array-like of float in (0, 1), default=deciles
        The candidate thresholds of a split: these quantiles of the node's
        training values of each feature.
    n_candidates : int or None, default=3
        The candidate splits of a node on which the library is trained: the
        best by the exact MMIT criterion on the node's training rows (the
        optimal constants' cost of both sides). None: every feature and
        threshold, the paper's search (see Notes).
    validation : int or "holdout", default=5
        Where the held-out predictions come from. An int: that many folds of
        all rows (shuffled by ``random_state``), each node's rows predicted
        out of fold by the members fitted on its other folds. "holdout": the
        paper's scheme, the rows split once into a training set (75%), a
        validation set of the structure (15%) and one of the path weights
        (10%).
    refit : bool, default=True
        With ``validation="holdout"``, refit each node's predictor on all
        rows of the node it was trained on once the tree is chosen (False:
        the paper's, trained on the training set only). Out-of-fold
        predictors are always fitted on all rows of their node.
    min_gain_se : float, default=0.0
        A split is kept when its children's held-out loss is below the
        node's by more than this many standard errors of the sum of its
        rows' paired loss differences (0: by any amount, the paper's rule).
    distribution : "spread", SpreadDistribution or None, default="spread"
        What the predictive distributions (:meth:`predict_quantiles`,
        :meth:`predict_interval`, :meth:`predict_cdf`,
        :meth:`predict_survival`) are made of: the tree's prediction plus
        its held-out residual intervals (each row's path predictors' held-out
        predictions, weighted by its leaf's path weights), weighed by a
        second forest grown on the residuals' sizes, as for
        :class:`IntervalStackingRegressor`. Made on the first request (or by
        :func:`save_model`) from a copy of the training rows.
    n_jobs : int, default=None
        The fits of a node's candidate children (and of their folds) run in
        parallel threads (joblib semantics); predictions do not depend on
        it.
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds (or the holdout split) and seeds the members:
        the default ones, and the ``random_state`` parameters of given
        members that are None.
    verbose : int, default=0
        With 1 or more, a progress line per node on stderr.

    Attributes
    ----------
    tree_ : PredictorTree
        The tree: each node's split, its predictor (``algorithm``, the
        index of its member in ``estimator_names_`` or -2 for a mix,
        ``member_weights`` and ``trained_on``, the node whose rows it was
        trained on), its held-out ``loss``, its split's ``gain`` and each
        leaf's ``path_weights``.
    estimators_ : list of estimators
        The fitted predictor of every node: a member, or a mix of members
        (``MemberMix``, its ``estimators`` and ``weights``); nodes with the
        same predictor and node trained on share it.
    estimator_names_ : list of str
        The names of the library's members.
    n_fits_ : int
        The members' fits the search made.
    %(features_in)s

    See Also
    --------
    IntervalStackingRegressor : One convex mix of the members everywhere.

    Notes
    -----
    Cost: the paper's search trains the library on both children of every
    feature and threshold of every node. Here the candidates are first
    ranked by the exact MMIT criterion, the optimal constants' hinge cost
    of both sides computed for every threshold of a feature in one pass of
    the interval solver over its sorted rows (O(n log n) a feature), and
    the library is trained on the children of the ``n_candidates`` best.
    What is exact: each candidate's held-out loss and the choice among the
    candidates; what is screened: which candidates are tried
    (``n_candidates=None`` tries all). The library's out-of-fold
    predictions come from one fit where a member gives them (a forest grown
    by the folds from 200 rows, the linear CV's own path on the folds, as
    in the stack), from a fit per fold otherwise; the fits of a node's
    candidate children run in parallel. The screening criterion ignores
    the rows missing the feature; a split sends them to the side of more
    training weight.

    The defaults (library, ``validation``, ``max_depth``,
    ``min_samples_leaf``, ``n_candidates``) were chosen by measurement on
    the bundled data sets and simulated shapes (the defaults page of the
    user guide), the K-fold out-of-fold losses winning over the paper's
    single validation set on data of a few hundred rows.

    Predictions are the weighted sum, per leaf, of its path's predictors.
    ``shap_values`` gives each row the weighted sum of its path's
    predictors' exact SHAP values (the leaf's model explained, the leaf
    being the row's context; the base value is per row). Predictive
    distributions come from the tree's own held-out residuals (see
    ``distribution``), not from its members, most of which have none: with
    ``validation="holdout"`` only the rows outside the training set have
    them.

    Features: the tree splits numeric features; a data frame goes to every
    member as it is, so that categorical columns reach the members that
    take them (and are not split on). NaN reaches every member (those that
    refuse it behind :class:`MeanImputer`, as in the stack).

    References
    ----------
    J. Yoon, W. R. Zame and M. van der Schaar, "ToPs: Ensemble learning with
    trees of predictors", IEEE Transactions on Signal Processing 66, 2018.

    Examples
    --------
    >>> from mmit import TreeOfPredictors, MMIT, IntervalLinearRegressionCV
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> model = TreeOfPredictors(
    ...     [("tree", MMIT(max_depth=2)), ("linear", IntervalLinearRegressionCV(cv=3))],
    ...     max_depth=1, random_state=0).fit(data.data, data.target)
    >>> model.tree_.node_count >= 1, model.predict(data.data[:2]).shape
    (True, (2,))
    """

    _parameter_constraints = {
        "base_estimators": [list, None],
        "loss": [StrOptions({"squared_hinge", "linear_hinge"})],
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "thresholds": ["array-like"],
        "n_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "validation": [Interval(Integral, 2, None, closed="left"),
                       StrOptions({"holdout"})],
        "refit": ["boolean"],
        "min_gain_se": [Interval(Real, 0.0, None, closed="left")],
        "distribution": [StrOptions({"spread"}), SpreadDistribution, None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }
    # the parameter whose models a model file holds in the tree's state
    _member_parameters = ("base_estimators",)

    def __init__(self, base_estimators=None, *, loss="squared_hinge", margin=0.0,
                 max_depth=2, min_samples_leaf=100, thresholds=DECILES, n_candidates=3,
                 validation=5, refit=True, min_gain_se=0.0, distribution="spread",
                 n_jobs=None, random_state=None, verbose=0):
        set_init_parameters(self, locals())

    def get_params(self, deep=True):
        """Parameters, with those of the named members when ``deep``."""
        return self._get_params("base_estimators", deep=deep)

    def set_params(self, **params):
        """Set parameters, members by name and their parameters as
        ``<name>__<parameter>``."""
        return self._set_params("base_estimators", **params)

    def _checked_thresholds(self):
        thresholds = np.asarray(self.thresholds, dtype=np.float64)
        if (thresholds.ndim != 1 or thresholds.size == 0
                or not np.all((thresholds > 0) & (thresholds < 1))):
            raise ValueError("thresholds must be a non-empty list of quantile levels in "
                             f"(0, 1), got {self.thresholds!r}.")
        return thresholds

    @fill_doc
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree: every node's predictor, its split and each leaf's
        path weights.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, passed to the members that take them and
            weighing the held-out losses and the path weights.

        Returns
        -------
        self : TreeOfPredictors
            The fitted estimator.
        """
        self._checked_thresholds()
        X, lower, upper, weight = validate_training_data(
            self, X, y, sample_weight, check_X=not is_dataframe(X))
        exact = bool(np.all(lower == upper))
        y = lower if exact else np.column_stack([lower, upper])
        random_state = check_random_state(self.random_state)
        if self.base_estimators is None:
            members = members_to_fit(default_library(random_state), False, random_state,
                                     exact, None)
        else:
            members = members_to_fit(
                listed_members(self, self.base_estimators, "base_estimators"), True,
                random_state, exact, None)
        seed = draw_seed(random_state)
        n_samples = X.shape[0]
        if self.validation == "holdout":
            held_out = _HoldoutRows(n_samples, seed)
        else:
            if self.validation > n_samples:
                raise ValueError(f"validation={self.validation} folds need at least "
                                 f"{self.validation} samples; got n_samples={n_samples}.")
            held_out = _KFoldRows(self.validation, n_samples, seed)
        columns, splittable = _split_columns(X)
        pool = Parallel(n_jobs=self.n_jobs, prefer="threads")
        grower = _Grower(self, X, columns, splittable, y, lower, upper, weight,
                         None if sample_weight is None else weight, members, held_out,
                         pool)
        kept = grower.grow()
        self.estimators_ = grower.predictors(
            kept, refit=self.validation == "holdout" and self.refit)
        self.tree_ = _tree_of(kept, grower, self.max_depth)
        self.estimator_names_ = [name for name, _ in members]
        self.n_fits_ = grower.n_fits
        self.distribution_ = held_out_distribution(
            self.distribution, X, lower, upper, weight,
            grower.held_out_predictions(kept, self.tree_), random_state)
        return self

    def _routing_columns(self, X):
        """A function giving the values of a feature for the rows of ``X`` (as
        ``PredictorTree.leaves_of`` reads them)."""
        return _split_columns(X)[0]

    @by_partitions
    @by_row_blocks
    def predict(self, X):
        """The weighted sum of the predictions of each row's path's
        predictors.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            NaN marks a missing value. Or a Dask array or data frame (the
            ``dask`` extra).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        X = self._checked_X(X)
        weights = self._predictor_weights(X)
        prediction = np.zeros(X.shape[0])
        for model, rows in self._models_of_rows(weights):
            prediction[rows] += weights[model][rows] * self.estimators_[model].predict(
                _safe_indexing(X, rows))
        return prediction

    def _checked_X(self, X):
        if is_dataframe(X):
            check_is_fitted(self)
            validate_data(self, X, reset=False, skip_check_array=True)
            return X
        return self._validate_X_predict(X)

    def predictor_weights(self, X):
        """The weight of every node's predictor in the prediction of each row
        of ``X``: the path weights of the row's leaf (columns of the
        predictors shared by nodes summed in the first's).

        Parameters
        ----------
        X : array-like or data frame of shape (n_samples, n_features)

        Returns
        -------
        weights : ndarray of shape (node_count, n_samples)
            Row ``k`` is the weight of ``estimators_[k]``: zero unless node
            ``k`` is on the row's path (or shares its predictor with one).
        """
        return self._predictor_weights(self._checked_X(X))

    def _predictor_weights(self, X):
        """:meth:`predictor_weights` of a checked ``X``."""
        tree = self.tree_
        leaf = tree.leaves_of(self._routing_columns(X))
        first = {}
        owner = np.array([first.setdefault(id(model), k)
                          for k, model in enumerate(self.estimators_)])
        weights = np.zeros((tree.node_count, leaf.shape[0]))
        for node in np.unique(leaf):
            rows = leaf == node
            for position, path_node in enumerate(tree.path(int(node))):
                weights[owner[path_node], rows] += tree.path_weights[node, position]
        return weights

    def _models_of_rows(self, weights):
        """The (model, rows) pairs whose predictions a prediction adds."""
        for model in range(weights.shape[0]):
            rows = np.flatnonzero(weights[model] > 0.0)
            if rows.size:
                yield model, rows

    def export_text(self, *, feature_names=None, decimals=3):
        """The tree as indented text: each node's predictor (its member and
        the node it was trained on), held-out loss and split, each leaf's
        path weights (the paper's Figure 5 as text).

        Parameters
        ----------
        feature_names : list of str, default=None
            Defaults to ``feature_names_in_``, else ``x0, x1, ...``.
        decimals : int, default=3

        Returns
        -------
        report : str
        """
        check_is_fitted(self)
        tree = self.tree_
        names = resolve_feature_names(self, feature_names)
        lines = []
        stack = [(0, 0, "")]
        while stack:
            node, depth, condition = stack.pop()
            trained = ("its rows" if tree.trained_on[node] == node
                       else f"node {tree.trained_on[node]}'s rows")
            head = "|   " * (depth - 1) + condition if depth else ""
            lines.append(f"{head}node {node}: {self._predictor_name(node, decimals)} "
                         f"trained on {trained} (held-out loss "
                         f"{tree.loss[node]:.{decimals}f}, "
                         f"{tree.n_node_samples[node]} rows)")
            if tree.children_left[node] == LEAF:
                lines.append("|   " * depth + "weights: " + ", ".join(
                    f"node {p} {tree.path_weights[node, k]:.{decimals}f}"
                    for k, p in enumerate(tree.path(node))))
                continue
            name = names[tree.feature[node]]
            threshold = f"{tree.threshold[node]:.{decimals}f}"
            missing_left = tree.missing_left[node]
            left = f"{name} <= {threshold}{' or missing' if missing_left else ''}: "
            right = f"{name} >  {threshold}{'' if missing_left else ' or missing'}: "
            stack += [(int(tree.children_right[node]), depth + 1, "|--- " + right),
                      (int(tree.children_left[node]), depth + 1, "|--- " + left)]
        return "\n".join(lines) + "\n"

    def _predictor_name(self, node, decimals):
        """A node's predictor as text: its member's name, or the mix's
        weights by name."""
        tree = self.tree_
        if tree.algorithm[node] != MIX:
            return self.estimator_names_[tree.algorithm[node]]
        return "mix of " + ", ".join(
            f"{name} {weight:.{decimals}f}"
            for name, weight in zip(self.estimator_names_, tree.member_weights[node],
                                    strict=True) if weight > 0)

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: each row's path
        predictors' values, weighted by the path weights of its leaf."""
        check_is_fitted(self)
        return RowWeightedExplainer(self, self.estimators_, self.predictor_weights)

    def _export_state(self, writer):
        """The tree's arrays, its distinct fitted predictors (their
        descriptions), the library's settings and the predictive
        distributions (made now if not yet), for a model file
        (``mmit._persistence._model_files``)."""
        for name in PredictorTree.ARRAYS:
            writer.array(name, getattr(self.tree_, name))
        # the distinct fitted members, and which of them each node weighs
        index, models = {}, []
        node_models = np.full(self.tree_.member_weights.shape, -1, dtype=np.int64)
        for node, predictor in enumerate(self.estimators_):
            used = np.flatnonzero(self.tree_.member_weights[node] > 0)
            fitted = (predictor.estimators if isinstance(predictor, MemberMix)
                      else [predictor])
            for member, model in zip(used, fitted, strict=True):
                if id(model) not in index:
                    index[id(model)] = len(models)
                    models.append(model)
                node_models[node, member] = index[id(model)]
        writer.array("node_models", node_models)
        state = {
            "estimator_names": list(self.estimator_names_),
            "n_fits": int(self.n_fits_),
            "library": None if self.base_estimators is None else [
                {"name": name, **writer.settings(estimator)}
                for name, estimator in self.base_estimators],
            "models": [writer.model(f"model{k}", model) for k, model in enumerate(models)],
        }
        if self.distribution_ is not None:
            state["distribution"] = self.distribution_.fitted(self)._export_state(writer)
        return state

    def _import_state(self, state, reader):
        """The fitted tree of a model file, checked (a tree of the file's
        features and members, convex path weights)."""
        if state["library"] is not None:
            self.base_estimators = [(member["name"], reader.settings(member))
                                    for member in state["library"]]
            self._validate_params()
        self.estimator_names_ = [str(name) for name in state["estimator_names"]]
        self.n_fits_ = int(state["n_fits"])
        tree = PredictorTree(**{name: reader.array(name) for name in PredictorTree.ARRAYS})
        tree.check(self.n_features_in_, len(self.estimator_names_))
        models = [reader.model(f"model{k}", description)
                  for k, description in enumerate(state["models"])]
        node_models = reader.array("node_models", np.int64, tree.member_weights.shape)
        used = tree.member_weights > 0
        if (np.any(node_models[used] < 0) or np.any(node_models[used] >= len(models))
                or np.any(node_models[~used] != -1)):
            raise ValueError("a node's predictor is out of range")
        for model in models:
            if not hasattr(model, "steps") and model.n_features_in_ != self.n_features_in_:
                raise ValueError("a predictor has the wrong number of features")
        self.tree_ = tree
        predictors = {}
        for node in range(tree.node_count):
            key = (int(tree.trained_on[node]), tuple(node_models[node]))
            if key not in predictors:
                indices = node_models[node][used[node]]
                predictors[key] = (models[indices[0]] if tree.algorithm[node] != MIX else
                                   MemberMix([models[k] for k in indices],
                                             tree.member_weights[node][used[node]]))
        self.estimators_ = [predictors[int(tree.trained_on[node]), tuple(node_models[node])]
                            for node in range(tree.node_count)]
        self.distribution_ = (ForestDistribution._from_state(self, state["distribution"],
                                                             reader)
                              if "distribution" in state else None)


def _split_columns(X):
    """A function giving a feature's values of the rows of ``X`` (float, NaN
    for a missing value; called with None: the number of rows), and the mask
    of the features a split may use (the numeric ones)."""
    if is_dataframe(X):
        encoder = MMITForest(categorical_features="from_dtype")
        rows = validate_features(encoder, X, reset=True, ensure_all_finite="allow-nan")
        splittable = (np.ones(X.shape[1], dtype=bool) if encoder.is_categorical_ is None
                      else ~encoder.is_categorical_)
    else:
        rows = X
        splittable = np.ones(X.shape[1], dtype=bool)
    if sp.issparse(rows):
        rows = rows.tocsc()
        cache = {}

        def column(feature):
            if feature is None:
                return rows.shape[0]
            if feature not in cache:
                cache[feature] = rows[:, [feature]].toarray().ravel()
            return cache[feature]
    else:
        rows = np.asarray(rows, dtype=np.float64)

        def column(feature):
            return rows.shape[0] if feature is None else rows[:, feature]
    return column, splittable


def _tree_of(kept, grower, max_depth):
    """The :class:`PredictorTree` of the kept search nodes."""
    n = len(kept)
    tree = PredictorTree(
        children_left=np.full(n, LEAF, dtype=np.int64),
        children_right=np.full(n, LEAF, dtype=np.int64),
        parent=np.full(n, LEAF, dtype=np.int64),
        feature=np.full(n, LEAF, dtype=np.int64),
        threshold=np.full(n, np.nan),
        missing_left=np.zeros(n, dtype=bool),
        algorithm=np.array([MIX if node.choice[0] == len(grower.members) else node.choice[0]
                            for node in kept], dtype=np.int64),
        trained_on=np.array([node.lineage[node.choice[1]].index for node in kept],
                            dtype=np.int64),
        member_weights=np.array([grower.member_weights(node) for node in kept]),
        n_node_samples=np.array([node.rows.size for node in kept], dtype=np.int64),
        loss=np.array([node.loss for node in kept]),
        gain=np.zeros(n),
        path_weights=np.zeros((n, max_depth + 1)))
    for node in kept:
        k = node.index
        if node.depth:
            tree.parent[k] = node.ancestors[-1].index
        if node.split is None:
            tree.path_weights[k, :node.depth + 1] = grower.path_weights(node)
            continue
        feature, threshold, missing_left, left, right = node.split
        tree.children_left[k], tree.children_right[k] = left.index, right.index
        tree.feature[k], tree.threshold[k] = feature, threshold
        tree.missing_left[k] = missing_left
        tree.gain[k] = node.loss - left.loss - right.loss
    return tree
