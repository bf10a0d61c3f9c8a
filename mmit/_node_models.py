"""Linear models in the nodes of a grown tree (``leaf_model="linear"``).

The splits are the constant-leaf criterion's; then each node asked for
(the leaves, or every node when the tree is to be pruned) is given the
linear model ``f(x) = v + b + (z - z_node) . w`` of its training rows: ``v``
the node's constant, ``z`` the features standardised by their weighted
training mean and standard deviation (a missing value at the mean),
``z_node`` their weighted mean over the node's rows.
``(b, w)`` minimise

    sum_i weight_i * h(f(x_i)) + shrinkage * (b^2 + |w|^2),

``h`` the squared hinge of the distance outside the margin-shrunk interval.
The penalty pulls the model toward the node's constant (``b = w = 0``): a
node with few samples, or a large ``shrinkage``, stays near it. The problem
is strictly convex and piecewise quadratic; a Newton method on the rows
outside their intervals (the generalised Hessian) with backtracking finds
its minimum in a few steps, each the solution of one linear system (of the
size of the active rows when they are fewer than the features).
"""

import numpy as np

from ._loss import LOSSES

# Newton steps per node model; the steps stop earlier when the set of rows
# outside their intervals repeats after a full step (the exact minimum)
_MAX_NEWTON_STEPS = 50
# Armijo's sufficient-decrease fraction of the backtracking line search
_ARMIJO = 1e-4


def feature_scale(X, sample_weight):
    """Weighted mean and standard deviation (1 where it is 0) of each
    feature over the rows of positive weight that have it: the center and
    scale of the node models' standardised features."""
    weight = np.where(np.isnan(X), 0.0, sample_weight[:, np.newaxis])
    total = np.maximum(weight.sum(axis=0), np.finfo(float).tiny)
    filled = np.nan_to_num(X)
    center = (weight * filled).sum(axis=0) / total
    scale = np.sqrt((weight * (filled - center) ** 2).sum(axis=0) / total)
    scale[~(scale > 0.0)] = 1.0
    return center, scale


def standardised(X, center, scale):
    """``(X - center) / scale``, a missing value at 0 (the center)."""
    return np.nan_to_num((X - center) / scale)


def ridge_hinge_newton(A, offset, lower, upper, weight, shrinkage):
    """Minimise ``sum_i weight_i h(offset_i + b + A_i . w) + shrinkage (b^2 +
    |w|^2)``, ``h(f) = (lower - f)_+^2 + (f - upper)_+^2``.

    Parameters
    ----------
    A : ndarray of shape (n_rows, n_columns)
    offset, lower, upper, weight : ndarray of shape (n_rows,)
        ``lower``/``upper`` are the hinges' breakpoints (infinite ones
        inactive), ``weight`` positive.
    shrinkage : float
        Positive strength of the ridge penalty.

    Returns
    -------
    b : float
    w : ndarray of shape (n_columns,)
    """
    design = np.column_stack([np.ones(A.shape[0]), A])
    theta = np.zeros(design.shape[1])
    prediction = offset.copy()

    def objective(prediction, theta):
        below = np.maximum(lower - prediction, 0.0)
        above = np.maximum(prediction - upper, 0.0)
        return weight @ (below * below + above * above) + shrinkage * theta @ theta

    value = objective(prediction, theta)
    previous_side = None
    for _ in range(_MAX_NEWTON_STEPS):
        below, above = lower - prediction > 0.0, prediction - upper > 0.0
        residual = (np.where(above, prediction - upper, 0.0)
                    - np.where(below, lower - prediction, 0.0))
        # the hinges beyond their breakpoint (both where a wide margin crossed them)
        side = 2 * above + below
        hinge_count = above + below.astype(np.int8)
        active = hinge_count > 0
        gradient = design.T @ (weight * residual) + shrinkage * theta
        if not gradient.any():
            break
        if previous_side is not None and np.array_equal(side, previous_side):
            break  # a full step on these hinges' quadratic reached its exact minimum
        direction = -_ridge_solve(design[active], (weight * hinge_count)[active], shrinkage,
                                  gradient)
        change = design @ direction
        slope = gradient @ direction
        step = 1.0
        while True:
            candidate = objective(prediction + step * change, theta + step * direction)
            if candidate <= value + _ARMIJO * step * slope or step < 1e-10:
                break
            step *= 0.5
        if candidate > value:
            break
        theta += step * direction
        prediction += step * change
        value = candidate
        previous_side = side if step == 1.0 else None
    return float(theta[0]), theta[1:]


