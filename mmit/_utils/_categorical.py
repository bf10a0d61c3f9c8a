"""Features as users give them, turned into the float64 arrays of the compiled
core: categorical features as the codes of their categories.

An estimator with a ``categorical_features`` parameter declares its
categorical features as scikit-learn's ``HistGradientBoostingRegressor``
does (:func:`resolve_categorical_features`). Its fit records, for each
categorical feature, its categories (the labels; ``categories_``) and gives
the core the codes ``0 .. K - 1`` of the labels, NaN for a missing value;
its predictions encode new rows by label (:func:`validate_features`), so
that a label keeps its code whatever the order of a frame's categories,
and a label not seen in fit becomes NaN (the missing side).

The categories of a feature are:

- a pandas ``category`` column: the dtype's categories, as given (not
  re-sorted, unobserved ones kept): the codes are pandas' codes;
- a polars ``Enum`` column: its categories as given; a polars
  ``Categorical`` or string column: its sorted distinct labels (polars
  frames are read through narwhals, which recent scikit-learn installs);
- a column of strings (or other labels) or of numbers declared
  categorical: its sorted distinct non-missing values, each one category
  (``inf`` is refused).
"""

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_array, validate_data

#: The constraint of the estimators' ``categorical_features`` parameter.
CATEGORICAL_FEATURES_CONSTRAINT = ["array-like", StrOptions({"from_dtype"}), None]

# kinds of columns (by dtype) and of labels
NUMBER, LABEL, CATEGORY = "number", "label", "category"


@dataclass(frozen=True)
class Encoded:
    """Features already encoded by a fitted estimator (``X`` its float64
    codes), for the models an estimator fits inside (the forests of
    ``MMITForestCV``, the spread forest of predictive distributions): they
    take its categorical features and categories instead of deriving them
    from the codes. Make it with :func:`encoded`."""

    X: np.ndarray
    is_categorical: np.ndarray | None
    categories: list | None


def encoded(estimator, X):
    """``X``, encoded by the fitted ``estimator``, for a model fitted inside it
    (an :class:`Encoded`)."""
    return Encoded(X, *fitted_encoding(estimator))


def fitted_encoding(estimator):
    """``is_categorical_`` and ``categories_`` of a fitted estimator: None
    for one that has none (a model file written before categorical
    features: every feature numeric)."""
    return (getattr(estimator, "is_categorical_", None),
            getattr(estimator, "categories_", None))


