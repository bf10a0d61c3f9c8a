"""Random interval problems and tree summaries shared by the tree and pruning tests."""

import numpy as np

INF = np.inf


def leaf_cost(tree):
    return tree.cost[tree.children_left == -1].sum()


def random_intervals(n, p, seed=0, censor=0.2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    center = np.sin(2 * X[:, 0]) + (X[:, 1] > 0)
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < censor] = -INF
    upper[rng.random(n) < censor] = INF
    return X, np.column_stack([lower, upper])
