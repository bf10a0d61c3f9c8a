"""Fit and predict time of one MMIT versus scikit-learn's DecisionTreeRegressor.

scikit-learn's tree is fitted on the Interval-CART transform of the same data
(each finite bound becomes a row whose target is ``lower + margin`` or
``upper - margin``), the tool a user would otherwise reach for. Data: n
samples, p continuous features (20 by default), interval targets around a
nonlinear signal of two features with 20% left- and 20% right-censored
labels. Both estimators are timed in turn within each repeat (median of the
repeats) for every combination of the options below. Predictions are on the
n training samples.

Options:
- ``--features`` and ``--max-features``: the cost per node follows the
  features evaluated there, e.g. ``--sizes 1e4 --features 20 200 1000 5000
  --max-features sqrt None --depths None --losses linear_hinge``;
- ``--missing 0.1``: that fraction of every feature is NaN, for both
  estimators; the table adds MMIT's time on the same data without NaN;
- ``--baseline DIR``: another checkout of mmit (e.g. the previous main,
  built in place with ``python setup.py build_ext --inplace``) is timed on
  the same data in the same run, in a process of its own;
- ``--memory``: the peak memory of both fits, each in a fresh process (see
  timing.peak_fit_memory_mb; the data are made before);
- ``--predict-only``: both estimators are fitted once, untimed, and only
  their predictions are timed (the predict columns in a fraction of the
  time), e.g. ``--sizes 1e5 --features 20 200 --predict-only``.

Usage: python benchmarks/speed/bench_tree.py [--max-n 1e5 | --sizes N ...]
       [--features P ...] [--max-features F ...] [--depths D ...]
       [--losses L ...] [--missing FRACTION] [--baseline DIR] [--repeats 5]
       [--memory] [--predict-only] [--csv PATH]
"""

import argparse
import itertools
import sys
from functools import partial
from pathlib import Path

from sklearn.tree import DecisionTreeRegressor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from speed_data import MARGIN, N_FEATURES, benchmark_data, interval_cart_data
from tables import Table, add_csv_argument, paired_cells, seconds, size
from timing import BaselineProcess, interleaved_medians, peak_fit_memory_mb

import mmit


def parse_option(text):
    """None, an int, a float or a string, as given on the command line."""
    if text == "None":
        return None
    for kind in (int, float):
        try:
            value = kind(float(text)) if kind is int and "e" in text else kind(text)
        except ValueError:
            continue
        return value
    return text


def add_sweep_arguments(parser, default_max_features):
    """The options shared with bench_forest.py."""
    parser.add_argument("--max-n", type=float, default=1e5,
                        help="sizes 1e3, 1e4, ... up to this (unless --sizes)")
    parser.add_argument("--sizes", type=float, nargs="+")
    parser.add_argument("--features", type=int, nargs="+", default=[N_FEATURES])
    parser.add_argument("--max-features", type=parse_option, nargs="+",
                        default=[default_max_features])
    parser.add_argument("--missing", type=float, default=0.0,
                        help="fraction of NaN in every feature")
    parser.add_argument("--baseline", help="another mmit checkout, timed in the same run")
    parser.add_argument("--predict-only", action="store_true",
                        help="fit once, untimed, and time only the predictions")
    add_csv_argument(parser)


def sizes_of(args, largest_power):
    if args.sizes:
        return [int(n) for n in args.sizes]
    return [int(10**k) for k in range(3, largest_power + 1) if 10**k <= args.max_n]


def check_sweep_arguments(parser, args):
    if not 0.0 <= args.missing < 1.0:
        parser.error("--missing is a fraction in [0, 1)")
    if args.baseline and args.missing:
        parser.error("--baseline times complete data only (earlier versions take no NaN)")
    if args.predict_only and args.baseline:
        parser.error("--baseline times fits, which --predict-only skips")


def comparison_columns(args):
    """The columns after scikit-learn's fit: MMIT without NaN, the baseline."""
    columns = ["fit without NaN s", "ratio"] if args.missing else []
    return columns + (["previous fit s", "ratio to previous"] if args.baseline else [])


