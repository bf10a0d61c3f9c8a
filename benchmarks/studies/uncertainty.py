"""Predictive distributions of MMITForest and IntervalStackingRegressor
against a Gaussian AFT model, NGBoost, a quantile regression forest and a
constant spread, on simulated data with known truth and on the bundled data
sets.

Simulated shapes (``--shapes``): the value is ``f(x) + s(x) * noise`` with
``f(x) = sin(1.5 x0) + 0.5 x1`` and x uniform on [-2, 2]^5:

- step: ``s = 0.1 + 0.6 [x2 > 0]`` (the spread moves with a feature that
  does not move the location);
- linear: ``s = 0.05 + 0.15 (x2 + 2)``;
- shared: ``s = 0.1 + 0.3 |x0|`` (the spread moves with the location's
  feature);
- skewed: ``s`` as for step, noise exponential minus 1 (skewed);
- homoscedastic: ``s = 0.3`` (a control: a constant spread is right).

A share of the training values (``--censored``: 0, 30 and 60%) is known
only between two inspection times, on a grid of step 0.5 whose offset
``0.25 sin(3 x3)`` depends on x only (as the NPMLE assumes); values beyond
the grid's ends are left- or right-censored there. The others are exact.
Each shape and share: ``--repeats`` (5) independent draws of 3000
training rows and 5000 fresh test rows scored on their true values (one
draw's ratio moves by up to 3% from draw to draw, mostly with XGBoost's
tuning).

Methods, each giving the quantiles at 0.05, 0.1, 0.25, 0.5, 0.75, 0.9 and
0.95 (random_state=0 where they take one, ``--n-jobs`` threads where said):

- MMITForest() (``distribution="spread"``) and
  MMITForest(distribution="location"), ``--n-jobs``;
- constant spread: MMITForest(distribution=None).predict plus the
  quantiles of the NPMLE of all its out-of-bag residual intervals;
- XGBoost AFT: ``survival:aft`` on exp(bounds), the error distribution
  (normal, logistic), its scale (0.1, 0.3, 1 times the spread of the
  training bounds) and max_depth (3, 6) chosen by the AFT negative
  log-likelihood of a fifth of the training rows held out, with early
  stopping there (learning rate 0.05, up to 1000 rounds); its quantiles
  ``mu(x) + scale * z`` (z: the distribution's quantiles); ``--n-jobs``
  threads (on a busy machine 1: its many short parallel loops slow down by
  10-100 times when a thread waits for a core). Left out without xgboost
  (the bench extra);
- stack: IntervalStackingRegressor() (its default members, ``--n-jobs``)
  and its predict_quantiles;
- NGBoost Normal: ``ngboost.NGBRegressor(Dist=Normal)`` (default settings
  otherwise), the quantiles of its predicted Normal (``pred_dist``: loc,
  scale); exact targets only. NGBoost pins an older scikit-learn than
  mmit's, so it runs in an environment of its own, that
  ``--ngboost-python PATH`` (its interpreter) names: the rows go to
  ``ngboost_worker.py`` there through a temporary .npz file, and the
  quantiles and the fit's seconds come back the same way. Made with::

      python3 -m venv /work/ngboost-env
      /work/ngboost-env/bin/pip install ngboost numpy scipy

  then ``--ngboost-python /work/ngboost-env/bin/python``; left out without;
- quantile forest: quantile-forest's RandomForestQuantileRegressor()
  (default settings, ``--n-jobs``) and ``predict(X, quantiles=...)``;
  exact targets only; left out without quantile-forest (the bench extra).

A method of exact targets only is not run on the censored shares (its
cells there are "-"). The fit seconds of a method are its fit's, median
over the draws: for the mmit models with their first one-row
``predict_quantiles`` (a forest makes its distributions then), for the
constant spread with its residuals' NPMLE, for XGBoost its whole tuning
(12 fits), for NGBoost without its process's start.

Printed per shape and censored share (a table, written to ``--csv PATH``
as well), as means over the draws: each method's coverage of the central
50, 80 and 90% intervals (quantiles 0.25-0.75, 0.1-0.9, 0.05-0.95), its
mean pinball loss over the 7 levels (and the smallest and largest of the
draws) and its fit seconds; then the ratios of the pinball losses, draw
by draw (mean, smallest and largest): MMITForest()'s to the better of the
constant spread's and XGBoost's, and the goals: the stack's to
MMITForest()'s and to NGBoost's.

``--data-dir``: on each bundled data set and fold of folds.csv, MMITForest()
fitted on the other folds: the coverage of its 50/80/90% intervals on the
exact-valued test rows, and the shares of the censored test rows certainly
covered and certainly missed by its 80% intervals
(:func:`mmit.metrics.interval_coverage`).

``--spread-leaves 20 40 60 80``: the default forest's pinball loss with
the "spread" forest's leaves of each size
(``SpreadDistribution(min_samples_leaf=...)``), as a ratio to the first
size's on the same draws, with the coverage: the evidence for the default
(40).

``--stack-construction``: the default stack's distributions against its
forest member's moved to the stack's prediction (the member's pinball loss
over the stack's own, and both's coverage): the evidence for the stack's
construction.

``--fit-cost``: what the distributions add to a fit, at 2e4 rows and 20
features (speed_data.py, 100 trees, ``max_features="sqrt"``,
``n_jobs=2``), timed in turn with scikit-learn's RandomForestRegressor
on the Interval-CART rows (as bench_forest.py): MMITForest() (its
distributions made on the first request), with ``distribution=None`` and
"location", and MMITForest() followed by its first request
(``predict_quantiles`` of one row: the "spread" forest grown then);
``--baseline DIR`` adds the default forest of another checkout (e.g. the
previous main, which made its distributions in ``fit``). Medians of
``--repeats`` rounds; the ratios are to scikit-learn's fit. With
``--csv PATH`` the table is also written to PATH (docs/results/ format).

``--speed``: predict_quantiles (3 levels) on 1e4 rows of a 100-tree forest
("spread" and "location") and of the default stack, fitted on 1e4 rows
(p = 20), against their predict, timed in turn, with 0, 60 and 100% of
the training values known only between inspection times; and the first
request's making of the distributions, once per model.

``--methods NAME ...`` runs only those methods of the simulated table (say
``stack`` to check the stack's coverage after a change to it).

Usage: python benchmarks/studies/uncertainty.py [--shapes step linear shared skewed
       homoscedastic] [--censored 0 0.3 0.6] [--repeats 5]
       [--ngboost-python PATH] [--data-dir DIR] [--speed]
       [--spread-leaves 20 40] [--stack-construction]
       [--fit-cost [--baseline DIR]] [--methods NAME ...] [--csv PATH]
       [--n-jobs 2]
(``--csv`` writes the simulated table, or with ``--shapes`` given no
shape, ``--fit-cost``'s or ``--speed``'s.)
"""

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from speed_data import MARGIN, benchmark_data, interval_cart_data  # noqa: E402
from tables import Table, add_csv_argument, seconds  # noqa: E402
from timing import BaselineProcess, interleaved_medians, xgboost_available  # noqa: E402

