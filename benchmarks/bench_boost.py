"""Fit time of MMITBoost versus scikit-learn's exact gradient boosting and XGBoost AFT.

Same data as bench_tree.py (p = 20 features, interval targets, 40% censored
bounds). All boost ``--stages`` stages of depth-3 trees with learning
rate 0.1, timed in turn within each repeat (median; one repeat from 1e5):

- MMITBoost (squared hinge, early stopping off), with the exact split search
  (up to ``--exact-max-n`` rows) and the binned one (``splitter="hist"``);
- scikit-learn's GradientBoostingRegressor (exact splits, squared error)
  on the Interval-CART transform (one row per finite bound);
- XGBoost's ``survival:aft`` (``tree_method="hist"``, 2 threads) on
  exp(bounds), when xgboost is installed. Its histogram splits are
  approximate: the ratio says how far exact splits are from them.

It also splits the exact MMITBoost's time into its parts (per stage:
sorting the shifted breakpoints, growing the tree, predicting the training
rows).

Usage: python benchmarks/bench_boost.py [--max-n 1e5] [--exact-max-n 1e5]
       [--stages 100] [--repeats 3]
"""

import argparse
import sys
import time
from functools import partial
from pathlib import Path

from sklearn.ensemble import GradientBoostingRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accuracy import XGBoostAFT  # noqa: E402
from bench_tree import MARGIN, benchmark_data, interval_cart_data  # noqa: E402
from timing import interleaved_medians  # noqa: E402

from mmit import MMITBoost  # noqa: E402
from mmit._criterion import HingeTargets  # noqa: E402


def xgboost_fit(X, y, stages):
    import xgboost

    params = {"objective": "survival:aft", "aft_loss_distribution": "normal",
              "max_depth": 3, "learning_rate": 0.1, "tree_method": "hist", "nthread": 2,
              "verbosity": 0}
    return xgboost.train(params, XGBoostAFT.matrix(X, y), num_boost_round=stages)


def time_parts(model, X, y):
    """Seconds per stage spent sorting breakpoints and walking the trees, the
    rest of MMITBoost's fit being the tree growth."""
    start = time.perf_counter()
    for _ in model.estimators_:
        HingeTargets(y[:, 0] - 0.5, y[:, 1] - 0.5, MARGIN)
    sorting = time.perf_counter() - start
    start = time.perf_counter()
    for tree in model.estimators_:
        tree.tree_.predict(X)
    walking = time.perf_counter() - start
    return sorting, walking


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e5)
    parser.add_argument("--exact-max-n", type=float, default=1e5,
                        help="largest n for the exact MMITBoost and scikit-learn")
    parser.add_argument("--stages", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    try:
        import xgboost  # noqa: F401
        with_xgboost = True
    except ImportError:
        with_xgboost = False
        print("xgboost is not installed: its column is left out", file=sys.stderr)
    print(f"{'n':>7} {'hist s':>8} {'xgb hist s':>10} {'ratio':>6} {'exact s':>8} "
          f"{'sk exact s':>10} {'ratio':>6} {'sort %':>6} {'walk %':>6} {'grow+py %':>9}")
    for n in [int(10**k) for k in range(3, 7) if 10**k <= args.max_n]:
        X, y = benchmark_data(n, 20)
        params = dict(n_estimators=args.stages, learning_rate=0.1, max_depth=3,
                      min_samples_leaf=5, margin=MARGIN, early_stopping=False,
                      random_state=0)
        hist = MMITBoost(**params, splitter="hist", n_jobs=2)
        fits = {"hist": partial(hist.fit, X, y)}
        if with_xgboost:
            fits["xgb"] = partial(xgboost_fit, X, y, args.stages)
        if n <= args.exact_max_n:
            X_rows, targets = interval_cart_data(X, y, MARGIN)
            exact = MMITBoost(**params)
            sklearn = GradientBoostingRegressor(n_estimators=args.stages,
                                                learning_rate=0.1, max_depth=3,
                                                min_samples_leaf=5, random_state=0)
            fits["exact"] = partial(exact.fit, X, y)
            fits["sklearn"] = partial(sklearn.fit, X_rows, targets)
        times = dict(zip(fits, interleaved_medians(list(fits.values()),
                                                   args.repeats if n < 10**5 else 1),
                         strict=True))
        row = f"{n:>7.0e} {times['hist']:>8.3f}"
        row += (f" {times['xgb']:>10.3f} {times['hist'] / times['xgb']:>6.2f}"
                if with_xgboost else f" {'-':>10} {'-':>6}")
        if "exact" in times:
            sorting, walking = time_parts(exact, X, y)
            rest = times["exact"] - sorting - walking
            row += (f" {times['exact']:>8.3f} {times['sklearn']:>10.3f} "
                    f"{times['exact'] / times['sklearn']:>6.2f}"
                    f" {100 * sorting / times['exact']:>6.0f}"
                    f" {100 * walking / times['exact']:>6.0f}"
                    f" {100 * rest / times['exact']:>9.0f}")
        print(row, flush=True)


if __name__ == "__main__":
    main()
