"""Toy problems and helpers shared by the tests: random interval problems,
a tree's leaf cost, a data folder written as CSV files."""

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


def write_folder(path, X, y=None, folds=None):
    path.mkdir()
    np.savetxt(path / "features.csv", X, delimiter=",", comments="",
               header=",".join(f"f{j}" for j in range(X.shape[1])))
    if y is not None:
        with open(path / "targets.csv", "w") as file:
            file.write("lower,upper\n")
            for lower, upper in y:
                file.write(f"{float(lower)!r},{float(upper)!r}\n".replace("inf", "Inf"))
    if folds is not None:
        np.savetxt(path / "folds.csv", folds, fmt="%d", header="fold", comments="")
    return path
