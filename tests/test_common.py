"""The scikit-learn estimator contract, for every mmit estimator; the one list
of public estimators (mmit._registry) against what the package exports."""

import inspect

import pytest
from sklearn.base import BaseEstimator
from sklearn.datasets import make_regression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.utils.estimator_checks import (
    estimator_checks_generator,
    parametrize_with_checks,
)

import mmit
from mmit._registry import ESTIMATORS as REGISTERED
from mmit.additive import IntervalMARS
from mmit.baselines import ConstantRegressor, IntervalCART
from mmit.ensemble import MMITForest, MMITForestCV, TreeOfPredictors
from mmit.linear_model import IntervalLinearRegression
from mmit.tree import MMIT

# the linear models solved tightly: the checks compare weighted and repeated
# rows' predictions to 1e-7, the default tolerance is 1e-4 of the bounds' spread
TIGHT = 1e-10
# the estimators' settings for the checks, by name (the fits small, the linear
# models tight; an estimator not named here is checked with its defaults)
CHECKED_SETTINGS = {
    "MMIT": [{}, {"max_depth": 3, "leaf_model": "linear"}],
    "MMITCV": [{"cv": 3}, {"cv": 3, "margins": [0.0], "leaf_models": ("linear",),
                           "leaf_shrinkages": [1.0]}],
    # without the bootstrap, the forest's weights are held to repeated rows
    "MMITForest": [{"n_estimators": 10}, {"n_estimators": 10, "bootstrap": False}],
    "MMITForestCV": [{"param_grid": {"min_samples_leaf": [1, 5]}, "n_estimators": 30}],
    "MMITBoost": [{"n_estimators": 10, "min_samples_leaf": 1},
                  {"n_estimators": 10, "splitter": "hist"}],
    "IntervalLinearRegression": [{"tol": TIGHT}],
    "IntervalLinearRegressionCV": [{"n_alphas": 5, "cv": 3, "tol": TIGHT}],
    "IntervalStackingRegressor": [{
        "estimators": [("tree", MMIT(max_depth=3)),
                       ("linear", IntervalLinearRegression(tol=TIGHT))],
        "cv": 3, "random_state": 0}],
    "TreeOfPredictors": [{
        "base_estimators": [("tree", MMIT(max_depth=2)),
                            ("linear", IntervalLinearRegression(alpha=0.01))],
        "max_depth": 2, "min_samples_leaf": 5, "random_state": 0}],
}
# the registered estimators that scikit-learn's checks cannot check, and why
UNCHECKED = {
    "SurvivalRegressor": "its targets are survival data (scikit-survival's structured "
                         "arrays of event and time), which the checks do not make; "
                         "tests/survival holds it to scikit-survival's conventions",
}
# the registered estimators with their settings, and the public modules' ones
ESTIMATORS = [entry.cls(**settings) for entry in REGISTERED if entry.name not in UNCHECKED
              for settings in CHECKED_SETTINGS.get(entry.name, [{}])]
ESTIMATORS += [ConstantRegressor(), IntervalCART()]
# the regressors (the imputer is a transformer)
REGRESSORS = [estimator for estimator in ESTIMATORS if hasattr(estimator, "predict")]


def test_the_registry_holds_every_exported_estimator():
    registered = {entry.name for entry in REGISTERED}
    aliases = {alias for entry in REGISTERED for alias in entry.aliases}
    estimators = {name for name in mmit.__all__ if inspect.isclass(getattr(mmit, name))
                  and issubclass(getattr(mmit, name), BaseEstimator)}
    assert estimators == registered | aliases
    exported = mmit._registry.exported()
    assert set(mmit.__all__) == set(exported) | set(mmit._FUNCTIONS)
    assert all(getattr(mmit, name) is obj for name, obj in exported.items())
    assert set(CHECKED_SETTINGS) | set(UNCHECKED) <= registered


# scikit-learn's checks that integer weights (0 among them) give the model of
# the rows repeated (and dropped), on a dense and on a sparse X
WEIGHT_EQUIVALENCE = tuple(f"check_sample_weight_equivalence_on_{layout}_data"
                           for layout in ("dense", "sparse"))


def expected_failed_checks(estimator):
    """The checks an estimator fails by design, and why: the weight
    equivalence, on dense and sparse data alike (a sparse fit is its dense
    fit, tests/test_sparse.py)."""
    if isinstance(estimator, MMITForestCV) or (isinstance(estimator, MMITForest)
                                               and estimator.bootstrap):
        reason = ("bagging draws its bootstrap samples over rows: an integer weight "
                  "and the same row repeated are equivalent in distribution, not "
                  "draw for draw (as for scikit-learn's forests; MMITForestCV "
                  "compares its candidates out of bag, so always bootstraps)")
    elif isinstance(estimator, IntervalMARS):
        reason = ("Friedman's knot spacing and the backward pass' GCV count rows (as "
                  "R's earth does), so that weights of any scale give one model: an "
                  "integer weight is not a row repeated there (in the loss it is)")
    elif isinstance(estimator, TreeOfPredictors):
        reason = ("its held-out predictions come from folds of the rows: a row "
                  "repeated lands in several folds, an integer weight keeps it in one "
                  "(the folds, and so the tree, differ, as for any model chosen by "
                  "K-fold CV)")
    else:
        return {}
    return dict.fromkeys(WEIGHT_EQUIVALENCE, reason)


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_weights_are_checked_on_sparse_data_as_on_dense_data(estimator):
    # every estimator takes weights and sparse X (its tags say so): both
    # checks run on it (an expected failure is declared for both alike)
    checks = {getattr(check, "func", check).__name__
              for _, check in estimator_checks_generator(estimator, mark=None)}
    assert set(WEIGHT_EQUIVALENCE) <= checks


def test_poor_score_tag_reflects_the_score_scale_not_the_fit():
    # The estimators set the poor_score tag because score() is the negative
    # interval MSE; on the data of scikit-learn's check their R^2 is good.
    X, y = make_regression(n_samples=200, n_features=10, n_informative=1, bias=5.0,
                           noise=20, random_state=42)
    for estimator in REGRESSORS:
        if isinstance(estimator, ConstantRegressor):
            continue  # a constant cannot explain the signal
        if "random_state" in estimator.get_params():
            estimator = estimator.set_params(random_state=0)
        assert r2_score(y, estimator.fit(X, y).predict(X)) > 0.5
        assert estimator.score(X, y) == pytest.approx(
            -mean_squared_error(y, estimator.predict(X)), rel=1e-12)