from mmit import IntervalStackingRegressor, MMITForest, SpreadDistribution  # noqa: E402
from mmit.datasets import load_folder  # noqa: E402
from mmit.ensemble._distributions import LeafSamples  # noqa: E402
from mmit.metrics import interval_coverage, pinball_loss  # noqa: E402

try:
    from quantile_forest import RandomForestQuantileRegressor
except ImportError:
    RandomForestQuantileRegressor = None

LEVELS = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])
INTERVALS = {0.5: (2, 4), 0.8: (1, 5), 0.9: (0, 6)}  # columns of LEVELS
SHAPES = ("step", "linear", "shared", "skewed", "homoscedastic")
NGBOOST_WORKER = Path(__file__).resolve().parent / "ngboost_worker.py"


def simulate(n, shape, rng, censored):
    X = rng.uniform(-2, 2, size=(n, 5))
    location = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1]
    spread = {"step": 0.1 + 0.6 * (X[:, 2] > 0), "linear": 0.05 + 0.15 * (X[:, 2] + 2),
              "shared": 0.1 + 0.3 * np.abs(X[:, 0]), "skewed": 0.1 + 0.6 * (X[:, 2] > 0),
              "homoscedastic": np.full(n, 0.3)}[shape]
    noise = rng.exponential(size=n) - 1.0 if shape == "skewed" else rng.normal(size=n)
    value = location + spread * noise
    return X, inspected(value, X[:, 3], rng.random(n) < censored), value


