"""The Maximum Margin Interval Tree estimator."""

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._utils._base import (
    IntervalRegressorMixin,
    set_feature_attributes,
    set_init_parameters,
)
from .._utils._categorical import CATEGORICAL_FEATURES_CONSTRAINT, n_categories
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method, predict_method
from .._utils._protocols import ReadRowsExplainer
from .._utils._sparse import by_row_blocks
from .._utils._validation import validate_training_data
from ._additive import AdditiveTrees
from ._growing import (
    CATEGORICAL_PENALTY,
    TREE_PARAMETER_CONSTRAINTS,
    check_leaf_model_growth,
    draw_seed,
    grow_tree,
    grow_unpruned,
    resolve_constraints,
    resolve_max_features,
    training_data,
)
from ._pruning import pruning_sequence


@fill_doc
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
        float is a fraction of ``n_samples``, the rows of X (as in
        scikit-learn, whatever their weights: also in a forest's trees).
    min_samples_leaf : int or float, default=1
        Minimum number of samples in each leaf; a float is a fraction of
        ``n_samples``.
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
        divided by the total training weight); 0 prunes nothing, ``inf``
        leaves the root alone. With
        linear leaves the costs are those of the nodes' linear models.
    leaf_model : {"constant", "linear"}, default="constant"
        What a leaf predicts. "linear": the splits are the same (chosen for
        constant leaves), then each leaf holds a linear model of the
        features fitted on its samples: the squared hinge loss (with the
        margin) plus a ridge penalty ``leaf_shrinkage * (b^2 + |w|^2)``
        that pulls it toward the leaf's constant (``w`` the slopes of the
        standardised features, ``b`` the shift of the constant). A missing
        feature counts as its training mean. It needs a limit on growth
        (``max_depth``, ``max_leaf_nodes``, ``min_samples_leaf``,
        ``min_samples_split``, ``min_cost_decrease`` or ``ccp_alpha``): a
        tree grown until each leaf fits its rows exactly would hold linear
        models equal to its constants, and ``fit`` refuses it.
    leaf_shrinkage : float, default=10.0
        Strength (> 0) of the pull of linear leaves toward their constant,
        in units of training weight: a leaf whose samples weigh much less
        than it stays near its constant. The default is the middle of
        :class:`MMITCV`'s grid, which chooses it by cross-validation.
    %(categorical_features)s
    %(categorical_penalty)s
    %(monotonic_cst)s
    %(interaction_cst)s
        Every path starts at the root: a tree is a function of the features
        of the groups holding its root's feature (that feature alone with
        "no_interactions"), and an ensemble of such trees a sum of
        functions of the groups.
    random_state : int, RandomState instance or None, default=None
        Draws the order in which features are tried, which breaks ties
        between equally good splits: a fixed seed gives a fixed tree.

    Attributes
    ----------
    tree_ : mmit.tree._tree.Tree
        The fitted tree as flat node arrays.
    %(features_in)s
    %(categorical_attributes)s
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
    Missing values: ``X`` may hold NaN, at fit and predict time. At every
    split the rows missing the feature are tried on the left and on the
    right, and "present versus missing" is a candidate split too; the node
    stores where missing values go (``tree_.missing_go_to_left``). When a
    node had no row missing its split feature, missing values go to its
    heavier child.

    Growing costs O(k n) per tree level for the two solver sweeps over each
    of the k features evaluated per node (four with missing values), plus
    either O(p n) for keeping every feature's rows presorted (nodes of a
    tree that evaluates most features) or O(k n log n) for sorting the
    evaluated features in each node (when ``max_features`` is much smaller
    than the number of features p); a cost model picks per node.

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

    _parameter_constraints = {**TREE_PARAMETER_CONSTRAINTS,
                              "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT}

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
        leaf_model="constant",
        leaf_shrinkage=10.0,
        categorical_features="from_dtype",
        categorical_penalty=CATEGORICAL_PENALTY,
        monotonic_cst=None,
        interaction_cst=None,
        random_state=None,
    ):
        set_init_parameters(self, locals())

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Grow the tree on interval targets.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; samples of weight 0 do not take part.

        %(fit_returns)s
        """
        data, sample_weight = mmit_training_data(self, X, y, sample_weight)
        params = resolve_constraints(self, self.get_params())
        check_leaf_model_growth(params, data.n_samples)
        tree = grow_tree(params, data, sample_weight,
                         draw_seed(check_random_state(self.random_state)))
        return hold_tree(self, tree, getattr(self, "feature_names_in_", None))

    @classmethod
    def from_tree(cls, tree, *, feature_names_in=None, categories=None, **params):
        """An MMIT fitted as ``tree``: how an estimator is made of a tree grown
        elsewhere (a forest's or a booster's trees, the subtree a search
        chose, a model file's tree).

        Parameters
        ----------
        tree : Tree
            A fitted tree (the ``tree_`` of an MMIT, or one its builder grew).
        feature_names_in : array-like of str, default=None
            The names of the features the tree reads (``feature_names_in_``),
            for predictions on data frames.
        categories : list of (ndarray or None), default=None
            Each feature's categories (``categories_``: the labels of a
            categorical feature, whose codes the tree's splits read; None for
            a numeric one); None: every feature is numeric.
        **params
            The estimator's parameters (MMIT's defaults for the others),
            checked when it is fitted, as any estimator's.

        Returns
        -------
        model : MMIT
            Fitted: it predicts, applies and explains with ``tree``.

        Examples
        --------
        >>> import numpy as np
        >>> from mmit import MMIT
        >>> X = np.arange(6.0).reshape(-1, 1)
        >>> model = MMIT(max_depth=2).fit(X, X[:, 0])
        >>> copy = MMIT.from_tree(model.tree_, max_depth=2)
        >>> bool(np.array_equal(copy.predict(X), model.predict(X))), copy.get_depth()
        (True, 2)
        """
        model = cls(**params)
        if categories is not None and len(categories) != tree.n_features:
            raise ValueError(f"categories has {len(categories)} entries for the "
                             f"{tree.n_features} features of the tree.")
        categorical = (None if categories is None or all(c is None for c in categories)
                       else np.array([c is not None for c in categories]))
        model.is_categorical_ = categorical
        model.categories_ = None if categorical is None else list(categories)
        return hold_tree(model, tree, feature_names_in)

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the tree's TreeSHAP."""
        check_is_fitted(self)
        return ReadRowsExplainer(self, AdditiveTrees([self.tree_], np.ones(1)))

    def _export_state(self, writer):
        """The fitted tree, for a model file (``mmit._persistence``)."""
        return writer.trees([self.tree_])

    def _import_state(self, state, reader):
        """Hold the tree of a model file (``n_features_in_`` and
        ``feature_names_in_`` set)."""
        trees = reader.trees(state, self.n_features_in_)
        if len(trees) != 1:
            raise ValueError("the number of trees does not match")
        hold_tree(self, trees[0], getattr(self, "feature_names_in_", None))

    @predict_method
    def predict(self, X):
        """Predicted value (of the leaf reached) for each sample.

        %(predict)s
        """
        X = self._validate_X_predict(X)
        return self.tree_.predict(X)

    @by_row_blocks
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
        return self.tree_.compute_feature_importances()

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
            With linear leaves, every node's cost is its linear model's.
        """
        # the fitted attributes that validation sets go to a clone
        validated = clone(self)
        data, sample_weight = mmit_training_data(validated, X, y, sample_weight)
        params = resolve_constraints(validated, self.get_params())
        (tree, _), = grow_unpruned(params, [params], data, sample_weight,
                                   draw_seed(check_random_state(self.random_state)))
        total_weight = tree.weighted_n_node_samples[0]
        _, alphas, costs, full_cost = pruning_sequence(tree, total_weight)
        return Bunch(ccp_alphas=np.r_[0.0, alphas], costs=np.r_[full_cost, costs])


MaxMarginIntervalTree = MMIT


def mmit_training_data(estimator, X, y, sample_weight):
    """The validated TrainingData and weights of an MMIT's fit, for its one
    tree (its fitted feature attributes set)."""
    X, lower, upper, sample_weight = validate_training_data(estimator, X, y, sample_weight)
    return (training_data(X, lower, upper, estimator.margin, estimator.max_features,
                          n_categories(estimator), single_build=True), sample_weight)


def hold_tree(model, tree, feature_names):
    """Give the MMIT ``model`` the fitted ``tree`` and the fitted attributes
    that go with it (its ``fit``, :meth:`MMIT.from_tree`, model files).
    Returns the model."""
    n_features = tree.n_features
    if feature_names is not None and len(feature_names) != n_features:
        raise ValueError(f"feature_names_in has {len(feature_names)} names for the "
                         f"{n_features} features of the tree.")
    model.tree_ = tree
    set_feature_attributes(model, n_features, feature_names)
    model.max_features_ = resolve_max_features(model.max_features, n_features)
    return model
