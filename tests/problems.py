"""Toy problems and helpers shared by the tests: random interval problems
(and a hypothesis strategy of them), a tree's leaf cost, a data folder
written as CSV files."""

import numpy as np
from hypothesis import strategies as st

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


@st.composite
def grid_intervals(draw, n, grid, kinds=("interval", "exact", "left", "right", "none")):
    """Lower and upper bounds (arrays) of ``n`` intervals whose finite ends
    are drawn from the strategy ``grid`` (a coarse one: ties), each of a kind
    drawn from ``kinds``: a bounded interval, an exact value, left-, right-
    or not censored at all ("none": both bounds infinite)."""
    lower, upper = [], []
    for _ in range(n):
        a, b = sorted([draw(grid), draw(grid)])
        kind = draw(st.sampled_from(kinds))
        if kind == "exact":
            b = a
        if kind in ("left", "none"):
            a = -INF
        if kind in ("right", "none"):
            b = INF
        lower.append(a)
        upper.append(b)
    return np.array(lower), np.array(upper)


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
