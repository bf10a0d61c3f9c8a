"""Saving fitted models in a safe format: plain arrays and JSON, no pickle.

A model file is a NumPy ``.npz`` archive holding a JSON document
(``metadata``: format name and version, then the model's description) and
the model's arrays. A description names the estimator class, its
parameters and fitted values; its arrays are stored under a prefix (empty
for the saved model itself), so that a model made of models (a stack, a
pipeline) describes each member under its own prefix. Loading never
unpickles anything, and checks every part before building the estimator.

Format versions: 5 adds the predictive distributions of forests (the
training rows' leaves and intervals, and the forest that weighs them); 4
adds the linear models, pipelines of the imputer and a model, and stacks
(a version-4 file of a tree model is laid out as in version 3); 3 stores
the linear models of trees with linear leaves (each node's model row, the
slopes and the center); 2 (mmit 0.2) stores where each node sends missing
values; files of versions 1 to 4 still load (forests without
distributions), those of version 1 sending a missing value to the heavier
child (their trees were grown without missing values).
"""

import dataclasses
import json
import zipfile

import numpy as np
from sklearn.model_selection import KFold
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ._boosting import MMITBoost
from ._classes import MMIT
from ._fitting import set_fitted_attributes
from ._forest import MMITForest, TreeSamples
from ._imputation import MeanImputer
from ._linear import IntervalLinearRegression, IntervalLinearRegressionCV
from ._predictive import (
    ForestDistribution,
    LeafSamples,
    LocationDistribution,
    SpreadDistribution,
)
from ._stacking import IntervalStackingRegressor
from ._tree import Tree

__all__ = ["save_model", "load_model"]

FORMAT = "mmit-model"
VERSION = 5
READABLE_VERSIONS = (1, 2, 3, 4, 5)
_TREE_MODELS = {"MMIT": MMIT, "MMITForest": MMITForest, "MMITBoost": MMITBoost}
# the fitted attributes of a boosted model besides its trees (plain values)
_BOOSTING_ATTRIBUTES = ("baseline_prediction_", "margin_", "train_score_",
                        "validation_score_")
# the fitted attributes of the other models: (arrays, plain values)
_FITTED = {
    "IntervalLinearRegression": (IntervalLinearRegression, (
        "coef_", "data_min_", "data_max_"), ("intercept_", "n_iter_")),
    "IntervalLinearRegressionCV": (IntervalLinearRegressionCV, (
        "coef_", "data_min_", "data_max_", "alphas_", "margins_", "mse_path_"), (
        "intercept_", "n_iter_", "alpha_", "margin_")),
    "MeanImputer": (MeanImputer, ("fill_values_", "indicator_features_"), ()),
    "IntervalStackingRegressor": (IntervalStackingRegressor, (
        "weights_", "cv_predictions_", "cv_scores_"), ()),
}
SAVED_MODELS = ("MMIT, MMITForest, MMITBoost, IntervalLinearRegression(CV), "
                "IntervalStackingRegressor, or a Pipeline of mmit's MeanImputer and one "
                "of them")


