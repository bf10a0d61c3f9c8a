"""A sum of trees: what a forest's mean and boosting's shrunk sum are.

:class:`AdditiveTrees` holds fitted trees, a scale per tree, an offset and a
divisor, and predicts ``(offset + sum_t scales[t] * tree_t(x)) / divisor``
with the compiled, cache-blocked sum of ``_tree.add_predictions`` (the rows
of a block go down a group of trees while both stay in cache), tree after
tree in every row, on threads over slices of rows: the sums do not depend on
the number of threads. A forest is its trees at scale 1 over their number
(the mean, divided once); a booster its stages at the learning rate from
its baseline (divisor 1). Their predictions, staged predictions, exact
SHAP values (path-dependent TreeSHAP, ``_treeshap``, of each tree at its
weight ``scales[t] / divisor``, and the constant ``offset / divisor``)
and feature importances go through it.
:func:`tree_leaves` walks rows down many trees the same way for their
leaves (what the predictive distributions read).
"""

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs

from .._utils._sparse import row_blocks
from ._tree import add_predictions, apply_trees
from ._treeshap import tree_shap


class AdditiveTrees:
    """Fitted trees whose prediction is ``(offset + sum_t scales[t] *
    tree_t(x)) / divisor``.

    Parameters
    ----------
    trees : list of Tree
        The fitted trees (``tree_`` of the MMITs of an ensemble).
    scales : array-like of shape (n_trees,)
        Each tree's factor in the sum.
    offset : float, default=0.0
        Where the sum starts.
    divisor : float, default=1.0
        What the sum is divided by, once.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import MMIT
    >>> from mmit.tree import AdditiveTrees
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> trees = [MMIT(max_depth=d).fit(X, X[:, 0]).tree_ for d in (1, 2)]
    >>> mean = AdditiveTrees(trees, [1.0, 1.0], divisor=2.0)
    >>> mean.predict(X[:2]), mean.weights
    (array([1., 0.]), array([0.5, 0.5]))
    """

    def __init__(self, trees, scales, offset=0.0, divisor=1.0):
        self.trees = list(trees)
        self.scales = np.ascontiguousarray(scales, dtype=np.float64)
        if self.scales.shape != (len(self.trees),):
            raise ValueError(f"{len(self.trees)} trees and {self.scales.shape} scales.")
        self.offset = float(offset)
        self.divisor = float(divisor)

    @property
    def weights(self):
        """Each tree's weight in the prediction, ``scales / divisor``."""
        return self.scales / self.divisor

    @property
    def constant(self):
        """The prediction's constant term, ``offset / divisor``."""
        return self.offset / self.divisor

    def predict(self, X, n_jobs=None):
        """The prediction of each row of validated ``X`` (float64,
        C-contiguous, as the trees read it; or a sparse matrix, each thread's
        slice of rows densified a block at a time), on ``n_jobs`` threads
        over slices of rows (joblib's convention); the same whatever
        ``n_jobs``."""
        total = np.full(X.shape[0], self.offset)
        if not self.trees:
            return total if self.divisor == 1.0 else total / self.divisor
        if sp.issparse(X):
            X = X.tocsr()

        def add(rows):
            part = total[rows]
            for block, values in row_blocks(X[rows]):
                add_predictions(self.trees, self.scales, values, part[block])

        on_row_slices(add, X.shape[0], n_jobs)
        return total if self.divisor == 1.0 else total / self.divisor

    def staged_predict(self, X):
        """The prediction of each row of validated ``X`` with the first tree, the
        first two, ..., all of them: a new array each time.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
        """
        total = np.full(X.shape[0], self.offset)
        for t, tree in enumerate(self.trees):
            total = total.copy()
            add_predictions([tree], self.scales[t:t + 1], X, total)
            yield total if self.divisor == 1.0 else total / self.divisor

    def contributions(self, X, interactions, n_threads):
        """Exact SHAP values of the rows of validated ``X`` (as the trees read
        it), or their interaction values, on ``n_threads`` threads, and the
        base value (see :class:`~mmit._utils._protocols.Explainer`): each
        tree's path-dependent TreeSHAP at its weight."""
        weights = np.ascontiguousarray(self.weights)
        values = np.zeros(X.shape)
        tree_shap(self.trees, weights, X, values, False, n_threads)
        if interactions:
            n_samples, n_features = X.shape
            pairs = np.zeros((n_samples, n_features * n_features))
            tree_shap(self.trees, weights, X, pairs, True, n_threads)
            pairs = pairs.reshape(n_samples, n_features, n_features)
            diagonal = np.arange(n_features)
            pairs[:, diagonal, diagonal] = values - pairs.sum(axis=2)
            values = pairs
        base = self.constant + sum(weight * expected_value(tree) for tree, weight
                                   in zip(self.trees, weights, strict=True))
        return values, base

    def feature_importances(self):
        """The mean of the trees' normalised cost decreases per feature,
        normalised (to 0 where no tree splits)."""
        importances = np.mean([tree.compute_feature_importances() for tree in self.trees],
                              axis=0)
        total = importances.sum()
        return importances / total if total > 0 else importances


def expected_value(tree):
    """A tree's prediction with no feature known: its leaves' values
    weighted by their covers (a linear leaf's terms are zero then)."""
    leaves = np.asarray(tree.children_left) < 0
    covers = np.asarray(tree.weighted_n_node_samples)
    return float(np.sum(np.asarray(tree.value)[leaves] * covers[leaves]) / covers[0])


def on_row_slices(function, n_samples, n_jobs):
    """Call ``function(rows)`` on slices of ``range(n_samples)`` that cover
    it, on ``n_jobs`` threads (joblib's convention; a few slices a thread)."""
    n_slices = min(n_samples, 4 * effective_n_jobs(n_jobs)) or 1
    bounds = np.linspace(0, n_samples, n_slices + 1).astype(int)
    if n_slices == 1:
        function(slice(0, n_samples))
    else:
        Parallel(n_jobs=n_jobs, prefer="threads", require="sharedmem")(
            delayed(function)(slice(start, stop))
            for start, stop in zip(bounds[:-1], bounds[1:], strict=True))


def tree_leaves(trees, X, n_jobs=None):
    """The leaf of each row of validated ``X`` (float64, C-contiguous, as the
    trees read it) in each of ``trees`` (Tree objects): an int64 array of
    shape (n_samples, n_trees), each column a tree's ``apply``, the rows
    walked down groups of trees by blocks on ``n_jobs`` threads."""
    leaves = np.empty((X.shape[0], len(trees)), dtype=np.int64)
    on_row_slices(lambda rows: apply_trees(trees, X[rows], leaves[rows]), X.shape[0],
                  n_jobs)
    return leaves
