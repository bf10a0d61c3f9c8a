"""Evidence for IntervalStackingRegressor's default members and its combiner.

Data: the data sets of DATA_DIR (each fold of folds.csv in turn is the test
set) and the simulated shapes of variant_study.py. On each training part,
every candidate family gives out-of-fold predictions (the stacking's folds:
5-fold KFold, shuffled with seed 0) and, refitted on the whole training
part, predictions of the test part; these are cached (``--cache DIR``) so
that members and combiners are compared on the same predictions:

- ``forest``: ``MMITForest()``; ``forest (out of bag)``: its out-of-bag
  predictions instead of K-fold ones (the refit is the same forest);
  ``forest by folds``: ``MMITForest(cv=<the stacking's folds>)``, one fit
  whose trees are grown by folds: its fold predictions and its own test
  predictions (the union of the folds' trees);
- ``boost``: ``MMITBoost()``; ``boost 50``: 50 stages at learning rate
  0.1, and cheaper variants of it: ``boost 50, half features``
  (``max_features=0.5``), ``boost 30`` (30 stages at rate 0.15), ``boost
  30 hist`` (the same on binned features, ``splitter="hist"``);
- ``linear``: ``IntervalLinearRegressionCV`` (alpha and margin by inner
  5-fold CV); ``linear (CV path)``: the predictions of its own CV's fold
  models at the chosen alpha and margin, with the stacking's folds as its
  folds (no nested CV);
- ``linear leaves``: ``MMITCV`` with the squared hinge and constant or
  linear leaves (margin, shrinkage and pruning by inner CV);
- ``MMIT``: ``MMITCV`` with the linear hinge (the paper's MMIT-L);
- ``kNN``: k nearest neighbours (features ranked, k in 5, 10, 20, 40 by
  leave-one-out) predicting the optimal constant (squared hinge) of their
  intervals, a prototype written here;
- ``constant``: the optimal constant.

Prints: each family alone; the simplex combiner on the forest and the
linear model with up to two more families (mean rank, worst ratio to the
best single family); the mean weight of each family in one stack of all;
and, for the chosen members (``--members``), the alternatives to the
combiner (best family by CV error, plain average, an unconstrained linear
combiner, simplex weights plus an intercept) and to the K-fold predictions
(out of bag, the CV path), also by the size of the training part, below
and from the rows where the default ``out_of_fold`` switches: the geometric
mean of the ratios of test MSE to every member fitted on the folds, with
the number of sets more than 2% worse and better (``+worse/-better``).
``--families`` computes only some families; ``--seeds`` fits every split
once per seed (of the stacking's folds and of the models) and averages;
``--free`` gives the forest and the linear model their free predictions
only (no K-fold fits of them).

``--out-of-fold-table`` compares the stack's ``out_of_fold`` settings on the
default members (forest, boost 30, linear), each as the stack makes it:
"refit" (every member fitted on every fold), "free" (the forest out of bag,
the linear model's CV path), "auto" as it was until 0.2 ("refit" below 200
training rows, "free" from there), "by folds" (the forest grown by the
folds, the linear model's CV path, the boosting fitted on the folds) and
"folds", the default ("refit" below FOLDS_BELOW_ROWS training rows, "by
folds" from there): each data set's test MSE and the stack's fit cost (the seconds of
its members' fits, as the stack makes them, over those of ``MMITForest()``
on all training rows: the fits' own seconds, run here one at a time per
process), then mean rank and wins on the bundled and the simulated sets
(``--csv`` writes the table). ``--large``: the simulated shapes of 1e4 and
1e5 training rows instead of the data sets and the smaller shapes.
``--hist-boost``: also "refit" and "by folds" with ``boost 30 hist`` (the
same boosting on binned features, ``splitter="hist"``) and "folds" made
of them.

Usage: python benchmarks/studies/stacking_defaults.py DATA_DIR [--cache DIR] [--n-jobs 2]
       [--members forest boost linear ...] [--families ...] [--free]
       [--seeds 0 ...] [--out-of-fold-table [--large] [--hist-boost] [--csv PATH]]
"""

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from models import IntervalKNN
from scipy.optimize import minimize
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection import KFold
from tables import Table, add_csv_argument
from variant_study import SIMULATED_PREFIX, SIMULATED_SHAPES, print_ranking, splits_of