def _json_value(name, value):
    """A parameter value as JSON (a KFold as its settings)."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_value(name, v) for v in np.asarray(value).tolist()]
    if type(value) in (SpreadDistribution, LocationDistribution):
        return {type(value).__name__: {field.name: _json_value(field.name,
                                                              getattr(value, field.name))
                                       for field in dataclasses.fields(value)}}
    if type(value) is KFold and (value.random_state is None
                                 or isinstance(value.random_state, int)):
        return {"KFold": {"n_splits": value.n_splits, "shuffle": value.shuffle,
                          "random_state": value.random_state}}
    raise TypeError(f"cannot save the parameter {name}={value!r} (use plain values).")


_PARAMETER_OBJECTS = {"KFold": KFold, "SpreadDistribution": SpreadDistribution,
                      "LocationDistribution": LocationDistribution}


def _parameter(value):
    """A parameter value from JSON (an object from its settings)."""
    if isinstance(value, dict) and len(value) == 1 and set(value) <= set(
            _PARAMETER_OBJECTS):
        [(name, settings)] = value.items()
        return _PARAMETER_OBJECTS[name](**settings)
    return value


def _params(model, skip=()):
    return {key: _json_value(key, value)
            for key, value in model.get_params(deep=False).items() if key not in skip}


def _features(model):
    names = getattr(model, "feature_names_in_", None)
    return {"n_features_in": int(model.n_features_in_),
            "feature_names_in": None if names is None else [str(f) for f in names]}


def _describe(model, prefix, arrays):
    """The JSON description of a fitted model; its arrays go to ``arrays``
    under ``prefix``."""
    model = getattr(model, "best_estimator_", model)
    name = type(model).__name__
    if isinstance(model, Pipeline) and name == "Pipeline":
        steps = []
        for k, (step_name, step) in enumerate(model.steps):
            if step is None or step == "passthrough":
                raise TypeError("cannot save a pipeline with 'passthrough' steps.")
            steps.append({"name": step_name,
                          **_describe(step, f"{prefix}step{k}_", arrays)})
        return {"estimator": "Pipeline", "steps": steps}
    check_is_fitted(model)
    if name in _TREE_MODELS and type(model) is _TREE_MODELS[name]:
        return _describe_trees(model, name, prefix, arrays)
    if name not in _FITTED or type(model) is not _FITTED[name][0]:
        raise TypeError(f"save_model saves {SAVED_MODELS}; not {name}.")
    _, array_names, value_names = _FITTED[name]
    description = {"estimator": name, **_features(model),
                   "values": {v: _json_value(v, getattr(model, v)) for v in value_names}}
    for array in array_names:
        arrays[f"{prefix}{array.rstrip('_')}"] = np.asarray(getattr(model, array))
    if isinstance(model, IntervalStackingRegressor):
        description["params"] = _params(model, skip=("estimators",))
        description["default_members"] = model.estimators is None
        description["members"] = [
            {"name": member, **_describe(estimator, f"{prefix}member{k}_", arrays)}
            for k, (member, estimator) in enumerate(model.named_estimators_.items())]
    else:
        description["params"] = _params(model)
    return description


def _describe_trees(model, name, prefix, arrays):
    trees = [model.tree_] if isinstance(model, MMIT) else [
        tree.tree_ for tree in model.estimators_]
    description = {
        "estimator": name,
        "params": _params(model),
        **_features(model),
        "max_features": int(model.max_features_),
        "n_trees": len(trees),
        "tree_random_states": (None if name == "MMIT" else
                               [tree.random_state for tree in model.estimators_]),
    }
    if name == "MMITBoost":
        description["boosting"] = {
            attribute: np.asarray(getattr(model, attribute)).tolist()
            for attribute in _BOOSTING_ATTRIBUTES}
    for k, tree in enumerate(trees):
        for name, array in tree.__getstate__().items():
            if name != "max_depth":  # recomputed on loading
                arrays[f"{prefix}tree{k}_{name}"] = array
    distribution = getattr(model, "distribution_", None)
    if distribution is not None:
        description["distribution"] = _describe_distribution(distribution.fitted(model),
                                                             prefix, arrays)
    return description


def _describe_distribution(distribution, prefix, arrays):
    """A forest's predictive distributions: the rows' leaves and intervals,
    the weights of the weighting forest's rows, and that forest (when it is
    not the forest itself)."""
    samples = distribution.samples
    arrays[f"{prefix}distribution_leaves"] = samples.leaves
    arrays[f"{prefix}distribution_lower"] = samples.lower
    arrays[f"{prefix}distribution_upper"] = samples.upper
    arrays[f"{prefix}distribution_weight"] = samples.tree_weights.sample_weight
    description = {"kind": distribution.kind}
    if distribution.kind == "spread":
        arrays[f"{prefix}distribution_location"] = distribution.out_of_bag_location
        description["weighting"] = _describe_trees(distribution.weighting, "MMITForest",
                                                   f"{prefix}spread_", arrays)
    return description


def save_model(model, path):
    """Save a fitted model as arrays and JSON.

    Parameters
    ----------
    model : estimator
        A fitted :class:`MMIT`, :class:`MMITForest`, :class:`MMITBoost`,
        :class:`IntervalLinearRegression`, :class:`IntervalLinearRegressionCV`
        or :class:`IntervalStackingRegressor` (its members among these, or
        pipelines of mmit's imputer and one of them, as its default linear
        member). A search (``MMITCV``, ``MMITForestCV``, also as a member)
        saves its ``best_estimator_``.
    path : str or path-like
        Destination file (NumPy writes ``.npz`` archives).

    Raises
    ------
    TypeError
        For another estimator (scikit-learn's, say), or a parameter that is
        not a plain value.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from mmit import MMIT, save_model, load_model
    >>> X, y = np.arange(6.0).reshape(-1, 1), np.arange(6.0)
    >>> model = MMIT(max_depth=2).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> save_model(model, path)
    >>> np.array_equal(load_model(path).predict(X), model.predict(X))
    True
    """
    arrays = {}
    metadata = {"format": FORMAT, "version": VERSION, **_describe(model, "", arrays)}
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    with open(path, "wb") as file:
        np.savez_compressed(file, **arrays)


def load_model(path):
    """Load a model saved by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    model : estimator
        The fitted estimator; it predicts as the saved one did.

    Raises
    ------
    ValueError
        If the file is not an mmit model file, or is damaged.
    """
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path} is not an mmit model file (not an .npz archive).")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        raise ValueError(f"{path} is a damaged mmit model file (unreadable archive).") \
            from None
    try:
        metadata = json.loads(bytes(arrays.pop("metadata")).decode())
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError, TypeError):
        raise ValueError(f"{path} is not an mmit model file (no metadata).") from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ValueError(f"{path} is not an mmit model file.")
    if metadata.get("version") not in READABLE_VERSIONS:
        raise ValueError(f"{path} has model format version {metadata.get('version')!r}; "
                         f"this mmit reads versions "
                         f"{', '.join(map(str, READABLE_VERSIONS))}.")
    try:
        return _build(metadata, "", arrays)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise ValueError(f"{path} is a damaged mmit model file ({error}).") from None


def _feature_names(description):
    n_features = int(description["n_features_in"])
    names = description["feature_names_in"]
    if names is not None and len(names) != n_features:
        raise ValueError("the number of feature names does not match")
    return n_features, None if names is None else np.array(names, dtype=object)


def _build(description, prefix, arrays):
    name = description["estimator"]
    if name == "Pipeline":
        steps = [(step["name"], _build(step, f"{prefix}step{k}_", arrays))
                 for k, step in enumerate(description["steps"])]
        return Pipeline(steps)
    if name in _TREE_MODELS:
        return _build_trees(description, prefix, arrays)
    cls, array_names, value_names = _FITTED[name]
    params = {key: _parameter(value) for key, value in description["params"].items()}
    if cls is IntervalStackingRegressor:
        members = [(member["name"], _build(member, f"{prefix}member{k}_", arrays))
                   for k, member in enumerate(description["members"])]
        params["estimators"] = None if description["default_members"] else members
    model = cls(**params)
    model._validate_params()
    n_features, names = _feature_names(description)
    set_fitted_attributes(model, n_features, names)
    for array in array_names:
        setattr(model, array, arrays[f"{prefix}{array.rstrip('_')}"])
    for value in value_names:
        setattr(model, value, description["values"][value])
    _check_fitted_arrays(model, n_features)
    if cls is IntervalStackingRegressor:
        model.estimators_ = [member for _, member in members]
        model.named_estimators_ = Bunch(**dict(members))
        for member_name, member in members:
            if _input_features(member) != n_features:
                raise ValueError(f"member {member_name!r} has the wrong number of features")
        if model.weights_.shape != (len(members),):
            raise ValueError("the number of weights does not match the members")
    return model


def _input_features(model):
    return (model[0] if isinstance(model, Pipeline) else model).n_features_in_


def _check_fitted_arrays(model, n_features):
    """Shapes, types and values that prediction relies on."""
    def vector(value, length, dtype=np.float64):
        array = np.asarray(value)
        if array.dtype != dtype or array.shape != (length,):
            raise ValueError("a fitted array has the wrong shape or type")
        return array

    if isinstance(model, (IntervalLinearRegression, IntervalLinearRegressionCV)):
        for array in (model.coef_, model.data_min_, model.data_max_):
            if not np.all(np.isfinite(vector(array, n_features))):
                raise ValueError("a linear model's arrays are not finite")
        model.intercept_ = float(model.intercept_)
    elif isinstance(model, MeanImputer):
        vector(model.fill_values_, n_features)
        indicators = model.indicator_features_
        if indicators.ndim != 1 or not np.issubdtype(indicators.dtype, np.integer) or (
                indicators.size and (indicators.min() < 0 or indicators.max() >= n_features
                                     or np.any(np.diff(indicators) <= 0))):
            raise ValueError("invalid indicator features")
    elif isinstance(model, IntervalStackingRegressor):
        weights = model.weights_
        if weights.ndim != 1 or weights.dtype != np.float64 or np.any(weights < 0) or (
                abs(weights.sum() - 1.0) > 1e-9):
            raise ValueError("the weights are not convex")


def _build_trees(metadata, prefix, arrays):
    cls = _TREE_MODELS[metadata["estimator"]]
    n_features, names = _feature_names(metadata)
    trees = []
    for k in range(int(metadata["n_trees"])):
        # the tree's state: its arrays, whatever its node models store
        tree_prefix = f"{prefix}tree{k}_"
        state = {key[len(tree_prefix):]: array for key, array in arrays.items()
                 if key.startswith(tree_prefix)}
        tree = Tree(n_features)
        tree.__setstate__({"max_depth": 0, **state})
        trees.append(tree)
    model = cls(**{key: _parameter(value) for key, value in metadata["params"].items()})
    seeds = [None] if cls is MMIT else metadata["tree_random_states"]
    if not trees or len(seeds) != len(trees):
        raise ValueError("the number of trees does not match")
    if cls is MMITBoost:
        boosting = metadata["boosting"]
        model.baseline_prediction_ = float(boosting["baseline_prediction_"])
        model.margin_ = float(boosting["margin_"])  # the stages' trees have it
        model.train_score_ = np.array(boosting["train_score_"], dtype=np.float64)
        model.validation_score_ = np.array(boosting["validation_score_"],
                                           dtype=np.float64)
    if cls is MMIT:
        return model._set_tree(trees[0], n_features, names)
    model.estimators_ = [model._tree(seed)._set_tree(tree, n_features, names)
                         for seed, tree in zip(seeds, trees, strict=True)]
    if cls is MMITBoost:
        model.n_iter_ = len(model.estimators_)
    set_fitted_attributes(model, n_features, names, int(metadata["max_features"]))
    if cls is MMITForest:
        model.distribution_ = (_build_distribution(model, metadata["distribution"], prefix,
                                                   arrays)
                               if "distribution" in metadata else None)
    return model


def _build_distribution(model, description, prefix, arrays):
    kind = description["kind"]
    if kind not in ("location", "spread"):
        raise ValueError(f"unknown distribution {kind!r}")
    weighting = (model if kind == "location" else
                 _build_trees(description["weighting"], f"{prefix}spread_", arrays))
    leaves = np.asarray(arrays[f"{prefix}distribution_leaves"])
    lower, upper, weight = (np.asarray(arrays[f"{prefix}distribution_{name}"])
                            for name in ("lower", "upper", "weight"))
    node_counts = np.array([tree.tree_.node_count for tree in weighting.estimators_])
    n_samples = leaves.shape[0]
    if (leaves.dtype != np.int32 or leaves.ndim != 2
            or leaves.shape[1] != len(weighting.estimators_)
            or any(a.dtype != np.float64 or a.shape != (n_samples,)
                   for a in (lower, upper, weight))
            or np.any(leaves < 0) or np.any(leaves >= node_counts)
            or np.any(np.isnan(lower) | np.isnan(upper) | (lower > upper))
            or np.any(~(weight >= 0)) or not np.any(weight > 0)):
        raise ValueError("the predictive distributions' arrays are inconsistent")
    seeds = tuple(tree.random_state for tree in weighting.estimators_)
    samples = LeafSamples(leaves, node_counts, lower, upper,
                          TreeSamples(seeds, weight, weighting._bootstrap(weight)))
    location = None
    if kind == "spread":
        location = np.asarray(arrays[f"{prefix}distribution_location"], dtype=np.float64)
        if location.shape != (n_samples,):
            raise ValueError("the out-of-bag locations do not match the rows")
    return ForestDistribution(kind, weighting, samples, location)
