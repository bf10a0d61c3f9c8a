"""The Maximum Margin Interval Tree estimator."""

from math import ceil
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import IntervalRegressorMixin
from ._presort import presort_features, training_data
from ._tree import Tree, TreeBuilder, prune, pruning_sequence
from ._validation import check_interval_target, check_margin, check_sample_weight

# depth limit standing for "no limit"
_UNLIMITED_DEPTH = np.iinfo(np.int32).max

TREE_PARAMETER_CONSTRAINTS = {
    "margin": [Interval(Real, 0.0, None, closed="left")],
    "loss": [StrOptions({"linear_hinge", "squared_hinge"})],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_split": [
        Interval(Integral, 2, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="neither"),
    ],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
    "min_cost_decrease": [Interval(Real, 0.0, None, closed="left")],
    "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
    "random_state": ["random_state"],
}


def validate_training_data(estimator, X, y, sample_weight):
    """Checked X (float64), lower and upper bounds, and positive weights."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the "
                         "target y is None.")
    X = validate_data(estimator, X, dtype=np.float64, ensure_all_finite=True,
                      ensure_min_samples=1)
    lower, upper = check_interval_target(y, X.shape[0])
    sample_weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=False)
    return X, lower, upper, sample_weight


def resolve_max_features(max_features, n_features):
    """Number of features to evaluate per node."""
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, Integral):
        if max_features > n_features:
            raise ValueError(
                f"max_features={max_features} exceeds the number of features "
                f"({n_features})."
            )
        return int(max_features)
    return max(1, int(max_features * n_features))


def draw_seed(random_state):
    """A seed for the tree builder's own generator, drawn from a RandomState."""
    return int(random_state.randint(1, np.iinfo(np.int32).max))


def set_fitted_attributes(estimator, n_features, feature_names, max_features):
    """Set what ``fit`` records besides the tree(s), on an estimator assembled
    from trees grown elsewhere (forest trees, MMITCV's refit, loaded models)."""
    estimator.n_features_in_ = n_features
    estimator.max_features_ = max_features
    if feature_names is not None:
        estimator.feature_names_in_ = feature_names


def make_builder(params, n_features, sample_weight, seed):
    """TreeBuilder for a tree's parameters, the training weights and a seed."""
    n_samples = int(np.count_nonzero(sample_weight > 0))
    split = params["min_samples_split"]
    leaf = params["min_samples_leaf"]
    if not isinstance(split, Integral):
        split = max(2, ceil(split * n_samples))
    if not isinstance(leaf, Integral):
        leaf = max(1, ceil(leaf * n_samples))
    max_depth = params["max_depth"]
    max_leaf_nodes = params["max_leaf_nodes"]
    return TreeBuilder(
        params["loss"] == "squared_hinge",
        _UNLIMITED_DEPTH if max_depth is None else max_depth,
        split,
        leaf,
        resolve_max_features(params["max_features"], n_features),
        -1 if max_leaf_nodes is None else max_leaf_nodes,
        params["min_cost_decrease"] * float(np.sum(sample_weight)),
        seed,
    )


def grow_tree(builder, data, sample_weight, ccp_alpha):
    """Grow a tree on presorted data, then prune it at ``ccp_alpha``."""
    tree = builder.build(Tree(data.n_features), data, sample_weight)
    if ccp_alpha > 0.0:
        pruned, alphas, _, _ = pruning_sequence(tree, tree.weighted_n_node_samples[0])
        tree = prune(tree, pruned[alphas <= ccp_alpha])
    return tree


def tree_feature_importances(tree, n_features):
    """Cost decrease of every split, summed per feature and normalised."""
    left = tree.children_left
    internal = np.flatnonzero(left != -1)
    decrease = (tree.cost[internal] - tree.cost[left[internal]]
                - tree.cost[tree.children_right[internal]])
    importances = np.bincount(tree.feature[internal], weights=decrease,
                              minlength=n_features)
    total = importances.sum()
    return importances / total if total > 0 else importances