from mmit import (
    MMIT,
    MMITCV,
    IntervalLinearRegression,
    IntervalLinearRegressionCV,
    MMITBoost,
    MMITForest,
)
from mmit.baselines import ConstantRegressor
from mmit.ensemble._combiner import combined_loss, simplex_weights
from mmit.ensemble._stacking import FOLDS_BELOW_ROWS
from mmit.metrics import interval_mse

N_FOLDS = 5
FREE = {"forest": "out_of_bag", "linear": "cv_path"}  # family -> its free predictions
# out_of_fold="auto" fitted every member on the folds below this many rows
# and read the free predictions from there (the default until 0.2)
AUTO_SWITCH_ROWS = 200
# the stack's ways to its default members' out-of-fold predictions: the
# members and where each one's come from (--out-of-fold-table)
DEFAULT_MEMBERS = ("forest", "boost 30", "linear")
CONSTRUCTIONS = {
    "refit": (DEFAULT_MEMBERS, {}),
    "free": (DEFAULT_MEMBERS, FREE),
    "by folds": (("forest by folds", "boost 30", "linear"), {"linear": "cv_path"}),
}
# --hist-boost: the same with the boosting on binned features
HIST_CONSTRUCTIONS = {
    "refit, hist boost": (("forest", "boost 30 hist", "linear"), {}),
    "by folds, hist boost": (("forest by folds", "boost 30 hist", "linear"),
                             {"linear": "cv_path"}),
}
# (n_samples, noise features, censoring) of the larger shapes of --large
LARGE_SHAPES = [(10_000, 19, 0.2), (100_000, 19, 0.2)]
BASE = ("forest", "linear")  # in every stack compared
REQUIRED = ("forest", "boost", "linear")
OPTIONAL = ("forest by folds", "linear leaves", "boost, linear leaves", "boost 50",
            "boost 50, linear leaves", "boost 50, half features", "boost 30",
            "boost 30 hist",
            "tree, linear leaves, depth 3",
            "tree, linear leaves, 20 per leaf", "tree, linear leaves, depth 4, 10 per leaf",
            "MMIT", "kNN", "constant")


def families(seed):
    inner = KFold(5, shuffle=True, random_state=seed)
    return {
        "forest": MMITForest(random_state=seed),
        "forest by folds": MMITForest(random_state=seed),
        "boost": MMITBoost(random_state=seed),
        "boost, linear leaves": MMITBoost(leaf_model="linear", random_state=seed),
        "boost 50": MMITBoost(n_estimators=50, learning_rate=0.1, random_state=seed),
        "boost 50, linear leaves": MMITBoost(n_estimators=50, learning_rate=0.1,
                                             leaf_model="linear", random_state=seed),
        "boost 50, half features": MMITBoost(n_estimators=50, learning_rate=0.1,
                                             max_features=0.5, random_state=seed),
        "boost 30": MMITBoost(n_estimators=30, learning_rate=0.15, random_state=seed),
        "boost 30 hist": MMITBoost(n_estimators=30, learning_rate=0.15, splitter="hist",
                                   random_state=seed),
        "tree, linear leaves, depth 3": MMIT(leaf_model="linear", max_depth=3,
                                             random_state=seed),
        "tree, linear leaves, 20 per leaf": MMIT(leaf_model="linear", min_samples_leaf=20,
                                                 random_state=seed),
        "tree, linear leaves, depth 4, 10 per leaf": MMIT(
            leaf_model="linear", max_depth=4, min_samples_leaf=10, random_state=seed),
        "linear": IntervalLinearRegressionCV(cv=inner),
        "linear leaves": MMITCV(losses=["squared_hinge"],
                                leaf_models=["constant", "linear"], cv=inner,
                                random_state=seed),
        "MMIT": MMITCV(losses=["linear_hinge"], cv=inner, random_state=seed),
        "kNN": IntervalKNN(),
        "constant": ConstantRegressor(loss="squared_hinge"),
    }


