"""Monotone constraints: accuracy with and without them on data whose signal
is monotone, beside the peers' constraints, and what they cost in fit time.

Simulated interval data (``--n-features`` features, standard normal) around
a signal chosen by ``--signal``:

- ``additive`` (the default): ``2 x0 + tanh(3 x1) - log(1 + exp(2 x2)) +
  arctan(2 x3)``, increasing in x0, x1 and x3 and decreasing in x2
  (constrained ``1, 1, -1, 1``);
- ``single``: ``2 arctan(2 x0) + sin(2 x4)``, a direction known for x0
  only (constrained ``1``) beside a free feature whose effect is not
  monotone;
- ``product``: ``exp(x0 / 2) (1 + tanh(x1))``, increasing in x0 and x1
  (constrained ``1, 1``), whose effects interact;

the other features are noise. Each label is the signal plus normal noise (sd ``--noise``),
widened into an interval of random width (exponential, mean 0.5), 20% of
the labels left-censored and 20% right-censored. Every model is fitted on
``--n-train`` rows with ``monotonic_cst`` (the true directions, the other
features free) and without, and scored by the interval MSE on 5000
fresh rows, for each of ``--seeds``:

- mmit, with ``random_state=0``: ``MMIT()`` (grown fully), ``MMITCV()``,
  ``MMITForest()``,
  ``MMITBoost(n_estimators=1000, early_stopping=True)`` with both
  splitters (stopped on held-out rows as the boosting peers are: at its
  default 100 stages of learning rate 0.05 the booster underfits, and a
  constraint that removes variance then shows only its bias),
  ``IntervalLinearRegressionCV()`` and ``IntervalStackingRegressor()``
  (the constraints passed to every member);
- peers: scikit-learn's ``HistGradientBoostingRegressor`` and
  ``RandomForestRegressor`` on the Interval-CART transform of the targets
  (a row per finite bound; their ``monotonic_cst``) and XGBoost's AFT
  booster (``monotone_constraints``; ``models.XGBoostAFT``, needs the
  ``bench`` extra).

The table gives each model's mean test interval MSE without and with the
constraints (over the seeds), their ratio (at most 1: the constraint does
not cost accuracy when it is true), the seeds where the constrained fit is
at least as accurate, and the ratio of the fit times, constrained over
free (one fit each per seed: with early stopping the two fits may stop
after different numbers of stages).

``--speed``: the fit time instead, on the data of the speed benchmarks
(``speed_data.benchmark_data``, 20 features, the first four constrained
1, -1, 1, -1), free and constrained timed in turn (the medians of
``--repeats``): the workloads of ``benchmarks/versions/speed.py``
(``MMIT`` at 5e4 rows, the default forest at 1e4 with 2 threads, 200
exact boosting stages at 1e4, 100 binned stages at 2e5, the linear CV at
1e4 rows) and ``MMIT(max_depth=8)``. A fully grown constrained tree has
more nodes than a free one (its leaves cannot fit their rows exactly, so
they split down to the leaf size): the table gives the ratio of the
nodes too, and of the time per node.

Usage: python benchmarks/studies/constraints.py [--n-train 1000 10000]
       [--seeds 0 1 2] [--n-features 10] [--noise 0.5] [--models NAME ...]
       [--signal {additive,single,product}]
       [--speed [--repeats 5]] [--csv PATH]
"""

import argparse
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
from models import XGBoostAFT
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from speed_data import benchmark_data
from tables import Table, add_csv_argument, seconds, size
from timing import interleaved_medians, xgboost_available

from mmit import (
    MMIT,
    MMITCV,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
)
from mmit.baselines import interval_cart_rows
from mmit.metrics import interval_mse

N_TEST = 5000
# name: (the signal of X, the directions of x0, x1, ...; the other features free)
SIGNALS = {
    "additive": (lambda X: 2 * X[:, 0] + np.tanh(3 * X[:, 1]) - np.logaddexp(0, 2 * X[:, 2])
                 + np.arctan(2 * X[:, 3]), (1, 1, -1, 1)),
    "single": (lambda X: 2 * np.arctan(2 * X[:, 0]) + np.sin(2 * X[:, 4]), (1,)),
    "product": (lambda X: np.exp(X[:, 0] / 2) * (1 + np.tanh(X[:, 1])), (1, 1)),
}


def simulate(n, p, noise, seed, signal="additive"):
    """Features and interval targets around a monotone signal (module doc)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = SIGNALS[signal][0](X) + noise * rng.normal(size=n)
    width = rng.exponential(0.5, n)
    lower, upper = y - width / 2, y + width / 2
    kind = rng.random(n)
    lower[kind < 0.2] = -np.inf
    upper[kind > 0.8] = np.inf
    return X, np.column_stack([lower, upper])


class IntervalCART:
    """A scikit-learn regressor on the Interval-CART transform of the targets."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        rows, targets = interval_cart_rows(y[:, 0], y[:, 1], 0.0)
        self.model.fit(X[rows], targets)
        return self

    def predict(self, X):
        return self.model.predict(X)


