"""Fit time of the linear models: IntervalLinearRegressionCV versus
scikit-learn's ElasticNetCV, and trees with linear leaves versus constant
leaves.

Same data as bench_tree.py (interval targets around a nonlinear signal of two
features, 40% censored bounds) with p features. ElasticNetCV is fitted on
the Interval-CART transform (one row per finite bound). Both use the lasso
penalty, 100 alphas on their automatic path and 5 folds; mmit's model gets
one margin (0.1), so both fit one path per fold. The trees: an MMIT of depth
6 (squared hinge) with linear leaves against the same tree with constant
leaves, fit and predict (on the training rows). Timed in turn (median).

Usage: python benchmarks/bench_linear.py [--sizes 1e3 1e4] [--features 20 200]
       [--repeats 5] [--skip-cv] [--skip-trees]
"""

import argparse
import itertools
import sys
from functools import partial
from pathlib import Path

from sklearn.linear_model import ElasticNetCV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tree import MARGIN, benchmark_data, interval_cart_data  # noqa: E402
from timing import interleaved_medians  # noqa: E402

from mmit import MMIT, IntervalLinearRegressionCV  # noqa: E402

TREE_DEPTH = 6


def compare_cv(sizes, features, repeats):
    print("IntervalLinearRegressionCV vs ElasticNetCV (100 alphas, 5 folds, lasso)")
    print(f"{'n':>7} {'p':>5} {'mmit s':>8} {'sklearn s':>9} {'ratio':>6}", flush=True)
    for n, p in itertools.product(sizes, features):
        X, y = benchmark_data(n, p)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        mmit = IntervalLinearRegressionCV(margins=[MARGIN], n_alphas=100, cv=5)
        sklearn = ElasticNetCV(l1_ratio=1.0, alphas=100, cv=5)
        times = interleaved_medians([partial(mmit.fit, X, y),
                                     partial(sklearn.fit, X_rows, targets)], repeats)
        print(f"{n:>7.0e} {p:>5d} {times[0]:>8.2f} {times[1]:>9.2f} "
              f"{times[0] / times[1]:>6.2f}", flush=True)


def compare_trees(sizes, features, repeats):
    print(f"\nMMIT(max_depth={TREE_DEPTH}, squared hinge): linear vs constant leaves")
    print(f"{'n':>7} {'p':>5} {'fit lin s':>9} {'fit const s':>11} {'ratio':>6} "
          f"{'pred lin s':>10} {'pred const s':>12} {'ratio':>6}", flush=True)
    for n, p in itertools.product(sizes, features):
        X, y = benchmark_data(n, p)
        linear = MMIT(max_depth=TREE_DEPTH, loss="squared_hinge", leaf_model="linear",
                      random_state=0)
        constant = MMIT(max_depth=TREE_DEPTH, loss="squared_hinge", random_state=0)
        fits = interleaved_medians([partial(linear.fit, X, y),
                                    partial(constant.fit, X, y)], repeats)
        predictions = interleaved_medians([partial(linear.predict, X),
                                           partial(constant.predict, X)], repeats)
        print(f"{n:>7.0e} {p:>5d} {fits[0]:>9.3f} {fits[1]:>11.3f} "
              f"{fits[0] / fits[1]:>6.2f} {predictions[0]:>10.4f} {predictions[1]:>12.4f} "
              f"{predictions[0] / predictions[1]:>6.2f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--features", type=int, nargs="+", default=[20, 100, 500])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-cv", action="store_true")
    parser.add_argument("--skip-trees", action="store_true")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes]
    if not args.skip_cv:
        compare_cv(sizes, args.features, args.repeats)
    if not args.skip_trees:
        compare_trees(sizes, args.features, args.repeats)


if __name__ == "__main__":
    main()
