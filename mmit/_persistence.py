"""Saving fitted models in a safe format: plain arrays and JSON, no pickle.

A model file is a NumPy ``.npz`` archive holding a JSON document
(``metadata``: format name and version, estimator class, parameters, feature
names) and, for each tree, its node array and values. Loading never
unpickles anything, and checks every part before building the estimator.

Format versions: 3 (mmit 0.3) stores the linear models of trees with linear
leaves (each node's model row, the slopes and the center); 2 (mmit 0.2)
stores where each node sends missing values; files of versions 1 and 2
still load, those of version 1 sending a missing value to the heavier
child (their trees were grown without missing values).
"""

import json
import zipfile

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._boosting import MMITBoost
from ._classes import MMIT
from ._fitting import set_fitted_attributes
from ._forest import MMITForest
from ._tree import Tree

__all__ = ["save_model", "load_model"]

FORMAT = "mmit-model"
VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
# the arrays of a tree's state in a file (the linear models only when it has them)
_TREE_ARRAYS = ("nodes", "values", "models", "slopes", "center")
_ESTIMATORS = {"MMIT": MMIT, "MMITForest": MMITForest, "MMITBoost": MMITBoost}
# the fitted attributes of a boosted model besides its trees (plain values)
_BOOSTING_ATTRIBUTES = ("baseline_prediction_", "margin_", "train_score_",
                        "validation_score_")


def _trees_of(model):
    if isinstance(model, MMIT):
        return [model.tree_]
    return [tree.tree_ for tree in model.estimators_]


def _json_value(value):
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot save the parameter value {value!r} (use plain values).")


def save_model(model, path):
    """Save a fitted :class:`MMIT`, :class:`MMITForest` or :class:`MMITBoost`.

    Parameters
    ----------
    model : MMIT, MMITForest or MMITBoost
        A fitted estimator (an ``MMITCV`` or ``MMITForestCV`` saves its
        ``best_estimator_``).
    path : str or path-like
        Destination file (NumPy writes ``.npz`` archives).

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
    model = getattr(model, "best_estimator_", model)
    name = type(model).__name__
    if name not in _ESTIMATORS:
        raise TypeError(f"save_model saves MMIT, MMITForest or MMITBoost models, "
                        f"not {name}.")
    check_is_fitted(model)
    trees = _trees_of(model)
    feature_names = getattr(model, "feature_names_in_", None)
    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "estimator": name,
        "params": {key: _json_value(value) for key, value in model.get_params().items()},
        "n_features_in": int(model.n_features_in_),
        "feature_names_in": None if feature_names is None else [str(f) for f in
                                                                 feature_names],
        "max_features": int(model.max_features_),
        "n_trees": len(trees),
        "tree_random_states": (None if name == "MMIT" else
                               [tree.random_state for tree in model.estimators_]),
    }
    if name == "MMITBoost":
        metadata["boosting"] = {
            attribute: np.asarray(getattr(model, attribute)).tolist()
            for attribute in _BOOSTING_ATTRIBUTES}
    arrays = {"metadata": np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)}
    for k, tree in enumerate(trees):
        state = tree.__getstate__()
        for name in _TREE_ARRAYS:
            if name in state:
                arrays[f"tree{k}_{name}"] = state[name]
    with open(path, "wb") as file:
        np.savez_compressed(file, **arrays)


def load_model(path):
    """Load a model saved by :func:`save_model`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    model : MMIT, MMITForest or MMITBoost
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
        return _build(metadata, arrays)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path} is a damaged mmit model file ({error}).") from None


def _build(metadata, arrays):
    cls = _ESTIMATORS[metadata["estimator"]]
    n_features = int(metadata["n_features_in"])
    trees = []
    for k in range(int(metadata["n_trees"])):
        tree = Tree(n_features)
        state = {name: arrays[f"tree{k}_{name}"] for name in _TREE_ARRAYS
                 if f"tree{k}_{name}" in arrays}
        tree.__setstate__({"max_depth": 0, **state})
        trees.append(tree)
    model = cls(**metadata["params"])
    tree_params = {key: value for key, value in metadata["params"].items()
                   if key in MMIT._parameter_constraints and key != "random_state"}
    if cls is MMITBoost:  # the stages' trees have the margin used
        tree_params["margin"] = float(metadata["boosting"]["margin_"])
    fitted = [model] if cls is MMIT else [
        MMIT(**tree_params, random_state=seed) for seed in metadata["tree_random_states"]
    ]
    if len(fitted) != len(trees) or not trees:
        raise ValueError("the number of trees does not match")
    names = metadata["feature_names_in"]
    if names is not None and len(names) != n_features:
        raise ValueError("the number of feature names does not match")
    names = None if names is None else np.array(names, dtype=object)
    for estimator, tree in zip(fitted, trees, strict=True):
        estimator.tree_ = tree
    if cls is not MMIT:
        model.estimators_ = fitted
        fitted = [*fitted, model]
    if cls is MMITBoost:
        boosting = metadata["boosting"]
        model.baseline_prediction_ = float(boosting["baseline_prediction_"])
        model.margin_ = float(boosting["margin_"])
        model.train_score_ = np.array(boosting["train_score_"], dtype=np.float64)
        model.validation_score_ = np.array(boosting["validation_score_"],
                                           dtype=np.float64)
        model.n_iter_ = len(model.estimators_)
    for estimator in fitted:
        set_fitted_attributes(estimator, n_features, names, int(metadata["max_features"]))
    return model
