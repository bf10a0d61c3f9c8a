"""Evidence for MMITBoost's defaults: candidate settings on real and simulated data.

The same protocol and data as forest_defaults.py (the data sets of DATA_DIR
with their folds, and simulated shapes of ``make_interval_regression``):
each candidate is a fixed MMITBoost setting, varied one or two parameters
at a time from the defaults (100 stages, learning rate 0.1, depth 3,
``min_samples_leaf=5``, squared hinge, margin 0). Prints each candidate's
mean rank, median and worst ratio to the best candidate of each data set.

Usage: python benchmarks/boost_defaults.py DATA_DIR [--quick]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

sys.path.insert(0, str(Path(__file__).resolve().parent))
from forest_defaults import splits_of  # noqa: E402

from mmit import MMITBoost  # noqa: E402
from mmit._model_selection import bounds_spread  # noqa: E402
from mmit.metrics import interval_mse  # noqa: E402

CANDIDATES = {
    "defaults": {},
    "depth 2": {"max_depth": 2},
    "depth 4": {"max_depth": 4},
    "300 stages, rate 0.05": {"n_estimators": 300, "learning_rate": 0.05},
    "300 stages": {"n_estimators": 300},
    "linear hinge": {"loss": "linear_hinge"},
    "min_samples_leaf 1": {"min_samples_leaf": 1},
    "subsample 0.7": {"subsample": 0.7},
    "max_features 1/3": {"max_features": 1 / 3},
    "margin 0.1 spread": {"margin_scale": 0.1},
    "margin 0.3 spread": {"margin_scale": 0.3},
}


def test_mse(candidate, X_train, y_train, X_test, y_test):
    params = dict(candidate)
    margin = params.pop("margin_scale", 0.0) * bounds_spread(y_train[:, 0], y_train[:, 1])
    model = MMITBoost(**params, margin=margin, random_state=0).fit(X_train, y_train)
    return interval_mse(y_test, model.predict(X_test))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--quick", action="store_true",
                        help="one fold per data set, two simulated shapes (a smoke test)")
    args = parser.parse_args()
    results = {}
    for name, splits in splits_of(args.data_dir, args.quick):
        start = time.perf_counter()
        results[name] = np.array([np.mean([test_mse(c, *split) for split in splits])
                                  for c in CANDIDATES.values()])
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    mse = np.array(list(results.values()))
    ratio = mse / np.maximum(mse.min(axis=1, keepdims=True), 1e-12)
    ranks = np.array([rankdata(row) for row in mse])
    print(f"{'candidate':<24} {'mean rank':>9} {'median ratio':>12} {'worst ratio':>11}")
    for index in np.argsort(ranks.mean(axis=0)):
        print(f"{list(CANDIDATES)[index]:<24} {ranks[:, index].mean():>9.2f} "
              f"{np.median(ratio[:, index]):>12.2f} {ratio[:, index].max():>11.2f}")


if __name__ == "__main__":
    main()
