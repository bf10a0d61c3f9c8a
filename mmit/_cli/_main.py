"""The ``mmit`` command line (also ``python -m mmit``)."""

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

from .._persistence._model_files import load_model, save_model
from .._utils._files import replacing_file
from .._utils._version import __version__
from ..datasets import list_datasets, load_dataset, load_folder
from ..inspection._shap import shap_values
from ..survival._survival import SurvivalRegressor
from ._evaluation import (
    BASELINES,
    FIT_CHOICES,
    MODEL_GROUPS,
    cross_validate_models,
    fold_table,
    make_model,
)

DEFAULT_DATASET = "H3K27ac-H3K4me3_TDHAM_BP_FPOP"
CATEGORICAL_ARGUMENT = ("--categorical",)
CATEGORICAL_OPTIONS = {
    "nargs": "+", "metavar": "NAME", "default": [],
    "help": "columns of features.csv that hold categories (labels; an empty cell is "
            "missing): the trees split them natively (needs pandas)"}


MONOTONIC_OPTIONS = {
    "nargs": "+", "metavar": "NAME=SIGN", "default": [],
    "help": "monotone constraints: the prediction increases (NAME=+1) or decreases "
            "(NAME=-1) with the feature NAME of features.csv (tree, forest, boost, "
            "stack; with --survival, the predicted time)"}


def monotonic_constraints(arguments, feature_names):
    """The ``monotonic_cst`` array of ``--monotonic NAME=SIGN ...`` for the
    features ``feature_names`` (None without constraints)."""
    if not arguments:
        return None
    constraints = np.zeros(len(feature_names), dtype=np.int8)
    index = {str(name): j for j, name in enumerate(feature_names)}
    for argument in arguments:
        name, _, sign = argument.rpartition("=")
        if sign not in ("+1", "1", "-1", "0") or not name:
            raise ValueError(f"--monotonic takes NAME=+1, NAME=-1 or NAME=0, got "
                             f"{argument!r}.")
        if name not in index:
            raise ValueError(f"--monotonic names {name!r}, which is not a column of "
                             f"features.csv ({', '.join(index)}).")
        constraints[index[name]] = int(sign)
    return constraints


def _data(args):
    if getattr(args, "data", None):
        return load_folder(args.data, categorical=args.categorical)
    if args.categorical:
        raise ValueError("--categorical names columns of a --data folder's "
                         "features.csv; the bundled data sets are numeric.")
    return load_dataset(getattr(args, "dataset", None) or DEFAULT_DATASET)


def categorical_names(model):
    """The names of the features a fitted model (or a model inside it: a
    stack's members, a pipeline's steps) takes as categories."""
    names = set()
    parts = [model]
    while parts:
        part = parts.pop()
        is_categorical = getattr(part, "is_categorical_", None)
        if is_categorical is not None:
            names.update(np.asarray(part.feature_names_in_)[is_categorical].tolist())
        parts.extend(getattr(part, "named_estimators_", {}).values())
        parts.extend(step for _, step in getattr(part, "steps", []))
    return sorted(names)


def _targets(data):
    if data.target is None:
        raise ValueError(f"{data.name} has no targets.csv.")
    return data.target


def run_cv(args):
    data = _data(args)
    names = MODEL_GROUPS["all"] if args.model == "all" else (
        [*BASELINES, *MODEL_GROUPS[args.model]])
    print(f"{data.name}: {data.data.shape[0]} samples, {data.data.shape[1]} features, "
          f"{len(np.unique(data.folds))} folds", file=sys.stderr, flush=True)
    start = time.perf_counter()
    rows = cross_validate_models(data, names, n_jobs=args.n_jobs, progress=True)
    print(f"done in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(f"{data.name}: cross-validated test scores "
          "(hyperparameters by inner 5-fold CV)")
    print(fold_table(rows))
    return 0