def family_predictions(family, X_train, y_train, X_test, free, seed):
    """Out-of-fold predictions of the training rows (and the variants' free
    ones), test predictions of the refit, and the seconds of all fits, the
    folds and the models seeded by ``seed``. ``free``: the forest and the
    linear model give only their free ones."""
    folds = list(KFold(N_FOLDS, shuffle=True, random_state=seed).split(X_train))
    model = families(seed)[family]
    start = time.perf_counter()
    out_of_fold = np.full(len(X_train), np.nan)
    by_folds = family == "forest by folds"  # its one fit gives them
    for train, test in [] if (free and family in FREE) or by_folds else folds:
        out_of_fold[test] = clone(model).fit(X_train[train], y_train[train]).predict(
            X_train[test])
    fold_seconds = time.perf_counter() - start
    start = time.perf_counter()
    if family == "forest":
        model.set_params(oob_score=True)
    if family == "linear":  # its CV on the stack's folds keeps their predictions
        model.set_params(cv=folds, store_cv_predictions=True)
    if by_folds:
        model.set_params(cv=folds)
    refit = model.fit(X_train, y_train)
    if by_folds:
        out_of_fold = refit.cv_predictions_
    result = {"out_of_fold": out_of_fold, "test": refit.predict(X_test),
              "fold_seconds": fold_seconds, "refit_seconds": time.perf_counter() - start}
    if family == "forest":
        result["out_of_bag"] = refit.oob_prediction_
    if family == "linear":  # the fold models of its CV at the chosen alpha and margin
        result["cv_path"] = refit.cv_predictions_
    return result


def cached(cache, name, k, family, split, free, seed):
    kind = (".free" if free and family in FREE else "") + (f".seed{seed}" if seed else "")
    path = None if cache is None else cache / f"{name}.{k}.{family}{kind}.npz"
    if path is not None and path.exists():
        with np.load(path) as archive:
            result = {key: archive[key] for key in archive.files}
    else:
        X_train, y_train, X_test, _ = split
        result = family_predictions(family, X_train, y_train, X_test, free, seed)
        if path is not None:
            np.savez(path, **result)
    if free and family in FREE:
        result["out_of_fold"] = result[FREE[family]]
    return result


def stack(P_train, y_train, P_test, combiner):
    lower, upper = y_train[:, 0], y_train[:, 1]
    ones = np.ones(len(y_train))
    m = P_train.shape[1]
    if combiner == "simplex":
        return P_test @ simplex_weights(P_train, lower, upper, ones)
    if combiner == "best by CV":
        errors = [interval_mse(y_train, column) for column in P_train.T]
        return P_test[:, int(np.argmin(errors))]
    if combiner == "average":
        return P_test.mean(axis=1)
    if combiner == "linear":  # any real weights and an intercept
        model = IntervalLinearRegression(alpha=0.0, clip_features=False, tol=1e-8)
        return model.fit(P_train, y_train).predict(P_test)
    if combiner == "simplex + intercept":
        def objective(v):
            return combined_loss(v[:m], P_train, lower - v[m], upper - v[m], ones)
        start = np.r_[simplex_weights(P_train, lower, upper, ones), 0.0]
        result = minimize(objective, start, method="SLSQP",
                          bounds=[(0.0, 1.0)] * m + [(None, None)],
                          constraints=[{"type": "eq", "fun": lambda v: v[:m].sum() - 1}],
                          options={"ftol": 1e-14, "maxiter": 500})
        return P_test @ result.x[:m] + result.x[m]
    raise ValueError(combiner)


