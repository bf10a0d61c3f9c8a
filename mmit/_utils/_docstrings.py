"""Docstring sections that several estimators share, written once.

A docstring of a function decorated with :func:`fill_doc` names a shared
section with a line that holds only ``%(name)s``; the section's lines
replace it at that line's indentation (as MNE-Python's ``fill_doc``).
"""

import re

SECTIONS = {
    "fit_X": """\
X : array-like or data frame of shape (n_samples, n_features)
    Training features: numbers, or the labels of categorical features;
    NaN (or None) marks a missing value.""",
    "fit_X_numeric": """\
X : array-like or data frame of shape (n_samples, n_features)
    Training features: numbers (none missing), or the labels of
    categorical features (NaN or None for a missing label).""",
    "fit_y": """\
y : array-like of shape (n_samples, 2) or (n_samples,)
    Lower and upper bound of each target interval (``-inf``/``+inf``
    allowed), or exact values.""",
    "time_query": """\
Parameters
----------
X : array-like of shape (n_samples, n_features)

Returns
-------
time : ndarray of shape (n_samples,)""",
    "column_ranges": """\
data_min_, data_max_ : ndarray of shape (n_columns,)
    Range of each column over the training rows of positive weight.
data_mean_ : ndarray of shape (n_columns,) or None
    Weighted mean of each column over the training rows (the baseline
    of :func:`~mmit.shap_values`); None for a model loaded from a file
    of an older mmit.""",
    "survival_forest_example": """\
Examples
--------
>>> import numpy as np
>>> from mmit import MMITForest, intervals_from_survival
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(0, 1, size=(200, 2))
>>> time = np.exp(1 + X[:, 0] + 0.3 * rng.normal(size=200))
>>> y = intervals_from_survival(rng.random(200) < 0.7, time, log=True)
>>> forest = MMITForest(20, random_state=0).fit(X, y)""",
    "features_in": """\
n_features_in_ : int
    Number of features seen during fit.
feature_names_in_ : ndarray of shape (n_features_in_,)
    Names of the features, when X was a DataFrame with string columns.""",
    "categorical_features": """\
categorical_features : "from_dtype", None or array-like of {int, bool, str}, \
default="from_dtype"
    The categorical features, as in scikit-learn's
    ``HistGradientBoostingRegressor``. "from_dtype": the columns of a data
    frame with a categorical dtype (pandas ``category``; polars
    ``Categorical`` and ``Enum``), none for other input. None: none.
    Otherwise their indices, a boolean mask of length ``n_features``, or
    their names (X a data frame). A categorical feature's categories are a
    pandas ``category``'s (or polars ``Enum``'s) as given, in the dtype's
    order, unobserved ones included; otherwise its sorted distinct
    non-missing values (strings, or numbers: each distinct number one
    category, ``inf`` refused). Predictions encode X by label, so the
    order of a frame's categories does not matter, and a label not seen
    in fit counts as missing. A non-numeric column (strings, a category)
    that is not declared categorical is refused, as is, when predicting,
    a column whose kind differs from the fit's (numbers for labels, or a
    non-numeric column for a numeric feature).""",
    "categorical_penalty": """\
categorical_penalty : float, default=3.0
    The evidence a split of a categorical feature's categories, ordered by
    the optimal constants of their rows, must add to the best split
    otherwise found (the codes' own order, the other features): per
    category of the node beyond two, this many times the node's mean loss
    (its cost over its weight). An order fitted to the node's rows finds
    spurious splits among many categories; 0 takes the best of all orders
    scanned. The default: :ref:`categorical_features` in the user guide.""",
    "monotonic_cst": """\
monotonic_cst : array-like of int of shape (n_features,), dict or None, \
default=None
    Monotone constraints, as in scikit-learn: per feature 1 (predictions
    increase with it), -1 (decrease) or 0 (free); a dict from feature
    names (X a data frame) to those values leaves the others free. A
    split on a constrained feature is made only when its sides' optima
    follow the direction, and each leaf's value is its optimum clipped to
    the values of the leaves it is compared with (those whose regions
    meet it along every other feature), so every pair of ordered leaves
    keeps the order. Rows missing a constrained feature take
    the values of the side chosen for them: the constraint orders the
    present values. Categorical features cannot be constrained; linear
    leaves are refused. See :ref:`constraints` in the user guide.""",
    "interaction_cst": """\
interaction_cst : {"pairwise", "no_interactions"} or list of lists of int, \
default=None
    Interaction constraints, as in scikit-learn's
    ``HistGradientBoostingRegressor``: the groups of features (their
    indices) that may interact. A branch splits only on the features of
    the groups that hold every feature split on above it, so that each
    leaf's path uses the features of one group; the features in no group
    form one more group. "pairwise": every pair; "no_interactions": each
    feature alone. Linear leaves are refused (they read every feature).""",
    "linear_constraints": """\
positive : bool, default=False
    Keep every coefficient non-negative, as scikit-learn's ``Lasso(positive=
    True)``.
monotonic_cst : array-like of int of shape (n_features,), dict or None, \
default=None
    Signs of the coefficients, with the trees' meaning (see :class:`MMIT`):
    per feature 1 (the prediction increases with it: its coefficient is at
    least 0), -1 (at most 0) or 0 (free); a dict from feature names to those
    values leaves the others free. Categorical features cannot be
    constrained. The solver keeps each constrained coefficient on its side
    exactly (coordinate descent on a half-line), and a coefficient at 0 is
    optimal when no allowed direction descends faster than the l1 penalty.""",
    "categorical_attributes": """\
is_categorical_ : ndarray of shape (n_features_in_,) of bool, or None
    Which features are categorical; None when none is.
categories_ : list of ndarray or None, or None
    For each feature, its categories (the labels, the index of each its
    code) when it is categorical, None when it is numeric; None in place
    of the list when no feature is categorical.""",
    "curve_query": """\
Parameters
----------
X : array-like of shape (n_samples, n_features)
return_array : bool, default=False
    Return an array of the values at ``curve_times_`` instead of step
    functions.""",
    "predict": """\
Parameters
----------
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Or a Dask array or data frame (the ``dask`` extra): predicted a
    partition of rows at a time where it lies.

Returns
-------
y_pred : ndarray of shape (n_samples,)
    A Dask array, chunked as the rows, for a Dask ``X``.""",
}

# a fit's Parameters section up to its sample weights (X, y)
for _name, _X in (("fit_parameters", "fit_X"), ("fit_parameters_numeric",
                                                 "fit_X_numeric")):
    SECTIONS[_name] = "\n".join(["Parameters", "----------", SECTIONS[_X],
                                 SECTIONS["fit_y"]])

# a fit's Returns section, and a fit's whole sections with plain weights
SECTIONS["fit_returns"] = """\
Returns
-------
self : object
    The fitted estimator."""
SECTIONS["fit_weighted"] = "\n".join([
    SECTIONS["fit_parameters"],
    "sample_weight : array-like of shape (n_samples,), default=None",
    "    Non-negative weights.",
    "",
    SECTIONS["fit_returns"]])

_PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def fill_doc(obj):
    """Replace the shared-section lines of the docstring of ``obj`` (a
    function or a class; KeyError for an unknown name) and return ``obj``."""

    def section(match):
        indent, name = match.groups()
        return "\n".join(indent + line if line else line
                         for line in SECTIONS[name].splitlines())

    obj.__doc__ = _PLACEHOLDER.sub(section, obj.__doc__)
    return obj
