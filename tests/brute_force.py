"""Brute-force oracles of the tests, independent of the code they check.

- The sum of interval hinge losses (``objective``) and its minimum
  (``minimum``), evaluated directly at every candidate minimiser (all
  breakpoints, plus the stationary point of every quadratic piece) in
  O(n^2); the conventional minimiser of a flat minimum.
- The Turnbull probabilities of intervals by plain self-consistency
  iterations (``observation_probabilities``).
- The best pruning of a tree for a complexity parameter, over every
  subtree that keeps the root (``best_pruning``).
"""

import math

import numpy as np


def breakpoints(lower, upper, margin):
    exact = lower == upper
    lower_bp = np.where(exact, lower, lower + margin)
    upper_bp = np.where(exact, upper, upper - margin)
    return lower_bp, upper_bp


def objective(mu, lower, upper, margin, loss, weight):
    """Total weighted hinge loss of predicting ``mu`` (scalar)."""
    lower_bp, upper_bp = breakpoints(lower, upper, margin)
    with np.errstate(invalid="ignore"):
        below = np.where(np.isfinite(lower_bp), np.maximum(lower_bp - mu, 0.0), 0.0)
        above = np.where(np.isfinite(upper_bp), np.maximum(mu - upper_bp, 0.0), 0.0)
    if loss == "squared_hinge":
        below, above = below**2, above**2
    return math.fsum(weight * below) + math.fsum(weight * above)


def minimum(lower, upper, margin, loss, weight):
    """Minimal value and minimiser set ``(value, left, right)`` of the objective.

    ``left``/``right`` are the ends of the (closed) set of minimisers, possibly
    infinite; ``None`` for both when there is no finite bound with weight > 0.
    """
    lower = np.asarray(lower, float)
    upper = np.asarray(upper, float)
    weight = np.asarray(weight, float)
    keep = weight > 0
    lower, upper, weight = lower[keep], upper[keep], weight[keep]
    lower_bp, upper_bp = breakpoints(lower, upper, margin)
    points = np.unique(np.concatenate([lower_bp, upper_bp]))
    points = points[np.isfinite(points)]
    if points.size == 0:
        return 0.0, None, None
    candidates = list(points)
    if loss == "squared_hinge":
        # stationary point of the quadratic on each piece
        edges = np.concatenate([[points[0] - 1.0], points, [points[-1] + 1.0]])
        for left, right in zip(edges[:-1], edges[1:], strict=True):
            mid = 0.5 * (left + right)
            a = b = 0.0
            for lo, up, w in zip(lower_bp, upper_bp, weight, strict=True):
                if np.isfinite(lo) and mid < lo:
                    a += w
                    b -= 2 * w * lo
                if np.isfinite(up) and mid > up:
                    a += w
                    b -= 2 * w * up
            if a > 0:
                candidates.append(-b / (2 * a))

    def f(mu):
        return objective(mu, lower, upper, margin, loss, weight)

    values = np.array([f(c) for c in candidates])
    best = values.min()
    tol = 1e-11 * (best + np.max(weight))
    attaining = np.array(candidates)[values <= best + tol]
    left, right = attaining.min(), attaining.max()
    span = float(right - left) + 1.0
    if f(left - span) <= best + tol:
        left = -np.inf
    if f(right + span) <= best + tol:
        right = np.inf
    return best, left, right


def conventional_minimiser(left, right):
    """The prediction the library's conventions give for a minimiser set."""
    if left == -np.inf:
        return right
    if right == np.inf:
        return left
    return 0.5 * (left + right)


def observation_probabilities(lower, upper, weight, iterations=10_000):
    """The probability each observation ``[lower_i, upper_i]`` (closed) gets
    under the NPMLE of weighted interval-censored values (test oracle).

    Independent of ``mmit.ensemble._turnbull``: the real line is cut at every finite end
    into point cells and the open cells between them; plain self-consistency
    iterations on the cells' masses, from each observation's weight spread
    evenly over the cells it holds. (The observations' probabilities are
    unique even where the masses are not.)
    """
    lower, upper, weight = (np.asarray(a, float) for a in (lower, upper, weight))
    keep = weight > 0
    lower, upper, weight = lower[keep], upper[keep], weight[keep]
    ends = np.unique(np.concatenate([lower, upper]))
    ends = ends[np.isfinite(ends)]
    # cells: (-inf, e0), {e0}, (e0, e1), {e1}, ..., {e_last}, (e_last, inf)
    points = np.concatenate([[-np.inf], ends])
    cells = []
    for k, point in enumerate(points):
        if k > 0:
            cells.append((point, point))
        following = points[k + 1] if k + 1 < len(points) else np.inf
        cells.append((point, following))  # open interval
    holds = np.zeros((len(lower), len(cells)), dtype=bool)
    for c, (a, b) in enumerate(cells):
        if a == b:  # a point
            holds[:, c] = (lower <= a) & (a <= upper)
        else:  # an open interval (a, b)
            holds[:, c] = (lower <= a) & (b <= upper)
    w = weight / weight.sum()
    mass = (w[:, None] * holds / holds.sum(axis=1, keepdims=True)).sum(axis=0)
    for _ in range(iterations):
        probability = holds @ mass
        mass = mass * ((w / probability) @ holds)
    return holds @ mass


def rooted_subtrees(children_left, children_right, node=0):
    """Every subtree of a tree that keeps ``node`` (each internal node kept or
    made a leaf, its descendants then gone), as the tuple of its leaves."""
    if children_left[node] == -1:
        return [(node,)]
    below = [left + right for left in rooted_subtrees(children_left, children_right,
                                                      children_left[node])
             for right in rooted_subtrees(children_left, children_right,
                                          children_right[node])]
    return [(node,), *below]


def best_pruning(tree, alpha, total_weight, rtol=1e-9):
    """The least ``cost / total_weight + alpha * leaves`` over the subtrees of
    ``tree`` that keep its root, and the fewest leaves of a subtree reaching
    it (within ``rtol``): the subtree minimal cost-complexity pruning keeps."""
    cost = np.asarray(tree.cost) / total_weight
    scores = [(math.fsum(cost[list(leaves)]) + alpha * len(leaves), len(leaves))
              for leaves in rooted_subtrees(np.asarray(tree.children_left),
                                            np.asarray(tree.children_right))]
    best = min(score for score, _ in scores)
    fewest = min(n_leaves for score, n_leaves in scores
                 if score <= best + rtol * abs(best))
    return best, fewest
