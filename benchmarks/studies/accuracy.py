"""Cross-validated accuracy of interval regression methods on many data sets.

For every data set folder under the given directory (features.csv,
targets.csv, folds.csv), each fold of folds.csv is in turn the test set and
every method chooses its hyperparameters by inner 5-fold cross-validation on
the other folds (the MMIT paper's protocol; see mmit/_evaluation.py):

- Constant: the best constant under the hinge loss (margin by CV);
- Interval-CART: scikit-learn's tree on the Interval-CART transform
  (margin and max_depth by CV);
- MMIT, MMIT squared: MMITCV with the linear / squared hinge (margin and
  pruning by CV);
- MMITForest: its defaults, no tuning;
- MMITForestCV: margin, loss, max_features and min_samples_leaf chosen by
  out-of-bag score (one forest per candidate);
- MMITBoost: its defaults, no tuning; MMITBoost CV: loss, max_depth and
  margin (0, 0.1 and 0.3 times the spread of the training bounds) by inner
  CV, 100 stages at learning rate 0.05;
- Stacking: IntervalStackingRegressor with its default members;
- XGBoost AFT, when xgboost is installed: ``survival:aft`` on exp(target)
  with interval labels, tuned as well as we could: the error distribution
  (normal, logistic), its scale (0.1, 0.3 and 1 times the spread of the
  training bounds) and max_depth (2, 4, 6) by inner CV, learning rate 0.05,
  and the number of rounds (up to 1000) by early stopping on the AFT
  negative log-likelihood of a fifth of each training set held out
  (patience 30 rounds);
- CatBoost AFT, when catboost is installed: ``SurvivalAft`` on exp(target)
  (an infinite upper bound as -1), the distribution, its scale (as for
  XGBoost) and depth (4, 6) by inner CV, the rest as for XGBoost.

Prints the mean test interval MSE of each method on each data set (the
best of each row in bold), each method's mean rank (1 = best) over the
data sets and its mean fit time (``--csv PATH`` writes that table), then
the mean test interval accuracy and the ratio of the stack's test MSE to
the best other method's on each data set.

Usage: python benchmarks/studies/accuracy.py DATA_DIR [--n-jobs 2] [--sets NAME ...]
       [--models NAME ...] [--previous earlier.csv] [--out results.csv]
       [--csv PATH]

A long run can be done in parts: ``--models`` runs only some methods and
``--previous`` takes the others' rows from an earlier ``--out`` file.
"""

import argparse
import csv
import importlib
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from models import PEERS, tuned_peer
from tables import Table, add_csv_argument
from variant_study import ranking

from mmit._cli._evaluation import MODEL_GROUPS, cross_validate_models, make_model
from mmit.datasets import load_folder


def read_rows(path):
    """Rows of an earlier ``--out`` file, numbers as numbers."""
    with open(path, newline="") as file:
        return [{**row, "fold": int(row["fold"]),
                 **{key: float(row[key]) for key in ("seconds", "mse", "accuracy")}}
                for row in csv.DictReader(file)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--sets", nargs="+", help="only these data sets (folder names)")
    parser.add_argument("--models", nargs="+",
                        help="only these methods (the others come from --previous)")
    parser.add_argument("--previous", type=Path,
                        help="an earlier --out file: its rows of the methods not run now")
    parser.add_argument("--out", type=Path, help="write every fold's scores (CSV)")
    add_csv_argument(parser)
    args = parser.parse_args()
    models = {name: (lambda y, name=name: make_model(name, y, n_jobs=args.n_jobs))
              for name in MODEL_GROUPS["all"]}
    for name, (package, estimator, grid) in PEERS.items():
        try:
            importlib.import_module(package)
        except ImportError:
            print(f"{package} is not installed: {name} is left out", file=sys.stderr)
            continue
        models[name] = partial(tuned_peer, estimator, grid, n_jobs=args.n_jobs)
    if args.models:
        unknown = sorted(set(args.models) - set(models))
        if unknown:
            parser.error(f"unknown methods {unknown}; known: {sorted(models)}")
        models = {name: models[name] for name in args.models}
    previous = read_rows(args.previous) if args.previous else []

    folders = sorted(p for p in args.data_dir.iterdir() if (p / "folds.csv").exists()
                     and (not args.sets or p.name in args.sets))
    all_rows = []
    for folder in folders:
        data = load_folder(folder)
        start = time.perf_counter()
        # one fit at a time (the models' own n_jobs inside): fit times comparable
        rows = cross_validate_models(data, [], extra_models=models)
        print(f"{data.name}: {time.perf_counter() - start:.0f} s", file=sys.stderr,
              flush=True)
        all_rows += [row for row in previous
                     if row["data set"] == data.name and row["model"] not in models]
        all_rows += [{"data set": data.name, **row} for row in rows]
    if args.out:
        with open(args.out, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(all_rows[0]))
            writer.writeheader()
            writer.writerows(all_rows)
    report(all_rows, args.csv)


def bold_best(values, digits):
    """The cells of ``values`` with the smallest (unrounded) in bold."""
    best = int(np.argmin(values))
    return [f"**{v:.{digits}f}**" if k == best else f"{v:.{digits}f}"
            for k, v in enumerate(values)]


def report(rows, path=None):
    """Per data set means, mean ranks, fit times and the stack's ratios; the
    table of test MSEs, ranks and times also to ``path`` (CSV)."""
    sets = list(dict.fromkeys(row["data set"] for row in rows))
    methods = list(dict.fromkeys(row["model"] for row in rows))
    results = {name: {method: tuple(np.mean([r[key] for r in rows
                                             if r["data set"] == name
                                             and r["model"] == method])
                                    for key in ("mse", "accuracy", "seconds"))
                      for method in methods} for name in sets}
    table = Table(["data set", *methods], path, "mean test interval MSE")
    for name, scores in results.items():
        table.add(name, *bold_best([scores[m][0] for m in methods], 4))
    mse = [[scores[m][0] for m in methods] for scores in results.values()]
    table.add("**mean rank**", *bold_best(ranking(mse)["mean rank"], 2))
    seconds = [np.mean([r["seconds"] for r in rows if r["model"] == m]) for m in methods]
    table.add("mean fit s", *(f"{s:.2f}" for s in seconds))
    accuracy = Table(["data set", *methods], title="mean test interval accuracy")
    for name, scores in results.items():
        accuracy.add(name, *(f"{scores[m][1]:.4f}" for m in methods))
    others = [m for m in methods if m != "Stacking"]
    if "Stacking" in methods and others:
        print("\nStacking's test MSE / the best other method's")
        for name, scores in results.items():
            best = min(others, key=lambda m: scores[m][0])
            print(f"{name:<30}{scores['Stacking'][0] / scores[best][0]:>8.3f}  ({best})")


if __name__ == "__main__":
    main()
