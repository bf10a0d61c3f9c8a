"""The fit path shared by every estimator made of MMITs.

An estimator validates its input once
(:func:`~mmit._utils._validation.validate_training_data`), turns it into
:class:`TrainingData` (features sorted as the trees need them, interval
targets as sorted hinge breakpoints), and grows every tree through
:func:`grow_tree` with explicit inputs (the tree's parameters, the data,
the weights, a seed): the parameters resolved into one
:class:`~mmit.tree._builder.TreeBuilder` (:func:`tree_builder`), the tree built,
its leaf model (:mod:`mmit.tree._leaf_models`) fitted, the tree pruned.
:func:`grow_unpruned` is its variant for pruning paths (``MMITCV``,
``MMIT.cost_complexity_pruning_path``): one build, several leaf models
fitted in every node, nothing pruned. :meth:`MMIT.from_tree
<mmit.MMIT.from_tree>` makes a fitted MMIT of a tree. Forests, boosting and
model selection reuse the data across trees and stages instead of
re-validating.

The tree parameters' constraints are here; those of the leaf models'
parameters come from the leaf models' declarations.
"""

import time
from dataclasses import dataclass
from math import ceil
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from .._loss._loss import LOSSES
from .._utils._constraints import (
    INTERACTION_CST_CONSTRAINT,
    MONOTONIC_CST_CONSTRAINT,
    interaction_groups,
    monotonic_constraints,
)
from ._builder import TreeBuilder
from ._criterion import HingeTargets
from ._features import Features
from ._leaf_models import LEAF_MODELS, LEAF_PARAMETERS, leaf_model_of
from ._pruning import prune_at

# The default categorical_penalty: the least that keeps native splits as
# accurate as the codes' on data without a categorical signal (the user
# guide's categorical features page).
CATEGORICAL_PENALTY = 3.0

# depth limit standing for "no limit"
UNLIMITED_DEPTH = np.iinfo(np.int32).max
# seeds of the builder's own generator are drawn below this
MAX_SEED = np.iinfo(np.int32).max

# The cost model that decides where a tree stops keeping every feature's
# rows presorted (see _exact_splitter.pyx). A split of a node of m rows moves
# m entries in each of the p presorted lists; sorting a node's present values
# of one feature on demand costs about SORT_COST_RATIO * log2(m) such moves
# per row, and is done for the k = max_features features evaluated in each
# child. Presorted lists win while p < SORT_COST_RATIO * k * log2(m): fit
# times are flat around the ratio 1 (trees and forests, max_features="sqrt",
# 20 to 1000 features) and grow away from it.
SORT_COST_RATIO = 1.0

TREE_PARAMETER_CONSTRAINTS = {
    "margin": [Interval(Real, 0.0, None, closed="left")],
    "loss": [StrOptions(set(LOSSES))],
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
    "ccp_alpha": [Interval(Real, 0.0, np.inf, closed="both")],  # inf: the root alone
    "categorical_penalty": [Interval(Real, 0.0, None, closed="left")],
    "leaf_model": [StrOptions(set(LEAF_MODELS))],
    **{name: parameter.constraint for name, parameter in LEAF_PARAMETERS.items()},
    "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
    "interaction_cst": INTERACTION_CST_CONSTRAINT,
    "random_state": ["random_state"],
}


def tree_params(params):
    """The parameters of an ensemble's trees (their seeds aside) among the
    ensemble's ``params`` (``get_params()``)."""
    return {name: params[name] for name in TREE_PARAMETER_CONSTRAINTS
            if name != "random_state"}


def grows_until_leaves_fit(params, n_samples):
    """Whether an MMIT with ``params`` has no limit on its growth (depth,
    leaves, leaf or split size, cost decrease, pruning): it then splits each
    node until no split lowers its cost, which leaves (margin 0) fit their
    rows exactly, and a linear model of such a leaf is its constant."""
    split, leaf = resolve_sample_counts(params, n_samples)
    return (params["max_depth"] is None and params["max_leaf_nodes"] is None
            and leaf <= 1 and split <= 2 and params["min_cost_decrease"] == 0.0
            and params.get("ccp_alpha", 0.0) == 0.0)


def check_leaf_model_growth(params, n_samples):
    """Refuse a leaf model that limits growth (linear leaves) on trees grown
    until every leaf fits its rows (:func:`grows_until_leaves_fit`): they
    would silently be constant."""
    name = params["leaf_model"]
    if LEAF_MODELS[name].limits_growth and grows_until_leaves_fit(params, n_samples):
        raise ValueError(
            f"leaf_model={name!r} needs trees whose growth is limited: grown until "
            "no split lowers a leaf's cost (max_depth=None, max_leaf_nodes=None, "
            "min_samples_leaf=1, min_samples_split=2, min_cost_decrease=0, "
            "ccp_alpha=0), a leaf fits its rows, and its model is its "
            "constant. Limit the growth (for example min_samples_leaf=20, "
            "max_depth=6 or ccp_alpha > 0) or use constant leaves.")