def inspected(value, x3, hidden):
    """Targets: the values, the ``hidden`` ones known only between two
    inspection times (a grid of step 0.5, offset ``0.25 sin(3 x3)``; left-
    or right-censored beyond its ends)."""
    lower, upper = value.copy(), value.copy()
    offset = 0.25 * np.sin(3 * x3)
    cell = np.floor((value - offset) / 0.5)
    cell_lower = np.where(cell < -6, -np.inf, offset + 0.5 * cell)
    cell_upper = np.where(cell >= 5, np.inf, offset + 0.5 * (cell + 1))
    lower[hidden], upper[hidden] = cell_lower[hidden], cell_upper[hidden]
    return np.column_stack([lower, upper])


def residual_quantiles(forest, y, levels):
    """Quantiles of the NPMLE of the forest's out-of-bag residual intervals
    (one leaf holding them all)."""
    held = ~np.isnan(forest.oob_prediction_)
    residual = y[held] - forest.oob_prediction_[held, None]
    one_leaf = LeafSamples(np.zeros((held.sum(), 1)), [1], residual[:, 0], residual[:, 1],
                           lambda tree: np.ones(held.sum()))
    return one_leaf.readout(np.zeros((1, 1)), [0.0], levels, True, 1)[0]


def xgboost_quantiles(X, y, X_test, levels, rng, n_jobs):
    """The tuned Gaussian/logistic AFT model's quantiles (see the module doc)."""
    import xgboost

    finite = y[np.isfinite(y)]
    spread = float(np.std(finite))
    validation = rng.random(len(X)) < 0.2

    def matrix(rows):
        data = xgboost.DMatrix(X[rows])
        with np.errstate(over="ignore"):
            data.set_float_info("label_lower_bound", np.exp(y[rows, 0]))
            data.set_float_info("label_upper_bound", np.exp(y[rows, 1]))
        return data

    train, held = matrix(~validation), matrix(validation)
    best = None
    for distribution in ("normal", "logistic"):
        for scale in (0.1 * spread, 0.3 * spread, spread):
            for depth in (3, 6):
                params = {"objective": "survival:aft", "eval_metric": "aft-nloglik",
                          "aft_loss_distribution": distribution,
                          "aft_loss_distribution_scale": scale, "max_depth": depth,
                          "learning_rate": 0.05, "tree_method": "hist", "nthread": n_jobs,
                          "verbosity": 0}
                result = {}
                booster = xgboost.train(params, train, num_boost_round=1000,
                                        evals=[(held, "held")], evals_result=result,
                                        early_stopping_rounds=30, verbose_eval=False)
                loss = min(result["held"]["aft-nloglik"])
                if best is None or loss < best[0]:
                    best = (loss, booster, distribution, scale)
    _, booster, distribution, scale = best
    rounds = (0, booster.best_iteration + 1)
    location = np.log(booster.predict(xgboost.DMatrix(X_test), iteration_range=rounds))
    z = (stats.norm if distribution == "normal" else stats.logistic).ppf(levels)
    return location[:, None] + scale * z


def interval_covered(value, quantiles):
    return {coverage: float(np.mean((value >= quantiles[:, a])
                                    & (value <= quantiles[:, b])))
            for coverage, (a, b) in INTERVALS.items()}


@dataclass
class Draw:
    """One draw's training rows and targets, its test rows, its generator
    (after the rows were drawn) and the number of jobs."""

    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    rng: np.random.Generator
    n_jobs: int


