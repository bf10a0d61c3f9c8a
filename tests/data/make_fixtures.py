"""Write the model files and pickles that later versions of mmit must load.

Run from the repository root with the version to preserve installed::

    python tests/data/make_fixtures.py LABEL

It fits one model of each kind on the bundled servo data with NaN in X
(forests with their predictive distributions made, and one without), and
writes ``tests/data/models-<version>-format<format version>/``, a model
file of each model ``save_model`` takes, and
``tests/data/pickles-<version>-<LABEL>/``, a pickle of each (``LABEL``
names the version, say a commit), each folder with ``expected.npz``: the
rows they predict on and what each predicted when written (``<name>``),
and for the models with predictive distributions their quantiles at
QUANTILE_LEVELS (``<name>__quantiles``). ``tests/_persistence`` and
``tests/test_pickles.py`` load every such folder and check that the
predictions are unchanged. Keep the fits small: the files are committed.
(``models-0.2.0.dev0``, without the format in its name, holds version-4
files; the folders up to format 7 were written by the scripts of their
day, ``make_model_files.py`` and ``make_pickles.py``.)
"""

import pickle
import sys
from pathlib import Path

import numpy as np

import mmit
from mmit import MeanImputer, save_model
from mmit._persistence import VERSION
from mmit.datasets import load_dataset
from mmit.ensemble import IntervalStackingRegressor, MMITBoost, MMITForest, MMITForestCV
from mmit.linear_model import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit.survival import SurvivalRegressor
from mmit.tree import MMIT, MMITCV

QUANTILE_LEVELS = (0.05, 0.5, 0.95)
HERE = Path(__file__).resolve().parent


def models():
    """The fixtures' models, by name (``unasked``: distributions not made)."""
    return {
        "tree": MMIT(max_depth=4, random_state=0),
        "tree_linear_leaves": MMIT(max_depth=2, leaf_model="linear", loss="squared_hinge",
                                   random_state=0),
        "tree_cv": MMITCV(margins=[0.0, 0.1], cv=3, random_state=0),
        "forest": MMITForest(n_estimators=3, max_depth=4, random_state=0),
        "forest_location": MMITForest(n_estimators=3, max_depth=4, random_state=0,
                                      distribution="location"),
        "forest_unasked": MMITForest(n_estimators=3, max_depth=4, random_state=0),
        "forest_cv": MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=4,
                                  random_state=0),
        "boost": MMITBoost(n_estimators=5, max_depth=2, random_state=0),
        "boost_hist": MMITBoost(n_estimators=5, max_depth=2, splitter="hist",
                                random_state=0),
        "boost_linear_leaves": MMITBoost(n_estimators=3, max_depth=2, leaf_model="linear",
                                         random_state=0),
        "linear": IntervalLinearRegression(alpha=0.01),
        "linear_cv": IntervalLinearRegressionCV(cv=3, n_alphas=5),
        "stack": IntervalStackingRegressor(
            estimators=[("tree", MMIT(max_depth=3, random_state=0)),
                        ("boost", MMITBoost(n_estimators=3, random_state=0)),
                        ("forest", MMITForest(n_estimators=4, random_state=0)),
                        ("linear", IntervalLinearRegressionCV(cv=3, n_alphas=5))],
            cv=3, random_state=0),
    }


def main():
    label = sys.argv[1]
    data = load_dataset("servo")
    X = data.data.copy()
    X[::5, 1] = np.nan
    rows = X[:40]
    pickles = HERE / f"pickles-{mmit.__version__}-{label}"
    files = HERE / f"models-{mmit.__version__}-format{VERSION}"
    pickles.mkdir(exist_ok=True)
    files.mkdir(exist_ok=True)
    expected = {"X": rows}
    for name, model in models().items():
        linear = isinstance(model, (IntervalLinearRegression, IntervalLinearRegressionCV))
        model.fit(np.nan_to_num(X) if linear else X, data.target)
        query = np.nan_to_num(rows) if linear else rows
        if hasattr(model, "predict_quantiles") and not name.endswith("unasked"):
            expected[f"{name}__quantiles"] = model.predict_quantiles(query,
                                                                     QUANTILE_LEVELS)
        expected[name] = model.predict(query)
        (pickles / f"{name}.pkl").write_bytes(pickle.dumps(model))
        save_model(model, files / f"{name}.npz")
    # pickles only: the survival front-end on a forest, and the imputer
    lower, upper = data.target.T
    time = np.exp(np.where(np.isfinite(lower), lower, upper))
    event = np.arange(time.shape[0]) % 3 != 0
    survival = SurvivalRegressor(MMITForest(n_estimators=3, random_state=0)).fit(
        X, np.array(list(zip(event, time, strict=True)),
                    dtype=[("event", bool), ("time", float)]))
    imputer = MeanImputer().fit(X)
    extra = {"survival": survival.predict(rows), "imputer": imputer.transform(rows)}
    for name, model in (("survival", survival), ("imputer", imputer)):
        (pickles / f"{name}.pkl").write_bytes(pickle.dumps(model))
    np.savez_compressed(files / "expected.npz", **expected)
    np.savez_compressed(pickles / "expected.npz", **expected, **extra)


if __name__ == "__main__":
    main()