def resolve_constraints(estimator, params, leaf_models=None):
    """``params`` (an MMIT's, as the estimator's fit grows its trees) with
    the fitted ``estimator``'s constraints resolved as the builder takes
    them: ``monotonic_cst`` the int8 array, or None
    (:func:`~mmit._utils._constraints.monotonic_constraints`), and
    ``interaction_cst`` (``params``'s) the bitsets of the groups, or None
    (:func:`~mmit._utils._constraints.interaction_groups`).

    Leaf models other than constants (``leaf_models``, default
    ``params["leaf_model"]``) are refused with a constraint: a linear
    leaf's slopes are not constrained, so the tree would not be monotone
    within its leaves, and they read every feature, so a leaf would make
    its path's features interact with all the others."""
    constraints = monotonic_constraints(estimator)
    groups = interaction_groups(params["interaction_cst"], estimator.n_features_in_)
    leaf_models = [params["leaf_model"]] if leaf_models is None else list(leaf_models)
    if set(leaf_models) != {"constant"}:
        for name, given, reason in (
                ("monotonic_cst", constraints, "a linear leaf's slopes are not "
                 "constrained, so the tree would not be monotone within its leaves"),
                ("interaction_cst", groups, "a linear leaf reads every feature, so "
                 "its path's features would interact with all the others")):
            if given is not None:
                raise ValueError(f"{name} needs constant leaves (leaf_model='constant', "
                                 f"got {leaf_models}): {reason}.")
    return {**params, "monotonic_cst": constraints, "interaction_cst": groups}


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


def presort_min_rows(n_features, max_features):
    """Rows from which a node keeps its children's rows in presorted lists.

    Below, a subtree sorts each evaluated feature on demand: cheaper when
    ``n_features > SORT_COST_RATIO * max_features * log2(rows)`` (see
    ``SORT_COST_RATIO``). With every feature evaluated, every node of two
    rows or more keeps presorted lists.
    """
    exponent = n_features / (SORT_COST_RATIO * max_features)
    return ceil(2.0 ** exponent) if exponent < 62 else 2**62


@dataclass(frozen=True)
class TrainingData:
    """Validated training data, prepared once for every tree grown on it.

    ``features`` (a :class:`~mmit.tree._features.Features`) may be shared by data
    with other targets (other margins, boosting stages); ``targets`` (a
    :class:`~mmit.tree._criterion.HingeTargets`) holds the interval bounds as
    sorted hinge breakpoints, or is a criterion kept from one boosting stage
    to the next (``TreeBuilder.stage_criterion``).
    """

    features: Features
    targets: HingeTargets

    @property
    def n_samples(self):
        return self.features.n_samples

    @property
    def n_features(self):
        return self.features.n_features


def prepare_features(X, max_features, n_categories=None, single_build=False):
    """Features for trees evaluating ``max_features`` per node: presorted
    when the root of a tree grown on all rows would keep presorted lists;
    ``n_categories`` per feature for categorical features (0: numeric);
    ``single_build``: one tree grows on them (its split search partitions
    their presorted order rather than a copy)."""
    n_samples, n_features = X.shape
    k = resolve_max_features(max_features, n_features)
    return Features(X, n_samples >= presort_min_rows(n_features, k), n_categories,
                    single_build)


def training_data(X, lower, upper, margin, max_features, n_categories=None,
                  single_build=False):
    """TrainingData of validated X and bounds, for trees with this margin and
    ``max_features`` (``n_categories``: see :func:`prepare_features`);
    ``single_build``: one tree grows on them, whose split search and
    criterion take the presorted order and the sorted breakpoints rather
    than copies."""
    return TrainingData(prepare_features(X, max_features, n_categories, single_build),
                        HingeTargets(lower, upper, float(margin),
                                     single_build=single_build))


def resolve_sample_counts(params, n_samples):
    """``min_samples_split`` and ``min_samples_leaf`` as numbers of rows (a
    fraction is of ``n_samples``)."""
    split = params["min_samples_split"]
    leaf = params["min_samples_leaf"]
    if not isinstance(split, Integral):
        split = max(2, ceil(split * n_samples))
    if not isinstance(leaf, Integral):
        leaf = max(1, ceil(leaf * n_samples))
    return split, leaf


