"""Toy problems and helpers shared by the tests: random interval problems
(and hypothesis strategies of them), a tree's leaf cost, a data folder
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


@st.composite
def small_split_rows(draw, max_rows, kinds=("interval", "exact", "left", "right", "none")):
    """``(X, lower, upper, weight)`` of 2 to ``max_rows`` rows for split
    searches against an oracle: 1 to 3 features on a coarse grid (ties),
    NaN among them, intervals of ``kinds`` (:func:`grid_intervals`), weights
    of which 0 (at least one positive)."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, 3))
    X = np.array(draw(st.lists(st.lists(
        st.one_of(st.integers(0, 3).map(float), st.just(np.nan)), min_size=p, max_size=p),
        min_size=n, max_size=n)))
    lower, upper = draw(grid_intervals(n, st.integers(-4, 4).map(lambda k: k / 2), kinds))
    weight = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n,
                                    max_size=n)))
    weight[draw(st.integers(0, n - 1))] = 1.0
    return X, lower, upper, weight


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
