"""Pickles written by earlier versions of mmit load and predict as written.

A pickle names the module of every class it holds; the folders
``tests/data/pickles-*`` were written by ``tests/data/make_fixtures.py``
with earlier versions (``pickles-0.2.0.dev0-bc5ea50``: the flat layout,
before the subpackages), whose modules stay importable under their old
names.
"""

import importlib
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import InconsistentVersionWarning

import mmit

PICKLES = sorted((Path(__file__).resolve().parent / "data").glob("pickles-*"))
QUANTILE_LEVELS = (0.05, 0.5, 0.95)  # those of tests/data/make_fixtures.py


def load(path):
    # written with the scikit-learn of their day: a newer one warns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentVersionWarning)
        return pickle.loads(path.read_bytes())


@pytest.mark.parametrize("folder", PICKLES, ids=[folder.name for folder in PICKLES])
def test_pickles_of_earlier_versions_predict_as_written(folder):
    with np.load(folder / "expected.npz") as archive:
        expected = {key: archive[key] for key in archive.files}
    rows = expected.pop("X")
    quantiles = {key.removesuffix("__quantiles"): expected.pop(key)
                 for key in list(expected) if key.endswith("__quantiles")}
    kinds = set()
    for name, predictions in expected.items():
        model = load(folder / f"{name}.pkl")
        kinds.add(type(model).__name__)
        X = rows if model.__sklearn_tags__().input_tags.allow_nan else np.nan_to_num(rows)
        output = model.predict(X) if hasattr(model, "predict") else model.transform(X)
        if hasattr(model, "predict_survival_function"):
            # its risk, minus the restricted mean survival time, is summed from
            # the leaves' estimates since 0.2.0, no longer from the curves:
            # the same value to rounding
            np.testing.assert_allclose(output, predictions, rtol=1e-12, err_msg=name)
        else:
            np.testing.assert_array_equal(output, predictions, err_msg=name)
        if name in quantiles:
            np.testing.assert_array_equal(model.predict_quantiles(X, QUANTILE_LEVELS),
                                          quantiles[name], err_msg=name)
    assert {"MMIT", "MMITForest", "MMITForestCV", "MMITBoost", "IntervalStackingRegressor",
            "SurvivalRegressor", "MeanImputer"} <= kinds
    # a forest pickled before its distributions were made makes them now
    unasked = [path for path in folder.glob("*unasked.pkl")
               if isinstance(load(path), mmit.MMITForest)]
    assert unasked
    for path in unasked:
        forest = load(path)
        assert forest.predict_quantiles(rows, QUANTILE_LEVELS).shape == (len(rows), 3)


def test_old_module_paths_name_the_moved_classes():
    old = importlib.import_module("mmit._classes")
    assert old.MMIT is mmit.MMIT
    tree = mmit.MMIT(max_depth=1).fit([[0.0], [1.0]], [0.0, 1.0]).tree_
    assert importlib.import_module("mmit._tree").Tree is type(tree)


def test_the_modules_split_by_job_still_name_what_their_pickles_hold():
    # the additive models' design and the tree of predictors' fitted tree
    # moved to modules of their own; pickles written before name them in the
    # estimators' modules
    from mmit.additive import _additive_design
    from mmit.ensemble import _predictor_tree

    gam = importlib.import_module("mmit.additive._gam")
    assert gam._AdditiveDesign is _additive_design.AdditiveDesign
    assert (gam.Term, gam.PairTerm) == (_additive_design.Term, _additive_design.PairTerm)
    tops = importlib.import_module("mmit.ensemble._trees_of_predictors")
    assert tops.PredictorTree is _predictor_tree.PredictorTree
    assert tops.MemberMix is _predictor_tree.MemberMix
