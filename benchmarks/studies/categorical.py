"""Native categorical splits against one-hot encoding and ordinal codes.

Simulated interval data: the numeric features, targets and censoring of
``make_interval_regression`` (``N_NUMERIC`` features uniform on [0, 10],
the first with the "sin" signal, intervals of 10 draws around it, 40% of
the labels censored, half of them left and half right, as in the simulated
shapes of variant_study.py), and a categorical column of ``N_LEVELS``
levels drawn uniformly per row, in two shapes:

- signal: each level's effect is a standard normal draw, added to both
  bounds of its rows (an order of the levels that the codes do not know);
- no signal: the categorical column is pure noise.

Each model -- ``MMITCV()``, ``MMITForest()``, ``MMITBoost()`` (exact
splits) and ``MMITBoost(splitter="hist")``, their defaults with
``random_state=0`` -- is fitted on the same rows three ways:

- native: the codes 0..59 with ``categorical_features=[0]``;
- one-hot: scikit-learn's ``OneHotEncoder`` on the column (dense, unknown
  levels all zeros) next to the numeric columns, ``categorical_features=None``;
- codes: the codes as numbers, ``categorical_features=None``.

Accuracy: ``--seeds`` data sets per shape (``--n-train`` training rows and
``--n-test`` fresh test rows each), the fits in ``--n-jobs`` processes. The
table gives each encoding's median test interval MSE over the seeds, and the
medians over the seeds of native / min(one-hot, codes) (the better of the
two on that data set) and native / codes. Speed, on the first seed's
training rows with nothing else running: one fit of each encoding (the
one-hot time), then native and codes timed in turn within each of
``--repeats`` repeats (more for a fast model, up to 20; see fit_times) by
timing.interleaved_medians: their median seconds and native / codes.

The goals, checked in the last column: on the signal shape native <= 0.8
times the better of one-hot and codes; on the no-signal shape native not
worse than codes by more than 2% (<= 1.02); fit time native <= 1.5 times
codes on both.

``--penalties K ...`` studies ``categorical_penalty`` instead (the
evidence behind its default): for each value, native's median test
interval MSE over the seeds against codes' and against the better of
one-hot and codes, on both shapes, without timing.

Usage: python benchmarks/studies/categorical.py [--seeds 3] [--n-train 3000]
       [--n-test 2000] [--repeats 3] [--n-jobs 2] [--models NAME ...]
       [--penalties K ...] [--csv PATH]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.preprocessing import OneHotEncoder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds, size
from timing import interleaved_medians

from mmit import MMITCV, MMITBoost, MMITForest
from mmit.datasets import make_interval_regression
from mmit.metrics import interval_mse

N_LEVELS = 60
N_NUMERIC = 4
CENSORING = 0.4
SHAPES = ("signal", "no signal")
MODELS = {
    "MMITCV": (MMITCV, {}),
    "MMITForest": (MMITForest, {}),
    "MMITBoost exact": (MMITBoost, {}),
    "MMITBoost hist": (MMITBoost, {"splitter": "hist"}),
}
ENCODINGS = ("native", "one-hot", "codes")
ACCURACY_GOAL = {"signal": 0.8, "no signal": 1.02}
TIME_GOAL = 1.5


def categorical_data(shape, n, seed):
    """X (the codes in column 0, then the numeric features) and interval targets."""
    X, y = make_interval_regression(n, N_NUMERIC, "sin", censoring=CENSORING,
                                    random_state=seed)
    rng = np.random.default_rng([seed, N_LEVELS])
    codes = rng.integers(0, N_LEVELS, n)
    if shape == "signal":
        y = y + rng.normal(0.0, 1.0, N_LEVELS)[codes, np.newaxis]
    return np.column_stack([codes.astype(np.float64), X]), y


def encoded(encoding, X_train, X_test):
    """X_train, X_test as the encoding gives them to the model, and its
    ``categorical_features``."""
    if encoding == "native":
        return X_train, X_test, [0]
    if encoding == "codes":
        return X_train, X_test, None
    encoder = OneHotEncoder(sparse_output=False, handle_unknown="ignore",
                            dtype=np.float64).fit(X_train[:, :1])
    return (np.column_stack([encoder.transform(X_train[:, :1]), X_train[:, 1:]]),
            np.column_stack([encoder.transform(X_test[:, :1]), X_test[:, 1:]]), None)


def model(name, categorical_features, penalty=None):
    """The model (its ``categorical_penalty`` when ``penalty`` is given)."""
    estimator, params = MODELS[name]
    if penalty is not None:
        params = {**params, "categorical_penalty": penalty}
    return estimator(**params, categorical_features=categorical_features, random_state=0)


def test_mse(name, encoding, shape, seed, n_train, n_test, penalty=None):
    X, y = categorical_data(shape, n_train + n_test, seed)
    X_train, X_test, categorical = encoded(encoding, X[:n_train], X[n_train:])
    fitted = model(name, categorical, penalty).fit(X_train, y[:n_train])
    return interval_mse(y[n_train:], fitted.predict(X_test))


def penalty_study(args):
    """Native / codes and native / best for each ``categorical_penalty``."""
    table = Table(["shape", "model", *(f"{penalty:g}: {ratio}" for penalty in args.penalties
                                       for ratio in ("/ codes", "/ best"))], args.csv,
                  f"native test interval MSE over codes' and over the better of one-hot "
                  f"and codes (medians over {args.seeds} data sets of {args.n_train} "
                  "training rows), by categorical_penalty")
    for shape in SHAPES:
        for name in args.models:
            cells = ([("one-hot", None, seed) for seed in range(args.seeds)]
                     + [("codes", None, seed) for seed in range(args.seeds)]
                     + [("native", penalty, seed) for penalty in args.penalties
                        for seed in range(args.seeds)])
            mse = Parallel(n_jobs=args.n_jobs)(
                delayed(test_mse)(name, encoding, shape, seed, args.n_train, args.n_test,
                                  penalty)
                for encoding, penalty, seed in cells)
            one_hot, codes = np.array(mse[:args.seeds]), np.array(mse[args.seeds:
                                                                      2 * args.seeds])
            native = np.array(mse[2 * args.seeds:]).reshape(len(args.penalties), -1)
            table.add(shape, name, *(f"{np.median(ratio):.3f}" for row in native
                                     for ratio in (row / codes,
                                                   row / np.minimum(one_hot, codes))))


def fit_times(name, shape, n_train, repeats):
    """Fit seconds of each encoding on the first seed's training rows: one
    fit of each (one-hot's time), then native and codes timed in turn within
    ``repeats`` repeats, more for a fast model (up to 20, about 2 s of the
    faster one), their medians."""
    X, y = categorical_data(shape, n_train, 0)
    fits = {}
    for encoding in ENCODINGS:
        X_train, _, categorical = encoded(encoding, X, X[:1])
        fits[encoding] = (lambda X_train=X_train, categorical=categorical:
                          model(name, categorical).fit(X_train, y))
    once = dict(zip(ENCODINGS, interleaved_medians(list(fits.values()), 1), strict=True))
    repeats = min(20, max(repeats, int(2.0 / min(once["native"], once["codes"]))))
    native, codes = interleaved_medians([fits["native"], fits["codes"]], repeats)
    return {"native": native, "one-hot": once["one-hot"], "codes": codes}


def goals(shape, best_ratio, codes_ratio, time_ratio):
    """'met', or what the row misses of the goals."""
    accuracy = best_ratio if shape == "signal" else codes_ratio
    missed = ([f"accuracy > {ACCURACY_GOAL[shape]:g}"] if accuracy > ACCURACY_GOAL[shape]
              else []) + ([f"time > {TIME_GOAL:g}"] if time_ratio > TIME_GOAL else [])
    return "met" if not missed else "MISSED: " + ", ".join(missed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="data sets per shape")
    parser.add_argument("--n-train", type=int, default=3000)
    parser.add_argument("--n-test", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="timed fits per encoding")
    parser.add_argument("--n-jobs", type=int, default=2,
                        help="processes of the accuracy fits")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--penalties", nargs="+", type=float,
                        help="study these categorical_penalty values instead")
    add_csv_argument(parser)
    args = parser.parse_args()
    start = time.perf_counter()
    if args.penalties:
        penalty_study(args)
        print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
        return
    table = Table(["shape", "model", "n", "native MSE", "one-hot MSE", "codes MSE",
                   "native / best", "native / codes", "native s", "one-hot s", "codes s",
                   "time native / codes", "goals"], args.csv,
                  f"test interval MSE (median of {args.seeds} data sets) and fit time "
                  f"(native, codes: median of {args.repeats} or more), {N_LEVELS}-level "
                  "categorical column")
    for shape in SHAPES:
        for name in args.models:
            cells = [(encoding, seed) for seed in range(args.seeds)
                     for encoding in ENCODINGS]
            mse = Parallel(n_jobs=args.n_jobs)(
                delayed(test_mse)(name, encoding, shape, seed, args.n_train, args.n_test)
                for encoding, seed in cells)
            mse = np.array(mse).reshape(args.seeds, len(ENCODINGS))
            native, one_hot, codes = mse.T
            best_ratio = float(np.median(native / np.minimum(one_hot, codes)))
            codes_ratio = float(np.median(native / codes))
            times = fit_times(name, shape, args.n_train, args.repeats)
            time_ratio = times["native"] / times["codes"]
            table.add(shape, name, size(args.n_train),
                      *(f"{np.median(column):.4f}" for column in mse.T),
                      f"{best_ratio:.3f}", f"{codes_ratio:.3f}",
                      *(seconds(times[encoding]) for encoding in ENCODINGS),
                      f"{time_ratio:.2f}",
                      goals(shape, best_ratio, codes_ratio, time_ratio))
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
