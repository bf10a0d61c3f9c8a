"""TreeOfPredictors against the stack, the forest, the booster and XGBoost AFT.

Data: the data sets of DATA_DIR (each fold of folds.csv in turn is the test
set; ``--folds K``: the first K only) and simulated shapes whose regions
need different families: a linear region beside a piecewise-constant one
(``regions``), and a survival shape (log times, right-censored,
``survival``), 400 and 2000 training rows.

Models: ``ToPs`` (the default, 5-fold out-of-fold losses), ``ToPs holdout``
(the paper's 75/15/10 split, its predictors refitted on their regions),
``ToPs holdout paper`` (not refitted, as in the paper), ``ToPs all splits``
(``n_candidates=None``: no screening), ``ToPs depth 1`` and ``ToPs leaf
100`` (``max_depth=1``, ``min_samples_leaf=100``), ``ToPs 1 se`` and ``ToPs
2 se`` (``min_gain_se``: a split's gain above 1 or 2 standard errors),
``ToPs leaf 100 2 se`` (both),
``ToPs of stacks`` (a library of one member, the default stack: the stack a
member of the tree), ``Stack``
(``IntervalStackingRegressor()``), ``MMITForest()``, ``MMITBoost()`` and
XGBoost's AFT booster (``survival:aft`` on exp bounds, where xgboost is
installed). Prints each data set's test interval MSE, the mean rank and
the ratios to the best; then the fit seconds of each over the stack's on
the same splits (median over the splits).

Usage: python benchmarks/studies/trees_of_predictors.py DATA_DIR [--n-jobs 2]
       [--folds K] [--models NAME ...] [--no-simulated]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from models import XGBoostAFT
from timing import xgboost_available
from variant_study import compare_models, model_study_parser, study_splits

from mmit import IntervalStackingRegressor, MMITBoost, MMITForest, TreeOfPredictors

MODELS = {
    "ToPs": lambda: TreeOfPredictors(random_state=0),
    "ToPs holdout": lambda: TreeOfPredictors(validation="holdout", random_state=0),
    "ToPs holdout paper": lambda: TreeOfPredictors(validation="holdout", refit=False,
                                                   random_state=0),
    "ToPs all splits": lambda: TreeOfPredictors(n_candidates=None, random_state=0),
    "ToPs depth 1": lambda: TreeOfPredictors(max_depth=1, random_state=0),
    "ToPs 1 se": lambda: TreeOfPredictors(min_gain_se=1.0, random_state=0),
    "ToPs 2 se": lambda: TreeOfPredictors(min_gain_se=2.0, random_state=0),
    "ToPs leaf 100 2 se": lambda: TreeOfPredictors(min_samples_leaf=100, min_gain_se=2.0,
                                                   random_state=0),
    "ToPs leaf 100": lambda: TreeOfPredictors(min_samples_leaf=100, random_state=0),
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


def main():
    args = model_study_parser(__doc__, MODELS).parse_args()
    names = [name for name in args.models
             if name != "XGBoost AFT" or xgboost_available("scores")]
    compare_models(study_splits(args, simulated, ("regions", "survival")), MODELS, names,
                   args.n_jobs, base="Stack")


if __name__ == "__main__":
    main()