def run_fit(args):
    data = load_folder(args.data, categorical=args.categorical)
    target = _targets(data)
    if args.survival:
        return fit_survival(args, data, target)
    name = FIT_CHOICES[args.model or "tree"].name
    print(f"fitting {name} on {data.name} ({data.data.shape[0]} samples)...",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    search = make_model(name, target, n_jobs=args.n_jobs, verbose=1, monotonic_cst=(
        monotonic_constraints(args.monotonic, data.feature_names))).fit(data.data, target)
    model, chosen = chosen_model(search)
    if hasattr(model, "verbose"):
        # the saved model keeps no trace of the command line's verbosity
        model.set_params(verbose=0)
    save_model(model, args.out)
    print(f"saved {type(model).__name__} {chosen} to {args.out} "
          f"(training interval MSE {-model.score(data.data, target):.4f}, "
          f"{time.perf_counter() - start:.1f} s)")
    return 0


def chosen_model(fitted):
    """The model a fitted command-line model saves, and what it chose: a
    search's chosen model and parameters, a model of weighted members
    itself and their weights (rounded), any other model itself."""
    if hasattr(fitted, "best_estimator_"):
        return fitted.best_estimator_, fitted.best_params_
    if hasattr(fitted, "weights_") and hasattr(fitted, "named_estimators_"):
        return fitted, {member: round(float(weight), 3) for member, weight
                        in zip(fitted.named_estimators_, fitted.weights_, strict=True)}
    return fitted, {}


def fit_survival(args, data, target):
    """Fit and save the survival front-end with its default model (the
    survival forest and its booster, on log times) on targets of interval
    times."""
    if args.model is not None:
        raise ValueError("--survival fits SurvivalRegressor's default model; --model "
                         "does not apply.")
    print(f"fitting SurvivalRegressor on {data.name} ({data.data.shape[0]} samples)...",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    model = SurvivalRegressor(n_jobs=args.n_jobs, random_state=0, monotonic_cst=(
        monotonic_constraints(args.monotonic, data.feature_names))).fit(data.data, target)
    save_model(model, args.out)
    print(f"saved SurvivalRegressor to {args.out} (training concordance index "
          f"{model.score(data.data, target):.4f}, {time.perf_counter() - start:.1f} s)")
    return 0


def model_and_rows(model_path, data_folder):
    """A saved model and the features of a data folder, its categorical
    columns read as the model took them, checked to be the model's."""
    model = load_model(model_path)
    data = load_folder(data_folder, categorical=categorical_names(model))
    names = getattr(model, "feature_names_in_", None)
    if names is not None and list(names) != list(data.feature_names):
        raise ValueError(f"the features of {data_folder} are not the ones the model "
                         f"was fitted on ({', '.join(names)}).")
    return model, data


def write_csv(path, header, rows):
    """Write a CSV file (numbers as Python writes them: exact round trips)
    that replaces ``path`` only once complete."""
    with replacing_file(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows([repr(float(value)) for value in row] for row in rows)


def run_predict(args):
    model, data = model_and_rows(args.model, args.data)
    predictions = model.predict(data.data)
    survival = isinstance(model, SurvivalRegressor)
    write_csv(args.out, ["risk" if survival else "prediction"], predictions[:, np.newaxis])
    print(f"wrote {len(predictions)} {'risk scores' if survival else 'predictions'} "
          f"to {args.out}")
    return 0


def run_explain(args):
    model, data = model_and_rows(args.model, args.data)
    explanation = shap_values(model, data.data, n_jobs=args.n_jobs)
    names = list(data.feature_names)  # features.csv's header
    write_csv(args.out, [*names, "base_value"],
              np.column_stack([explanation.values, explanation.base_values]))
    print(f"wrote the SHAP values of {len(explanation.values)} rows to {args.out}; "
          f"mean |value| per feature, largest first:")
    importances = explanation.importances
    for j in np.argsort(-importances, kind="stable")[:10]:
        print(f"  {names[j]:<30} {importances[j]:.4g}")
    return 0


def run_plot(args):
    import matplotlib

    matplotlib.use("Agg")
    from ..plot import plot_intervals

    data = load_folder(args.data, categorical=args.categorical)
    target = _targets(data)
    names = list(data.feature_names)
    if args.feature not in names:
        raise ValueError(f"no feature {args.feature!r} in {args.data}; it has "
                         f"{', '.join(names[:10])}{', ...' if len(names) > 10 else ''}.")
    if args.model:
        model, label = load_model(args.model), args.model
    else:
        print("fitting an MMIT (margin and pruning by 5-fold CV)...", file=sys.stderr)
        model, label = make_model("MMIT", target).fit(data.data, target), "MMIT"
    ax = plot_intervals(data.data[:, names.index(args.feature)], target,
                        model.predict(data.data), feature_name=args.feature,
                        model_name=label)
    ax.set_title(data.name)
    with replacing_file(args.out) as file:
        ax.figure.savefig(file, format=Path(args.out).suffix[1:] or None, dpi=120,
                          bbox_inches="tight")
    print(f"wrote {args.out}")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="mmit", description="Maximum Margin Interval Trees: interval regression.")
    parser.add_argument("--version", action="version", version=f"mmit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    cv = commands.add_parser(
        "cv", help=f"cross-validated scores of {', '.join(MODEL_GROUPS['all'])}",
        description="Each fold of the data set's folds.csv is the test set in turn; every "
                    "model chooses its hyperparameters on the other folds (by inner "
                    "5-fold CV; MMITForestCV: out of bag; MMITForest and MMITBoost keep "
                    "their defaults; Stacking weighs its members by their out-of-fold "
                    "predictions). Prints the test interval MSE and accuracy of each "
                    "model on each fold (baselines: the best constant and "
                    "Interval-CART).")
    source = cv.add_mutually_exclusive_group()
    source.add_argument("--dataset", choices=list_datasets(),
                        help=f"a bundled data set (default: {DEFAULT_DATASET})")
    source.add_argument("--data", metavar="DIR",
                        help="a folder with features.csv, targets.csv and folds.csv")
    cv.add_argument("--model", choices=list(MODEL_GROUPS), default="all",
                    help="mmit models to compare with the baselines (default: all)")
    cv.add_argument("--n-jobs", type=int, default=-1,
                    help="models fitted at once, in processes (default: one per core)")
    cv.add_argument(*CATEGORICAL_ARGUMENT, **CATEGORICAL_OPTIONS)
    cv.set_defaults(run=run_cv)

    fit = commands.add_parser(
        "fit", help="fit a model and save it",
        description="Fit a model on a data folder and save it as arrays and JSON (no "
                    "pickle): " + "; ".join(f"'{choice}', {model.fit_summary}"
                                            for choice, model in FIT_CHOICES.items())
                    + ".")
    fit.add_argument("--data", metavar="DIR", required=True,
                     help="a folder with features.csv and targets.csv")
    fit.add_argument("--out", metavar="MODEL", required=True, help="model file to write")
    fit.add_argument("--model", choices=list(FIT_CHOICES), default=None,
                     help="what to fit (default: tree)")
    fit.add_argument("--survival", action="store_true",
                     help="targets.csv holds survival times (lower, upper; inf for a "
                          "right-censored time): fit SurvivalRegressor's default "
                          "model (the survival forest and a booster) on log times; "
                          "'mmit predict' then writes risk scores (higher: an earlier "
                          "event)")
    fit.add_argument("--n-jobs", type=int, default=None, help="parallel jobs")
    fit.add_argument(*CATEGORICAL_ARGUMENT, **CATEGORICAL_OPTIONS)
    fit.add_argument("--monotonic", **MONOTONIC_OPTIONS)
    fit.set_defaults(run=run_fit)

    predict = commands.add_parser(
        "predict", help="predict with a saved model",
        description="Predict the rows of a data folder's features.csv with a model "
                    "saved by 'mmit fit' (its categorical columns read as the model "
                    "took them); writes one prediction per row to a CSV file.")
    predict.add_argument("--model", metavar="MODEL", required=True, help="saved model")
    predict.add_argument("--data", metavar="DIR", required=True,
                         help="a folder with features.csv")
    predict.add_argument("--out", metavar="CSV", required=True, help="CSV file to write")
    predict.set_defaults(run=run_predict)

    explain = commands.add_parser(
        "explain", help="SHAP values of a saved model's predictions",
        description="Explain the prediction of every row of a data folder's "
                    "features.csv by a model saved by 'mmit fit': exact SHAP values "
                    "(TreeSHAP for the trees, exact for linear models, the weighted sum "
                    "of its members' for a stack). Writes one row per row of "
                    "features.csv, a column per feature and the base value (they add "
                    "up to the prediction), and prints the features' mean absolute "
                    "values.")
    explain.add_argument("model", metavar="MODEL", help="saved model")
    explain.add_argument("data", metavar="DATA",
                         help="a folder with features.csv")
    explain.add_argument("--out", metavar="CSV", required=True, help="CSV file to write")
    explain.add_argument("--n-jobs", type=int, default=None, help="parallel threads")
    explain.set_defaults(run=run_explain)

    plot = commands.add_parser(
        "plot", help="plot target intervals and predictions along a feature",
        description="Draw each target interval as a vertical segment at its value of "
                    "one feature, with a model's predictions as a line (the MMIT "
                    "paper's Figure 4). Needs matplotlib.")
    plot.add_argument("--data", metavar="DIR", required=True,
                      help="a folder with features.csv and targets.csv")
    plot.add_argument("--feature", metavar="NAME", required=True,
                      help="the feature for the horizontal axis (a column name)")
    plot.add_argument("--out", metavar="PNG", required=True, help="image file to write")
    plot.add_argument("--model", metavar="MODEL",
                      help="a saved model (default: fit an MMIT on the data)")
    plot.add_argument(*CATEGORICAL_ARGUMENT, **CATEGORICAL_OPTIONS)
    plot.set_defaults(run=run_plot)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError, ImportError) as error:
        print(f"mmit {args.command}: error: {error}", file=sys.stderr)
        return 2
