"""Survival: ranking (C-index) and curves (integrated Brier score) of mmit's
models against scikit-survival's, on simulated survival data.

Shapes (``--shapes``): times from a proportional-hazards Weibull model
(``ph``) or an accelerated-failure-time log-normal one (``aft``), the
log-hazard (or minus the log time) a smooth (``smooth``) or a threshold
(``step``) function of 10 uniform features, of which 3 carry the signal;
right-censored by independent uniform censoring times scaled to leave
``--censoring`` of the rows censored (default 0.2, 0.5, 0.8), or
interval-censored (``interval``) by inspections at random times (the
event between two inspections; right-censored after the last). ``--n``
rows (default 1000), 5-fold cross-validation, the same folds for every
model.

Models, on log times through ``SurvivalRegressor``: ``default``, the
front-end as users get it (``SurvivalRegressor()``: the survival forest and
a binned booster, ranked by minus their predictions weighed together), and,
each with the risk scores of ``--risks``, the survival forest alone
(``forest``: ``MMITForest(min_samples_leaf=15, max_features=0.5,
loss="linear_hinge")``), ``MMITForest()``
at its interval defaults and ``IntervalStackingRegressor()``;
scikit-survival's ``RandomSurvivalForest()`` (100 trees, its defaults),
``GradientBoostingSurvivalAnalysis()`` (Cox boosting) and
``CoxPHSurvivalAnalysis()``; the peers take an interval-censored row as an
event at its interval's midpoint. Harrell's C on the test folds (the
interval concordance index of ``mmit.metrics.concordance_index`` on
interval-censored data), the integrated Brier score (scikit-survival's,
on times between the 10th and 80th percentiles of the test times, over
the test rows inside the training follow-up; not for interval-censored
data) and the fit time, averaged over folds and ``--repeats`` draws.

Usage: python benchmarks/studies/survival.py [--shapes ph-smooth aft-step ...]
       [--censoring 0.2 0.5 0.8 interval] [--n 1000] [--repeats 1]
       [--risks restricted_mean prediction median concordance_weights]
       [--models forest stack rsf ...]
       [--forest-variants min_samples_leaf=5,max_features=0.3 ...] [--csv PATH]
"""

import argparse
import itertools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import KFold
from sksurv.ensemble import GradientBoostingSurvivalAnalysis, RandomSurvivalForest
from sksurv.linear_model import CoxPHSurvivalAnalysis
from sksurv.metrics import integrated_brier_score
from sksurv.util import Surv

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds

from mmit import IntervalStackingRegressor, MMITForest, SurvivalRegressor
from mmit.metrics import concordance_index
from mmit.survival._survival import SURVIVAL_FOREST, survival_target

N_FEATURES = 10
SHAPES = [f"{model}-{effect}" for model in ("ph", "aft") for effect in ("smooth", "step")]


def signal(X, effect):
    """The log-hazard (minus the log time) of each row."""
    if effect == "smooth":
        return 1.2 * X[:, 0] + 0.8 * np.sin(3.0 * X[:, 1]) - 1.0 * (X[:, 2] - 0.5) ** 2
    return 1.0 * (X[:, 0] > 0.5) + 0.8 * ((X[:, 1] > 0.3) & (X[:, 2] > 0.6))


def event_times(shape, X, rng):
    model, effect = shape.split("-")
    eta = signal(X, effect)
    if model == "ph":  # Weibull, shape 1.5: hazard 0.1 k t^(k-1) exp(eta)
        return (-np.log(rng.random(len(X))) / (0.1 * np.exp(eta))) ** (1 / 1.5)
    return np.exp(2.0 - eta + 0.5 * rng.standard_normal(len(X)))


