"""The search of a TreeOfPredictors (:class:`PredictorTreeSearch`), which
grows the tree breadth first. Every node it looks at gets, from each
member of the library, held-out predictions of its rows by the member
trained on its rows: out-of-fold predictions on the node's rows
(:class:`FoldRows`: the folds of all rows, restricted to the node; a forest
or a linear CV gives them in one fit through the protocol
``__mmit_fold_predictions__``), or, with the paper's
``validation="holdout"`` (:class:`HoldoutRows`), predictions of the node's
rows outside the training set by the member trained on the node's training
rows; the node's mix of members is their convex combination fitted on
those predictions (the stack's combiner). A node's predictor is the pair
(member or mix, node trained on) among the node and its ancestors with the
least held-out loss on its scored rows; a split is kept when its
children's least losses sum to less than the node's. The candidate splits
are the features' quantiles (``thresholds``); with ``n_candidates`` they
are first ranked by the exact MMIT criterion (the optimal constants' cost
of both sides, :func:`mmit.compute_optimal_costs` over the sorted rows) and
the library is trained on the best few.
"""

import sys
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from joblib import delayed
from sklearn.model_selection import KFold
from sklearn.utils import _safe_indexing

from .._loss._loss import LOSSES, breakpoints
from .._utils._categorical import is_dataframe, validate_features
from ._bagging import rows_without_out_of_bag_prediction_ignored
from ._combiner import simplex_weights
from ._forest import MMITForest
from ._predictor_tree import LEAF, MIX, MemberMix, PredictorTree
from ._stacking import checked_predictions, fit_member, one_fit_plan

#: The quantile levels of the candidate thresholds of a feature (the paper's
#: deciles).
DECILES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: The paper's shares of the training set and of the two validation sets
#: (``validation="holdout"``).
HOLDOUT_SHARES = (0.75, 0.15, 0.10)
TRAINING, STRUCTURE, WEIGHTS = 0, 1, 2  # the holdout roles of the rows


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


class FoldRows:
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


class HoldoutRows:
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


def fit_member_on(key, estimator, plan, X, y, weight, train, test, keep=True):
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


class PredictorTreeSearch:
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
        if isinstance(self.held_out, HoldoutRows):
            train = np.flatnonzero(self.held_out.role[rows] == TRAINING)
            test = np.flatnonzero(self.held_out.role[rows] != TRAINING)
            return [delayed(fit_member_on)((position, member), estimator, None, *data,
                                            train, test)
                    for member, (_, estimator) in enumerate(self.members)]
        splits = self.held_out.node_splits(rows)
        tasks = []
        for member, (_, estimator) in enumerate(self.members):
            plan = one_fit_plan(estimator, "folds", rows.size, splits)
            if plan is not None:
                tasks.append(delayed(fit_member_on)((position, member), estimator, plan,
                                                     *data, np.arange(rows.size), None))
            else:
                tasks += [delayed(fit_member_on)((position, member), estimator, None,
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
                tasks.append(delayed(fit_member_on)(
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


def split_columns(X):
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


def predictor_tree_of(kept, grower, max_depth):
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
