"""Leaf models: what the leaves (or all nodes) of a grown tree predict, as the
estimators declare them.

A leaf model is one entry of :data:`LEAF_MODELS` (the estimators'
``leaf_model`` options), a :class:`LeafModel` that fits its models on each
node's training rows (:meth:`LeafModel.fit`, compiled, no Python loop over
nodes) and gives the tree a ``NodeModels`` payload (``_node_models``: the
compiled models the tree's walk calls, opaque to the tree, pruning, export
and model files). The node costs it leaves in the tree are its models'
losses, which pruning uses.

Two leaf models:

- ``"constant"``: the constant of the criterion that grew the tree (no
  payload).
- ``"linear"``: each node holds a linear model of its rows shrunk toward
  its constant (``LinearNodeModels``, fitted by ``fit_linear_models``).

Adding a leaf model: a ``NodeModels`` subclass (its ``predict``, ``take``,
``describe``, ``state`` and a ``from_state``, registered in
``NODE_MODELS`` under its ``kind``) and a :class:`LeafModel` registered in
:data:`LEAF_MODELS`, which declares its name, its parameters
(:class:`LeafParameter`: default, constraint, cross-validation grid) and
what the estimators need to know of it.
"""

import itertools
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, make_constraint

from .._loss._loss import LOSSES, breakpoints
from ..linear_model._newton import NEWTON_LOSS
from ..linear_model._standardisation import StandardisedFeatures
from ._node_models import LinearNodeModels, fit_linear_models


class LeafParameter:
    """A parameter of a leaf model, as every tree estimator takes it.

    Parameters
    ----------
    name : str
        The estimators' parameter (in their ``__init__``).
    default : object
        Its default in every estimator.
    constraint : list
        Its scikit-learn parameter constraint.
    grid_name : str
        MMITCV's parameter holding the candidate values it tries.
    grid_default : tuple
        The default of ``grid_name``.
    """

    def __init__(self, name, default, constraint, grid_name, grid_default):
        self.name = name
        self.default = default
        self.constraint = constraint
        self.grid_name = grid_name
        self.grid_default = grid_default

    def grid_values(self, values):
        """The candidate values of a grid (``values``, array-like), checked:
        each of the default's type and satisfying the constraint."""
        try:
            checked = [type(self.default)(value) for value in np.ravel(values)]
        except (TypeError, ValueError):
            checked = []
        constraints = [make_constraint(option) for option in self.constraint]
        if not checked or not all(any(constraint.is_satisfied_by(value)
                                      for constraint in constraints) for value in checked):
            allowed = " or ".join(map(str, constraints))
            raise ValueError(f"{self.grid_name} must be a non-empty list of {self.name} "
                             f"values, each {allowed}, got {values!r}.")
        return checked


class LeafModel:
    """What a tree's leaves predict (abstract): one entry of LEAF_MODELS.

    ``fit(tree, features, targets, sample_weight, loss, all_nodes)`` returns
    the tree (grown on ``features``, a Features, and ``targets``, a
    HingeTargets) with its nodes' models (the leaves', or every node's when
    pruning may make any node a leaf), their costs in the tree's ``loss``.

    A subclass declares:

    - ``name``: its ``leaf_model`` option;
    - ``parameters``: its :class:`LeafParameter` (what :meth:`from_params`
      reads and MMITCV's grid tries);
    - ``limits_growth``: whether trees grown until every leaf fits its rows
      are refused (their models would be their constants);
    - ``predicts_leaf_values``: whether the tree predicts its leaves' values
      as the builder left them (a booster then takes its rows' predictions
      from the build);
    - ``reads_feature_values``: whether ``fit`` reads the features' values
      (``features.rows``), which binned features do not keep.
    """

    name = None
    parameters = ()
    limits_growth = False
    predicts_leaf_values = False
    reads_feature_values = False

    @classmethod
    def from_params(cls, params):
        """The leaf model of an MMIT's parameters."""
        return cls(**{parameter.name: params[parameter.name]
                      for parameter in cls.parameters})

    @classmethod
    def candidates(cls, grids):
        """The leaf-model parameters MMITCV tries for this leaf model: one
        per combination of its parameters' candidate values (``grids``: the
        values by ``grid_name``), the other leaf models' parameters at their
        defaults, in grid order."""
        defaults = {name: parameter.default for name, parameter in LEAF_PARAMETERS.items()}
        values = [parameter.grid_values(grids[parameter.grid_name])
                  for parameter in cls.parameters]
        return [{"leaf_model": cls.name, **defaults,
                 **{parameter.name: value
                    for parameter, value in zip(cls.parameters, combination, strict=True)}}
                for combination in itertools.product(*values)]

    def fit(self, tree, features, targets, sample_weight, loss, all_nodes):
        raise NotImplementedError