def check_warm_start_encoding(estimator, previous):
    """Refuse a warm start whose categorical features or categories differ
    from those of the fit it continues (``previous``, its
    :func:`fitted_encoding`): the trees kept read codes of the old ones."""
    (was, old), (now, new) = previous, fitted_encoding(estimator)
    same = (was is None) == (now is None) and (was is None or (
        np.array_equal(was, now)
        and all((a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
                for a, b in zip(old, new, strict=True))))
    if not same:
        raise ValueError("warm_start=True continues a fit whose categorical features "
                         "or categories differ from X's: the fitted trees read the "
                         "codes of the old categories. Give the categories of the "
                         "first fit, or fit anew (warm_start=False).")


def n_categories(estimator):
    """The categories of each feature of a fitted estimator, as the compiled
    core takes them: an int array, 0 for a numeric feature (None when none
    is categorical)."""
    is_categorical, categories = fitted_encoding(estimator)
    if is_categorical is None:
        return None
    return np.array([0 if labels is None else len(labels) for labels in categories],
                    dtype=np.intp)


def takes_categorical_features(estimator):
    """Whether ``estimator`` has a ``categorical_features`` parameter."""
    return "categorical_features" in estimator._get_param_names()


def is_dataframe(X):
    """Whether ``X`` is a data frame: pandas, or one narwhals reads (polars)."""
    return _is_pandas_frame(X) or _narwhals_frame(X) is not None


def non_numeric_columns(X):
    """Boolean mask of the columns of a pandas data frame whose dtype is not
    numeric (categories, strings); None for other input or when every
    column is numeric."""
    if not _is_pandas_frame(X):
        return None
    mask = np.array([kind != NUMBER for kind in _column_kinds(X)], dtype=bool)
    return mask if mask.any() else None


def resolve_categorical_features(X, categorical_features):
    """The categorical features of ``X``, as a boolean mask (None when no
    feature is categorical), with the meaning of scikit-learn's
    ``HistGradientBoostingRegressor``.

    Parameters
    ----------
    X : array-like or data frame of shape (n_samples, n_features)
    categorical_features : "from_dtype", None, or array-like of int, bool or str
        "from_dtype": the columns of a data frame with a categorical dtype
        (pandas ``category``, polars ``Categorical`` and ``Enum``); none for
        other input. None: none. Otherwise indices, a boolean mask of
        length ``n_features``, or feature names (when ``X`` has them).

    Returns
    -------
    is_categorical : ndarray of shape (n_features,) of bool, or None
    """
    if categorical_features is None:
        return None
    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        kinds = _column_kinds(X)
        if kinds is None:
            return None
        is_categorical = np.array([kind == CATEGORY for kind in kinds], dtype=bool)
        return is_categorical if is_categorical.any() else None
    declared = np.asarray(categorical_features)
    if declared.size == 0:
        return None
    if declared.ndim != 1:
        raise ValueError("categorical_features must be 1-D: indices, a boolean mask or "
                         f"feature names, got shape {declared.shape}.")
    if declared.dtype.kind == "O" and all(isinstance(name, str) for name in declared):
        declared = declared.astype(str)
    n_features = X.shape[1]
    is_categorical = np.zeros(n_features, dtype=bool)
    if declared.dtype.kind == "b":
        if declared.shape[0] != n_features:
            raise ValueError("categorical_features given as a boolean mask must have "
                             f"one entry per feature ({n_features}), got "
                             f"{declared.shape[0]}.")
        is_categorical = declared.copy()
    elif declared.dtype.kind == "i":
        if declared.min() < 0 or declared.max() >= n_features:
            raise ValueError("categorical_features given as indices must be in "
                             f"[0, n_features - 1] = [0, {n_features - 1}], got "
                             f"{declared.tolist()}.")
        _check_no_duplicates(declared.tolist())
        is_categorical[declared] = True
    elif declared.dtype.kind == "U":
        names = _feature_names(X)
        if names is None:
            raise ValueError("categorical_features given as feature names needs X with "
                             "feature names (a data frame with string column names); "
                             "give indices or a boolean mask instead.")
        unknown = [str(name) for name in declared if name not in names]
        if unknown:
            raise ValueError(f"categorical_features names {unknown}, which are not "
                             f"features of X; its features are {names}.")
        _check_no_duplicates(declared.tolist())
        is_categorical[[names.index(name) for name in declared]] = True
    else:
        raise ValueError("categorical_features must be 'from_dtype', None, or an "
                         "array-like of int (indices), bool (a mask) or str (feature "
                         f"names), got {categorical_features!r}.")
    return is_categorical if is_categorical.any() else None


def validate_features(estimator, X, *, reset, ensure_all_finite="allow-nan",
                      **check_params):
    """X as the compiled core takes it, checked as scikit-learn's
    ``validate_data`` does (which sets ``n_features_in_`` and
    ``feature_names_in_`` from X as given, and checks them when not
    ``reset``).

    For an estimator with a ``categorical_features`` parameter, the fit
    (``reset``) records ``is_categorical_`` and ``categories_`` and encodes
    the categorical features; predictions (not ``reset``) encode them by
    label with the categories of the fit. Numeric features are checked
    with ``ensure_all_finite`` (NaN in a categorical feature is a missing
    value whatever it says); a non-numeric column that is not a
    categorical feature, or a column whose kind differs from the fit's
    (labels where numbers were, or numbers where labels were), is refused.

    Parameters
    ----------
    estimator : estimator
    X : array-like, data frame or :class:`Encoded` of shape (n_samples, n_features)
    reset : bool
        True in fit.
    ensure_all_finite : bool or "allow-nan", default="allow-nan"
        For the numeric features (see ``sklearn.utils.check_array``).
    **check_params
        Further arguments of ``validate_data`` (``ensure_min_samples``,
        ``order``).

    A ``scipy.sparse`` X is taken by the estimators whose tags say so
    (``input_tags.sparse``), numeric only: the fit gets it as compressed
    columns (CSC, the layout the trees' split search reads), predictions as
    a dense array (the walks down trees and the linear models read rows).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
        Or a CSC matrix (a sparse X, in fit).
    """
    check_params = {"dtype": np.float64, "ensure_all_finite": ensure_all_finite,
                    **check_params}
    if isinstance(X, Encoded) and sp.issparse(X.X):
        X = X.X  # every feature numeric
    if sp.issparse(X):
        return _sparse_features(estimator, X, reset, check_params)
    if not takes_categorical_features(estimator):
        return validate_data(estimator, X, reset=reset, **check_params)
    if isinstance(X, Encoded):  # codes of the categories it carries: kept as they are
        estimator.is_categorical_, estimator.categories_ = X.is_categorical, X.categories
        return validate_data(estimator, X.X, reset=reset, **check_params)
    if reset:
        if not is_dataframe(X):
            X = _as_2d(estimator, X)
        estimator.is_categorical_ = resolve_categorical_features(
            X, estimator.categorical_features)
        estimator.categories_ = None
    is_categorical, categories = fitted_encoding(estimator)
    kinds = _column_kinds(X)
    if is_categorical is None:
        if kinds is not None:
            _check_column_kinds(X, kinds, None, reset)
        return validate_data(estimator, X, reset=reset, **check_params)

    if not is_dataframe(X):
        X = _as_2d(estimator, X)
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    if kinds is not None:
        _check_column_kinds(X, kinds, is_categorical, reset)
    numeric = np.flatnonzero(~is_categorical)
    check_params = {key: value for key, value in check_params.items() if key != "order"}
    encoded_X = np.empty((X.shape[0], X.shape[1]), dtype=np.float64)
    # an empty array without numeric features: its rows are still counted
    encoded_X[:, numeric] = check_array(
        _safe_indexing(X, numeric, axis=1) if numeric.size else encoded_X[:, :0],
        input_name="X", estimator=estimator, ensure_min_features=0, **check_params)
    if reset:
        categories = [None] * X.shape[1]
    for j in np.flatnonzero(is_categorical):
        feature = _feature_label(X, j)
        labels, codes = _categories_and_codes(_safe_indexing(X, j, axis=1), feature)
        if reset:
            categories[j] = labels
            encoded_X[:, j] = np.where(codes >= 0, codes, np.nan)
        else:
            encoded_X[:, j] = _codes_by_label(labels, codes, categories[j], feature)
    if reset:
        estimator.categories_ = categories
    return encoded_X


def _check_no_duplicates(declared):
    repeated = sorted({item for item in declared if declared.count(item) > 1}, key=str)
    if repeated:
        raise ValueError(f"categorical_features names {repeated} more than once.")


def _sparse_features(estimator, X, reset, check_params):
    """``validate_features`` of a sparse X (see there)."""
    takes_sparse = estimator.__sklearn_tags__().input_tags.sparse
    if takes_sparse and takes_categorical_features(estimator) and reset:
        if estimator.categorical_features not in (None, "from_dtype"):
            raise TypeError(
                f"{type(estimator).__name__} takes sparse X with numeric features "
                "only: categorical_features cannot be declared for a sparse matrix "
                "(give the categorical features in a dense array or a data frame).")
        estimator.is_categorical_ = estimator.categories_ = None
    if not reset and fitted_encoding(estimator)[0] is not None:
        raise TypeError(
            f"{type(estimator).__name__} was fitted with categorical features: give "
            "X as in fit (a dense array or a data frame of labels), not a sparse "
            "matrix.")
    order = check_params.pop("order", None)
    # without the tag, validate_data refuses sparse X with scikit-learn's message
    X = validate_data(estimator, X, reset=reset,
                      accept_sparse=("csc" if reset else "csr") if takes_sparse else False,
                      **check_params)
    if reset:
        return X
    return X.toarray(order=order or "C")


def _as_2d(estimator, X):
    """X, not a data frame, as a 2-D array of its own dtype (strings kept)."""
    return check_array(X, dtype=None, ensure_all_finite=False, ensure_min_samples=0,
                       input_name="X", estimator=estimator)


def _is_pandas_frame(X):
    return hasattr(X, "iloc") and hasattr(X, "dtypes") and hasattr(X, "columns")


def _is_pandas_series(column):
    return hasattr(column, "iloc") and getattr(column, "ndim", 0) == 1


def _narwhals_frame(X):
    """X as a narwhals DataFrame when it is a data frame other than pandas's
    that narwhals reads (polars, ...), else None (also without narwhals)."""
    if _is_pandas_frame(X) or isinstance(X, np.ndarray):
        return None
    try:
        import narwhals.stable.v2 as nw
    except ImportError:
        return None
    if not nw.dependencies.is_into_dataframe(X):
        return None
    return nw.from_native(X, eager_only=True)


def _feature_names(X):
    """The column names of a data frame when they are all strings, else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(name, str) for name in columns):
        return None
    return list(columns)


def _feature_label(X, j):
    names = _feature_names(X)
    return f"at index {j}" if names is None else repr(names[j])


def _column_kinds(X):
    """The kind of each column of a data frame (NUMBER, LABEL or CATEGORY,
    by its dtype); None for other input."""
    if _is_pandas_frame(X):
        return [_pandas_kind(dtype, lambda j=j: X.iloc[:, j])
                for j, dtype in enumerate(X.dtypes)]
    frame = _narwhals_frame(X)
    if frame is None:
        return None
    import narwhals.stable.v2 as nw

    return [CATEGORY if dtype in (nw.Categorical, nw.Enum)
            else NUMBER if dtype.is_numeric() or dtype == nw.Boolean else LABEL
            for dtype in frame.schema.dtypes()]


def _pandas_kind(dtype, column):
    """The kind of a pandas column of ``dtype`` (``column()`` gives it, read
    only for an object dtype)."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return CATEGORY
    if pd.api.types.is_numeric_dtype(dtype):
        return NUMBER
    if dtype.kind == "O" and pd.api.types.infer_dtype(column(), skipna=True) in {
            "integer", "floating", "mixed-integer-float", "decimal", "boolean", "empty"}:
        return NUMBER  # numbers held as objects, converted as numpy does
    return LABEL


def _check_column_kinds(X, kinds, is_categorical, reset):
    """Refuse the non-numeric columns of a data frame that are not
    categorical features."""
    undeclared = [j for j, kind in enumerate(kinds)
                  if kind != NUMBER and (is_categorical is None or not is_categorical[j])]
    if not undeclared:
        return
    dtypes = ", ".join(f"{_feature_label(X, j)} ({_dtype_name(X, j)})" for j in undeclared)
    if not reset:
        raise ValueError(f"Feature(s) {dtypes} were numeric in fit and are not numeric "
                         "here: give them as numbers, as in fit.")
    names = _feature_names(X)
    declared = [names[j] for j in undeclared] if names is not None else undeclared
    raise ValueError(f"Feature(s) {dtypes} are not numeric and not declared "
                     f"categorical: declare them with categorical_features={declared!r} "
                     "(or give them a pandas 'category' dtype), or convert them to "
                     "numbers.")


def _dtype_name(X, j):
    if _is_pandas_frame(X):
        return str(X.dtypes.iloc[j])
    return str(_narwhals_frame(X).schema.dtypes()[j])


def _categories_and_codes(column, feature):
    """The categories of one column (a pandas or polars series, or a 1-D
    array) and the codes of its values into them (-1: missing): a pandas
    category's categories as given; a polars Enum's as given; otherwise its
    sorted distinct non-missing values."""
    if _is_pandas_series(column):
        import pandas as pd

        if isinstance(column.dtype, pd.CategoricalDtype):
            categories = np.asarray(column.cat.categories)
            _check_finite_labels(categories, feature)
            return categories, column.cat.codes.to_numpy(dtype=np.int64)
        missing, values, given = column.isna().to_numpy(), column.to_numpy(), None
    elif isinstance(column, np.ndarray):
        missing, values, given = _missing(column), column, None
    else:  # a series of another data frame
        import narwhals.stable.v2 as nw

        series = nw.from_native(column, series_only=True)
        given = series.dtype.categories if series.dtype == nw.Enum else None
        missing = series.is_null().to_numpy()
        if series.dtype.is_float():
            missing |= series.is_nan().fill_null(False).to_numpy()
        values = series.to_numpy()
    present = values[~missing]
    try:
        categories, inverse = np.unique(present, return_inverse=True)
    except TypeError:
        types = sorted({type(value).__name__ for value in present})
        raise ValueError(f"Categorical feature {feature} mixes labels of types {types} "
                         "that cannot be sorted: give it labels of one type (or a "
                         "pandas 'category' dtype).") from None
    _check_finite_labels(categories, feature)
    codes = np.full(values.shape[0], -1, dtype=np.int64)
    codes[~missing] = inverse
    if given is None:
        return categories, codes
    given = np.asarray(given, dtype=object)
    return given, _codes_by_label(categories, codes, given, feature).astype(np.int64)


def _missing(values):
    """Missing entries (NaN, None) of a 1-D array."""
    if values.dtype.kind in "fc":
        return np.isnan(values)
    if values.dtype.kind != "O":
        return np.zeros(values.shape[0], dtype=bool)
    # None, and NaN (the one value unequal to itself), element-wise in numpy
    return np.asarray((values == None) | (values != values), dtype=bool)  # noqa: E711


def _check_finite_labels(labels, feature):
    if labels.dtype.kind == "f" and np.isinf(labels).any():
        raise ValueError(f"Categorical feature {feature} holds an infinite value: a "
                         "category must be a finite number or a label.")


def _label_kind(labels):
    """NUMBER when every label is a number, else LABEL (None: no labels)."""
    if labels.size == 0:
        return None
    if labels.dtype.kind in "biuf" or all(
            isinstance(label, numbers.Number) and not isinstance(label, str)
            for label in labels):
        return NUMBER
    return LABEL


def _codes_by_label(labels, codes, categories, feature):
    """The codes into ``categories`` (the fit's) of values given as ``codes``
    into ``labels``: a label unknown in ``categories`` and a missing value
    (code -1) give NaN. Refuses numbers where the fit had labels and the
    reverse."""
    found, expected = _label_kind(labels), _label_kind(categories)
    if found is not None and expected is not None and found != expected:
        shown = ", ".join(repr(label) for label in categories[:3])
        raise ValueError(
            f"Categorical feature {feature} was fitted on "
            f"{'numbers' if expected == NUMBER else 'labels'} ({shown}"
            f"{', ...' if len(categories) > 3 else ''}) and is given "
            f"{'numbers' if found == NUMBER else 'labels'} here: give it as in fit "
            "(the labels themselves, not their codes).")
    position = {label: code for code, label in enumerate(categories.tolist())}
    # the last entry, NaN, is the code of a missing value (-1)
    mapping = np.array([position.get(label, np.nan) for label in labels.tolist()]
                       + [np.nan], dtype=np.float64)
    return mapping[codes]


def numeric_values(estimator, X, passed, reset):
    """X as float64 (NaN for missing values), checked as scikit-learn's
    ``validate_data`` checks it for ``estimator``, its columns of ``passed``
    (a mask, or None) NaN: they are passed through as they are (the
    non-numeric columns of a data frame, which a model behind encodes). A
    sparse X comes back as compressed columns (CSC)."""
    if sp.issparse(X):
        return validate_data(estimator, X, reset=reset, dtype=np.float64,
                             ensure_all_finite="allow-nan", accept_sparse="csc")
    if passed is None:
        return validate_data(estimator, X, reset=reset, dtype=np.float64,
                             ensure_all_finite="allow-nan")
    validate_data(estimator, X, reset=reset, skip_check_array=True)
    numeric = np.full(X.shape, np.nan)
    if not passed.all():
        numeric[:, ~passed] = check_array(
            X.iloc[:, np.flatnonzero(~passed)], dtype=np.float64,
            ensure_all_finite="allow-nan", input_name="X", estimator=estimator)
    return numeric
