"""Evidence for MMITForest's defaults: candidate settings on real and simulated data.

Every candidate is a fixed MMITForest setting (no tuning), from the product of

- ``max_features``: 1.0 (all features), 1/3, "sqrt";
- ``loss``: linear and squared hinge;
- ``margin``: 0, or a tenth of the spread (standard deviation) of the
  finite training bounds;
- ``min_samples_leaf``: 1 or 5;
- ``max_samples``: all rows (None) or 2/3 of them per bootstrap sample.

Data: every data set of DATA_DIR (the paper's protocol: each fold of
``folds.csv`` in turn is the test set, the candidate is fitted on the other
folds) and simulated shapes of ``make_interval_regression`` (one signal
feature among 5, 20 or 100 noise features, n from 50 to 5000, 0-40%
censored bounds, each pattern; tested on 2000 fresh rows). For every data
set it prints each candidate's mean test interval MSE, its ratio to the
best candidate on that set, and, over all sets, each candidate's mean rank,
median and worst ratio. Defaults are chosen by mean rank and worst ratio,
not by the mean MSE alone.

Usage: python benchmarks/studies/forest_defaults.py DATA_DIR [--trees 100] [--n-jobs 2]
       [--out results.csv] [--quick]
"""

import argparse
import csv
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import print_ranking, splits_of

from mmit import MMITForest
from mmit._utils._validation import bounds_spread
from mmit.metrics import interval_mse

MAX_FEATURES = (1.0, 1 / 3, "sqrt")
LOSSES = ("linear_hinge", "squared_hinge")
MARGIN_SCALES = (0.0, 0.1)
MIN_SAMPLES_LEAF = (1, 5)
MAX_SAMPLES = (None, 2 / 3)


def candidates():
    for max_features, loss, scale, leaf, samples in itertools.product(
            MAX_FEATURES, LOSSES, MARGIN_SCALES, MIN_SAMPLES_LEAF, MAX_SAMPLES):
        yield {"max_features": max_features, "loss": loss, "margin_scale": scale,
               "min_samples_leaf": leaf, "max_samples": samples}


def label(candidate):
    features = candidate["max_features"]
    features = f"{features:.2f}" if isinstance(features, float) else features
    samples = candidate["max_samples"]
    return (f"mf={features} {candidate['loss'].split('_')[0]} "
            f"margin={candidate['margin_scale']}s leaf={candidate['min_samples_leaf']} "
            f"samples={'all' if samples is None else f'{samples:.2f}'}")


def test_mse(candidate, X_train, y_train, X_test, y_test, trees, n_jobs):
    forest = MMITForest(
        trees, max_features=candidate["max_features"], loss=candidate["loss"],
        margin=candidate["margin_scale"] * bounds_spread(y_train[:, 0], y_train[:, 1]),
        min_samples_leaf=candidate["min_samples_leaf"],
        max_samples=candidate["max_samples"], n_jobs=n_jobs, random_state=0,
    ).fit(X_train, y_train)
    return interval_mse(y_test, forest.predict(X_test))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write every (data set, candidate) MSE")
    parser.add_argument("--quick", action="store_true",
                        help="one fold per data set, two simulated shapes (a smoke test)")
    args = parser.parse_args()
    settings = list(candidates())
    names = [label(c) for c in settings]
    results = {}
    for name, splits in splits_of(args.data_dir, args.quick):
        start = time.perf_counter()
        results[name] = np.array([np.mean([test_mse(c, *split, args.trees, args.n_jobs)
                                           for split in splits]) for c in settings])
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    if args.out:
        with open(args.out, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["data set"] + names)
            for name, mses in results.items():
                writer.writerow([name] + [f"{mse:.6g}" for mse in mses])

    mse = np.array(list(results.values()))
    print_ranking("candidates, by mean rank over the data sets", names, mse)
    defaults = MMITForest().get_params()
    chosen = next(index for index, c in enumerate(settings)
                  if c["margin_scale"] == 0.0 and defaults["margin"] == 0.0
                  and all(c[name] == defaults[name] for name in (
                      "max_features", "loss", "min_samples_leaf", "max_samples")))
    print(f"\nper data set: the best candidate's MSE, and MMITForest's defaults' "
          f"({names[chosen]}) MSE and ratio to it")
    ratio = mse[:, chosen] / mse.min(axis=1)
    for row, name in enumerate(results):
        print(f"{name:<40} {mse[row].min():>10.4g} {mse[row, chosen]:>10.4g} "
              f"{ratio[row]:>6.2f}")


if __name__ == "__main__":
    main()
