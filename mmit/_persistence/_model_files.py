"""Saving fitted models in a safe format: plain arrays and JSON, no pickle.

A model file is a NumPy ``.npz`` archive holding a JSON document
(``metadata``: format name and version, then the model's description) and
the model's arrays. A description names the estimator class (its kind, a
public estimator of ``mmit._registry``, or a scikit-learn ``Pipeline`` of
them), its parameters, its features and its fitted
state, which the estimator itself exports (``_export_state(writer)``,
returning the JSON part and writing its arrays through a
:class:`StateWriter`) and imports (``_import_state(state, reader)``,
reading them through a :class:`StateReader`, which checks what it reads).
Arrays are stored under a prefix (empty for the saved model itself), so
that a model made of models (a stack, a pipeline, a forest's spread
forest) describes each member under its own prefix. This module knows
only the file: the header, the versions, the parameters as JSON, the
trees' arrays, and damaged files. Loading never unpickles anything, and
checks every part before building the estimator.

A file records the oldest format version that reads what it holds (its
models' ``writer.requires``); files of every earlier version load. What
each version added is in the changelog (``CHANGELOG.md``).
"""

import dataclasses
import json
import zipfile

import numpy as np
from sklearn.model_selection import KFold
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from .._registry import model_kinds
from .._utils._base import set_feature_attributes
from .._utils._categorical import fitted_encoding, takes_categorical_features
from .._utils._files import replacing_file
from ..ensemble._distribution_strategies import LocationDistribution, SpreadDistribution
from ..tree._tree import Tree

__all__ = ["save_model", "load_model"]

FORMAT = "mmit-model"
#: The newest format version this writes; a file records the oldest one
#: that reads what it holds (its models' ``writer.requires``).
VERSION = 8
#: The version of a file without a part newer than it.
BASE_VERSION = 7
#: The version of a file of a model with monotone or interaction constraints.
CONSTRAINTS_FILE_VERSION = 8
#: The parameters of those constraints (left out of a file when None).
CONSTRAINT_PARAMETERS = frozenset({"monotonic_cst", "interaction_cst"})
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8)
#: The estimators a model file holds, by the name it records: every public
#: estimator (``mmit._registry``); each exports and imports its own fitted state.
MODEL_KINDS = model_kinds()
#: The objects a parameter may hold, saved as their settings.
PARAMETER_KINDS = {cls.__name__: cls for cls in (
    KFold, SpreadDistribution, LocationDistribution)}
SAVED_MODELS = f"{', '.join(MODEL_KINDS)} and pipelines of them"


def _json_value(name, value):
    """A parameter or state value as JSON (an object of PARAMETER_KINDS as its
    settings)."""
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        items = value.tolist() if isinstance(value, np.ndarray) else value
        return [_json_value(name, v) for v in items]
    if isinstance(value, dict):
        return {key: _json_value(key, v) for key, v in value.items()}
    kind = type(value).__name__
    if PARAMETER_KINDS.get(kind) is type(value) and dataclasses.is_dataclass(value):
        return {kind: {field.name: _json_value(field.name, getattr(value, field.name))
                       for field in dataclasses.fields(value)}}
    if type(value) is KFold and (value.random_state is None
                                 or isinstance(value.random_state, int)):
        return {"KFold": {"n_splits": value.n_splits, "shuffle": value.shuffle,
                          "random_state": value.random_state}}
    raise TypeError(f"cannot save the parameter {name}={value!r} (use plain values).")


def _parameter(value):
    """A parameter value from JSON (an object of PARAMETER_KINDS from its
    settings)."""
    if isinstance(value, dict) and len(value) == 1 and set(value) <= set(PARAMETER_KINDS):
        [(kind, settings)] = value.items()
        return PARAMETER_KINDS[kind](**settings)
    return value


class StateWriter:
    """Where an estimator's ``_export_state`` puts its arrays: under the
    writer's prefix, beside those of the other models of the file."""

    def __init__(self, arrays, prefix="", versions=None):
        self._arrays = arrays
        self._prefix = prefix
        self._versions = [BASE_VERSION] if versions is None else versions

    @property
    def version(self):
        """The oldest format version that reads what was written."""
        return max(self._versions)

    def requires(self, version):
        """Record that what is written needs a reader of format ``version``."""
        self._versions.append(version)

    def array(self, name, value):
        """Store ``value`` as the array ``name``."""
        self._arrays[f"{self._prefix}{name}"] = np.asarray(value)

    def trees(self, trees):
        """Store the arrays of ``trees`` (``Tree`` objects); returns the JSON
        part of their state: their number and each one's node-model kind."""
        kinds = []
        for k, tree in enumerate(trees):
            state = tree.__getstate__()
            self.array(f"tree{k}_nodes", state["nodes"])
            self.array(f"tree{k}_values", state["values"])
            self.array(f"tree{k}_category_sets", state["category_sets"])
            self.array(f"tree{k}_category_words", state["category_words"])
            node_models = state["node_models"] or {"kind": None}
            kinds.append(node_models["kind"])
            for name, array in node_models.items():
                if name != "kind":
                    self.array(f"tree{k}_node_models_{name}", array)
        return {"n_trees": len(trees), "tree_node_models": kinds}

    def model(self, name, model):
        """The description of a member ``model`` (its arrays under ``name``)."""
        return _describe(model, StateWriter(self._arrays, f"{self._prefix}{name}_",
                                            self._versions))

    def settings(self, model):
        """The description of an unfitted ``model`` that a fitted model keeps
        (a member of a library): its kind and parameters, no arrays."""
        name = type(model).__name__
        if isinstance(model, Pipeline) and name == "Pipeline":
            return {"estimator": "Pipeline", "steps": [
                {"name": step_name, **self.settings(step)}
                for step_name, step in model.steps]}
        if MODEL_KINDS.get(name) is not type(model):
            raise TypeError(f"save_model saves members that are {SAVED_MODELS}; not "
                            f"{name}.")
        return {"estimator": name, "params": {
            key: _json_value(key, value)
            for key, value in model.get_params(deep=False).items()}}