def _ridge_solve(design, weight, shrinkage, vector):
    """``(design' W design + shrinkage I)^-1 vector``, through the rows'
    space (Woodbury) when they are fewer than the columns."""
    n_rows, n_columns = design.shape
    if n_rows >= n_columns:
        system = (design.T * weight) @ design
        system[np.diag_indices(n_columns)] += shrinkage
        return np.linalg.solve(system, vector)
    rows_system = design @ design.T
    rows_system[np.diag_indices(n_rows)] += shrinkage / weight
    return (vector - design.T @ np.linalg.solve(rows_system, design @ vector)) / shrinkage


def node_rows(tree, X, all_nodes):
    """Training rows of each node: (nodes, row lists); the leaves only
    unless ``all_nodes``."""
    if all_nodes:
        membership = tree.decision_path(X).tocsc()
        return [(node, membership.indices[membership.indptr[node]:
                                          membership.indptr[node + 1]])
                for node in range(tree.node_count)]
    leaves = tree.apply(X)
    order = np.argsort(leaves, kind="stable")
    nodes, starts = np.unique(leaves[order], return_index=True)
    return list(zip(nodes, np.split(order, starts[1:]), strict=True))


def with_linear_models(tree, X, lower, upper, margin, loss, sample_weight, shrinkage,
                       all_nodes):
    """A copy of ``tree`` whose nodes (leaves, or all) hold linear models.

    A node keeps its constant when it has fewer than two rows of positive
    weight or when its constant already costs nothing. The nodes' costs
    become their models' losses (the tree's ``loss``), which pruning uses.

    Parameters
    ----------
    tree : Tree
        A tree of constants grown on ``X``.
    X : ndarray of shape (n_samples, n_features)
        The training features, C-contiguous (NaN: missing).
    lower, upper : ndarray of shape (n_samples,)
        Interval bounds of the rows.
    margin : float
    loss : {"linear_hinge", "squared_hinge"}
        The tree's loss, for the nodes' costs.
    sample_weight : ndarray of shape (n_samples,)
    shrinkage : float
        Positive ridge strength of the node models.
    all_nodes : bool
        Give every node a model (for pruning), not only the leaves.
    """
    # the tree's loss, for the costs; its breakpoints (the bounds moved in by
    # the margin) are the node models' too
    tree_loss = LOSSES[loss].objective(lower, upper, margin, sample_weight)
    values, cost = tree.value.copy(), tree.cost.copy()
    node_model = np.full(tree.node_count, -1, dtype=np.int64)
    slopes = []
    center, scale = feature_scale(X, sample_weight)
    for node, rows in node_rows(tree, X, all_nodes):
        rows = rows[sample_weight[rows] > 0.0]
        if rows.size < 2 or not cost[node] > 0.0:
            continue
        weight = sample_weight[rows]
        Z = standardised(X[rows], center, scale)
        node_mean = weight @ Z / weight.sum()
        A = Z - node_mean
        offset = np.full(rows.size, values[node])
        b, w = ridge_hinge_newton(A, offset, tree_loss.lower[rows], tree_loss.upper[rows],
                                  weight, shrinkage)
        if not w.any():
            continue
        node_model[node] = len(slopes)
        slopes.append(w / scale)
        values[node] += b - node_mean @ w
        # the objective normalises weights to sum 1 over all rows
        cost[node] = tree_loss(offset + b + A @ w, rows) * weight.sum()
    slope_table = (np.array(slopes) if slopes
                   else np.zeros((0, tree.n_features)))
    return tree.with_linear_models(node_model, slope_table, center, values, cost)