def timed(function, *args, **kwargs):
    """``function``'s result and its seconds."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def exact_values(y):
    if not np.array_equal(y[:, 0], y[:, 1]):
        raise ValueError("this method takes exact targets only")
    return y[:, 0]


def mmit_quantiles(model, draw):
    """An mmit model's quantiles of the test rows, and the seconds of its fit
    and first one-row request (a forest makes its distributions then)."""
    def fit():
        model.fit(draw.X, draw.y).predict_quantiles(draw.X_test[:1], LEVELS)

    _, fit_seconds = timed(fit)
    return model.predict_quantiles(draw.X_test, LEVELS), fit_seconds


def forest_method(draw, distribution):
    return mmit_quantiles(MMITForest(distribution=distribution, random_state=0,
                                     n_jobs=draw.n_jobs), draw)


def stack_method(draw):
    return mmit_quantiles(IntervalStackingRegressor(random_state=0, n_jobs=draw.n_jobs),
                          draw)


def constant_spread_method(draw):
    def fit():
        forest = MMITForest(distribution=None, oob_score=True, random_state=0,
                            n_jobs=draw.n_jobs).fit(draw.X, draw.y)
        return forest, residual_quantiles(forest, draw.y, LEVELS)

    (forest, residual), fit_seconds = timed(fit)
    return forest.predict(draw.X_test)[:, None] + residual, fit_seconds


def xgboost_method(draw):
    return timed(xgboost_quantiles, draw.X, draw.y, draw.X_test, LEVELS, draw.rng,
                 draw.n_jobs)


def quantile_forest_method(draw):
    model = RandomForestQuantileRegressor(random_state=0, n_jobs=draw.n_jobs)
    _, fit_seconds = timed(model.fit, draw.X, exact_values(draw.y))
    return model.predict(draw.X_test, quantiles=list(LEVELS)), fit_seconds


def ngboost_method(draw, python):
    """NGBoost's quantiles and fit seconds, from ngboost_worker.py run by the
    interpreter ``python`` (NGBoost's own environment)."""
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder, "rows.npz"), Path(folder, "quantiles.npz")
        np.savez(source, X=draw.X, y=exact_values(draw.y), X_test=draw.X_test,
                 levels=LEVELS, random_state=0)
        subprocess.run([python, str(NGBOOST_WORKER), str(source), str(target)],
                       check=True)
        with np.load(target) as result:
            return result["quantiles"], float(result["seconds"])


def ngboost_version(python):
    """NGBoost's version in the interpreter ``python``'s environment."""
    try:
        found = subprocess.run([python, str(NGBOOST_WORKER), "--version"],
                               capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"--ngboost-python {python} cannot run ngboost_worker.py: "
                         f"{getattr(error, 'stderr', None) or error}") from None
    return found.stdout.strip()


def simulation_methods(with_xgboost, ngboost_python):
    """The methods that can run here (each left out says why on stderr), by
    name: a function of a Draw giving the quantiles and the fit seconds, and
    whether it takes exact targets only; and the peers' versions."""
    methods = {"MMITForest spread": (partial(forest_method, distribution="spread"), False),
               "MMITForest location": (partial(forest_method, distribution="location"),
                                       False),
               "constant spread": (constant_spread_method, False)}
    versions = []
    if with_xgboost:
        methods["XGBoost AFT"] = (xgboost_method, False)
    methods["stack"] = (stack_method, False)
    if ngboost_python:
        versions.append(f"ngboost {ngboost_version(ngboost_python)}")
        methods["NGBoost Normal"] = (partial(ngboost_method, python=ngboost_python), True)
    else:
        print("NGBoost's rows are left out: give --ngboost-python PATH, the interpreter "
              "of its own environment (see the module doc)", file=sys.stderr)
    if RandomForestQuantileRegressor is not None:
        versions.append(f"quantile-forest {version('quantile-forest')}")
        methods["quantile forest"] = (quantile_forest_method, True)
    else:
        print("quantile-forest is not installed (the bench extra has it): its rows are "
              "left out", file=sys.stderr)
    return methods, versions


RATIOS = {"spread / better peer": ("MMITForest spread", ("constant spread", "XGBoost AFT")),
          "stack / forest": ("stack", ("MMITForest spread",)),
          "stack / NGBoost": ("stack", ("NGBoost Normal",))}