class ConstantLeaves(LeafModel):
    """The constant of the criterion that grew the tree: nothing to fit."""

    name = "constant"
    predicts_leaf_values = True

    def fit(self, tree, features, targets, sample_weight, loss, all_nodes):
        return tree


class LinearLeaves(LeafModel):
    """Linear models shrunk toward the nodes' constants (module doc).

    Parameters
    ----------
    leaf_shrinkage : float
        Positive strength of the ridge pull toward the constant.
    """

    name = "linear"
    parameters = (
        LeafParameter("leaf_shrinkage", 10.0, [Interval(Real, 0.0, None, closed="neither")],
                      "leaf_shrinkages", (1.0, 10.0, 100.0)),
    )
    limits_growth = True
    reads_feature_values = True

    def __init__(self, leaf_shrinkage):
        self.shrinkage = float(leaf_shrinkage)

    def fit(self, tree, features, targets, sample_weight, loss, all_nodes):
        """``tree`` (grown on ``features`` and ``targets``, a HingeTargets)
        with linear models in its leaves (or in every node); a node keeps its
        constant with fewer than two rows of positive weight, a cost of 0 or
        zero slopes. The models read the numeric features only: category
        codes have no order to be linear in (their slopes are 0)."""
        X = features.rows  # C-contiguous, NaN missing
        numeric = np.flatnonzero(np.asarray(features.n_categories) == 0)
        standardised = StandardisedFeatures(
            X if numeric.size == X.shape[1] else X[:, numeric], sample_weight)
        indptr, rows, nodes = node_rows(tree, X, sample_weight, all_nodes)
        values, costs = tree.value.copy(), tree.cost.copy()
        lower, upper = breakpoints(*targets.bounds, targets.margin)
        models, numeric_slopes = fit_linear_models(
            standardised.Z, lower, upper, sample_weight, indptr, rows, nodes,
            self.shrinkage, NEWTON_LOSS, LOSSES[loss].tag, values, costs)
        # the models' intercepts are at the standardised zero: the center
        slopes = np.zeros((numeric_slopes.shape[0], X.shape[1]))
        slopes[:, numeric] = numeric_slopes / standardised.scale
        center = np.zeros(X.shape[1])
        center[numeric] = standardised.mean
        return tree.with_node_models(LinearNodeModels(models, slopes, center), values,
                                     costs)


#: The leaf models, by name: what estimators accept as ``leaf_model``.
LEAF_MODELS = {model.name: model for model in (ConstantLeaves, LinearLeaves)}

#: Every leaf model's parameters, by name: what every tree estimator takes
#: besides ``leaf_model``.
LEAF_PARAMETERS = {parameter.name: parameter for model in LEAF_MODELS.values()
                   for parameter in model.parameters}


def leaf_model_of(params):
    """The LeafModel of an MMIT's parameters (``leaf_model`` and its
    parameters)."""
    return LEAF_MODELS[params["leaf_model"]].from_params(params)


def leaf_params_of(estimator):
    """An estimator's leaf-model parameters (``leaf_model`` and every
    :data:`LEAF_PARAMETERS` entry), by name."""
    return {name: getattr(estimator, name) for name in ("leaf_model", *LEAF_PARAMETERS)}


def node_rows(tree, X, sample_weight, all_nodes):
    """The training rows of positive weight of the leaves (or of every node)
    in compressed form: (indptr, rows, nodes), int64."""
    positive = sample_weight > 0.0
    if all_nodes:
        membership = tree.decision_path(X).tocsc()
        nodes = np.arange(tree.node_count)
        keep = positive[membership.indices]
        node_of_entry = np.repeat(nodes, np.diff(membership.indptr))
        counts = np.bincount(node_of_entry[keep], minlength=tree.node_count)
        rows = membership.indices[keep]
    else:
        leaves = tree.apply(X)
        candidates = np.flatnonzero(positive)
        order = candidates[np.argsort(leaves[candidates], kind="stable")]
        nodes, counts = np.unique(leaves[order], return_counts=True)
        rows = order
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, rows.astype(np.int64), nodes.astype(np.int64)
