"""Survival models at scale: mmit's survival forest against scikit-survival
and XGBoost on the same simulated data, each fit in a process of its own.

Right-censored data as in ``speed/bench_survival_scale.py`` (log-normal
event times from three features, one through a sine; log-normal censoring
times, about a third censored; 40 features) at each size n, and 5000
held-out rows of the same law. Models: ``SurvivalRegressor(n_jobs=2)``
(the survival forest),
``SurvivalRegressor(IntervalStackingRegressor(n_jobs=2))`` (the stack,
ranked by its restricted mean), scikit-survival's
``RandomSurvivalForest(n_jobs=2)``, ``CoxPHSurvivalAnalysis`` and
``GradientBoostingSurvivalAnalysis``, and
XGBoost's AFT booster (``survival:aft``, normal, ``hist``, 300 rounds of
depth 6, learning rate 0.05, 2 threads). Each runs in a fresh process
stopped after ``--timeout`` seconds (reported as where it stopped, and
not run at the larger sizes; a process that fails, killed when out of
memory, is reported with its last error line); the table gives its fit
and predict seconds (the risk of the held-out rows), the held-out C-index (Harrell's,
``mmit.metrics.concordance_index`` of minus the risk) and integrated Brier
score (models with curves, on the held-out rows' time range), and the
process's peak memory.

Needs the ``bench`` extra (scikit-survival, xgboost).

Usage: python benchmarks/studies/survival_scale.py [--sizes 1e3 1e4 1e5]
       [--models NAME ...] [--timeout 600] [--csv PATH]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
from tables import Table, add_csv_argument, seconds, size

N_HELD_OUT = 5000
N_FEATURES = 40


def survival_data(n, seed):
    """Features, event indicators and observed times."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    log_time = (1.0 + X[:, 0] - 0.5 * X[:, 1] + 0.5 * np.sin(2 * X[:, 2])
                + 0.5 * rng.normal(size=n))
    censoring = 1.5 + rng.normal(size=n)
    return X, log_time <= censoring, np.exp(np.minimum(log_time, censoring))


def records(event, time):
    y = np.empty(len(event), dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = event, time
    return y


def mmit_model(stack=False):
    from mmit import IntervalStackingRegressor, SurvivalRegressor
    model = (SurvivalRegressor(IntervalStackingRegressor(n_jobs=2, random_state=0))
             if stack else SurvivalRegressor(n_jobs=2, random_state=0))
    return model, lambda X: model.predict(X), model


def sksurv_model(name):
    from sksurv.ensemble import GradientBoostingSurvivalAnalysis, RandomSurvivalForest
    from sksurv.linear_model import CoxPHSurvivalAnalysis
    model = {"RandomSurvivalForest": lambda: RandomSurvivalForest(n_jobs=2, random_state=0),
             "CoxPHSurvivalAnalysis": CoxPHSurvivalAnalysis,
             "GradientBoostingSurvivalAnalysis": lambda: GradientBoostingSurvivalAnalysis(
                 random_state=0)}[name]()
    curves = model if hasattr(model, "predict_survival_function") else None
    return model, lambda X: model.predict(X), curves


class XGBoostAFT:
    """XGBoost's AFT booster (it takes times and models their logarithm): its
    risk is minus the predicted time."""

    def fit(self, X, y):
        import xgboost
        lower = y["time"]
        upper = np.where(y["event"], lower, np.inf)
        data = xgboost.DMatrix(X, label_lower_bound=lower, label_upper_bound=upper)
        self.booster_ = xgboost.train(
            {"objective": "survival:aft", "aft_loss_distribution": "normal",
             "tree_method": "hist", "max_depth": 6, "learning_rate": 0.05,
             "nthread": 2, "verbosity": 0}, data, num_boost_round=300)
        return self

    def predict(self, X):
        import xgboost
        return -self.booster_.predict(xgboost.DMatrix(X))


MODELS = {
    "SurvivalRegressor": mmit_model,
    "SurvivalRegressor(stack)": lambda: mmit_model(stack=True),
    "RandomSurvivalForest": lambda: sksurv_model("RandomSurvivalForest"),
    "CoxPHSurvivalAnalysis": lambda: sksurv_model("CoxPHSurvivalAnalysis"),
    "GradientBoostingSurvivalAnalysis": lambda: sksurv_model(
        "GradientBoostingSurvivalAnalysis"),
    "XGBoost AFT": lambda: (lambda model: (model, model.predict, None))(XGBoostAFT()),
}


def peak_gb():
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    return kib / 2**20


def run_one(name, n):
    """Fit and score one model (in this process); print the result as JSON."""
    from sksurv.metrics import integrated_brier_score

    from mmit import intervals_from_survival
    from mmit.metrics import concordance_index
    X, event, time_ = survival_data(n + N_HELD_OUT, seed=0)
    train, test = slice(0, n), slice(n, None)
    model, risk, curves = MODELS[name]()
    start = time.perf_counter()
    model.fit(X[train], records(event[train], time_[train]))
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    scores = risk(X[test])
    predict_seconds = time.perf_counter() - start
    target = intervals_from_survival(event[test], time_[test])
    result = {"fit": fit_seconds, "predict": predict_seconds,
              "c_index": concordance_index(target, -scores), "brier": None}
    if curves is not None:
        inside = (time_[test] > time_[train].min()) & (time_[test] < time_[train].max())
        grid = np.quantile(time_[test][inside & event[test]], np.linspace(0.05, 0.95, 50))
        functions = curves.predict_survival_function(X[test][inside])
        values = np.array([function(grid) for function in functions])
        result["brier"] = integrated_brier_score(
            records(event[train], time_[train]),
            records(event[test][inside], time_[test][inside]), values, grid)
    result["peak_gb"] = peak_gb()
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "N"), help=argparse.SUPPRESS)
    add_csv_argument(parser)
    args = parser.parse_args()
    if args.one:
        run_one(args.one[0], int(args.one[1]))
        return
    table = Table(["rows", "model", "fit s", "predict s", "C-index", "IBS", "peak GB"],
                  args.csv, title=f"{N_FEATURES} features, {N_HELD_OUT} held-out rows")
    stopped = set()   # the models that did not finish at a smaller size
    for n in map(int, args.sizes):
        for name in args.models:
            if name in stopped:
                table.add(size(n), name, "not run", "", "", "", "")
                continue
            try:
                output = subprocess.run(
                    [sys.executable, __file__, "--one", name, str(n)], check=True,
                    capture_output=True, text=True, timeout=args.timeout).stdout
            except subprocess.TimeoutExpired:
                table.add(size(n), name, f"> {args.timeout:.0f}", "", "", "", "")
                stopped.add(name)
                continue
            except subprocess.CalledProcessError as error:  # killed: out of memory
                last = (error.stderr.strip().splitlines()[-1:]
                        or [f"exit {error.returncode}"])
                table.add(size(n), name, f"failed ({last[0][:60]})", "", "", "", "")
                stopped.add(name)
                continue
            result = json.loads(output.splitlines()[-1])
            brier = "" if result["brier"] is None else f"{result['brier']:.4f}"
            table.add(size(n), name, seconds(result["fit"]), seconds(result["predict"]),
                      f"{result['c_index']:.4f}", brier, f"{result['peak_gb']:.2f}")


if __name__ == "__main__":
    main()
