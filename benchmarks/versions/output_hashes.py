"""Hashes of every estimator's outputs: a refactoring changes none of them.

Fits the examples of every public estimator (``mmit._registry``: each
entry's examples, such as linear leaves, both splitters, both kinds of
distributions, or the estimator with its defaults) on the bundled data
sets (and the data sets of DATA_DIR when given), as given, with missing
values (the estimators that take NaN) and with a categorical feature, and
hashes what each gives: predictions (a transformer's output), staged
predictions, search results, predictive distributions (quantiles, CDFs,
out of bag), SHAP values and interaction values, a survival model's risks
and curves (fitted on the intervals as times, the data as given), the
contents of its model file (the JSON description and every array) and the
predictions of its pickle; a model of numeric features only, its refusal of
the categorical column. Run it with two versions of mmit installed in
turn and compare::

    python benchmarks/versions/output_hashes.py --out before.json      # previous main
    python benchmarks/versions/output_hashes.py --compare before.json  # this checkout

The second prints every output whose hash differs (none: bit-identical)
and exits with status 1 if one does; outputs the first did not hash are
not compared. Versions before the registry (December 2026) listed the
models in this script: run such a version's own script for its hashes.

Usage: python benchmarks/versions/output_hashes.py [--data-dir DIR] [--out JSON]
       [--compare JSON]
"""

import argparse
import hashlib
import json
import pickle
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from mmit import load_model, save_model, shap_values
from mmit._registry import ESTIMATORS
from mmit.datasets import list_datasets, load_dataset, load_folder

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def digest(*arrays):
    """SHA-256 of the arrays' bytes (float64 as they are, NaN included)."""
    sha = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(np.asarray(array, dtype=np.float64))
        sha.update(str(array.shape).encode())
        sha.update(array.tobytes())
    return sha.hexdigest()[:20]


def table_digest(table):
    """SHA-256 of a table's cells as text (a transformer's output: numbers, or
    a data frame's columns of any type; float64 text round trips)."""
    cells = np.asarray(table, dtype=object).astype(str)
    sha = hashlib.sha256(str(cells.shape).encode())
    sha.update("\0".join(cells.ravel().tolist()).encode())
    return sha.hexdigest()[:20]