class StateReader:
    """What an estimator's ``_import_state`` reads its arrays from; every read
    is checked, a damaged file raising ValueError (KeyError for a missing
    array)."""

    def __init__(self, arrays, version, prefix=""):
        self._arrays = arrays
        self.version = version
        self._prefix = prefix

    def array(self, name, dtype=None, shape=None):
        """The array ``name``, checked to be of ``dtype`` and ``shape`` when
        given (None in ``shape``: any length)."""
        array = np.asarray(self._arrays[f"{self._prefix}{name}"])
        if dtype is not None and array.dtype != dtype:
            raise ValueError(f"the array {name} has the wrong type")
        if shape is not None and (array.ndim != len(shape) or any(
                size is not None and size != actual
                for size, actual in zip(shape, array.shape, strict=True))):
            raise ValueError(f"the array {name} has the wrong shape")
        return array

    def optional_array(self, name, dtype=None, shape=None):
        """The array ``name`` as :meth:`array` reads it, or None when the file
        has none (a part newer than the file's version allows)."""
        if f"{self._prefix}{name}" not in self._arrays:
            return None
        return self.array(name, dtype, shape)

    def _arrays_under(self, prefix):
        start = f"{self._prefix}{prefix}"
        return {key[len(start):]: array for key, array in self._arrays.items()
                if key.startswith(start)}

    def trees(self, state, n_features):
        """The trees stored by :meth:`StateWriter.trees` (at least one), for
        ``n_features`` features."""
        n_trees = int(state["n_trees"])
        if n_trees < 1:
            raise ValueError("the number of trees does not match")
        if self.version < 6:  # node models beside the nodes (Tree reads them)
            tree_states = [self._arrays_under(f"tree{k}_") for k in range(n_trees)]
        else:
            kinds = state["tree_node_models"]
            if len(kinds) != n_trees:
                raise ValueError("the number of trees does not match")
            tree_states = [{
                "nodes": self.array(f"tree{k}_nodes"),
                "values": self.array(f"tree{k}_values"),
                "node_models": None if kind is None else {
                    "kind": kind, **self._arrays_under(f"tree{k}_node_models_")},
                **({} if self.version < 7 else {
                    "category_sets": self.array(f"tree{k}_category_sets"),
                    "category_words": self.array(f"tree{k}_category_words")}),
            } for k, kind in enumerate(kinds)]
        trees = []
        for tree_state in tree_states:
            tree = Tree(n_features)
            tree.__setstate__({**tree_state, "max_depth": 0})  # depth recomputed
            trees.append(tree)
        return trees

    def model(self, name, description):
        """The member model described by ``description`` (its arrays under
        ``name``)."""
        return _build(description, StateReader(self._arrays, self.version,
                                               f"{self._prefix}{name}_"))

    def settings(self, description):
        """The unfitted model described by :meth:`StateWriter.settings`, its
        parameters checked."""
        name = description["estimator"]
        if name == "Pipeline":
            return Pipeline([(step["name"], self.settings(step))
                             for step in description["steps"]])
        model = MODEL_KINDS[name](**{key: _parameter(value)
                                     for key, value in description["params"].items()})
        model._validate_params()
        return model


def _describe(model, writer):
    """The JSON description of a fitted model; its arrays go to ``writer``."""
    name = type(model).__name__
    if isinstance(model, Pipeline) and name == "Pipeline":
        steps = []
        for k, (step_name, step) in enumerate(model.steps):
            if step is None or step == "passthrough":
                raise TypeError("cannot save a pipeline with 'passthrough' steps.")
            steps.append({"name": step_name, **writer.model(f"step{k}", step)})
        return {"estimator": "Pipeline", "steps": steps}
    if MODEL_KINDS.get(name) is not type(model):
        raise TypeError(f"save_model saves {SAVED_MODELS}; not {name}.")
    check_is_fitted(model)
    # older readers lack the constraints' parameters: written only when set
    params = {key: value for key, value in model.get_params(deep=False).items()
              if not (key in CONSTRAINT_PARAMETERS and value is None)}
    if CONSTRAINT_PARAMETERS.intersection(params):
        writer.requires(CONSTRAINTS_FILE_VERSION)
    # parameters holding models are part of the state (a stack's members)
    members = getattr(model, "_member_parameters", ())
    names = getattr(model, "feature_names_in_", None)
    return {
        "estimator": name,
        "params": {key: _json_value(key, value)
                   for key, value in params.items()
                   if key not in members},
        "n_features_in": int(model.n_features_in_),
        "feature_names_in": None if names is None else [str(f) for f in names],
        **_categories_state(model),
        **_json_value(name, model._export_state(writer)),
    }