def tree_builder(params, n_samples, n_features, prunable=False):
    """The TreeBuilder of an MMIT's parameters, every one resolved once.

    Fractions of samples (``min_samples_split``, ``min_samples_leaf``) are
    taken of ``n_samples``, the rows of X, as scikit-learn does (not of the
    rows of positive weight of a bootstrap sample); ``monotonic_cst`` and
    ``interaction_cst`` are the fitted estimator's, resolved by
    :func:`resolve_constraints`; ``prunable``: the tree will be pruned (a
    monotone tree's subtrees must be monotone too).
    """
    split, leaf = resolve_sample_counts(params, n_samples)
    max_depth = params["max_depth"]
    max_leaf_nodes = params["max_leaf_nodes"]
    max_features = resolve_max_features(params["max_features"], n_features)
    return TreeBuilder(
        LOSSES[params["loss"]],
        UNLIMITED_DEPTH if max_depth is None else max_depth,
        split,
        leaf,
        max_features,
        -1 if max_leaf_nodes is None else max_leaf_nodes,
        params["min_cost_decrease"],
        presort_min_rows(n_features, max_features),
        params["categorical_penalty"],
        params["monotonic_cst"],
        params["interaction_cst"],
        prunable,
    )


def grow_tree(params, data, sample_weight, seed, *, builder=None, row_values=None,
              n_threads=1):
    """The tree of an MMIT grown on training data: built, its leaf model
    fitted, pruned. What every estimator made of MMITs fits a tree with,
    once its input is checked; computes only.

    Parameters
    ----------
    params : dict
        The MMIT's parameters (``get_params()``; ``margin`` and
        ``random_state`` are those of ``data`` and ``seed``).
    data : TrainingData
        Features and targets.
    sample_weight : ndarray of shape (n_samples,)
        Validated weights.
    seed : int
        Seed of the builder's feature order.
    builder : TreeBuilder, default=None
        The builder of ``params`` (:func:`tree_builder`), when the caller
        grows many trees; made here if None.
    row_values : ndarray of shape (n_samples,), default=None
        If given, each row of positive weight gets its leaf's value, which
        is the tree's prediction of it: only with a leaf model whose
        predictions are the leaves' values (``predicts_leaf_values``) and
        without pruning.
    n_threads : int, default=1
        Threads of a histogram split search (binned features).

    Returns
    -------
    tree : Tree
        Pruned at ``params["ccp_alpha"]``.
    """
    leaf_model = leaf_model_of(params)
    ccp_alpha = params["ccp_alpha"]
    if row_values is not None and (not leaf_model.predicts_leaf_values or ccp_alpha > 0.0):
        raise ValueError(f"row_values are the predictions only with leaves that predict "
                         f"their values (not leaf_model={params['leaf_model']!r}) and "
                         "without pruning.")
    tree = _build(params, data, sample_weight, seed, builder, row_values, n_threads,
                  prunable=ccp_alpha > 0.0)
    # every node needs its model when pruning may make it a leaf
    return prune_at(leaf_model.fit(tree, data.features, data.targets, sample_weight,
                                   params["loss"], ccp_alpha > 0.0), ccp_alpha)


def grow_unpruned(params, leaf_params, data, sample_weight, seed, prunable=True):
    """The unpruned trees of :func:`grow_tree` for several leaf models, each
    model fitted in every node, so that every pruned subtree (the pruning
    path, :func:`~mmit.tree._pruning.leaf_alphas`) has its leaves' models: one
    tree built, then each leaf model fitted when the next tree is asked
    for.

    Parameters
    ----------
    params : dict
        The growth's parameters, as for :func:`grow_tree` (its leaf-model
        parameters and ``ccp_alpha`` unused).
    leaf_params : list of dict
        Each leaf model's parameters (``leaf_model`` and its parameters; other
        entries are ignored).
    data, sample_weight, seed
        As for :func:`grow_tree`.
    prunable : bool, default=True
        Monotone trees: grown for pruning (every subtree monotone), or as
        :func:`grow_tree` grows them without ``ccp_alpha``, whose growth's
        prefixes are the monotone subtrees
        (:func:`~mmit.tree._pruning.growth_alphas`).

    Yields
    ------
    tree : Tree
        The tree with the models of ``leaf_params[k]``.
    seconds : float
        Time taken by the build and that leaf model's fit.
    """
    start = time.perf_counter()
    grown = _build(params, data, sample_weight, seed, prunable=prunable)
    build_seconds = time.perf_counter() - start
    for leaf in leaf_params:
        start = time.perf_counter()
        tree = leaf_model_of(leaf).fit(grown, data.features, data.targets, sample_weight,
                                       params["loss"], all_nodes=True)
        yield tree, build_seconds + time.perf_counter() - start


def _build(params, data, sample_weight, seed, builder=None, row_values=None, n_threads=1,
           prunable=False):
    """The tree of constants of ``params`` (see :func:`grow_tree`)."""
    if builder is None:
        builder = tree_builder(params, data.n_samples, data.n_features, prunable=prunable)
    return builder.build(data.features, data.targets, sample_weight, seed, row_values,
                         n_threads)


def draw_seed(random_state):
    """A seed for the tree builder's own generator, drawn from a RandomState."""
    return int(random_state.randint(1, MAX_SEED))
