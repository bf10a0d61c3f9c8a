"""Interval-regression data sets: bundled benchmark sets and a folder loader.

Every data set uses the layout of the MMIT paper's benchmark: a folder with
``features.csv`` (header, one row of numeric features per example),
``targets.csv`` (header, then ``lower,upper``; infinite bounds spelled
``inf``/``Inf``/``-inf``/``-Inf``) and ``folds.csv`` (header ``fold``, the
cross-validation fold of each example). Files may be gzip-compressed
(``.csv.gz``). A folder's features may hold categorical columns (any
labels, an empty cell for a missing one) when they are declared
(:func:`load_folder`'s ``categorical``).
"""

import csv
import gzip
import io
from importlib import resources
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ._utils._validation import check_bounds

__all__ = ["load_dataset", "load_folder", "list_datasets", "make_interval_regression"]

_SOURCE = (
    "Source: the public benchmark of Drouin, Hocking and Laviolette, "
    '"Maximum Margin Interval Trees", NIPS 2017 '
    "(https://github.com/aldro61/mmit), with its 5-fold split."
)

_BUNDLED = {
    "H3K27ac-H3K4me3_TDHAM_BP_FPOP": (
        "Histone ChIP-seq penalty learning (the paper's 'histone' set): log "
        "penalties of an optimal changepoint model for H3K27ac and H3K4me3 "
        "ChIP-seq profiles; the targets are intervals of penalties with the "
        "minimal number of annotation errors."
    ),
    "H3K4me3_TDH_other_FPOP": (
        "Histone ChIP-seq penalty learning for H3K4me3 profiles of other cell "
        "types; many targets are one-sided (censored) intervals."
    ),
    "servo": (
        "UCI servo data: rise time of a servomechanism, turned into censored "
        "intervals by the paper's protocol."
    ),
}


def list_datasets():
    """Names of the data sets bundled with mmit.

    Examples
    --------
    >>> from mmit.datasets import list_datasets
    >>> "servo" in list_datasets()
    True
    """
    return sorted(_BUNDLED)


def load_dataset(name="H3K27ac-H3K4me3_TDHAM_BP_FPOP", *, as_frame=False):
    """Load a bundled interval-regression data set.

    Parameters
    ----------
    name : str, default="H3K27ac-H3K4me3_TDHAM_BP_FPOP"
        One of :func:`list_datasets`; the default is the paper's histone set.
    as_frame : bool, default=False
        Return pandas objects (requires pandas): ``data`` a DataFrame,
        ``target`` a DataFrame with columns ``lower`` and ``upper``, ``folds``
        a Series.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n_samples, n_features), ``target`` (n_samples, 2) of lower
        and upper bounds, ``folds`` (n_samples,) fold ids, ``feature_names``,
        ``DESCR`` and ``name``.

    Examples
    --------
    >>> from mmit.datasets import load_dataset
    >>> servo = load_dataset("servo")
    >>> servo.data.shape, servo.target.shape
    ((167, 19), (167, 2))
    """
    if name not in _BUNDLED:
        raise ValueError(f"Unknown data set {name!r}; choose one of {list_datasets()}.")
    folder = resources.files("mmit").joinpath("data", name)
    bunch = _read_folder(folder, name, as_frame)
    bunch.DESCR = f"{name}\n\n{_BUNDLED[name]}\n\n{_SOURCE}\n{_shape_line(bunch)}"
    return bunch


def load_folder(path, *, as_frame=False, categorical=None):
    """Load a data set from a folder in the three-CSV benchmark layout.

    Parameters
    ----------
    path : str or path-like
        Folder holding ``features.csv`` and, optionally, ``targets.csv`` and
        ``folds.csv`` (each may be ``.csv.gz``).
    as_frame : bool, default=False
        Return pandas objects, as :func:`load_dataset`.
    categorical : list of str, default=None
        Columns of ``features.csv`` that hold categories (labels; an empty
        cell is a missing value). ``data`` is then a pandas DataFrame (this
        needs pandas) whose categorical columns have the ``category`` dtype,
        their categories sorted, which every mmit model splits natively.
        Another column that is not numeric raises a ``ValueError`` naming
        it.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_dataset`; ``target`` is None without ``targets.csv``
        and ``folds`` None without ``folds.csv``.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder.")
    bunch = _read_folder(folder, folder.name, as_frame, categorical)
    bunch.DESCR = f"{folder.name}\n\nLoaded from {folder}.\n{_shape_line(bunch)}"
    return bunch


def _read_folder(folder, name, as_frame, categorical=None):
    feature_names, features = _read_csv(folder, "features", required=True,
                                        categorical=categorical)
    _, targets = _read_csv(folder, "targets", required=False)
    _, folds = _read_csv(folder, "folds", required=False)
    target = None
    if targets is not None:
        if targets.shape[1] != 2:
            raise ValueError(f"targets of {name} must have two columns (lower, upper).")
        if features.shape[0] != targets.shape[0]:
            raise ValueError(
                f"{name}: {features.shape[0]} rows of features but "
                f"{targets.shape[0]} of targets."
            )
        lower, upper = check_bounds(targets[:, 0], targets[:, 1])
        target = np.column_stack([lower, upper])
    if folds is not None:
        if folds.shape != (features.shape[0], 1):
            raise ValueError(f"folds of {name} must hold one fold id per example.")
        folds = folds[:, 0].astype(np.int64)
    bunch = Bunch(data=features, target=target, folds=folds,
                  feature_names=np.array(feature_names, dtype=object), name=name)
    if categorical:
        bunch.data = _categorical_frame(features, feature_names, categorical)
    if as_frame:
        import pandas as pd

        if not categorical:
            bunch.data = pd.DataFrame(features, columns=feature_names)
        if target is not None:
            bunch.target = pd.DataFrame(target, columns=["lower", "upper"])
        if folds is not None:
            bunch.folds = pd.Series(folds, name="fold")
    return bunch


def _categorical_frame(features, feature_names, categorical):
    """The features (an object array) as a DataFrame: the ``categorical``
    columns as pandas categories (an empty label missing), the others as
    floats."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("categorical columns are read into a pandas DataFrame: "
                          "install pandas.") from None
    columns = {}
    for j, name in enumerate(feature_names):
        column = features[:, j]
        if name in categorical:
            labels = np.where(column == "", None, column)
            columns[name] = pd.Categorical(labels)
        else:
            columns[name] = column.astype(np.float64)
    return pd.DataFrame(columns)


