"""Sparse input: fit time and memory of a scipy.sparse X against the same X
dense, for every kind of model.

Simulated interval data: ``--n-rows`` rows, ``--n-features`` features of
which a fraction ``--density`` is nonzero (uniform on [-2, 2], the others
0), the signal the sum of the first ten features times 3, plus normal
noise (sd 0.1), widened into an interval of width 1, 30% of the labels
right-censored. Each fit runs in its own process, per layout (a CSC
matrix, or the dense array it equals), so that its peak memory is its
own, the two layouts in turn ``--repeats`` times: the table gives the
median fit time, the peak resident memory of the fit above the process's
memory before it (which holds the data, the sparse matrix or the dense
array; the largest over the repeats), the sizes of the two inputs, and
the ratios sparse over dense. The models fitted on the two layouts are the same
(the tests check it): the table gives the largest difference between the
two fits' predictions of 100 rows (0 for the trees; the linear model's
rounding otherwise).

Usage: python benchmarks/studies/sparse_input.py [--n-rows 10000]
       [--n-features 200 1000] [--density 0.01] [--repeats 3]
       [--models NAME ...] [--csv PATH]
"""

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
import scipy.sparse as sp
from memory import peak_bytes, reset_peak, resident_bytes

from mmit import MMIT, IntervalLinearRegression, MMITBoost, MMITForest

MODELS = {
    "MMIT(max_depth=8)": lambda: MMIT(max_depth=8, random_state=0),
    "MMIT()": lambda: MMIT(random_state=0),
    "MMITForest(n_estimators=10)": lambda: MMITForest(n_estimators=10, n_jobs=2,
                                                      random_state=0, distribution=None),
    "MMITBoost(20 stages)": lambda: MMITBoost(n_estimators=20, random_state=0),
    "MMITBoost(hist, 100 stages)": lambda: MMITBoost(splitter="hist", n_jobs=2,
                                                     random_state=0),
    "IntervalLinearRegression()": lambda: IntervalLinearRegression(),
}


def simulated(n_rows, n_features, density, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=density, random_state=rng, format="csc",
                  data_rvs=lambda size: rng.uniform(-2.0, 2.0, size))
    signal = 3.0 * np.asarray(X[:, :10].sum(axis=1)).ravel() + rng.normal(0, 0.1, n_rows)
    upper = np.where(rng.random(n_rows) < 0.3, np.inf, signal + 0.5)
    return X, np.column_stack([signal - 0.5, upper])


def child(model, layout, n_rows, n_features, density):
    """Fit one model on one layout; print time, memory and its first
    predictions as JSON."""
    X, y = simulated(n_rows, n_features, density)
    if layout == "dense":
        X = X.toarray(order="C")
    reset_peak()
    before = resident_bytes()
    start = time.perf_counter()
    fitted = MODELS[model]().fit(X, y)
    seconds = time.perf_counter() - start
    peak = peak_bytes()
    prediction = fitted.predict(X[:100])
    print(json.dumps({"seconds": seconds, "fit_bytes": max(peak - before, 0),
                      "prediction": prediction.tolist()}))


def difference(a, b):
    """The largest absolute difference between two lists of predictions."""
    return float(np.max(np.abs(np.subtract(a, b))))


def summary(results):
    """The median time and the largest memory of a layout's runs, and the
    first run's predictions."""
    return {"seconds": float(np.median([result["seconds"] for result in results])),
            "fit_bytes": max(result["fit_bytes"] for result in results),
            "prediction": results[0]["prediction"]}


def run(model, layout, args, n_features):
    out = subprocess.run(
        [sys.executable, __file__, "--child", model, layout, str(args.n_rows),
         str(n_features), str(args.density)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-rows", type=int, default=10000)
    parser.add_argument("--n-features", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--csv", default=None)
    parser.add_argument("--child", nargs=5, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        model, layout, n_rows, n_features, density = args.child
        child(model, layout, int(n_rows), int(n_features), float(density))
        return
    rows = []
    header = ("model", "features", "nonzeros", "dense X MB", "sparse X MB", "dense s",
              "sparse s", "time ratio", "dense fit MB", "sparse fit MB", "memory ratio",
              "largest difference")
    print(" | ".join(header))
    for n_features in args.n_features:
        X, _ = simulated(args.n_rows, n_features, args.density)
        dense_mb = args.n_rows * n_features * 8 / 2**20
        sparse_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
        for model in args.models:
            runs = {"dense": [], "sparse": []}
            for _ in range(args.repeats):
                for layout, results in runs.items():
                    results.append(run(model, layout, args, n_features))
            dense, sparse = (summary(runs[layout]) for layout in ("dense", "sparse"))
            row = (model, n_features, X.nnz, f"{dense_mb:.1f}", f"{sparse_mb:.1f}",
                   f"{dense['seconds']:.2f}", f"{sparse['seconds']:.2f}",
                   f"{sparse['seconds'] / dense['seconds']:.2f}",
                   f"{dense['fit_bytes'] / 2**20:.1f}",
                   f"{sparse['fit_bytes'] / 2**20:.1f}",
                   f"{sparse['fit_bytes'] / max(dense['fit_bytes'], 1):.2f}",
                   f"{difference(dense['prediction'], sparse['prediction']):.1e}")
            rows.append(row)
            print(" | ".join(map(str, row)), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(header)
            writer.writerows(rows)


if __name__ == "__main__":
    main()
