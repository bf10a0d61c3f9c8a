"""Write the model files that later releases must still load.

Run from the repository root with the release installed::

    python tests/data/make_model_files.py

It writes ``tests/data/models-<version>-format<format version>/``: one
model file per saved model kind, fitted on the bundled servo data with NaN
in X, and ``expected.npz`` with the rows they predict on and what each file
predicted when written (``<name>``), and for a forest with predictive
distributions its quantiles at QUANTILE_LEVELS (``<name>__quantiles``).
``tests/test_persistence.py`` loads every such folder and checks that the
predictions are unchanged. Keep the fits small: the files are committed.
(``models-0.2.0.dev0``, without the format in its name, holds version-4
files.)
"""

from pathlib import Path

import numpy as np

import mmit
from mmit import (
    MMIT,
    IntervalLinearRegression,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    save_model,
)
from mmit import _persistence as persistence
from mmit.datasets import load_dataset

QUANTILE_LEVELS = (0.05, 0.5, 0.95)


def models():
    return {
        "tree": MMIT(max_depth=4, random_state=0),
        "tree_linear_leaves": MMIT(max_depth=2, leaf_model="linear", loss="squared_hinge",
                                   random_state=0),
        "forest": MMITForest(n_estimators=3, max_depth=4, random_state=0),
        "forest_location": MMITForest(n_estimators=3, max_depth=4, random_state=0,
                                      distribution="location"),
        "boost": MMITBoost(n_estimators=5, max_depth=2, random_state=0),
        "boost_linear_leaves": MMITBoost(n_estimators=3, max_depth=2, leaf_model="linear",
                                         random_state=0),
        "linear": IntervalLinearRegression(alpha=0.01),
        "linear_cv": IntervalLinearRegressionCV(cv=3, n_alphas=5),
        "stack": IntervalStackingRegressor(
            estimators=[("tree", MMIT(max_depth=3, random_state=0)),
                        ("boost", MMITBoost(n_estimators=3, random_state=0)),
                        ("linear", mmit.IntervalLinearRegression(alpha=0.01))],
            cv=3, random_state=0),
    }


def main():
    data = load_dataset("servo")
    X = data.data.copy()
    X[::5, 1] = np.nan
    rows = X[:40]
    folder = (Path(__file__).resolve().parent
              / f"models-{mmit.__version__}-format{persistence.VERSION}")
    folder.mkdir(exist_ok=True)
    expected = {"X": rows}
    for name, model in models().items():
        needs_complete_rows = isinstance(model, (IntervalLinearRegression,
                                                 IntervalLinearRegressionCV))
        train = np.nan_to_num(X) if needs_complete_rows else X
        model.fit(train, data.target)
        save_model(model, folder / f"{name}.npz")
        expected[name] = model.predict(np.nan_to_num(rows) if needs_complete_rows
                                       else rows)
        if getattr(model, "distribution", None) is not None:
            expected[f"{name}__quantiles"] = model.predict_quantiles(rows, QUANTILE_LEVELS)
    np.savez_compressed(folder / "expected.npz", **expected)


if __name__ == "__main__":
    main()