def print_table(title, rows, names, reference=None):
    """rows: data set -> {method: test MSE}; the ranking of the methods, with
    ratios to the best of ``reference`` (None: of ``names``) on each data
    set and the number of data sets where that ratio is above 1.15."""
    mse = np.array([[rows[s][m] for m in names] for s in rows])
    base = np.array([min(rows[s][m] for m in reference or names) for s in rows])
    above = (mse / base[:, np.newaxis] > 1.15).sum(axis=0)
    print_ranking(title, names, mse, base, extra={"sets > 1.15": above})


def print_by_size(alternatives, n_train):
    """The free out-of-fold predictions against every member fitted on the
    folds, for data sets below and from ``FOLDS_BELOW_ROWS`` training rows
    (where the default ``out_of_fold="folds"`` switches from the latter to
    one fit of the forest and the linear model): the geometric mean of the
    ratios of test MSE, and the sets more than 2% worse and better."""
    variants = ["simplex, forest out of bag", "simplex, linear CV path",
                "simplex, both free"]
    print(f"\nfree out-of-fold predictions / every member on the folds, by training "
          f"rows (the stack's switch: {FOLDS_BELOW_ROWS})")
    print(f"{'rows':<14}{'sets':>6}" + "".join(f"{v:>34}" for v in variants))
    for label, below in (("below", True), ("from", False)):
        names = [name for name in alternatives
                 if (n_train[name] < FOLDS_BELOW_ROWS) == below]
        cells = []
        for variant in variants:
            ratio = np.array([alternatives[name][variant] / alternatives[name]["simplex"]
                              for name in names])
            cells.append(f"{np.exp(np.mean(np.log(ratio))):.3f} "
                         f"(+{int((ratio > 1.02).sum())}/-{int((ratio < 0.98).sum())})")
        print(f"{label:<14}{len(names):>6}" + "".join(f"{c:>34}" for c in cells))


def construction_seconds(by_family, members, variant):
    """The seconds of a construction's fits on one training part: each
    member's fits on the folds (unless it gives its out-of-fold predictions
    from its one fit: ``variant``, or a forest grown by folds) and on all
    rows."""
    return sum(by_family[m]["refit_seconds"]
               + (0.0 if m in variant or m == "forest by folds"
                  else by_family[m]["fold_seconds"]) for m in members)