def simulated(shapes, censored_shares, repeats, n_jobs, methods, versions,
              csv_path):
    """Per shape and censored share, ``repeats`` independent draws of the
    training and test rows: every method's mean coverage and pinball loss
    and median fit seconds, and the ratios of RATIOS (a method's loss to the
    better of the others', draw by draw: mean, smallest and largest)."""
    title = (f"means over {repeats} draws (fit seconds: medians); '-': exact targets "
             "only" + "".join(f"; {v}" for v in versions))
    table = Table(["shape", "censored", "method", "50%", "80%", "90%", "pinball",
                   "pinball (draws)", "fit s"], csv_path, title=title)
    for shape in shapes:
        for censored in censored_shares:
            covered, losses, fit_seconds = {}, {}, {}
            run = {name: function for name, (function, exact_only) in methods.items()
                   if censored == 0 or not exact_only}
            for X, y, X_test, value, rng in simulated_draws(shape, censored, repeats):
                draw = Draw(X, y, X_test, rng, n_jobs)
                for name, function in run.items():
                    q, seconds_taken = function(draw)
                    losses.setdefault(name, []).append(pinball_loss(value, q, LEVELS))
                    covered.setdefault(name, []).append(
                        list(interval_covered(value, q).values()))
                    fit_seconds.setdefault(name, []).append(seconds_taken)
            case = (shape, f"{censored:.0%}")
            for name in methods:
                if name not in run:
                    table.add(*case, name, *["-"] * 6)
                    continue
                cells = [f"{c:.3f}" for c in np.mean(covered[name], axis=0)]
                table.add(*case, name, *cells, f"{np.mean(losses[name]):.4f}",
                          span(losses[name], 4), seconds(np.median(fit_seconds[name])))
            for ratio, (method, peers) in RATIOS.items():
                peers = [peer for peer in peers if peer in methods]
                if method not in methods or not peers:
                    continue
                if method not in run or not all(peer in run for peer in peers):
                    table.add(*case, ratio, *["-"] * 6)
                    continue
                draws = np.array(losses[method]) / np.min([losses[p] for p in peers],
                                                          axis=0)
                table.add(*case, ratio, "", "", "", f"{draws.mean():.3f}",
                          span(draws, 3), "")


def span(values, digits):
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def simulated_draws(shape, censored, repeats):
    """``repeats`` independent draws of one shape and censored share: 3000
    training rows and targets, 5000 test rows and their true values, and
    the generator (after the rows were drawn)."""
    for repeat in range(repeats):
        rng = np.random.default_rng([SHAPES.index(shape), int(100 * censored), repeat])
        X, y, _ = simulate(3000, shape, rng, censored)
        X_test, _, value = simulate(5000, shape, rng, 0.0)
        yield X, y, X_test, value, rng


def stack_construction(shapes, censored_shares, repeats, n_jobs):
    """The default stack's distributions (its prediction plus its own
    out-of-fold residuals, in a forest grown on their sizes) against its
    forest member's distributions moved to the stack's prediction: the
    ratio of the member's pinball loss to the stack's own (mean over the
    draws), with both's 50/80/90% coverage."""
    print(f"\n{'shape':<14} {'cens':>4} {'member / own':>13} {'own coverage':>20} "
          f"{'member coverage':>20}")
    for shape in shapes:
        for censored in censored_shares:
            ratios, covered = [], {"own": [], "member": []}
            for X, y, X_test, value, _ in simulated_draws(shape, censored, repeats):
                stack = IntervalStackingRegressor(random_state=0, n_jobs=n_jobs).fit(X, y)
                forest = stack.named_estimators_.forest
                location = stack.predict(X_test)[:, None]
                quantiles = {"own": stack.predict_quantiles(X_test, LEVELS),
                             "member": forest.predict_quantiles(X_test, LEVELS)
                             - forest.predict(X_test)[:, None] + location}
                ratios.append(pinball_loss(value, quantiles["member"], LEVELS)
                              / pinball_loss(value, quantiles["own"], LEVELS))
                for name, q in quantiles.items():
                    covered[name].append(list(interval_covered(value, q).values()))
            cells = ["/".join(f"{c:.3f}" for c in np.mean(covered[name], axis=0))
                     for name in ("own", "member")]
            print(f"{shape:<14} {censored:>4.1f} {np.mean(ratios):>13.3f} {cells[0]:>20} "
                  f"{cells[1]:>20}", flush=True)