def _read_csv(folder, stem, required, categorical=None):
    """Header and float matrix of ``stem.csv`` or ``stem.csv.gz`` in ``folder``
    (an object matrix, the ``categorical`` columns as stripped strings and
    the others as floats, when some are named)."""
    plain, packed = folder.joinpath(f"{stem}.csv"), folder.joinpath(f"{stem}.csv.gz")
    if plain.is_file():
        text = plain.read_text()
    elif packed.is_file():
        text = gzip.decompress(packed.read_bytes()).decode()
    elif required:
        raise ValueError(f"{folder} has no {stem}.csv.")
    else:
        return None, None
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    header = [name.strip() for name in rows[0]]
    unknown = sorted(set(categorical or ()) - set(header))
    if unknown:
        raise ValueError(f"{folder}/{stem} has no column {', '.join(unknown)}; its "
                         f"columns are {', '.join(header)}.")
    if any(len(row) != len(header) for row in rows[1:]):
        raise ValueError(f"{folder}/{stem}: every row must have {len(header)} values.")
    text_columns = {j for j, name in enumerate(header) if name in (categorical or ())}
    values = np.empty((len(rows) - 1, len(header)), dtype=object if text_columns
                      else np.float64)
    for j, name in enumerate(header):
        column = [row[j].strip() for row in rows[1:]]
        if j in text_columns:
            values[:, j] = column
            continue
        try:
            values[:, j] = [float(value) for value in column]
        except ValueError as error:
            raise ValueError(
                f"{folder}/{stem}: column {name!r} is not numeric ({error}); declare "
                f"it categorical (categorical=[{name!r}], on the command line "
                f"--categorical {name}).") from None
    return header, values


def _shape_line(bunch):
    n_samples, n_features = bunch.data.shape
    return f"{n_samples} examples, {n_features} features."


_PATTERNS = {
    "linear": lambda x: x / 5.0,
    "sin": np.sin,
    "abs": lambda x: np.abs(x - 5.0),
}


def make_interval_regression(n_samples=200, n_features=20, pattern="linear", *,
                             noise=0.3, shift=0.2, n_draws=10, censoring=0.2,
                             random_state=None):
    """Simulated interval-regression data, as in the MMIT paper's simulations.

    Features are uniform on [0, 10]; only the first carries the signal
    ``f(x0)``: ``x0 / 5`` (linear), ``sin(x0)`` or ``|x0 - 5|`` (abs). Each
    target interval spans ``n_draws`` normal draws around ``f(x0)`` (standard
    deviation ``noise``), then moves by one normal draw (standard deviation
    ``shift``); with probability ``censoring`` one of its bounds, lower or
    upper with equal chance, is dropped (a left- or right-censored label).

    Parameters
    ----------
    n_samples : int, default=200
    n_features : int, default=20
        Features; all but the first are noise.
    pattern : {"linear", "sin", "abs"}, default="linear"
        The signal function.
    noise : float, default=0.3
        Spread of the draws that make an interval (its width).
    shift : float, default=0.2
        Spread of the shift of each interval.
    n_draws : int, default=10
        Draws per interval (at least 2).
    censoring : float, default=0.2
        Probability that a label loses one bound.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples, 2)
        Lower and upper bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.datasets import make_interval_regression
    >>> X, y = make_interval_regression(100, 5, pattern="sin", random_state=0)
    >>> X.shape, y.shape, bool(np.all(y[:, 0] < y[:, 1]))
    ((100, 5), (100, 2), True)
    """
    if pattern not in _PATTERNS:
        raise ValueError(f"pattern must be one of {sorted(_PATTERNS)}, got {pattern!r}.")
    if n_samples < 1 or n_features < 1 or n_draws < 2:
        raise ValueError("n_samples and n_features must be >= 1 and n_draws >= 2.")
    if not 0.0 <= censoring <= 1.0:
        raise ValueError(f"censoring must be a probability, got {censoring!r}.")
    rng = check_random_state(random_state)
    X = rng.uniform(0.0, 10.0, size=(n_samples, n_features))
    signal = _PATTERNS[pattern](X[:, 0])
    draws = rng.normal(signal[:, np.newaxis], noise, size=(n_samples, n_draws))
    offset = rng.normal(0.0, shift, size=n_samples)
    lower = draws.min(axis=1) + offset
    upper = draws.max(axis=1) + offset
    censored = rng.random_sample(n_samples) < censoring
    left = rng.random_sample(n_samples) < 0.5
    lower[censored & left] = -np.inf
    upper[censored & ~left] = np.inf
    return X, np.column_stack([lower, upper])