def _categories_state(model):
    """The JSON part of a model's categorical features: ``categories`` (per
    feature, None or its labels), None when none is categorical; nothing
    for a model without categorical features."""
    if not takes_categorical_features(model):
        return {}
    is_categorical, categories = fitted_encoding(model)
    if is_categorical is None:
        return {"categories": None}
    return {"categories": [None if labels is None else _json_labels(labels, j)
                           for j, labels in enumerate(categories)]}


def _json_labels(labels, feature):
    values = [value.item() if isinstance(value, np.generic) else value
              for value in np.asarray(labels, dtype=object)]
    for value in values:
        if not isinstance(value, (str, bool, int, float)):
            raise TypeError(f"cannot save the category {value!r} of feature {feature}: "
                            "model files keep categories that are strings, numbers or "
                            "booleans.")
    return values


def _categories_from_state(model, description):
    """Give ``model`` the categorical features of its description (every
    feature numeric in files written before them)."""
    if not takes_categorical_features(model):
        return
    stored = description.get("categories")
    if stored is None:
        model.is_categorical_ = model.categories_ = None
        return
    if len(stored) != model.n_features_in_ or all(labels is None for labels in stored):
        raise ValueError("the categories do not match the features")
    model.is_categorical_ = np.array([labels is not None for labels in stored])
    model.categories_ = [None if labels is None else _labels_array(labels)
                         for labels in stored]


def _labels_array(labels):
    if not isinstance(labels, list) or not all(
            isinstance(label, (str, bool, int, float)) for label in labels):
        raise ValueError("the categories of a feature are not labels")
    if len(set(labels)) != len(labels):
        raise ValueError("the categories of a feature repeat a label")
    if all(isinstance(label, str) for label in labels):
        return np.array(labels, dtype=object)
    if any(isinstance(label, str) for label in labels):
        raise ValueError("the categories of a feature mix strings and numbers")
    return np.asarray(labels)


def _build(description, reader):
    """The fitted model of a description, its arrays read by ``reader``."""
    name = description["estimator"]
    if name == "Pipeline":
        return Pipeline([(step["name"], reader.model(f"step{k}", step))
                         for k, step in enumerate(description["steps"])])
    cls = MODEL_KINDS[name]
    model = cls(**{key: _parameter(value) for key, value in description["params"].items()})
    model._validate_params()
    n_features = int(description["n_features_in"])
    names = description["feature_names_in"]
    if names is not None and len(names) != n_features:
        raise ValueError("the number of feature names does not match")
    set_feature_attributes(model, n_features,
                          None if names is None else np.array(names, dtype=object))
    _categories_from_state(model, description)
    model._import_state(description, reader)
    return model


def save_model(model, path):
    """Save a fitted model as arrays and JSON.

    The file is written beside ``path`` and then renamed to it: an existing
    file is replaced whole or not at all. A forest's predictive
    distributions are saved made (made now if they were not yet).

    Parameters
    ----------
    model : estimator
        A fitted estimator of mmit (every one: :class:`MMIT`,
        :class:`MMITForest`, :class:`MMITBoost`, the linear models,
        :class:`IntervalStackingRegressor` with its members, ...), or a
        scikit-learn ``Pipeline`` of them (mmit's :class:`MeanImputer` and a
        linear model, as the stack's default linear member). A search
        (:class:`MMITCV`, :class:`MMITForestCV`, also as a member) is saved
        whole: its parameters, its results (``cv_results_``,
        ``best_params_``, ...) and the model it chose (``best_estimator_``,
        which can be saved alone). A :class:`SurvivalRegressor` is saved with
        its parameters, its model and its times. A file records the oldest
        format version that reads it: 8 with a search or a survival
        front-end inside (mmit 0.2.0), 7 otherwise.
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
    writer = StateWriter(arrays)
    description = _describe(model, writer)
    metadata = {"format": FORMAT, "version": writer.version, **description}
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    with replacing_file(path) as file:
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
    version = metadata.get("version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise ValueError(f"{path} has model format version {version!r}; "
                         f"this mmit reads versions "
                         f"{', '.join(map(str, READABLE_VERSIONS))}.")
    try:
        return _build(metadata, StateReader(arrays, version))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise ValueError(f"{path} is a damaged mmit model file ({error}).") from None