def model_file_digest(model):
    """SHA-256 of a model file's contents: its JSON description and its
    arrays (not the archive's bytes, which hold the time of writing, nor a
    search's fit times, ``cv_results_``'s ``*_time`` arrays: they differ
    from run to run)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.npz"
        save_model(model, path)
        sha = hashlib.sha256()
        with zipfile.ZipFile(path) as archive:
            for name in sorted(archive.namelist()):
                if "cv_results" in name and name.endswith("_time.npy"):
                    continue
                sha.update(name.encode())
                sha.update(archive.read(name))
        loaded = load_model(path)
    return sha.hexdigest()[:20], loaded


def examples():
    """(label, unfitted estimator) of every example of the registry."""
    return [(example.label, example.make()) for entry in ESTIMATORS
            for example in entry.all_examples()]


def outputs(model, X, y):
    """The outputs of a fitted model, by name, hashed: those it has."""
    if not hasattr(model, "predict"):
        return {"transform": table_digest(model.transform(X)),
                "pickle_transform": table_digest(
                    pickle.loads(pickle.dumps(model)).transform(X)),
                "model_file": model_file_digest(model)[0]}
    result = {"predict": digest(model.predict(X))}
    if hasattr(model, "staged_predict"):
        result["staged_predict"] = digest(*model.staged_predict(X))
        result["train_score_"] = digest(model.train_score_)
    if hasattr(model, "cv_results_"):
        result["cv_results_"] = digest(model.cv_results_["mean_test_score"])
        result["best_params_"] = json.dumps(model.best_params_, sort_keys=True,
                                            default=str)
    if hasattr(model, "predict_quantiles") and getattr(model, "distribution",
                                                       "spread") is not None:
        result["predict_quantiles"] = digest(model.predict_quantiles(X, QUANTILES))
        finite = y[np.isfinite(y)]
        thresholds = np.quantile(finite, [0.1, 0.5, 0.9])
        result["predict_cdf"] = digest(model.predict_cdf(X, thresholds))
        result["predict_interval"] = digest(model.predict_interval(X, coverage=0.8))
        if hasattr(model, "oob_quantiles"):
            result["oob_quantiles"] = digest(model.oob_quantiles(QUANTILES))
    if getattr(model, "oob_score", False):
        result["oob_prediction_"] = digest(model.oob_prediction_)
    if hasattr(model, "__mmit_shap__"):
        explanation = shap_values(model, X)
        result["shap_values"] = digest(explanation.values, explanation.base_values,
                                       explanation.data)
        result["shap_interactions"] = digest(shap_values(model, X[:20],
                                                         interactions=True).values)
    result["model_file"], loaded = model_file_digest(model)
    result["model_file_predict"] = digest(loaded.predict(X))
    result["pickle_predict"] = digest(pickle.loads(pickle.dumps(model)).predict(X))
    return result


def survival_outputs(model, X, y):
    """A survival model on the intervals as times (``exp`` of the bounds,
    log=True: the same intervals)."""
    model.fit(X, np.exp(y))
    return {"risk": digest(model.predict(X)),
            "survival_function": digest(model.predict_survival_function(
                X, return_array=True)),
            "score": digest([model.score(X, np.exp(y))])}


def variants(data):
    """The data set as given, with NaN in a tenth of X, and (with pandas) with
    its first feature as a categorical column of five categories."""
    X = np.asarray(data.data, dtype=np.float64)
    rng = np.random.default_rng(0)
    missing = X.copy()
    missing[rng.random(X.shape) < 0.1] = np.nan
    yield "numeric", X
    yield "nan", missing
    try:
        import pandas as pd
    except ImportError:
        return
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    codes = np.searchsorted(np.quantile(X[:, 0], [0.2, 0.4, 0.6, 0.8]), X[:, 0])
    frame["f0"] = pd.Categorical.from_codes(codes, ["a", "b", "c", "d", "e"])
    yield "categorical", frame


def measure(datasets):
    hashes = {}
    for data in datasets:
        y = data.target
        for variant, X in variants(data):
            for label, model in examples():
                if hasattr(model, "predict_survival_function"):
                    if variant == "numeric":  # keyed by the data set alone
                        hashes[f"{data.name} | {label}"] = survival_outputs(model, X, y)
                    continue
                if (variant == "nan" and not model.__sklearn_tags__().input_tags.allow_nan):
                    continue
                key = f"{data.name} | {variant} | {label}"
                try:
                    model.fit(X, y)
                except ValueError as error:  # a model of numeric features only
                    if variant != "categorical":
                        raise
                    hashes[key] = {"fit_error": str(error)}
                    continue
                hashes[key] = outputs(model, X, y)
                print(key, flush=True)
    return hashes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path,
                        help="also every data set folder under DIR")
    parser.add_argument("--out", type=Path, help="write the hashes to JSON")
    parser.add_argument("--compare", type=Path, help="compare with the hashes of JSON")
    args = parser.parse_args()
    datasets = [load_dataset(name) for name in list_datasets()]
    if args.data_dir:
        datasets += [load_folder(folder) for folder in sorted(args.data_dir.iterdir())
                     if (folder / "targets.csv").exists()]
    hashes = measure(datasets)
    if args.out:
        args.out.write_text(json.dumps(hashes, indent=1, sort_keys=True))
    if args.compare:
        before = json.loads(args.compare.read_text())
        differ = [(key, output) for key, values in before.items()
                  for output, value in values.items()
                  if hashes.get(key, {}).get(output) != value]
        missing = sorted(set(before) - set(hashes))
        n_outputs = sum(len(values) for values in before.values())
        print(f"{n_outputs - len(differ)} of {n_outputs} outputs identical; "
              f"{len(differ)} differ{'' if not missing else f', {len(missing)} missing'}")
        for key, output in differ:
            print(f"  differs: {key} | {output}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
