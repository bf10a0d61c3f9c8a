"""This checkout's speed against another checkout's, measured in the same run.

Every workload (a fit of each estimator, both boosting splitters, SHAP
values) runs in this process and in a process of its own that imports mmit
from ``--baseline DIR``, another checkout built in place (``python setup.py
build_ext --inplace``; the previous main, say), on the same data
(``speed_data.benchmark_data``), the two timed in turn within every repeat
(the medians of ``--repeats``; see ``timing.interleaved_medians``). Prints
the medians and their ratio, this checkout over the baseline: below 1 is
faster. What a refactoring must not change, as ``output_hashes.py`` checks
its outputs.

Usage: python benchmarks/versions/speed.py --baseline DIR [--repeats 7]
       [--workloads NAME ...] [--csv PATH]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from speed_data import benchmark_data
from tables import Table, add_csv_argument, seconds, size
from timing import BaselineProcess, interleaved_medians

import mmit

# name: (rows, features, estimator, parameters, rows explained or None)
WORKLOADS = {
    "MMIT": (50_000, 20, "MMIT", {"random_state": 0}, None),
    "MMITForest": (10_000, 20, "MMITForest", {"n_jobs": 2, "random_state": 0}, None),
    "MMITBoost exact": (10_000, 20, "MMITBoost", {
        "n_estimators": 200, "early_stopping": False, "random_state": 0}, None),
    "MMITBoost hist": (200_000, 20, "MMITBoost", {
        "n_estimators": 100, "splitter": "hist", "n_jobs": 2, "early_stopping": False,
        "random_state": 0}, None),
    "IntervalLinearRegressionCV": (10_000, 50, "IntervalLinearRegressionCV", {}, None),
    "IntervalGAMCV": (2_000, 10, "IntervalGAMCV", {}, None),
    "IntervalStackingRegressor": (5_000, 20, "IntervalStackingRegressor", {
        "n_jobs": 2, "random_state": 0}, None),
    "shap_values (MMITForest)": (5_000, 20, "MMITForest", {
        "n_estimators": 50, "n_jobs": 2, "random_state": 0}, 1_000),
}


def this_checkout(n, p, estimator, params, explained):
    """The workload's function in this process (a model fitted now when the
    function explains)."""
    X, y = benchmark_data(n, p)
    if explained is None:
        return lambda: getattr(mmit, estimator)(**params).fit(X, y)
    model = getattr(mmit, estimator)(**params).fit(X, y)
    return lambda: mmit.shap_values(model, X[:explained])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, metavar="DIR",
                        help="another checkout of mmit, built in place")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--workloads", nargs="+", choices=list(WORKLOADS),
                        default=list(WORKLOADS))
    add_csv_argument(parser)
    args = parser.parse_args()
    baseline = BaselineProcess(args.baseline)
    table = Table(["workload", "n x p", "this s", "baseline s", "this / baseline"],
                  args.csv, title=f"this checkout against {args.baseline}, "
                                  f"medians of {args.repeats}")
    for name in args.workloads:
        n, p, estimator, params, explained = WORKLOADS[name]
        theirs = (baseline.fitter((n, p, 0.0), estimator, params) if explained is None
                  else baseline.explainer((n, p, 0.0), estimator, params, explained))
        ours = this_checkout(n, p, estimator, params, explained)
        mine, baseline_seconds = interleaved_medians([ours, theirs], args.repeats)
        table.add(name, f"{size(n)} x {p}", seconds(mine), seconds(baseline_seconds),
                  f"{mine / baseline_seconds:.3f}")
    baseline.close()


if __name__ == "__main__":
    main()
