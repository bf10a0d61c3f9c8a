"""Evidence for the imputer in front of the linear models (IntervalStackingRegressor).

Missing values are put into the data sets of DATA_DIR (each fold of
folds.csv in turn is the test set) and into the simulated shapes of
variant_study.py, in two ways, at fit and predict time alike:

- at random: 20% of every feature's values;
- informative: in half of the features (chosen at random), the values above
  the feature's 70th percentile (a sensor's saturation, a count above the
  detection limit).

``IntervalLinearRegressionCV`` (alpha and margin by inner 5-fold CV) is then
fitted behind scikit-learn's ``SimpleImputer`` with the mean or the median,
each with and without a missing-value indicator column per feature that had
missing training values (``add_indicator``). Prints the mean test interval
MSE of each, and each imputer's mean rank, median and worst ratio to the
best imputer, for both kinds of missing values.

Usage: python benchmarks/studies/missing_values.py DATA_DIR [--n-jobs 2]
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import (
    mean_test_mse,
    print_variant_table,
    splits_of,
    study_parser,
    transformed_splits,
)

from mmit import IntervalLinearRegressionCV
from mmit.metrics import interval_mse

IMPUTERS = {
    "mean": ("mean", False),
    "mean + indicator": ("mean", True),
    "median": ("median", False),
    "median + indicator": ("median", True),
}


def at_random(X, rng):
    X = X.copy()
    X[rng.random(X.shape) < 0.2] = np.nan
    return X


def informative(X, rng):
    X = X.copy()
    for j in rng.permutation(X.shape[1])[:max(1, X.shape[1] // 2)]:
        X[X[:, j] > np.quantile(X[:, j], 0.7), j] = np.nan
    return X


def test_mse(strategy, indicator, X_train, y_train, X_test, y_test):
    model = make_pipeline(
        SimpleImputer(strategy=strategy, add_indicator=indicator, keep_empty_features=True),
        IntervalLinearRegressionCV(cv=KFold(5, shuffle=True, random_state=0)))
    return interval_mse(y_test, model.fit(X_train, y_train).predict(X_test))


def main():
    parser = study_parser(__doc__)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    kinds = {"at random": at_random, "informative": informative}
    results = {kind: {} for kind in kinds}
    for name, splits in splits_of(args.data_dir, quick=False):
        for kind, make in kinds.items():
            results[kind][name] = mean_test_mse(
                test_mse, list(IMPUTERS.values()), transformed_splits(splits, make, rng),
                args.n_jobs)
        print(name, file=sys.stderr, flush=True)
    for kind, by_set in results.items():
        print_variant_table(f"missing values {kind} ({len(by_set)} data sets): mean test "
                            "interval MSE", by_set, list(IMPUTERS), width=20)


if __name__ == "__main__":
    main()
