"""Write the pickles that later versions of mmit must still load.

Run from the repository root with the version to preserve installed::

    python tests/data/make_pickles.py

It writes ``tests/data/pickles-<version>-<label>/``: one pickle per estimator
(fitted on the bundled servo data with NaN in X; forests with their
predictive distributions made, and one without), and ``expected.npz``
with the rows they predict on and what each predicted when written
(``<name>``), and for the models with predictive distributions their
quantiles at QUANTILE_LEVELS (``<name>__quantiles``).
``tests/test_persistence.py`` loads every such folder and checks that the
predictions are unchanged: a pickle names the module of every class it
holds, so a class that moves keeps its old module path importable.
Keep the fits small: the files are committed.
"""

import pickle
import sys
from pathlib import Path

import numpy as np

import mmit
from mmit import (
    MMIT,
    MMITCV,
    IntervalLinearRegression,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MeanImputer,
    MMITBoost,
    MMITForest,
    MMITForestCV,
    SurvivalRegressor,
)
from mmit.datasets import load_dataset

QUANTILE_LEVELS = (0.05, 0.5, 0.95)


def models():
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
    label = sys.argv[1] if len(sys.argv) > 1 else "main"
    data = load_dataset("servo")
    X = data.data.copy()
    X[::5, 1] = np.nan
    rows = X[:40]
    folder = Path(__file__).resolve().parent / f"pickles-{mmit.__version__}-{label}"
    folder.mkdir(exist_ok=True)
    expected = {"X": rows}
    for name, model in models().items():
        needs_complete_rows = isinstance(model, (IntervalLinearRegression,
                                                 IntervalLinearRegressionCV))
        train = np.nan_to_num(X) if needs_complete_rows else X
        model.fit(train, data.target)
        query = np.nan_to_num(rows) if needs_complete_rows else rows
        if hasattr(model, "predict_quantiles") and name != "forest_unasked":
            # the distributions made before pickling
            expected[f"{name}__quantiles"] = model.predict_quantiles(query,
                                                                     QUANTILE_LEVELS)
        expected[name] = model.predict(query)
        (folder / f"{name}.pkl").write_bytes(pickle.dumps(model))
    # survival targets: the front-end on a forest, its risks
    lower, upper = data.target.T
    time = np.exp(np.where(np.isfinite(lower), lower, upper))
    event = np.arange(time.shape[0]) % 3 != 0
    survival = SurvivalRegressor(MMITForest(n_estimators=3, random_state=0)).fit(
        X, np.array(list(zip(event, time, strict=True)),
                    dtype=[("event", bool), ("time", float)]))
    expected["survival"] = survival.predict(rows)
    (folder / "survival.pkl").write_bytes(pickle.dumps(survival))
    imputer = MeanImputer().fit(X)
    expected["imputer"] = imputer.transform(rows)
    (folder / "imputer.pkl").write_bytes(pickle.dumps(imputer))
    np.savez_compressed(folder / "expected.npz", **expected)


if __name__ == "__main__":
    main()
