"""Evidence for IntervalLinearRegression's ``clip_features``: test rows beyond the
training range, with and without heavy-tailed features.

Data: the data sets of DATA_DIR (each fold of folds.csv in turn is the test
set) and the simulated shapes of variant_study.py; then the same again
with five heavy-tailed features added to every row (log-normal with
log-scale 3, like raw counts spanning many orders of magnitude; the first
shifted by the standardised first feature so that it carries some signal).
``IntervalLinearRegressionCV`` (alpha and margin by inner 5-fold CV) is
fitted with

- ``clip_features=False``: linear extrapolation;
- ``clip_features=True`` (the default): each feature clipped to its
  training range before predicting;
- bounded predictions: no clipping, the predictions clipped to the range of
  the finite training bounds instead;
- both.

Prints the mean test interval MSE of each, and each variant's mean rank,
median and worst ratio to the best variant, for the plain and the
heavy-tailed data.

Usage: python benchmarks/studies/linear_clipping.py DATA_DIR [--n-jobs 2]
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold

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

VARIANTS = {
    "no clipping": (False, False),
    "clip features": (True, False),
    "bound predictions": (False, True),
    "both": (True, True),
}
N_HEAVY = 5


def with_heavy_features(X, rng):
    """X with N_HEAVY log-normal columns (log-scale 3), the first shifted by
    the standardised first feature."""
    logs = 3.0 * rng.normal(size=(X.shape[0], N_HEAVY))
    logs[:, 0] += 0.5 * (X[:, 0] - X[:, 0].mean()) / (X[:, 0].std() or 1.0)
    return np.column_stack([X, np.exp(logs)])


def test_mse(clip_features, bound_predictions, X_train, y_train, X_test, y_test):
    model = IntervalLinearRegressionCV(cv=KFold(5, shuffle=True, random_state=0),
                                       clip_features=clip_features).fit(X_train, y_train)
    prediction = model.predict(X_test)
    if bound_predictions:
        bounds = y_train[np.isfinite(y_train)]
        prediction = np.clip(prediction, bounds.min(), bounds.max())
    return interval_mse(y_test, prediction)


def main():
    parser = study_parser(__doc__)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    results = {"plain": {}, "heavy-tailed features": {}}
    for name, splits in splits_of(args.data_dir, quick=False):
        for kind, data in (("plain", splits), ("heavy-tailed features", transformed_splits(
                splits, with_heavy_features, rng))):
            results[kind][name] = mean_test_mse(test_mse, list(VARIANTS.values()), data,
                                                args.n_jobs)
        print(f"{name}: " + ", ".join(
            f"{kind}: " + " ".join(f"{v:.4g}" for v in results[kind][name])
            for kind in results), file=sys.stderr, flush=True)
    for kind, by_set in results.items():
        print_variant_table(f"{kind} ({len(by_set)} data sets): mean test interval MSE",
                            by_set, list(VARIANTS))


if __name__ == "__main__":
    main()
