"""MMITForest versus scikit-learn's RandomForestRegressor: time and memory.

scikit-learn's forest is fitted on the Interval-CART transform of the same
data (one row per finite bound, see bench_tree.py), with the same
n_estimators, max_features and n_jobs. For n = 1e3 ... 1e5 samples and
p = 20 features it prints:

- fit and predict time with n_jobs=2 (median of repeats, the two forests
  timed in turn) and their ratio;
- the speed-up of fitting with n_jobs=2 over n_jobs=1, for both;
- the peak memory of each fit, each measured in a fresh process (see
  timing.peak_fit_memory_mb; the data, and scikit-learn's Interval-CART
  rows, are made before).

``--sizes``, ``--features``, ``--max-features``, ``--missing`` and
``--baseline`` sweep and compare as in bench_tree.py; ``--fit-only`` skips
the predict, speed-up and memory columns, e.g. ``--sizes 1e4 --features 20
200 1000 5000 --max-features sqrt None --fit-only``; ``--predict-only`` fits
both forests once, untimed, and prints the predict columns only, e.g.
``--sizes 1e5 --features 20 200 --predict-only``.

Usage: python benchmarks/speed/bench_forest.py [--max-n 1e5 | --sizes N ...]
       [--features P ...] [--max-features F ...] [--missing FRACTION]
       [--baseline DIR] [--trees 100] [--repeats 3] [--fit-only | --predict-only]
       [--csv PATH]
"""

import argparse
import itertools
import sys
from functools import partial
from pathlib import Path

from sklearn.ensemble import RandomForestRegressor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from bench_tree import (  # noqa: E402
    add_sweep_arguments,
    check_sweep_arguments,
    compare_fits,
    comparison_columns,
    fit_memory,
    sizes_of,
)
from speed_data import MARGIN, benchmark_data, interval_cart_data  # noqa: E402
from tables import Table, paired_cells, seconds, size  # noqa: E402
from timing import BaselineProcess, interleaved_medians  # noqa: E402

from mmit import MMITForest  # noqa: E402

MEMORY_FITS = {
    "mmit": "MMITForest({trees}, margin=MARGIN, max_features={max_features!r}, n_jobs=2, "
            "random_state=0).fit(X, y)",
    "sklearn": "RandomForestRegressor({trees}, max_features={max_features!r}, n_jobs=2, "
               "random_state=0).fit(X_rows, targets)",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_sweep_arguments(parser, default_max_features="sqrt")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fit-only", action="store_true",
                        help="skip the predict, speed-up and memory columns")
    args = parser.parse_args()
    check_sweep_arguments(parser, args)
    if args.fit_only and args.predict_only:
        parser.error("--fit-only and --predict-only exclude each other")
    baseline = BaselineProcess(args.baseline) if args.baseline else None

    columns = ["n", "p", "max_features"]
    if not args.predict_only:
        columns += ["MMIT fit s", "sklearn fit s", "fit ratio", *comparison_columns(args)]
    if not args.fit_only:
        columns += ["MMIT predict ms", "sklearn predict ms", "predict ratio"]
    if not (args.fit_only or args.predict_only):
        columns += ["MMIT speed-up", "sklearn speed-up", "MMIT MB", "sklearn MB", "ratio"]
    table = Table(columns, args.csv)
    for n, p in itertools.product(sizes_of(args, 5), args.features):
        X, y = benchmark_data(n, p, args.missing)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        # one fit per forest at 1e5 rows; the predictions are cheap enough to repeat
        repeats = args.repeats if n < 10**5 or args.predict_only else 1
        for max_features in args.max_features:
            params = dict(n_estimators=args.trees, margin=MARGIN, max_features=max_features,
                          n_jobs=2, random_state=0)
            cart = RandomForestRegressor(args.trees, max_features=max_features, n_jobs=2,
                                         random_state=0)
            mmit, fit_mmit, fit_cart, comparison = compare_fits(
                args, baseline, "MMITForest", params, X, y,
                partial(cart.fit, X_rows, targets), repeats)
            row = [size(n), p, max_features]
            if not args.predict_only:
                row += [seconds(fit_mmit), seconds(fit_cart), f"{fit_mmit / fit_cart:.2f}",
                        *comparison]
            if not args.fit_only:
                predict_mmit, predict_cart = interleaved_medians(
                    [partial(mmit.predict, X), partial(cart.predict, X)], max(3, repeats))
                row += [seconds(1e3 * predict_mmit), seconds(1e3 * predict_cart),
                        f"{predict_mmit / predict_cart:.2f}"]
            if not (args.fit_only or args.predict_only):
                mmit_1 = MMITForest(**dict(params, n_jobs=1))
                cart_1 = RandomForestRegressor(args.trees, max_features=max_features,
                                               n_jobs=1, random_state=0)
                fit_mmit_1, fit_cart_1 = interleaved_medians(
                    [partial(mmit_1.fit, X, y), partial(cart_1.fit, X_rows, targets)],
                    repeats)
                memory = [fit_memory(MEMORY_FITS[which].format(
                    trees=args.trees, max_features=max_features), n, p, args.missing)
                    for which in ("mmit", "sklearn")]
                row += [f"{fit_mmit_1 / fit_mmit:.2f}", f"{fit_cart_1 / fit_cart:.2f}",
                        *paired_cells(*memory)]
            table.add(*row)
    if baseline:
        baseline.close()


if __name__ == "__main__":
    main()
