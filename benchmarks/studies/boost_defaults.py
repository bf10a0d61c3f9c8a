"""Evidence for MMITBoost's defaults: candidate settings on real and simulated data.

The data of variant_study.py (the data sets of DATA_DIR
with their folds, and simulated shapes of ``make_interval_regression``):
each candidate is a fixed MMITBoost setting, varied one or two parameters
at a time from the defaults (100 stages, learning rate 0.05, depth 3,
``min_samples_leaf=1``, squared hinge, ``margin="auto"``), beside the
previous defaults (learning rate 0.1, ``min_samples_leaf=5``) and
``MMITForest()`` as the reference the defaults must not lose to. Prints each
candidate's mean rank, median and worst ratio to the best candidate of each
data set, and its wins against MMITForest() (bundled sets, simulated shapes).

A second table follows the test loss along the stages (``staged_predict``,
300 stages): for each learning rate, the geometric mean over the data sets
of the test MSE after k stages divided by the best over all stages, and the
median of the best stage.

Usage: python benchmarks/studies/boost_defaults.py DATA_DIR [--quick] [--n-jobs 2]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import SIMULATED_PREFIX, print_ranking, ranking, splits_of

from mmit import MMITBoost, MMITForest
from mmit._utils._validation import bounds_spread
from mmit.metrics import interval_mse

PREVIOUS = {"learning_rate": 0.1, "min_samples_leaf": 5}
CANDIDATES = {
    "defaults": {},
    "previous defaults": PREVIOUS,
    "previous, 50 stages": {**PREVIOUS, "n_estimators": 50},
    "previous, early stopping": {**PREVIOUS, "n_estimators": 1000, "early_stopping": True},
    "rate 0.1, 50 stages": {"learning_rate": 0.1, "n_estimators": 50},
    "rate 0.1": {"learning_rate": 0.1},
    "200 stages": {"n_estimators": 200},
    "early stopping, 1000 stages": {"n_estimators": 1000, "early_stopping": True},
    "min_samples_leaf 3": {"min_samples_leaf": 3},
    "min_samples_leaf 5": {"min_samples_leaf": 5},
    "depth 2": {"max_depth": 2},
    "depth 4": {"max_depth": 4},
    "margin 0": {"margin_scale": 0.0},
    "margin 0.1 spread": {"margin_scale": 0.1},
    "margin 0.5 spread": {"margin_scale": 0.5},
    "linear hinge": {"loss": "linear_hinge"},
    "subsample 0.8": {"subsample": 0.8},
    "max_features 0.5": {"max_features": 0.5},
}
REFERENCE = "MMITForest()"
STAGES = (25, 50, 75, 100, 150, 200, 300)
RATES = (0.1, 0.05)


def model(candidate, y_train):
    if candidate is None:
        return MMITForest(random_state=0)
    params = dict(candidate)
    if "margin_scale" in params:
        params["margin"] = params.pop("margin_scale") * bounds_spread(y_train[:, 0],
                                                                       y_train[:, 1])
    return MMITBoost(**params, random_state=0)


def test_mse(candidate, X_train, y_train, X_test, y_test):
    return interval_mse(y_test, model(candidate, y_train).fit(X_train, y_train)
                        .predict(X_test))


def stage_curve(learning_rate, X_train, y_train, X_test, y_test):
    boost = MMITBoost(n_estimators=max(STAGES), learning_rate=learning_rate,
                      random_state=0).fit(X_train, y_train)
    return np.array([interval_mse(y_test, p) for p in boost.staged_predict(X_test)])


def print_ranks(names, mse, real):
    reference = mse[:, names.index(REFERENCE)]
    wins = [f"{np.sum(column[real] < reference[real])}/{real.sum()}, "
            f"{np.sum(column[~real] < reference[~real])}/{(~real).sum()}"
            for column in mse.T]
    print_ranking("candidates, by mean rank over the data sets", names, mse,
                  extra={"wins vs forest (bundled, simulated)": wins})
    pair = ranking(mse[real][:, [names.index("defaults"), names.index(REFERENCE)]])
    print(f"\nbundled sets, MMITBoost() against MMITForest() alone: mean rank "
          f"{pair['mean rank'][0]:.2f} against {pair['mean rank'][1]:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--quick", action="store_true",
                        help="one fold per data set, two simulated shapes (a smoke test)")
    parser.add_argument("--n-jobs", type=int, default=2, help="processes over the folds")
    args = parser.parse_args()
    candidates = {**CANDIDATES, REFERENCE: None}
    names = list(candidates)
    results, curves, real = {}, {}, []
    for name, splits in splits_of(args.data_dir, args.quick):
        start = time.perf_counter()
        mse = Parallel(n_jobs=args.n_jobs)(delayed(test_mse)(c, *split)
                                           for c in candidates.values() for split in splits)
        results[name] = np.array(mse).reshape(len(candidates), len(splits)).mean(axis=1)
        curve = Parallel(n_jobs=args.n_jobs)(delayed(stage_curve)(rate, *split)
                                             for rate in RATES for split in splits)
        curves[name] = np.array(curve).reshape(len(RATES), len(splits), -1).mean(axis=1)
        real.append(not name.startswith(SIMULATED_PREFIX))
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    mse = np.array(list(results.values()))
    print_ranks(names, mse, np.array(real))

    print(f"\ntest MSE after k stages / best over {max(STAGES)} stages, geometric mean "
          "over the data sets (all; bundled)")
    print(f"{'learning rate':<14}" + "".join(f"{k:>13}" for k in STAGES)
          + f"{'median best':>13}")
    for r, rate in enumerate(RATES):
        ratio = np.array([c[r][np.array(STAGES) - 1] / c[r].min() for c in curves.values()])
        best = np.median([c[r].argmin() + 1 for c in curves.values()])
        cells = [f"{np.exp(np.log(ratio[:, k]).mean()):.3f};"
                 f"{np.exp(np.log(ratio[np.array(real), k]).mean()):.3f}"
                 for k in range(len(STAGES))]
        print(f"{rate:<14}" + "".join(f"{cell:>13}" for cell in cells) + f"{best:>13.0f}")


if __name__ == "__main__":
    main()
