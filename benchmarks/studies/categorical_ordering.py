"""How often the exact splitter's category ordering finds the best categorical split.

For a categorical feature, the exact splitter sorts a node's categories by
the optimal constant of their rows and scans that order (and the codes'
own order) as it scans a numeric feature. For squared error (the squared
hinge, exact targets, margin 0) that finds the best of the 2^(K-1) - 1
partitions of K categories (Fisher 1958; Breiman et al. 1984); for the
hinge losses with censored targets or a margin it is a heuristic. This
script measures it against an exhaustive search.

Each problem: n rows (20 to 60, uniform) of one categorical feature with K
categories (every one present), each category's effect a standard normal
draw, each row's centre its category's effect plus normal noise (standard
deviation 1); the targets are

- exact: lower = upper = the centre (a margin does not apply to them);
- mixed: intervals, the centre minus and plus exponential half-widths of
  mean 0.3, then 20% of the rows lose their lower bound and 20% their upper
  one (left-, right-censored and bounded, as in servo and speed_data.py);
- right: such intervals, half of them without their upper bound (the
  bundled peak-calling sets are 53% and 90% right-censored).
 The depth-1 tree of the exact splitter (``grow_tree``, its
cost of the two children) is compared with the least cost over every
partition of the categories into two non-empty sets, each side's cost the
minimum of its rows' summed hinge losses computed here, independently of
the library (every candidate minimiser of the piecewise linear or
quadratic objective; ``--check N`` also compares it with the tests'
oracle ``tests/brute_force.py`` on N problems of every cell).

For every loss (linear and squared hinge), margin (0 and 0.3), kind of
targets and K = 3..8, over ``--problems`` random problems, prints:

- hit: the share of problems where the tree's split cost equals the
  exhaustive optimum (within 1e-9 relative);
- mean excess, worst excess: the mean and largest relative excess cost
  (tree / optimum - 1) over the problems it misses ("-" when none);
- codes hit: the share where the best split of the codes as numbers
  (``n_categories=None``) is already optimal;
- beats codes: the share where the categorical split costs less than the
  codes' best split (what the ordering adds over ordinal codes).

Usage: python benchmarks/studies/categorical_ordering.py [--problems 300] [--check 0]
       [--csv PATH]
"""

import argparse
import importlib.util
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument

from mmit import MMIT
from mmit.tree._growing import grow_tree, training_data

LOSSES = ("linear_hinge", "squared_hinge")
MARGINS = (0.0, 0.3)
KINDS = ("exact", "mixed", "right")
CATEGORIES = range(3, 9)
N_ROWS = (20, 60)
RTOL = 1e-9
ATOL = 1e-9  # costs of 0 (a side fitted exactly) compare absolutely


def problem(rng, n_categories, kind):
    """Codes (every category present), lower and upper bounds."""
    n = int(rng.integers(N_ROWS[0], N_ROWS[1] + 1))
    codes = np.concatenate([np.arange(n_categories),
                            rng.integers(0, n_categories, n - n_categories)])
    codes = rng.permutation(codes).astype(np.float64)
    centre = rng.normal(0.0, 1.0, n_categories)[codes.astype(int)] + rng.normal(0.0, 1.0, n)
    if kind == "exact":
        return codes, centre, centre.copy()
    lower = centre - rng.exponential(0.3, n)
    upper = centre + rng.exponential(0.3, n)
    censoring = rng.random(n)
    if kind == "mixed":
        lower[censoring < 0.2] = -np.inf
        upper[censoring > 0.8] = np.inf
    else:
        upper[censoring < 0.5] = np.inf
    return codes, lower, upper


def partitions(codes):
    """Boolean masks (n_partitions, n) of the left side of every split of the
    present categories into two non-empty sets (the last category always
    right): 2^(K-1) - 1 of them."""
    categories = np.unique(codes)
    masks = [np.isin(codes, left) for size in range(1, len(categories))
             for left in itertools.combinations(categories[:-1], size)]
    return np.array(masks)


def hinge_losses(mu, lower_bp, upper_bp, loss):
    """Each row's hinge loss at ``mu`` (shape (..., 1) against rows (n,))."""
    with np.errstate(invalid="ignore"):
        below = np.where(np.isfinite(lower_bp), np.maximum(lower_bp - mu, 0.0), 0.0)
        above = np.where(np.isfinite(upper_bp), np.maximum(mu - upper_bp, 0.0), 0.0)
    if loss == "squared_hinge":
        return below**2 + above**2
    return below + above


