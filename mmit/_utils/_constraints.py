"""Monotone and interaction constraints as users give them (``monotonic_cst``,
``interaction_cst``), checked against the fitted features.

scikit-learn's convention: an array-like of -1 (decreasing), 0 (free) or 1
(increasing) per feature, or a dict from feature names to those values
for data frames (absent names are free). A fit resolves it once, after
its features are validated, into the int8 array the compiled core takes
(None when nothing is constrained).
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ._categorical import n_categories

#: The constraint of the estimators' ``monotonic_cst`` parameter.
MONOTONIC_CST_CONSTRAINT = ["array-like", dict, None]
#: The constraint of the ``interaction_cst`` parameter (scikit-learn's).
INTERACTION_CST_CONSTRAINT = [StrOptions({"pairwise", "no_interactions"}), list, tuple,
                              None]


def monotonic_constraints(estimator):
    """The fitted ``estimator``'s ``monotonic_cst`` as an int8 array of
    ``n_features_in_`` entries, or None when no feature is constrained.

    Parameters
    ----------
    estimator : estimator
        Its features validated by the fit (``n_features_in_``, and
        ``feature_names_in_`` for a dict).

    Raises
    ------
    ValueError
        Wrong length, values other than -1, 0, 1, a dict without feature
        names or with unknown names, a constrained categorical feature (its
        categories have no order: trees split them as sets, linear models
        one-hot encode them).
    """
    given = estimator.monotonic_cst
    if given is None:
        return None
    n_features = estimator.n_features_in_
    if isinstance(given, dict):
        names = getattr(estimator, "feature_names_in_", None)
        if names is None:
            raise ValueError("monotonic_cst as a dict needs X with feature names (a data "
                             "frame); give an array of -1, 0, 1 per feature instead.")
        unknown = sorted(set(map(str, given)) - set(names))
        if unknown:
            raise ValueError(f"monotonic_cst names features that are not in X: {unknown}.")
        index = {name: j for j, name in enumerate(names)}
        values = np.zeros(n_features, dtype=object)
        for name, value in given.items():
            values[index[str(name)]] = value
    else:
        values = np.asarray(given, dtype=object)
        if values.ndim != 1 or values.shape[0] != n_features:
            raise ValueError(f"monotonic_cst must have one entry per feature: got shape "
                             f"{values.shape} for {n_features} features.")
    if not all(_is_direction(value) for value in values):
        raise ValueError(f"monotonic_cst must hold only -1, 0 or 1, got "
                         f"{[value for value in values if not _is_direction(value)]}.")
    constraints = values.astype(np.int8)
    categories = n_categories(estimator)
    if categories is not None and np.any(constraints[categories > 0] != 0):
        names = getattr(estimator, "feature_names_in_", None)
        which = [names[j] if names is not None else j
                 for j in np.flatnonzero((categories > 0) & (constraints != 0))]
        raise ValueError(f"monotonic_cst constrains categorical features {which}: their "
                         "categories have no order for a direction to follow. "
                         "Constrain numeric features only.")
    return constraints if constraints.any() else None


def _is_direction(value):
    """Whether ``value`` is -1, 0 or 1 (an integer or a float equal to one;
    not a bool)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    try:
        return float(value) in (-1.0, 0.0, 1.0)
    except (TypeError, ValueError):
        return False


def interaction_groups(interaction_cst, n_features):
    """``interaction_cst`` as the tree builder takes it: for each feature, the
    bitset of the groups holding it (uint64 words, shape (n_features,
    n_words)); None without constraints.

    As scikit-learn's ``HistGradientBoostingRegressor``: "pairwise" (every
    pair of features a group), "no_interactions" (every feature its own
    group), or a sequence of groups of feature indices; the features in no
    group form one more group.

    Raises
    ------
    ValueError
        A group that is not a collection of feature indices in range.
    """
    if interaction_cst is None:
        return None
    features = range(n_features)
    if interaction_cst == "no_interactions":
        groups = [{j} for j in features]
    elif interaction_cst == "pairwise":
        groups = [{i, j} for i in features for j in features if i < j]
    else:
        groups = []
        for group in interaction_cst:
            members = list(group) if isinstance(group, (list, tuple, set, range)) else None
            if members is None or not all(
                    isinstance(j, Integral) and not isinstance(j, bool)
                    and 0 <= j < n_features for j in members):
                raise ValueError(f"interaction_cst must be a list of groups of feature "
                                 f"indices in [0, {n_features}), got {interaction_cst!r}.")
            groups.append({int(j) for j in members})
    unlisted = set(features).difference(*groups)
    if unlisted:
        groups.append(unlisted)
    n_words = (len(groups) + 63) // 64
    bitsets = np.zeros((n_features, n_words), dtype=np.uint64)
    for g, group in enumerate(groups):
        for j in group:
            bitsets[j, g // 64] |= np.uint64(1) << np.uint64(g % 64)
    return bitsets
