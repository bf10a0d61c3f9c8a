"""TreeOfPredictors: a tree whose every node holds the model of a library that
predicts its region best, its leaves weighing the models on their path
(trees of predictors, Yoon, Zame and van der Schaar 2018).

The estimator: its parameters, the fit (the search, ``_predictor_tree_search``,
on the training rows, then the kept nodes' predictors refitted), the
predictions along the fitted tree (``_predictor_tree``), their
explanation, distributions and model file.
"""

from numbers import Integral, Real

import numpy as np
from joblib import Parallel
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import _BaseComposition
from sklearn.utils.validation import check_is_fitted, validate_data

from .._utils._base import IntervalRegressorMixin, set_init_parameters
from .._utils._categorical import is_dataframe
from .._utils._dask_collections import by_partitions
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._protocols import RowWeightedExplainer
from .._utils._sparse import by_row_blocks
from .._utils._validation import validate_training_data
from ..linear_model._linear import IntervalLinearRegressionCV
from ..tree._export import resolve_feature_names
from ..tree._growing import draw_seed
from ._boosting import MMITBoost
from ._distribution_strategies import SpreadDistribution
from ._distributions import ForestDistribution
from ._forest import MMITForest
from ._held_out_distributions import HeldOutDistributionMixin, held_out_distribution
from ._predictor_tree import LEAF, MIX, MemberMix, PredictorTree
from ._predictor_tree_search import (
    DECILES,
    FoldRows,
    HoldoutRows,
    PredictorTreeSearch,
    predictor_tree_of,
    split_columns,
)
from ._stacking import listed_members, members_to_fit


def default_library(random_state):
    """The default members, each seeded from ``random_state`` (the evidence
    behind them: the defaults page of the docs)."""
    return [
        ("linear", IntervalLinearRegressionCV()),
        ("forest", MMITForest(n_estimators=50, random_state=draw_seed(random_state))),
        ("boost", MMITBoost(n_estimators=30, learning_rate=0.15,
                            random_state=draw_seed(random_state))),
    ]


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

    @fit_method(nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the tree: every node's predictor, its split and each leaf's
        path weights.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, passed to the members that take them and
            weighing the held-out losses and the path weights.

        %(fit_returns)s
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
            held_out = HoldoutRows(n_samples, seed)
        else:
            if self.validation > n_samples:
                raise ValueError(f"validation={self.validation} folds need at least "
                                 f"{self.validation} samples; got n_samples={n_samples}.")
            held_out = FoldRows(self.validation, n_samples, seed)
        columns, splittable = split_columns(X)
        pool = Parallel(n_jobs=self.n_jobs, prefer="threads")
        grower = PredictorTreeSearch(self, X, columns, splittable, y, lower, upper, weight,
                         None if sample_weight is None else weight, members, held_out,
                         pool)
        kept = grower.grow()
        self.estimators_ = grower.predictors(
            kept, refit=self.validation == "holdout" and self.refit)
        self.tree_ = predictor_tree_of(kept, grower, self.max_depth)
        self.estimator_names_ = [name for name, _ in members]
        self.n_fits_ = grower.n_fits
        self.distribution_ = held_out_distribution(
            self.distribution, X, lower, upper, weight,
            grower.held_out_predictions(kept, self.tree_), random_state)
        return self

    def _routing_columns(self, X):
        """A function giving the values of a feature for the rows of ``X`` (as
        ``PredictorTree.leaves_of`` reads them)."""
        return split_columns(X)[0]

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