def subset_minima(masks, lower, upper, margin, loss):
    """The least summed hinge loss (unit weights) of the rows of every mask.

    The objective of any subset is linear (linear hinge) or quadratic
    (squared hinge) between consecutive breakpoints of all the rows; its
    minimum is at a breakpoint or, for the squared hinge, at a piece's
    stationary point. Each subset's best candidate is chosen by the piece's
    coefficients, and the cost evaluated directly at it.
    """
    exact = lower == upper
    lower_bp = np.where(exact, lower, lower + margin)
    upper_bp = np.where(exact, upper, upper - margin)
    points = np.unique(np.concatenate([lower_bp, upper_bp]))
    points = points[np.isfinite(points)]
    weights = masks.astype(np.float64)
    at_points = weights @ hinge_losses(points[:, None], lower_bp, upper_bp, loss).T
    best = at_points.min(axis=1)
    if loss == "linear_hinge":
        return best
    # squared hinge: on each piece, a row below its lower breakpoint adds
    # (lo - mu)^2, above its upper one (mu - up)^2
    edges = np.concatenate([[-np.inf], points, [np.inf]])
    inner = np.concatenate([[points[0] - 1.0], (points[:-1] + points[1:]) / 2,
                            [points[-1] + 1.0]])[:, None]
    with np.errstate(invalid="ignore"):
        below = np.isfinite(lower_bp) & (inner < lower_bp)
        above = np.isfinite(upper_bp) & (inner > upper_bp)
    a = (below.astype(float) + above) @ weights.T
    b = (np.where(below, -2 * lower_bp, 0.0)
         + np.where(above, -2 * upper_bp, 0.0)) @ weights.T
    c = (np.where(below, lower_bp**2, 0.0)
         + np.where(above, upper_bp**2, 0.0)) @ weights.T
    with np.errstate(divide="ignore", invalid="ignore"):
        stationary = np.clip(np.where(a > 0, -b / (2 * a), edges[1:, None]),
                             edges[:-1, None], edges[1:, None])
        value = np.where(a > 0, a * stationary**2 + b * stationary + c, np.inf)
        mu = stationary[value.argmin(axis=0), np.arange(len(masks))]
        direct = (weights * hinge_losses(mu[:, None], lower_bp, upper_bp, loss)).sum(axis=1)
    return np.minimum(best, np.where(np.isfinite(mu), direct, np.inf))


def exhaustive_cost(codes, lower, upper, margin, loss):
    """Least cost over the root (no split) and every partition's two sides."""
    left = partitions(codes)
    sides = subset_minima(np.concatenate([left, ~left, np.ones((1, len(codes)), bool)]),
                          lower, upper, margin, loss)
    n = len(left)
    return min(sides[-1], (sides[:n] + sides[n:2 * n]).min())


def split_cost(codes, lower, upper, margin, loss, n_categories):
    """Cost of the depth-1 tree's two children (the root's own if no split)."""
    params = MMIT(max_depth=1, loss=loss, margin=margin).get_params()
    data = training_data(codes[:, None], lower, upper, margin, None, n_categories)
    tree = grow_tree(params, data, np.ones(len(codes)), 0)
    return tree.cost[1] + tree.cost[2] if tree.node_count == 3 else tree.cost[0]


def tests_oracle():
    """tests/brute_force.py's ``minimum``, imported by path."""
    path = Path(__file__).resolve().parent.parent / "tests" / "brute_force.py"
    spec = importlib.util.spec_from_file_location("brute_force", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.minimum


def check(minimum, codes, lower, upper, margin, loss):
    """Compare subset_minima with the tests' oracle on every side of every partition."""
    masks = partitions(codes)
    masks = np.concatenate([masks, ~masks])
    ours = subset_minima(masks, lower, upper, margin, loss)
    for mask, value in zip(masks, ours, strict=True):
        theirs = minimum(lower[mask], upper[mask], margin, loss, np.ones(mask.sum()))[0]
        if not np.isclose(value, theirs, rtol=RTOL, atol=ATOL):
            raise AssertionError(f"oracle mismatch: {value!r} != {theirs!r} ({loss}, "
                                 f"margin {margin})")
    return len(masks)


def same_cost(cost, optimum):
    return cost <= optimum * (1 + RTOL) + ATOL


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=300, help="problems per cell")
    parser.add_argument("--check", type=int, default=0, metavar="N",
                        help="compare this script's oracle with tests/brute_force.py "
                             "on N problems of every cell")
    add_csv_argument(parser)
    args = parser.parse_args()
    minimum = tests_oracle() if args.check else None
    checked = 0
    start = time.perf_counter()
    table = Table(["loss", "margin", "targets", "K", "problems", "hit", "mean excess",
                   "worst excess", "codes hit", "beats codes"], args.csv,
                  "depth-1 categorical split of the exact splitter against all partitions")
    for (li, loss), (mi, margin), (ki, kind) in itertools.product(
            enumerate(LOSSES), enumerate(MARGINS), enumerate(KINDS)):
        for n_categories in CATEGORIES:
            rng = np.random.default_rng([li, mi, ki, n_categories])
            hits, codes_hits, beats, excess = 0, 0, 0, []
            for index in range(args.problems):
                codes, lower, upper = problem(rng, n_categories, kind)
                if index < args.check:
                    checked += check(minimum, codes, lower, upper, margin, loss)
                optimum = exhaustive_cost(codes, lower, upper, margin, loss)
                native = split_cost(codes, lower, upper, margin, loss, [n_categories])
                ordinal = split_cost(codes, lower, upper, margin, loss, None)
                if not same_cost(optimum, native * (1 + RTOL) + ATOL):
                    raise AssertionError(f"the tree's split ({native!r}) beats the "
                                         f"exhaustive search ({optimum!r})")
                if same_cost(native, optimum):
                    hits += 1
                else:
                    excess.append(native / optimum - 1 if optimum > 0 else np.inf)
                codes_hits += same_cost(ordinal, optimum)
                beats += not same_cost(ordinal, native)
            share = args.problems / 100
            table.add(loss, f"{margin:g}", kind, n_categories, args.problems,
                      f"{hits / share:.1f}%",
                      f"{np.mean(excess):.2%}" if excess else "-",
                      f"{np.max(excess):.2%}" if excess else "-",
                      f"{codes_hits / share:.1f}%", f"{beats / share:.1f}%")
    if args.check:
        print(f"\nthe oracle agreed with tests/brute_force.py on {checked} subsets")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
