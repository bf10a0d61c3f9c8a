"""Accuracy of MMITBoost's binned split search against its exact one.

On the data sets of DATA_DIR (each fold of folds.csv in turn the test set)
and the simulated shapes of variant_study.py, ``MMITBoost()`` (its
defaults: the exact criterion) and ``MMITBoost(splitter="hist")`` with 255
and 32 bins are fitted on the same splits; prints each variant's mean test
interval MSE per data set, its mean rank, median and worst ratio to the
best variant, and the mean ratio of each binned variant to the exact one
(bundled sets, simulated shapes).

Usage: python benchmarks/studies/hist_accuracy.py DATA_DIR [--n-jobs 2] [--quick]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import (
    SIMULATED_PREFIX,
    mean_test_mse,
    print_variant_table,
    splits_of,
    study_parser,
)

from mmit import MMITBoost
from mmit.metrics import interval_mse

VARIANTS = {"exact": {}, "hist 255": {"splitter": "hist"},
            "hist 32": {"splitter": "hist", "max_bins": 32}}


def test_mse(params, X_train, y_train, X_test, y_test):
    model = MMITBoost(**params, random_state=0).fit(X_train, y_train)
    return interval_mse(y_test, model.predict(X_test))


def main():
    parser = study_parser(__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="one fold per data set, two simulated shapes (a smoke test)")
    args = parser.parse_args()
    names = list(VARIANTS)
    by_set = {}
    for name, splits in splits_of(args.data_dir, args.quick):
        by_set[name] = mean_test_mse(test_mse, [(VARIANTS[v],) for v in names], splits,
                                     args.n_jobs)
        print(f"{name}: done", file=sys.stderr, flush=True)
    print_variant_table("test interval MSE of MMITBoost() by split search", by_set, names)
    for group, keep in (("bundled sets", lambda n: not n.startswith(SIMULATED_PREFIX)),
                        ("simulated shapes", lambda n: n.startswith(SIMULATED_PREFIX))):
        mse = np.array([row for name, row in by_set.items() if keep(name)])
        ratio = mse[:, 1:] / mse[:, :1]
        print(f"\nmean ratio to the exact search, {group} ({len(mse)}): "
              + ", ".join(f"{v} {r:.3f}" for v, r in zip(names[1:], ratio.mean(axis=0),
                                                         strict=True)))


if __name__ == "__main__":
    main()