def spread_leaves(leaf_sizes, shapes, censored_shares, repeats, n_jobs):
    """The default forest's pinball loss with the second ("spread") forest's
    leaves of each size in ``leaf_sizes``, as a ratio to the first size's on
    the same draws (mean over the draws), with the intervals' coverage."""
    print(f"\n{'shape':<14} {'cens':>4} "
          + " ".join(f"{f'leaf {size}':>28}" for size in leaf_sizes))
    for shape in shapes:
        for censored in censored_shares:
            losses = {size: [] for size in leaf_sizes}
            covered = {size: [] for size in leaf_sizes}
            for X, y, X_test, value, _ in simulated_draws(shape, censored, repeats):
                for size in leaf_sizes:
                    forest = MMITForest(
                        distribution=SpreadDistribution(min_samples_leaf=size),
                        random_state=0, n_jobs=n_jobs).fit(X, y)
                    q = forest.predict_quantiles(X_test, LEVELS)
                    losses[size].append(pinball_loss(value, q, LEVELS))
                    covered[size].append(list(interval_covered(value, q).values()))
            first = np.array(losses[leaf_sizes[0]])
            cells = []
            for size in leaf_sizes:
                cov = np.mean(covered[size], axis=0)
                ratio = np.mean(np.array(losses[size]) / first)
                cells.append(f"{ratio:.4f} ({cov[0]:.3f}/{cov[1]:.3f}/{cov[2]:.3f})")
            print(f"{shape:<14} {censored:>4.1f} "
                  + " ".join(f"{cell:>28}" for cell in cells), flush=True)


def bundled(data_dir, n_jobs):
    """On each fold of each data set, the test rows' shares certainly covered
    and certainly missed by the 50, 80 and 90% intervals (their exact
    values, covered or missed, count among them): a calibrated interval of
    coverage c has a certainly covered share at most c and a certainly
    missed share at most 1 - c."""
    columns = " ".join(f"{f'cov{c:.0%}':>7} {f'miss{c:.0%}':>7}" for c in INTERVALS)
    print(f"\n{'data set':<32} {'exact':>6} {columns}")
    for folder in sorted(path for path in Path(data_dir).iterdir() if path.is_dir()):
        data = load_folder(folder)
        y = data.target
        shares = {c: {"covered": 0.0, "missed": 0.0} for c in INTERVALS}
        for fold in np.unique(data.folds):
            test = data.folds == fold
            forest = MMITForest(random_state=0, n_jobs=n_jobs).fit(data.data[~test],
                                                                     y[~test])
            for coverage in INTERVALS:
                found = interval_coverage(
                    y[test], forest.predict_interval(data.data[test], coverage))
                for name in ("covered", "missed"):
                    shares[coverage][name] += found[name] * test.sum() / len(y)
        cells = " ".join(f"{shares[c]['covered']:>7.3f} {shares[c]['missed']:>7.3f}"
                         for c in INTERVALS)
        print(f"{folder.name:<32} {np.mean(y[:, 0] == y[:, 1]):>6.2f} {cells}",
              flush=True)


def speed(n_jobs, csv_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10_000, 20))
    value = np.sin(X[:, 0]) + (0.1 + 0.5 * (X[:, 1] > 0)) * rng.normal(size=10_000)
    X_test = rng.normal(size=(10_000, 20))
    table = Table(["censored", "model", "first request s (once)", "predict_quantiles s",
                   "predict s", "ratio"], csv_path,
                  title="predict_quantiles (3 levels) and predict on 1e4 rows, fitted on "
                        "1e4 rows x 20, medians of 3:")
    for censored in (0.0, 0.6, 1.0):
        y = inspected(value, X[:, 3], rng.random(10_000) < censored)
        models = {f"MMITForest(distribution={distribution!r})": MMITForest(
                      100, distribution=distribution, random_state=0, n_jobs=n_jobs)
                  for distribution in ("spread", "location")}
        models["IntervalStackingRegressor()"] = IntervalStackingRegressor(
            random_state=0, n_jobs=n_jobs)
        for name, model in models.items():
            model.fit(X, y)
            start = time.perf_counter()
            model.predict_quantiles(X_test[:10])  # every leaf's estimate, made once
            first = time.perf_counter() - start
            quantiles, predict = interleaved_medians(
                [partial(model.predict_quantiles, X_test),
                 partial(model.predict, X_test)], 3)
            table.add(f"{censored:.0%}", name, seconds(first), seconds(quantiles),
                      seconds(predict), f"{quantiles / predict:.2f}")