def compare_fits(args, baseline, estimator, params, X, y, fit_sklearn, repeats):
    """The fitted mmit ``estimator(**params)``, its fit time and scikit-learn's
    (``fit_sklearn``), timed in turn with, under --missing, the same fit on
    the data without NaN and, under --baseline, the baseline's; and the cells
    of those comparison columns (:func:`comparison_columns`). Under
    --predict-only: the fitted estimator only (both fitted once, untimed)."""
    model = getattr(mmit, estimator)(**params)
    if args.predict_only:
        fit_sklearn()
        return model.fit(X, y), None, None, []
    fits = [partial(model.fit, X, y), fit_sklearn]
    n, p = X.shape
    if args.missing:
        fits.append(partial(getattr(mmit, estimator)(**params).fit, benchmark_data(n, p)[0],
                            y))
    if baseline:
        fits.append(baseline.fitter((n, p), estimator, params))
    times = interleaved_medians(fits, repeats)
    cells = [cell for other in times[2:] for cell in (seconds(other),
                                                      f"{times[0] / other:.2f}")]
    return model, times[0], times[1], cells


# the benchmark data (X, y) and their Interval-CART transform (X_rows,
# targets) made before the fit whose peak memory is measured, with every
# estimator that bench_tree.py and bench_forest.py fit imported
MEMORY_SETUP = """
from speed_data import MARGIN, benchmark_data, interval_cart_data
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor
from mmit import MMIT, MMITForest
X, y = benchmark_data({n}, {p}, {missing})
X_rows, targets = interval_cart_data(X, y, MARGIN)
"""
MEMORY_FITS = {
    "mmit": "MMIT(loss={loss!r}, margin=MARGIN, max_depth={max_depth!r}, "
            "max_features={max_features!r}, random_state=0).fit(X, y)",
    "sklearn": "DecisionTreeRegressor(max_depth={max_depth!r}, "
               "max_features={max_features!r}, random_state=0).fit(X_rows, targets)",
}


def fit_memory(fit, n, p, missing):
    """Peak memory (MB) of ``fit``, Python source over the variables of
    MEMORY_SETUP, in a fresh process (timing.peak_fit_memory_mb)."""
    return peak_fit_memory_mb(MEMORY_SETUP.format(n=n, p=p, missing=missing), fit)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_sweep_arguments(parser, default_max_features=None)
    parser.add_argument("--depths", type=parse_option, nargs="+", default=[8, None])
    parser.add_argument("--losses", nargs="+", default=["linear_hinge", "squared_hinge"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--memory", action="store_true",
                        help="the peak memory of both fits, each in a fresh process")
    args = parser.parse_args()
    check_sweep_arguments(parser, args)
    baseline = BaselineProcess(args.baseline) if args.baseline else None

    columns = ["n", "p", "max_features", "max_depth", "loss"]
    if not args.predict_only:
        columns += ["MMIT fit s", "sklearn fit s", "fit ratio", *comparison_columns(args)]
    columns += ["MMIT predict ms", "sklearn predict ms", "predict ratio", "MMIT leaves",
                "sklearn leaves"]
    if args.memory:
        columns += ["MMIT MB", "sklearn MB", "ratio"]
    table = Table(columns, args.csv)
    for n, p in itertools.product(sizes_of(args, 6), args.features):
        X, y = benchmark_data(n, p, args.missing)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        repeats = args.repeats if n <= 10**5 else max(1, args.repeats // 2)
        for max_features, max_depth, loss in itertools.product(
                args.max_features, args.depths, args.losses):
            params = dict(loss=loss, margin=MARGIN, max_depth=max_depth,
                          max_features=max_features, random_state=0)
            cart = DecisionTreeRegressor(max_depth=max_depth, max_features=max_features,
                                         random_state=0)
            model, fit_mmit, fit_cart, comparison = compare_fits(
                args, baseline, "MMIT", params, X, y, partial(cart.fit, X_rows, targets),
                repeats)
            predict_mmit, predict_cart = interleaved_medians(
                [partial(model.predict, X), partial(cart.predict, X)], repeats)
            row = [size(n), p, max_features, max_depth, loss.split("_")[0]]
            if not args.predict_only:
                row += [seconds(fit_mmit), seconds(fit_cart), f"{fit_mmit / fit_cart:.2f}",
                        *comparison]
            row += [seconds(1e3 * predict_mmit), seconds(1e3 * predict_cart),
                    f"{predict_mmit / predict_cart:.2f}", model.get_n_leaves(),
                    cart.get_n_leaves()]
            if args.memory:
                memory = [fit_memory(MEMORY_FITS[which].format(
                    loss=loss, max_depth=max_depth, max_features=max_features),
                    n, p, args.missing) for which in ("mmit", "sklearn")]
                row += paired_cells(*memory)
            table.add(*row)
    if baseline:
        baseline.close()


if __name__ == "__main__":
    main()
