"""Fit time of the linear models: IntervalLinearRegressionCV versus
scikit-learn's ElasticNetCV, and trees with linear leaves versus constant
leaves.

Same data as bench_tree.py (speed_data.py: interval targets around a nonlinear signal of two
features, 40% censored bounds) with p features. ElasticNetCV is fitted on
the Interval-CART transform (one row per finite bound). Both use the lasso
penalty, 100 alphas on their automatic path and 5 folds; mmit's model gets
one margin (0.1), so both fit one path per fold. The trees: an MMIT of depth
6 (squared hinge) with linear leaves against the same tree with constant
leaves, fit and predict (on the training rows). Timed in turn (median).

Usage: python benchmarks/speed/bench_linear.py [--sizes 1e3 1e4] [--features 20 200]
       [--repeats 5] [--skip-cv] [--skip-trees] [--csv PATH] [--trees-csv PATH]
"""

import argparse
import itertools
import sys
from functools import partial
from pathlib import Path

from sklearn.linear_model import ElasticNetCV

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from speed_data import MARGIN, benchmark_data, interval_cart_data  # noqa: E402
from tables import Table, add_csv_argument, seconds, size  # noqa: E402
from timing import interleaved_medians  # noqa: E402

from mmit import MMIT, IntervalLinearRegressionCV  # noqa: E402

TREE_DEPTH = 6


def compare_cv(sizes, features, repeats, path):
    table = Table(["n", "p", "mmit s", "sklearn s", "ratio"], path,
                  "IntervalLinearRegressionCV vs ElasticNetCV (100 alphas, 5 folds, lasso)")
    for n, p in itertools.product(sizes, features):
        X, y = benchmark_data(n, p)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        mmit = IntervalLinearRegressionCV(margins=[MARGIN], n_alphas=100, cv=5)
        sklearn = ElasticNetCV(l1_ratio=1.0, alphas=100, cv=5)
        times = interleaved_medians([partial(mmit.fit, X, y),
                                     partial(sklearn.fit, X_rows, targets)], repeats)
        table.add(size(n), p, seconds(times[0]), seconds(times[1]),
                  f"{times[0] / times[1]:.2f}")


def compare_trees(sizes, features, repeats, path):
    table = Table(["n", "p", "fit linear s", "fit constant s", "ratio", "predict linear s",
                   "predict constant s", "ratio"], path,
                  f"MMIT(max_depth={TREE_DEPTH}, squared hinge): linear vs constant leaves")
    for n, p in itertools.product(sizes, features):
        X, y = benchmark_data(n, p)
        linear = MMIT(max_depth=TREE_DEPTH, loss="squared_hinge", leaf_model="linear",
                      random_state=0)
        constant = MMIT(max_depth=TREE_DEPTH, loss="squared_hinge", random_state=0)
        fits = interleaved_medians([partial(linear.fit, X, y),
                                    partial(constant.fit, X, y)], repeats)
        predictions = interleaved_medians([partial(linear.predict, X),
                                           partial(constant.predict, X)], repeats)
        table.add(size(n), p, seconds(fits[0]), seconds(fits[1]),
                  f"{fits[0] / fits[1]:.2f}", seconds(predictions[0]),
                  seconds(predictions[1]), f"{predictions[0] / predictions[1]:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--features", type=int, nargs="+", default=[20, 100, 500])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-cv", action="store_true")
    parser.add_argument("--skip-trees", action="store_true")
    add_csv_argument(parser)
    parser.add_argument("--trees-csv", type=Path, metavar="PATH",
                        help="write the trees' table to PATH as CSV (--csv: the CV table)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes]
    if not args.skip_cv:
        compare_cv(sizes, args.features, args.repeats, args.csv)
    if not args.skip_trees:
        compare_trees(sizes, args.features, args.repeats, args.trees_csv)


if __name__ == "__main__":
    main()