MODELS = {
    "MMIT": lambda cst: MMIT(random_state=0, monotonic_cst=cst),
    "MMITCV": lambda cst: MMITCV(random_state=0, monotonic_cst=cst),
    "MMITForest": lambda cst: MMITForest(n_jobs=2, random_state=0, monotonic_cst=cst),
    "MMITBoost": lambda cst: MMITBoost(n_estimators=1000, early_stopping=True,
                                       random_state=0, monotonic_cst=cst),
    "MMITBoost hist": lambda cst: MMITBoost(splitter="hist", n_estimators=1000,
                                            early_stopping=True, n_jobs=2, random_state=0,
                                            monotonic_cst=cst),
    "IntervalLinearRegressionCV": lambda cst: IntervalLinearRegressionCV(
        monotonic_cst=cst),
    "IntervalStackingRegressor": lambda cst: IntervalStackingRegressor(
        n_jobs=2, random_state=0, distribution=None, monotonic_cst=cst),
    "HGB Interval-CART": lambda cst: IntervalCART(HistGradientBoostingRegressor(
        monotonic_cst=cst, random_state=0)),
    "RandomForest Interval-CART": lambda cst: IntervalCART(RandomForestRegressor(
        monotonic_cst=cst, n_jobs=2, random_state=0)),
    "XGBoost AFT": lambda cst: XGBoostAFT(monotonic_cst=cst),
}


# name: (rows, estimator of the constraints)
SPEED_WORKLOADS = {
    "MMIT": (50_000, lambda cst: MMIT(random_state=0, monotonic_cst=cst)),
    "MMIT depth 8": (50_000, lambda cst: MMIT(max_depth=8, random_state=0,
                                              monotonic_cst=cst)),
    "MMITForest": (10_000, lambda cst: MMITForest(n_jobs=2, random_state=0,
                                                  monotonic_cst=cst)),
    "MMITBoost exact": (10_000, lambda cst: MMITBoost(
        n_estimators=200, early_stopping=False, random_state=0, monotonic_cst=cst)),
    "MMITBoost hist": (200_000, lambda cst: MMITBoost(
        n_estimators=100, splitter="hist", n_jobs=2, early_stopping=False, random_state=0,
        monotonic_cst=cst)),
    "IntervalLinearRegressionCV": (10_000, lambda cst: IntervalLinearRegressionCV(
        monotonic_cst=cst)),
}


def fit(model, X, y):
    return model.fit(X, y)


def node_count(model):
    """The nodes of a fitted tree, forest or booster (None: a linear model)."""
    if hasattr(model, "tree_"):
        return model.tree_.node_count
    if hasattr(model, "estimators_"):
        return sum(tree.tree_.node_count for tree in model.estimators_)
    return None


def speed(repeats, csv):
    """Fit times with and without constraints (module doc)."""
    table = Table(["workload", "rows", "free (s)", "constrained (s)", "ratio",
                   "nodes ratio", "per node ratio"], csv,
                  title=f"20 features, medians of {repeats}")
    constraints = np.r_[1, -1, 1, -1, np.zeros(16)].astype(int)
    for name, (n, make) in SPEED_WORKLOADS.items():
        X, y = benchmark_data(n, 20)
        models = [make(None), make(constraints)]
        free, constrained = interleaved_medians(
            [partial(fit, model, X, y) for model in models], repeats)
        nodes = [node_count(model) for model in models]
        node_ratio = None if nodes[0] is None else nodes[1] / nodes[0]
        table.add(name, size(n), seconds(free), seconds(constrained),
                  f"{constrained / free:.2f}",
                  "" if node_ratio is None else f"{node_ratio:.2f}",
                  "" if node_ratio is None else f"{constrained / free / node_ratio:.2f}")


def fit_and_score(name, constraints, X, y, X_test, y_test):
    start = time.perf_counter()
    model = MODELS[name](constraints).fit(X, y)
    seconds = time.perf_counter() - start
    return interval_mse(y_test, model.predict(X_test)), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=float, nargs="+", default=[1e3, 1e4])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-features", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--signal", default="additive", choices=list(SIGNALS))
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    add_csv_argument(parser)
    args = parser.parse_args()
    if args.speed:
        speed(args.repeats, args.csv)
        return
    names = [name for name in args.models
             if name != "XGBoost AFT" or xgboost_available("rows")]
    directions = SIGNALS[args.signal][1]
    if args.n_features < 5:
        parser.error("--n-features must be at least 5 (the signals read x0 .. x4)")
    constraints = np.r_[directions, np.zeros(args.n_features - len(directions))].astype(int)
    table = Table(["rows", "model", "MSE free", "MSE constrained", "ratio",
                   "constrained <= free", "fit time ratio"], args.csv,
                  title=f"{args.signal} signal, {args.n_features} features, "
                        f"{N_TEST} test rows, mean over {len(args.seeds)} seeds")
    for n in map(int, args.n_train):
        for name in names:
            free, constrained, wins, time_ratios = [], [], 0, []
            for seed in args.seeds:
                X, y = simulate(n + N_TEST, args.n_features, args.noise, seed, args.signal)
                train, test = slice(0, n), slice(n, None)
                mse_free, seconds_free = fit_and_score(name, None, X[train], y[train],
                                                       X[test], y[test])
                mse_constrained, seconds_constrained = fit_and_score(
                    name, constraints, X[train], y[train], X[test], y[test])
                free.append(mse_free)
                constrained.append(mse_constrained)
                wins += mse_constrained <= mse_free
                time_ratios.append(seconds_constrained / seconds_free)
            table.add(size(n), name, f"{np.mean(free):.4f}", f"{np.mean(constrained):.4f}",
                      f"{np.mean(constrained) / np.mean(free):.3f}",
                      f"{wins} of {len(args.seeds)}", f"{np.mean(time_ratios):.2f}")


if __name__ == "__main__":
    main()
