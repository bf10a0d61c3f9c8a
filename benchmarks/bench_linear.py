"""Fit time of IntervalLinearRegressionCV versus scikit-learn's ElasticNetCV.

Same data as bench_tree.py (interval targets around a nonlinear signal of two
features, 40% censored bounds) with p features; ElasticNetCV is fitted on
the Interval-CART transform (one row per finite bound). Both use the lasso
penalty, 100 alphas on their automatic path and 5 folds; mmit's model gets
one margin (0.1), so both fit one path per fold. Timed in turn (median).

Usage: python benchmarks/bench_linear.py [--sizes 1e3 1e4] [--features 20 200]
       [--repeats 3]
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

from mmit import IntervalLinearRegressionCV  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--features", type=int, nargs="+", default=[20, 100, 500])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'n':>7} {'p':>5} {'mmit s':>8} {'sklearn s':>9} {'ratio':>6}", flush=True)
    for n, p in itertools.product([int(n) for n in args.sizes], args.features):
        X, y = benchmark_data(n, p)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        mmit = IntervalLinearRegressionCV(margins=[MARGIN], n_alphas=100, cv=5)
        sklearn = ElasticNetCV(l1_ratio=1.0, alphas=100, cv=5)
        times = interleaved_medians([partial(mmit.fit, X, y),
                                     partial(sklearn.fit, X_rows, targets)], args.repeats)
        print(f"{n:>7.0e} {p:>5d} {times[0]:>8.2f} {times[1]:>9.2f} "
              f"{times[0] / times[1]:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
