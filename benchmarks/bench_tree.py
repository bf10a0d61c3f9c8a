"""Fit and predict time of one MMIT versus scikit-learn's DecisionTreeRegressor.

scikit-learn's tree is fitted on the Interval-CART transform of the same data
(each finite bound becomes a row whose target is ``lower + margin`` or
``upper - margin``), the tool a user would otherwise reach for. Data: n
samples, p = 20 continuous features, interval targets around a nonlinear
signal of two features with 20% left- and 20% right-censored labels.
Both estimators are timed in turn within each repeat (median of the repeats),
at max_depth 8 and unlimited, for both losses. Predictions are on the n
training samples.

Usage: python benchmarks/bench_tree.py [--max-n 1e5] [--repeats 5]
"""

import argparse
from functools import partial

import numpy as np
from sklearn.tree import DecisionTreeRegressor
from timing import interleaved_medians

from mmit import MMIT
from mmit.baselines import interval_cart_rows

N_FEATURES = 20
MARGIN = 0.1


def interval_data(n, rng):
    X = rng.uniform(0.0, 10.0, size=(n, N_FEATURES))
    signal = np.sin(X[:, 0]) * 2.0 + np.abs(X[:, 1] - 5.0)
    lower = signal - rng.exponential(0.5, n)
    upper = signal + rng.exponential(0.5, n)
    censoring = rng.random(n)
    lower[censoring < 0.2] = -np.inf
    upper[censoring > 0.8] = np.inf
    return X, np.column_stack([lower, upper])


def interval_cart_data(X, y, margin):
    """X and targets of the Interval-CART transform (one row per finite bound)."""
    rows, targets = interval_cart_rows(y[:, 0], y[:, 1], margin)
    return X[rows], targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [int(10**k) for k in range(3, 7) if 10**k <= args.max_n]

    print(f"{'n':>8} {'depth':>5} {'loss':>8} {'mmit fit s':>10} {'sk fit s':>9} "
          f"{'ratio':>6} {'mmit pred ms':>12} {'sk pred ms':>10} {'ratio':>6} "
          f"{'leaves':>7} {'sk leaves':>9}")
    for n in sizes:
        X, y = interval_data(n, rng)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        repeats = args.repeats if n <= 10**5 else max(1, args.repeats // 2)
        for max_depth in (8, None):
            for loss in ("linear_hinge", "squared_hinge"):
                mmit = MMIT(loss=loss, margin=MARGIN, max_depth=max_depth, random_state=0)
                cart = DecisionTreeRegressor(max_depth=max_depth, random_state=0)
                fit_mmit, fit_cart = interleaved_medians(
                    [partial(mmit.fit, X, y), partial(cart.fit, X_rows, targets)], repeats)
                predict_mmit, predict_cart = interleaved_medians(
                    [partial(mmit.predict, X), partial(cart.predict, X)], repeats)
                print(f"{n:>8.0e} {str(max_depth):>5} {loss.split('_')[0]:>8} "
                      f"{fit_mmit:>10.3f} {fit_cart:>9.3f} {fit_mmit / fit_cart:>6.2f} "
                      f"{1e3 * predict_mmit:>12.2f} {1e3 * predict_cart:>10.2f} "
                      f"{predict_mmit / predict_cart:>6.2f} {mmit.get_n_leaves():>7d} "
                      f"{cart.get_n_leaves():>9d}", flush=True)


if __name__ == "__main__":
    main()