def print_out_of_fold_table(data, predictions, test_mse, csv_path, hist_boost=False):
    """The stack's out_of_fold settings (CONSTRUCTIONS, "auto" as it was
    until 0.2 and "folds", the default) on every data set, with their fit
    cost, then their mean rank and wins (the lowest test MSE of the five)
    on the bundled sets, the simulated ones and all; ``hist_boost``: also
    HIST_CONSTRUCTIONS and "folds" with them (ranks of eight)."""
    constructions = {**CONSTRUCTIONS, **(HIST_CONSTRUCTIONS if hist_boost else {})}
    labels = ["refit", "free", "auto (until 0.2)", "by folds", "folds (default)"]
    switches = [("auto (until 0.2)", AUTO_SWITCH_ROWS, "refit", "free"),
                ("folds (default)", FOLDS_BELOW_ROWS, "refit", "by folds")]
    if hist_boost:
        labels += [*HIST_CONSTRUCTIONS, "folds, hist boost"]
        switches.append(("folds, hist boost", FOLDS_BELOW_ROWS, "refit, hist boost",
                         "by folds, hist boost"))
    table = Table(["data set", "training rows",
                   *(f"{label} MSE" for label in labels),
                   *(f"{label} cost" for label in labels)], csv_path,
                  title="the default stack by out_of_fold: test interval MSE; cost: "
                        "seconds of its fits / MMITForest()'s on all rows")
    mse = {}
    for name, splits in data:
        n_train = np.mean([len(split[1]) for split in splits])
        by_label = {label: test_mse(name, *constructions[label])
                    for label in constructions}
        cost = {label: np.mean([construction_seconds(by_family, *constructions[label])
                                / by_family["forest"]["refit_seconds"]
                                for by_family in predictions[name]])
                for label in constructions}
        for label, switch, below, above in switches:
            chosen = below if n_train < switch else above
            by_label[label], cost[label] = by_label[chosen], cost[chosen]
        mse[name] = [by_label[label] for label in labels]
        table.add(name, f"{n_train:.0f}", *(f"{value:.5g}" for value in mse[name]),
                  *(f"{cost[label]:.2f}" for label in labels))
    groups = {"bundled": [n for n in mse if not n.startswith(SIMULATED_PREFIX)],
              "simulated": [n for n in mse if n.startswith(SIMULATED_PREFIX)],
              "all": list(mse)}
    for group, names in groups.items():
        if not names:
            continue
        values = np.array([mse[name] for name in names])
        ranks = np.array([rankdata(row) for row in values])
        wins = (values == values.min(axis=1, keepdims=True)).sum(axis=0)
        blank = [""] * len(labels)
        table.add(f"{group} ({len(names)} sets): mean rank", "",
                  *(f"{rank:.2f}" for rank in ranks.mean(axis=0)), *blank)
        table.add(f"{group} ({len(names)} sets): wins", "", *(str(w) for w in wins),
                  *blank)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--cache", type=Path, help="folder for the members' predictions")
    parser.add_argument("--n-jobs", type=int, default=2, help="processes over the fits")
    parser.add_argument("--bundled-only", action="store_true")
    parser.add_argument("--members", nargs="+", default=list(REQUIRED),
                        help="the members whose combiners are compared")
    parser.add_argument("--families", nargs="+", default=list(REQUIRED + OPTIONAL),
                        help="only these families (with the forest and the linear model)")
    parser.add_argument("--free", action="store_true",
                        help="the forest's and the linear model's out-of-fold predictions "
                             "are their free ones (out of bag, CV path): no K-fold fits")
    parser.add_argument("--out-of-fold-table", action="store_true",
                        help="only compare the stack's out_of_fold settings on its "
                             "default members")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="seeds of the folds and models: each split is fitted with "
                             "each, and its test MSE is their mean")
    parser.add_argument("--hist-boost", action="store_true",
                        help="with --out-of-fold-table: also the settings with the "
                             "boosting on binned features")
    parser.add_argument("--large", action="store_true",
                        help="only simulated shapes of 1e4 and 1e5 training rows")
    add_csv_argument(parser)
    args = parser.parse_args()
    if args.out_of_fold_table:
        args.families = args.members = ["forest by folds", *DEFAULT_MEMBERS,
                                        *(["boost 30 hist"] if args.hist_boost else [])]
    if args.cache:
        args.cache.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys([*BASE, *args.families, *args.members]))
    shapes = LARGE_SHAPES if args.large else SIMULATED_SHAPES
    seeds = args.seeds
    # each split once per seed: a data set's mean test MSE is over both
    data = [(name, [split for split in splits for _ in seeds])
            for name, splits in splits_of(args.data_dir, shapes=shapes)
            if not (args.bundled_only and name.startswith(SIMULATED_PREFIX))
            and not (args.large and not name.startswith(SIMULATED_PREFIX))]
    predictions = {}
    for name, splits in data:
        start = time.perf_counter()
        results = Parallel(n_jobs=args.n_jobs)(
            delayed(cached)(args.cache, name, k // len(seeds), family, split, args.free,
                            seeds[k % len(seeds)])
            for k, split in enumerate(splits) for family in names)
        predictions[name] = [dict(zip(names, results[k * len(names):(k + 1) * len(names)],
                                      strict=True)) for k in range(len(splits))]
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)

    def test_mse(name, members, combiner="simplex", variant=None):
        """Mean over the splits of the test MSE of a stack (variant: family ->
        key of its out-of-fold predictions)."""
        values = []
        for split, by_family in zip(dict(data)[name], predictions[name], strict=True):
            _, y_train, _, y_test = split
            keys = {m: (variant or {}).get(m, "out_of_fold") for m in members}
            P_train = np.column_stack([by_family[m][keys[m]] for m in members])
            P_test = np.column_stack([by_family[m]["test"] for m in members])
            values.append(interval_mse(y_test, stack(P_train, y_train, P_test, combiner)))
        return float(np.mean(values))

    if args.out_of_fold_table:
        print_out_of_fold_table(data, predictions, lambda name, members, variant: test_mse(
            name, members, variant=variant), args.csv, args.hist_boost)
        return
    single = {name: {f: test_mse(name, [f], "average") for f in names} for name, _ in data}
    print_table("each family alone (test interval MSE)", single, names)

    others = [f for f in names if f not in BASE]
    subsets = [BASE + extra for r in range(min(len(others), 2) + 1)
               for extra in itertools.combinations(others, r)]
    rows = {}
    for name, _ in data:
        rows[name] = dict(single[name])
        for members in subsets:
            rows[name][" + ".join(members)] = test_mse(name, members)
    labels = [" + ".join(m) for m in subsets]
    print_table("simplex stacks; ratios to the best single family of each data set",
                rows, labels, reference=names)
    weights = {}
    everything = names
    for name, _ in data:
        for split, by_family in zip(dict(data)[name], predictions[name], strict=True):
            P = np.column_stack([by_family[m]["out_of_fold"] for m in everything])
            w = simplex_weights(P, split[1][:, 0], split[1][:, 1], np.ones(len(P)))
            weights.setdefault(name, []).append(w)
    mean_weight = np.array([np.mean(w, axis=0) for w in weights.values()])
    print("\nweights of every family in one stack (mean over the splits of each set)")
    print(f"{'data set':<42}" + "".join(f"{m:>14}" for m in everything))
    for name, row in zip(weights, mean_weight, strict=True):
        print(f"{name:<42}" + "".join(f"{v:>14.3f}" for v in row))
    print(f"{'sets where it has weight > 0.05':<42}"
          + "".join(f"{int(v):>14}" for v in (mean_weight > 0.05).sum(axis=0)))

    chosen = tuple(args.members)
    alternatives = {}
    for name, _ in data:
        alternatives[name] = {f: single[name][f] for f in chosen}
        for combiner in ("simplex", "best by CV", "average", "linear",
                         "simplex + intercept"):
            alternatives[name][combiner] = test_mse(name, chosen, combiner)
        if not args.free:
            alternatives[name]["simplex, forest out of bag"] = test_mse(
                name, chosen, variant={"forest": "out_of_bag"})
            alternatives[name]["simplex, linear CV path"] = test_mse(
                name, chosen, variant={"linear": "cv_path"})
            alternatives[name]["simplex, both free"] = test_mse(
                name, chosen, variant=FREE)
    print_table(f"combiners of {' + '.join(chosen)}; ratios to the best of them",
                alternatives, list(next(iter(alternatives.values()))))
    if not args.free:
        n_train = {name: np.mean([len(split[1]) for split in splits])
                   for name, splits in data}
        print_by_size(alternatives, n_train)
    seconds = {f: np.mean([[p[f]["fold_seconds"], p[f]["refit_seconds"]]
                           for by_split in predictions.values() for p in by_split], axis=0)
               for f in names}
    print("\nmean seconds per training part (K folds; refit)")
    for f, (folds, refit) in seconds.items():
        print(f"{f:<20}{folds:>10.2f}{refit:>10.2f}")


if __name__ == "__main__":
    main()