def censor(times, share, rng):
    """Right-censoring by uniform times on [0, s], s set (by bisection on these
    rows) so that about ``share`` of the rows are censored."""
    draws = rng.random(len(times))
    low, high = 1e-3 * times.max(), 1e3 * times.max()
    for _ in range(60):
        scale = np.sqrt(low * high)
        if np.mean(draws * scale < times) > share:
            low = scale
        else:
            high = scale
    follow_up = draws * scale
    return times <= follow_up, np.minimum(times, follow_up)


def inspect(times, rng):
    """Interval censoring: each row inspected at 6 random times; the event is
    known to lie between the last inspection before it and the first after
    (right-censored after the last inspection)."""
    spread = np.quantile(times, 0.9)
    inspections = np.sort(rng.uniform(0.0, spread, size=(len(times), 6)), axis=1)
    before = (inspections < times[:, None]).sum(axis=1)
    padded = np.column_stack([np.zeros(len(times)), inspections,
                              np.full(len(times), np.inf)])
    rows = np.arange(len(times))
    return np.column_stack([padded[rows, before], padded[rows, before + 1]])


def simulate(shape, censoring, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.random((n, N_FEATURES))
    times = event_times(shape, X, rng)
    if censoring == "interval":
        return X, inspect(times, rng)
    event, observed = censor(times, float(censoring), rng)
    return X, Surv.from_arrays(event, observed)


def as_right_censored(y):
    """scikit-survival's target: interval-censored rows as events at their
    interval's midpoint (right-censored rows as they are)."""
    if y.dtype.names:
        return y
    lower, upper = y[:, 0], y[:, 1]
    event = np.isfinite(upper)
    middle = np.where(event, (lower + upper) / 2, lower)
    return Surv.from_arrays(event, np.maximum(middle, 1e-6))


def as_intervals(y):
    if not y.dtype.names:
        return y
    event, times = y[y.dtype.names[0]], y[y.dtype.names[1]]
    return np.column_stack([times, np.where(event, times, np.inf)])


def evaluate(model, risks, X, y, train, test):
    """C-index of each risk score, integrated Brier score (NaN without
    curves or for interval data) and fit time of one model on one fold."""
    start = time.perf_counter()
    target = y[train] if isinstance(model, SurvivalRegressor) else as_right_censored(
        y[train])
    model.fit(X[train], target)
    fit_seconds = time.perf_counter() - start
    c_indices = [concordance_index(as_intervals(y[test]), -risk(model, X[test], target))
                 for risk in risks]
    score = np.nan
    if y.dtype.names and hasattr(model, "predict_survival_function"):
        times = y[test][y.dtype.names[1]]
        train_times = y[train][y.dtype.names[1]]
        grid = np.quantile(times, np.linspace(0.1, 0.8, 15))
        grid = grid[(grid > train_times.min()) & (grid < train_times.max())]
        # scikit-survival's censoring weights need test times inside the
        # training follow-up
        inside = test[times < train_times.max()]
        functions = model.predict_survival_function(X[inside])
        curves = np.vstack([function(grid) for function in functions])
        score = integrated_brier_score(y[train], y[inside], curves, grid)
    return [(c_index, score, fit_seconds) for c_index in c_indices]


def peer_risk(model, X, y_train):
    """scikit-survival's risk score."""
    return model.predict(X)


# the risk scores of the mmit models: the front-end's and the ones studied
# beside it
RISKS = {
    "prediction": lambda model, X, y_train: -model.estimator_.predict(X),
    "restricted_mean": lambda model, X, y_train: -model.restricted_mean(X),
    "median": lambda model, X, y_train: -model.estimator_.predict_quantiles(
        X, [0.5])[:, 0],
    "concordance_weights": lambda model, X, y_train: concordance_weighted(
        model, X, y_train),
}


def concordance_weighted(model, X, y_train):
    """Minus a stack's members' predictions weighted to maximise the C-index
    of its out-of-fold predictions (instead of its interval loss), over a
    grid of the simplex (steps of 1/20)."""
    stack = model.estimator_
    target = survival_target(y_train, model.log)[0]
    steps = 20
    grid = [np.array(weights) / steps for weights in itertools.product(
        range(steps + 1), repeat=stack.cv_predictions_.shape[1])
        if sum(weights) == steps]
    best = max(grid, key=lambda weights: concordance_index(
        target, stack.cv_predictions_ @ weights))
    members = np.column_stack([member.predict(X) for member in stack.estimators_])
    return -(members @ best)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", default=SHAPES)
    parser.add_argument("--censoring", nargs="+", default=["0.2", "0.5", "0.8", "interval"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--risks", nargs="+", default=["restricted_mean"],
                        choices=list(RISKS))
    parser.add_argument("--forest-variants", nargs="*", default=[], metavar="PARAMS",
                        help="forests of other parameters beside the models, each "
                             "as name=value,name=value (JSON values)")
    parser.add_argument("--models", nargs="+",
                        default=["default", "forest", "forest interval defaults", "stack",
                                 "rsf", "cox boosting", "cox"])
    add_csv_argument(parser)
    args = parser.parse_args()
    mmit_models = {
        "forest": lambda: SurvivalRegressor(MMITForest(random_state=0, **SURVIVAL_FOREST)),
        "forest interval defaults": lambda: SurvivalRegressor(MMITForest(random_state=0)),
        "stack": lambda: SurvivalRegressor(IntervalStackingRegressor(random_state=0))}
    for variant in args.forest_variants:  # "name=value,name=value"
        params = {key: json.loads(value) for key, value in
                  (item.split("=") for item in variant.split(","))}
        mmit_models[f"forest {variant}"] = (
            lambda params=params: SurvivalRegressor(MMITForest(random_state=0, **params)))
        args.models.append(f"forest {variant}")
    peers = {"rsf": lambda: RandomSurvivalForest(n_jobs=1, random_state=0),
             "cox boosting": lambda: GradientBoostingSurvivalAnalysis(random_state=0),
             "cox": lambda: CoxPHSurvivalAnalysis()}
    candidates = []  # (model name, maker, {row name: risk score})
    for name in args.models:
        if name == "default":  # its own risk
            candidates.append((name, lambda: SurvivalRegressor(random_state=0),
                               {name: lambda model, X, y_train: model.predict(X)}))
        elif name in mmit_models:
            candidates.append((name, mmit_models[name],
                               {f"{name} {risk}": RISKS[risk] for risk in args.risks}))
        else:
            candidates.append((name, peers[name], {name: peer_risk}))
    rows = [row for _, _, risks in candidates for row in risks]
    table = Table(["shape", "censoring", "model", "C-index", "IBS", "fit s"], args.csv,
                  title=f"simulated survival data, {args.n} rows x {N_FEATURES}, 5-fold CV")
    totals = {row: [] for row in rows}
    for shape, censoring in itertools.product(args.shapes, args.censoring):
        results = {row: [] for row in rows}
        for repeat in range(args.repeats):
            X, y = simulate(shape, censoring, args.n, [repeat, SHAPES.index(shape)])
            for train, test in KFold(5, shuffle=True, random_state=repeat).split(X):
                for _, make, risks in candidates:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scores = evaluate(make(), list(risks.values()), X, y, train, test)
                    for row, score in zip(risks, scores, strict=True):
                        results[row].append(score)
        for row in rows:
            c_index, score, fit_seconds = np.mean(results[row], axis=0)
            totals[row].append((c_index, score, fit_seconds))
            table.add(shape, censoring, row, f"{c_index:.4f}",
                      "" if np.isnan(score) else f"{score:.4f}", seconds(fit_seconds))
    for row in rows:
        c_index, score, fit_seconds = np.nanmean(np.array(totals[row]), axis=0)
        table.add("mean", "", row, f"{c_index:.4f}", f"{score:.4f}", seconds(fit_seconds))


if __name__ == "__main__":
    main()