class MMIT(IntervalRegressorMixin, BaseEstimator):
    """Maximum Margin Interval Tree: a regression tree for interval targets.

    Each training label is an interval ``[lower, upper]`` (``-inf``/``+inf``
    for censored bounds, ``lower == upper`` for an exact value). A leaf
    predicts the constant minimising the sum over its samples of the hinge
    loss of the distance outside the interval shrunk by ``margin``; a split
    minimises the sum of its two children's optimal costs. The optimal
    cost of every split of a node on a feature comes from two sweeps of the
    dynamic-programming solver of Drouin et al. (2017) over the presorted
    samples, in O(n) per feature and node.

    Parameters
    ----------
    margin : float, default=0.0
        Margin ``eps >= 0``: a prediction is free only at least ``eps``
        inside its interval. Exact values (``lower == upper``) use 0.
    loss : {"linear_hinge", "squared_hinge"}, default="linear_hinge"
        Hinge applied to the distance outside the shrunk interval.
    max_depth : int, default=None
        Maximum depth of the tree; None for no limit.
    min_samples_split : int or float, default=2
        Minimum number of samples (with positive weight) to split a node; a
        float is a fraction of the training samples.
    min_samples_leaf : int or float, default=1
        Minimum number of samples in each leaf; a float is a fraction.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Number of features evaluated per node, drawn at random (more while
        none gives a valid split); None evaluates all.
    max_leaf_nodes : int, default=None
        Grow best-first (largest cost decrease first) to at most this many
        leaves; None grows depth-first without this limit.
    min_cost_decrease : float, default=0.0
        A split must lower the cost, divided by the total training weight,
        by at least this much.
    ccp_alpha : float, default=0.0
        Complexity parameter of minimal cost-complexity pruning (costs
        divided by the total training weight); 0 prunes nothing.
    random_state : int, RandomState instance or None, default=None
        Draws the order in which features are tried, which breaks ties
        between equally good splits: a fixed seed gives a fixed tree.

    Attributes
    ----------
    tree_ : mmit._tree.Tree
        The fitted tree as flat node arrays.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when X was a DataFrame with string columns.
    max_features_ : int
        Number of features evaluated per node.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Cost decrease brought by each feature's splits, normalised to sum 1.

    See Also
    --------
    MMITForest : Bagged, feature-subsampled MMITs.
    mmit.compute_optimal_costs : The solver behind the split search.

    Notes
    -----
    Growing costs O(p n) per tree level (partitioning the presorted lists
    and two solver sweeps per feature), plus one sort of each feature and of
    the breakpoints per fit.

    References
    ----------
    A. Drouin, T. D. Hocking and F. Laviolette, "Maximum Margin Interval
    Trees", Advances in Neural Information Processing Systems 30, 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import MMIT
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([[-np.inf, 1.0], [0.0, 2.0], [5.0, 6.0], [5.5, np.inf]])
    >>> model = MMIT(max_depth=1).fit(X, y)
    >>> model.predict([[0.5], [2.5]])
    array([0.5 , 5.75])
    """

    _parameter_constraints = dict(TREE_PARAMETER_CONSTRAINTS)

    def __init__(
        self,
        *,
        margin=0.0,
        loss="linear_hinge",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        max_features=None,
        max_leaf_nodes=None,
        min_cost_decrease=0.0,
        ccp_alpha=0.0,
        random_state=None,
    ):
        self.margin = margin
        self.loss = loss
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_cost_decrease = min_cost_decrease
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree on interval targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training features (finite).
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Lower and upper bound of each target interval (``-inf``/``+inf``
            allowed), or exact values.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; samples of weight 0 do not take part.

        Returns
        -------
        self : MMIT
            The fitted estimator.
        """
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        check_margin(self.margin)
        data = training_data(presort_features(X), lower, upper, self.margin)
        builder = make_builder(self.get_params(), X.shape[1], sample_weight,
                               draw_seed(check_random_state(self.random_state)))
        self.max_features_ = resolve_max_features(self.max_features, X.shape[1])
        self.tree_ = grow_tree(builder, data, sample_weight, self.ccp_alpha)
        return self

    def predict(self, X):
        """Predicted value (of the leaf reached) for each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)

    def apply(self, X):
        """Index of the leaf each sample falls in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
        """
        X = self._validate_X_predict(X)
        return self.tree_.apply(X)

    def decision_path(self, X):
        """Nodes each sample goes through.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        indicator : sparse matrix of shape (n_samples, n_nodes)
            Non-zero where a sample goes through a node (CSR format).
        """
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X)

    def get_depth(self):
        """Depth of the tree (a single leaf has depth 0)."""
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self):
        """Number of leaves of the tree."""
        check_is_fitted(self)
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Normalised total cost decrease of the splits on each feature."""
        check_is_fitted(self)
        return tree_feature_importances(self.tree_, self.n_features_in_)

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """Minimal cost-complexity pruning path of the tree grown on (X, y).

        Parameters
        ----------
        X, y, sample_weight
            As for :meth:`fit`.

        Returns
        -------
        path : :class:`~sklearn.utils.Bunch`
            ``ccp_alphas``: the increasing effective alphas at which the
            pruned subtrees change (0 first: the full tree; the last gives
            the root alone); ``costs``: total leaf cost, divided by the total
            training weight, of the subtree for each alpha. Fitting with
            ``ccp_alpha=ccp_alphas[i]`` gives the subtree of ``costs[i]``.
        """
        tree = clone(self).set_params(ccp_alpha=0.0).fit(X, y, sample_weight).tree_
        total_weight = tree.weighted_n_node_samples[0]
        _, alphas, costs, full_cost = pruning_sequence(tree, total_weight)
        return Bunch(ccp_alphas=np.r_[0.0, alphas], costs=np.r_[full_cost, costs])


MaxMarginIntervalTree = MMIT
