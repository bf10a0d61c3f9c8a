"""TreeOfPredictors against the stack, the forest, the booster and XGBoost AFT.

Data: the data sets of DATA_DIR (each fold of folds.csv in turn is the test
set; ``--folds K``: the first K only) and simulated shapes whose regions
need different families: a linear region beside a piecewise-constant one
(``regions``), and a survival shape (log times, right-censored,
``survival``), 400 and 2000 training rows.

Models: ``ToPs`` (the default, 5-fold out-of-fold losses), ``ToPs holdout``
(the paper's 75/15/10 split, its predictors refitted on their regions),
``ToPs holdout paper`` (not refitted, as in the paper), ``ToPs all splits``
(``n_candidates=None``: no screening), ``ToPs of stacks`` (a library of
one member, the default stack: the stack a member of the tree), ``Stack``
(``IntervalStackingRegressor()``), ``MMITForest()``, ``MMITBoost()`` and
XGBoost's AFT booster (``survival:aft`` on exp bounds, where xgboost is
installed). Prints each data set's test interval MSE, the mean rank and
the ratios to the best; then the fit seconds of each over the stack's on
the same splits (median over the splits).

Usage: python benchmarks/studies/trees_of_predictors.py DATA_DIR [--n-jobs 2]
       [--folds K] [--models NAME ...] [--no-simulated]
"""

import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from models import XGBoostAFT
from timing import xgboost_available
from variant_study import print_variant_table, study_parser

from mmit import IntervalStackingRegressor, MMITBoost, MMITForest, TreeOfPredictors
from mmit.datasets import load_folder
from mmit.metrics import interval_mse

MODELS = {
    "ToPs": lambda: TreeOfPredictors(random_state=0),
    "ToPs holdout": lambda: TreeOfPredictors(validation="holdout", random_state=0),
    "ToPs holdout paper": lambda: TreeOfPredictors(validation="holdout", refit=False,
                                                   random_state=0),
    "ToPs all splits": lambda: TreeOfPredictors(n_candidates=None, random_state=0),
    "ToPs of stacks": lambda: TreeOfPredictors(
        [("stack", IntervalStackingRegressor(random_state=0))], random_state=0),
    "Stack": lambda: IntervalStackingRegressor(random_state=0),
    "MMITForest": lambda: MMITForest(random_state=0),
    "MMITBoost": lambda: MMITBoost(random_state=0),
    "XGBoost AFT": lambda: XGBoostAFT(),
}


def simulated(shape, n, seed):
    """A shape whose regions need different families (module doc)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n + 2000, 6))
    if shape == "regions":
        signal = np.where(X[:, 0] < 0, 2 * X[:, 1] - X[:, 2],
                          np.round(2 * X[:, 1]) + (X[:, 3] > 0))
        center = signal + 0.2 * rng.normal(size=X.shape[0])
        width = rng.uniform(0, 0.4, X.shape[0])
        y = np.column_stack([center - width, center + width])
        y[rng.random(X.shape[0]) < 0.2, 1] = np.inf
    else:
        log_time = 1 + X[:, 0] + np.where(X[:, 1] > 0, X[:, 2], -0.5) + 0.3 * rng.normal(
            size=X.shape[0])
        censor = 1.5 + rng.normal(size=X.shape[0])
        observed = log_time <= censor
        y = np.column_stack([np.where(observed, log_time, censor),
                             np.where(observed, log_time, np.inf)])
    return X[:n], y[:n], X[n:], y[n:]


def splits(data_dir, n_folds, with_simulated):
    for folder in sorted(p for p in data_dir.iterdir() if (p / "folds.csv").exists()):
        data = load_folder(folder)
        folds = np.unique(data.folds)[:n_folds]
        yield data.name, [(data.data[data.folds != k], data.target[data.folds != k],
                           data.data[data.folds == k], data.target[data.folds == k])
                          for k in folds]
    if with_simulated:
        for shape in ("regions", "survival"):
            for n in (400, 2000):
                yield f"sim.{shape} n={n}", [simulated(shape, n, n)]


def fit_and_score(name, X_train, y_train, X_test, y_test):
    model = MODELS[name]()
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return interval_mse(y_test, model.predict(X_test)), seconds


def main():
    parser = study_parser(__doc__)
    parser.add_argument("--folds", type=int, default=None)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--no-simulated", action="store_true")
    args = parser.parse_args()
    names = [name for name in args.models
             if name != "XGBoost AFT" or xgboost_available("scores")]
    mse, seconds = {}, {}
    for data_name, data_splits in splits(args.data_dir, args.folds, not args.no_simulated):
        results = Parallel(n_jobs=args.n_jobs)(
            delayed(fit_and_score)(name, *split) for name in names for split in data_splits)
        results = np.array(results).reshape(len(names), len(data_splits), 2)
        mse[data_name] = results[:, :, 0].mean(axis=1)
        seconds[data_name] = results[:, :, 1]
        print(f"{data_name}: " + ", ".join(f"{n} {v:.4g}" for n, v in
                                          zip(names, mse[data_name], strict=True)),
              file=sys.stderr, flush=True)
    stack = names.index("Stack") if "Stack" in names else None
    extra = None
    if stack is not None:
        ratios = np.concatenate([times / times[stack] for times in seconds.values()],
                                axis=1)
        extra = {"fit s / stack's (median)": np.median(ratios, axis=1)}
    print_variant_table("Test interval MSE (mean over the folds)", mse, names, extra)


if __name__ == "__main__":
    main()
