"""Text rendering of a fitted tree."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._tree import TREE_LEAF


def resolve_feature_names(model, feature_names):
    """``feature_names``, else the model's ``feature_names_in_``, else x0, x1, ..."""
    n_features = model.n_features_in_
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"x{j}" for j in range(n_features)]
    if len(feature_names) != n_features:
        raise ValueError(
            f"feature_names has {len(feature_names)} names for {n_features} features."
        )
    return feature_names


def split_conditions(tree, node, feature_names, decimals, categories=None,
                     parents=None, max_labels=None):
    """The conditions of the left and right child of an internal node.

    A missing value (NaN) goes where the node says: ``or missing`` marks
    that side; a threshold of ``+inf`` separates present from missing values.
    A categorical split names the categories of each side that can reach
    the node (``site in {a, b}``), ``categories`` being the model's
    ``categories_`` and ``parents`` the tree's (:func:`parents_of`);
    categories unseen in training go with missing values, and at most
    ``max_labels`` labels of a side are shown (None: all).
    """
    name = feature_names[tree.feature[node]]
    if tree.is_categorical[node]:
        return category_conditions(tree, node, name, categories[tree.feature[node]],
                                   parents, max_labels)
    if tree.threshold[node] == np.inf:
        present, missing = f"{name} is present", f"{name} is missing"
        return (missing, present) if tree.missing_go_to_left[node] else (present, missing)
    left = f"{name} <= {tree.threshold[node]:.{decimals}f}"
    right = f"{name} >  {tree.threshold[node]:.{decimals}f}"
    if tree.missing_go_to_left[node]:
        return left + " or missing", right
    return left, right + " or missing"


def parents_of(tree):
    """Each node's parent (-1 for the root)."""
    parents = np.full(tree.node_count, -1, dtype=np.intp)
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    parents[tree.children_left[internal]] = internal
    parents[tree.children_right[internal]] = internal
    return parents


def category_sides(tree, node, n_categories):
    """Which of the codes ``0 .. n_categories - 1`` go left at a categorical
    split, and whether missing values (and unseen categories) do."""
    goes_left = np.zeros(n_categories, dtype=bool)
    goes_left[tree.categories_left(node, n_categories)] = True
    return goes_left, bool(tree.missing_go_to_left[node])


def reaching(tree, node, parents, n_categories):
    """The codes of the node's split feature that can reach ``node`` through
    its ancestors' splits on that feature, and whether missing values can."""
    codes, missing = np.ones(n_categories, dtype=bool), True
    feature, child, parent = tree.feature[node], node, parents[node]
    while parent >= 0:
        if tree.feature[parent] == feature and tree.is_categorical[parent]:
            goes_left, missing_left = category_sides(tree, parent, n_categories)
            is_left = tree.children_left[parent] == child
            codes &= goes_left == is_left
            missing &= missing_left == is_left
        child, parent = parent, parents[parent]
    return codes, missing


def category_conditions(tree, node, name, labels, parents, max_labels):
    """The conditions of a categorical split's children (see
    :func:`split_conditions`)."""
    goes_left, missing_left = category_sides(tree, node, len(labels))
    codes, missing = ((np.ones(len(labels), dtype=bool), True) if parents is None
                      else reaching(tree, node, parents, len(labels)))
    conditions = []
    for side, missing_side in ((goes_left, missing_left), (~goes_left, not missing_left)):
        shown = [str(label) for label in np.asarray(labels, dtype=object)[side & codes]]
        missing_here = missing and missing_side
        if not shown:
            conditions.append(f"{name} is missing" if missing_here else f"{name} is absent")
            continue
        if max_labels is not None and len(shown) > max_labels:
            shown = shown[:max_labels] + [f"... {len(shown) - max_labels} more"]
        condition = f"{name} in {{{', '.join(shown)}}}"
        conditions.append(condition + " or missing" if missing_here else condition)
    return tuple(conditions)


def export_text(model, *, feature_names=None, decimals=3, show_cost=False):
    """Rules of a fitted MMIT as indented text.

    Parameters
    ----------
    model : MMIT
        A fitted tree.
    feature_names : list of str, default=None
        Names of the features; defaults to ``feature_names_in_`` when the
        tree was fitted on a DataFrame, else ``x0, x1, ...``.
    decimals : int, default=3
        Decimals of thresholds, predictions and costs.
    show_cost : bool, default=False
        Also show each leaf's cost and number of samples.

    Returns
    -------
    report : str

    Notes
    -----
    Each split says which side a missing value (NaN) of its feature goes
    to (``or missing``); a split "present versus missing" reads ``x is
    present`` / ``x is missing``. A split of a categorical feature names
    the categories of each side that can reach it, ``site in {a, c}`` /
    ``site in {b} or missing``; a category unseen in training goes with
    missing values. A
    linear leaf shows its model, e.g. ``value: 0.500 + 2 * dose - 0.1 *
    age`` (a missing feature counts as its training mean).

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import MMIT, export_text
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([[0.0, 1.0], [0.0, 1.0], [5.0, 6.0], [5.0, 6.0]])
    >>> print(export_text(MMIT().fit(X, y), feature_names=["dose"]))
    |--- dose <= 1.500 or missing
    |   |--- value: 0.500
    |--- dose >  1.500
    |   |--- value: 5.500
    <BLANKLINE>
    """
    check_is_fitted(model, "tree_")
    tree = model.tree_
    feature_names = resolve_feature_names(model, feature_names)
    categories = getattr(model, "categories_", None)
    parents = parents_of(tree)
    left, right, node_models = tree.children_left, tree.children_right, tree.node_models
    lines = []
    # pre-order walk; ("right", node) entries print the right condition between subtrees
    stack = [("node", 0, 0)]
    while stack:
        kind, node, depth = stack.pop()
        indent = "|   " * depth + "|--- "
        if kind == "right":
            lines.append(indent + split_conditions(tree, node, feature_names, decimals,
                                                   categories, parents)[1])
        elif left[node] == TREE_LEAF:
            prediction = (f"{tree.value[node]:.{decimals}f}" if node_models is None else
                          node_models.describe(node, tree.value[node], feature_names,
                                               decimals))
            line = f"{indent}value: {prediction}"
            if show_cost:
                line += (f" (cost: {tree.cost[node]:.{decimals}f}, "
                         f"samples: {tree.n_node_samples[node]})")
            lines.append(line)
        else:
            lines.append(indent + split_conditions(tree, node, feature_names, decimals,
                                                   categories, parents)[0])
            stack += [("node", right[node], depth + 1), ("right", node, depth),
                      ("node", left[node], depth + 1)]
    return "\n".join(lines) + "\n"
