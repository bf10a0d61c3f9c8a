"""Write the model files and pickles that later versions of mmit must load.

Run from the repository root with the version to preserve installed::

    python tests/data/make_fixtures.py LABEL

It fits the examples of every public estimator (``mmit._registry``: each
entry's ``examples``, or the estimator with its defaults) on the bundled
servo data with NaN in X (the rows with NaN replaced for the estimators
that refuse NaN; forests with their predictive distributions made, and a
copy of each forest example without), and writes
``tests/data/models-<version>-format<format version>/``, a model file of
each, and ``tests/data/pickles-<version>-<LABEL>/``, a pickle of each
(``LABEL`` names the version, say a commit), each folder with
``expected.npz``: the rows they predict on and what each predicted (or,
for a transformer, transformed) when written (``<name>``, the example's
label in lower case with ``_`` for spaces), and for the models with
predictive distributions their quantiles at QUANTILE_LEVELS
(``<name>__quantiles``). A survival model is fitted on the intervals as
survival times. ``tests/_persistence`` and ``tests/test_pickles.py`` load
every such folder and check that the outputs are unchanged. (Folders up to
``pickles-0.2.0.dev0-6395aac`` and ``models-0.2.0.dev0-format8`` were
written by the script of their day, with models of their own;
``models-0.2.0.dev0``, without the format in its name, holds version-4
files.)
"""

import pickle
import sys
from pathlib import Path

import numpy as np

import mmit
from mmit import save_model
from mmit._persistence import VERSION
from mmit._registry import ESTIMATORS
from mmit.datasets import load_dataset

QUANTILE_LEVELS = (0.05, 0.5, 0.95)
HERE = Path(__file__).resolve().parent


def fixture_name(label):
    return label.lower().replace(" ", "_")


def main():
    label = sys.argv[1]
    data = load_dataset("servo")
    X = data.data.copy()
    X[::5, 1] = np.nan
    rows = X[:40]
    lower, upper = data.target.T
    time = np.exp(np.where(np.isfinite(lower), lower, upper))
    event = np.arange(time.shape[0]) % 3 != 0
    survival_times = np.array(list(zip(event, time, strict=True)),
                              dtype=[("event", bool), ("time", float)])
    pickles = HERE / f"pickles-{mmit.__version__}-{label}"
    files = HERE / f"models-{mmit.__version__}-format{VERSION}"
    pickles.mkdir(exist_ok=True)
    files.mkdir(exist_ok=True)
    expected = {"X": rows}
    for entry in ESTIMATORS:
        for example in entry.all_examples():
            name = fixture_name(example.label)
            model = example.make()
            takes_nan = model.__sklearn_tags__().input_tags.allow_nan
            train, query = (X, rows) if takes_nan else (np.nan_to_num(X),
                                                        np.nan_to_num(rows))
            target = survival_times if hasattr(model, "predict_survival_function") else (
                data.target)
            fitted = [(name, model.fit(train, target))]
            if hasattr(model, "distribution_"):  # a copy that never made them
                fitted.append((f"{name}_unasked", example.make().fit(train, target)))
            for kept, model in fitted:
                if hasattr(model, "predict_quantiles") and not kept.endswith("unasked"):
                    expected[f"{kept}__quantiles"] = model.predict_quantiles(
                        query, QUANTILE_LEVELS)
                expected[kept] = (model.predict(query) if hasattr(model, "predict")
                                  else model.transform(query))
                (pickles / f"{kept}.pkl").write_bytes(pickle.dumps(model))
                save_model(model, files / f"{kept}.npz")
    np.savez_compressed(files / "expected.npz", **expected)
    np.savez_compressed(pickles / "expected.npz", **expected)


if __name__ == "__main__":
    main()