def fit_cost(repeats, baseline_dir, csv_path, n=20_000, p=20):
    """Fit times of the default forest and its options against scikit-learn's
    forest, timed in turn (see the module doc)."""
    X, y = benchmark_data(n, p)
    X_rows, targets = interval_cart_data(X, y, MARGIN)
    params = dict(n_estimators=100, margin=MARGIN, max_features="sqrt", n_jobs=2,
                  random_state=0)

    def first_request():
        MMITForest(**params).fit(X, y).predict_quantiles(X[:1])

    fits = {
        "RandomForestRegressor": partial(RandomForestRegressor(
            100, max_features="sqrt", n_jobs=2, random_state=0).fit, X_rows, targets),
        "MMITForest()": partial(MMITForest(**params).fit, X, y),
        "distribution=None": partial(MMITForest(**params, distribution=None).fit, X, y),
        "distribution='location'": partial(MMITForest(**params,
                                                      distribution="location").fit, X, y),
        "MMITForest() + first request": first_request,
    }
    baseline = BaselineProcess(baseline_dir) if baseline_dir else None
    if baseline:
        fits["baseline MMITForest()"] = baseline.fitter((n, p), "MMITForest",
                                                                params)
    times = interleaved_medians(list(fits.values()), repeats)
    if baseline:
        baseline.close()
    table = Table(["fit", "seconds", "ratio to RandomForestRegressor"], csv_path,
                  title=f"fit at n={n}, p={p} (100 trees, max_features='sqrt', n_jobs=2), "
                        f"medians of {repeats}:")
    for name, time_taken in zip(fits, times, strict=True):
        table.add(name, seconds(time_taken), f"{time_taken / times[0]:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=SHAPES)
    parser.add_argument("--censored", type=float, nargs="+", default=[0.0, 0.3, 0.6])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ngboost-python", metavar="PATH",
                        help="the Python of NGBoost's own environment (module doc)")
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--spread-leaves", type=int, nargs="+")
    parser.add_argument("--stack-construction", action="store_true")
    parser.add_argument("--fit-cost", action="store_true")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--methods", nargs="+", metavar="NAME",
                        help="only these methods of the simulated table (e.g. stack)")
    add_csv_argument(parser)
    args = parser.parse_args()
    if args.csv and (args.shapes and (args.fit_cost or args.speed)
                     or args.fit_cost and args.speed):
        parser.error("--csv writes one table: the simulated one, or with --shapes given "
                     "no shape, --fit-cost's or --speed's")
    if args.shapes:
        methods, versions = simulation_methods(xgboost_available("rows"),
                                               args.ngboost_python)
        if args.methods:
            unknown = sorted(set(args.methods) - set(methods))
            if unknown:
                parser.error(f"unknown or unavailable methods {unknown}: {list(methods)}")
            methods = {name: methods[name] for name in args.methods}
        simulated(args.shapes, args.censored, args.repeats, args.n_jobs, methods,
                  versions, args.csv)
    if args.data_dir:
        bundled(args.data_dir, args.n_jobs)
    if args.speed:
        speed(args.n_jobs, args.csv)
    if args.fit_cost:
        fit_cost(args.repeats, args.baseline, args.csv)
    if args.stack_construction:
        stack_construction(args.shapes or list(SHAPES), args.censored, args.repeats,
                           args.n_jobs)
    if args.spread_leaves:
        spread_leaves(args.spread_leaves, args.shapes or list(SHAPES), args.censored,
                      args.repeats, args.n_jobs)


if __name__ == "__main__":
    main()
