"""Survival models at scale: mmit's survival forest against scikit-survival
and XGBoost on the same simulated data, each fit in a process of its own.

Right-censored data as in ``speed/bench_survival_scale.py`` (log-normal
event times from three features, one through a sine; log-normal censoring
times, about a third censored; 40 features) at each size n, and
``--held-out`` rows of the same law (5000). Models: ``SurvivalRegressor(n_jobs=2)``
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

A second table pairs each model's held-out C-index with XGBoost's on the
same rows (of the draw ``--seed``): their difference, and its standard
error and the share of ``--bootstrap`` resamples of the held-out rows
(200, the same resamples for every model) where the model ranks at least
as well. On 5000 rows a
C-index has a standard error of about 0.002, so differences of a
ten-thousandth need more rows held out (``--held-out 100000``: the
concordance index takes a few hundredths of a second there).

Needs the ``bench`` extra (scikit-survival, xgboost).

Usage: python benchmarks/studies/survival_scale.py [--sizes 1e3 1e4 1e5]
       [--models NAME ...] [--timeout 600] [--held-out 5000] [--seed 0]
       [--bootstrap 200] [--csv PATH] [--paired-csv PATH]
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
import numpy as np
from memory import GB, peak_bytes
from models import aft_matrix, xgboost_aft_params
from tables import Table, add_csv_argument, seconds, size

N_FEATURES = 40
PEER = "XGBoost AFT"  # the model the paired table compares with


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


class SurvivalXGBoostAFT:
    """XGBoost's AFT booster (it takes times and models their logarithm): its
    risk is minus the predicted time."""

    def fit(self, X, y):
        import xgboost
        lower = y["time"]
        upper = np.where(y["event"], lower, np.inf)
        self.booster_ = xgboost.train(
            xgboost_aft_params(max_depth=6, learning_rate=0.05, n_threads=2),
            aft_matrix(X, lower, upper), num_boost_round=300)
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
    "XGBoost AFT": lambda: (lambda model: (model, model.predict, None))(
        SurvivalXGBoostAFT()),
}


def run_one(name, n, n_held_out, seed, risk_path):
    """Fit and score one model (in this process); print the result as JSON
    and save the held-out risks to ``risk_path``."""
    from sksurv.metrics import integrated_brier_score

    from mmit import intervals_from_survival
    from mmit.metrics import concordance_index
    X, event, time_ = survival_data(n + n_held_out, seed=seed)
    train, test = slice(0, n), slice(n, None)
    model, risk, curves = MODELS[name]()
    start = time.perf_counter()
    model.fit(X[train], records(event[train], time_[train]))
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    scores = risk(X[test])
    predict_seconds = time.perf_counter() - start
    np.save(risk_path, scores)
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
    result["peak_gb"] = peak_bytes() / GB
    print(json.dumps(result))


def paired_with_peer(target, risks, n_resamples, seed):
    """For each model of ``risks`` (name: held-out risks) but the peer: its
    held-out C-index less the peer's, the standard error of that difference
    over ``n_resamples`` bootstrap resamples of the rows (a resample's
    counts as weights: the same resamples for every model), and the share
    of resamples where it is at least 0."""
    from mmit.metrics import concordance_index
    rng = np.random.default_rng(seed)
    n = len(target)
    counts = [rng.multinomial(n, np.full(n, 1.0 / n)).astype(float)
              for _ in range(n_resamples)]

    def c_indices(risk):
        return (concordance_index(target, -risk),
                np.array([concordance_index(target, -risk, sample_weight=weights)
                          for weights in counts]))

    peer, peer_resampled = c_indices(risks[PEER])
    for name, risk in risks.items():
        if name != PEER:
            c_index, resampled = c_indices(risk)
            difference = resampled - peer_resampled
            yield name, c_index - peer, difference.std(ddof=1), np.mean(difference >= 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--held-out", type=float, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    add_csv_argument(parser)
    parser.add_argument("--paired-csv", type=Path, metavar="PATH",
                        help="also write the paired table to PATH as CSV")
    args = parser.parse_args()
    if args.one:
        name, n, n_held_out, seed, risk_path = args.one
        run_one(name, int(n), int(n_held_out), int(seed), risk_path)
        return
    n_held_out = int(args.held_out)
    table = Table(["rows", "model", "fit s", "predict s", "C-index", "IBS", "peak GB"],
                  args.csv, title=f"{N_FEATURES} features, {n_held_out} held-out rows")
    paired_rows = []  # the paired table's rows, printed after the first table
    stopped = set()   # the models that did not finish at a smaller size
    with tempfile.TemporaryDirectory() as directory:
        for n in map(int, args.sizes):
            risks = {}
            for name in args.models:
                if name in stopped:
                    table.add(size(n), name, "not run", "", "", "", "")
                    continue
                risk_path = Path(directory) / f"risk-{len(risks)}.npy"
                try:
                    output = subprocess.run(
                        [sys.executable, __file__, "--one", name, str(n), str(n_held_out),
                         str(args.seed), str(risk_path)], check=True,
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
                risks[name] = np.load(risk_path)
                brier = "" if result["brier"] is None else f"{result['brier']:.4f}"
                table.add(size(n), name, seconds(result["fit"]),
                          seconds(result["predict"]), f"{result['c_index']:.4f}", brier,
                          f"{result['peak_gb']:.2f}")
            if PEER in risks and len(risks) > 1:
                from mmit import intervals_from_survival
                _, event, time_ = survival_data(n + n_held_out, seed=args.seed)
                target = intervals_from_survival(event[n:], time_[n:])
                paired_rows += [(size(n), args.seed, name, f"{difference:+.5f}",
                                 f"{error:.5f}", f"{share:.2f}")
                                for name, difference, error, share in paired_with_peer(
                                    target, risks, args.bootstrap, args.seed)]
    paired = Table(["rows", "seed", "model", f"C - {PEER}", "bootstrap SE",
                    "share >= 0"],
                   args.paired_csv, title=f"paired with {PEER} on the same "
                   f"{n_held_out} held-out rows ({args.bootstrap} resamples)")
    for row in paired_rows:
        paired.add(*row)


if __name__ == "__main__":
    main()
