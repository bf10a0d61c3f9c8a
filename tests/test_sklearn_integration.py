"""Interval targets through scikit-learn's tools."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.inspection import permutation_importance
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from mmit import (
    MMIT,
    MMITCV,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
)
from mmit.metrics import interval_accuracy_scorer, interval_mse, neg_interval_mse_scorer

pd = pytest.importorskip("pandas")


def interval_problem(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    center = 3 * (X[:, 0] > 0) + X[:, 1]
    y = np.column_stack([center - 0.5, center + 0.5])
    y[::6, 0] = -np.inf
    y[::7, 1] = np.inf
    return X, y


def scores_by_hand(estimator, X, y, cv):
    """Each fold's negative interval MSE, refitting a clone on the rest."""
    return [-interval_mse(y[test],
                          clone(estimator).fit(X[train], y[train]).predict(X[test]))
            for train, test in cv.split(X)]


@pytest.mark.parametrize("estimator", [MMIT(max_depth=3, random_state=0),
                                       MMITForest(n_estimators=10, random_state=0),
                                       MMITBoost(n_estimators=20, random_state=0)])
def test_cross_validation_with_interval_targets(estimator):
    X, y = interval_problem()
    cv = KFold(4, shuffle=True, random_state=0)
    scores = cross_val_score(estimator, X, y, cv=cv, scoring=neg_interval_mse_scorer)
    np.testing.assert_allclose(scores, scores_by_hand(estimator, X, y, cv), rtol=1e-12)
    results = cross_validate(estimator, X, y, cv=cv, return_train_score=True,
                             scoring={"mse": neg_interval_mse_scorer,
                                      "accuracy": interval_accuracy_scorer})
    assert np.all(results["train_accuracy"] >= results["test_accuracy"] - 0.5)
    np.testing.assert_allclose(results["test_mse"], scores)


@pytest.mark.parametrize("estimator", [MMIT(random_state=0),
                                       MMITBoost(n_estimators=20, learning_rate=0.5,
                                                 min_samples_leaf=1, random_state=0)])
def test_grid_search_with_interval_targets(estimator):
    X, y = interval_problem()
    search = GridSearchCV(estimator, {"margin": [0.0, 0.2], "max_depth": [1, 3]},
                          cv=3, scoring=interval_accuracy_scorer).fit(X, y)
    assert search.best_params_["max_depth"] == 3
    assert search.predict(X).shape == (len(X),)


def test_pipeline_on_a_dataframe():
    X, y = interval_problem()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["group"] = np.where(X[:, 0] > 0, "high", "low")
    preprocess = ColumnTransformer([
        ("scale", StandardScaler(), ["a", "b", "c"]),
        ("encode", OneHotEncoder(sparse_output=False), ["group"]),
    ])
    for model in (MMIT(random_state=0), MMITForest(n_estimators=5, random_state=0),
                  MMITCV(cv=3, random_state=0), MMITBoost(n_estimators=10, random_state=0)):
        pipeline = Pipeline([("preprocess", preprocess), ("model", model)])
        pipeline.set_output(transform="pandas")
        pipeline.fit(frame, y)
        assert list(pipeline[-1].feature_names_in_) == [
            "scale__a", "scale__b", "scale__c", "encode__group_high", "encode__group_low"]
        assert pipeline.score(frame, y) == -interval_mse(y, pipeline.predict(frame))
        assert cross_val_score(pipeline, frame, y, cv=3).shape == (3,)


def test_clone_keeps_parameters_and_drops_the_fit():
    X, y = interval_problem()
    model = MMITForest(n_estimators=5, margin=0.3, random_state=1).fit(X, y)
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert not hasattr(copy, "estimators_")
    np.testing.assert_array_equal(copy.fit(X, y).predict(X), model.predict(X))


def test_permutation_importance_finds_the_signal():
    X, y = interval_problem(n=300)
    model = make_pipeline(StandardScaler(), MMIT(max_depth=4, random_state=0)).fit(X, y)
    result = permutation_importance(model, X, y, scoring=neg_interval_mse_scorer,
                                    n_repeats=5, random_state=0)
    assert result.importances_mean[0] > result.importances_mean[2]
    assert result.importances_mean[0] > 0


def small_stack():
    return IntervalStackingRegressor([("tree", MMIT(max_depth=3)),
                                      ("linear", IntervalLinearRegressionCV(cv=3))],
                                     cv=3, random_state=0)


def test_stack_in_pipelines_searches_and_cross_validation():
    X, y = interval_problem()
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(small_stack(), X, y, cv=cv, scoring=neg_interval_mse_scorer)
    np.testing.assert_allclose(scores, scores_by_hand(small_stack(), X, y, cv), rtol=1e-12)
    search = GridSearchCV(small_stack(), {"tree__max_depth": [1, 3]}, cv=cv,
                          scoring=neg_interval_mse_scorer).fit(X, y)
    assert search.best_params_ == {"tree__max_depth": 3}  # the signal has a step
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["group"] = np.where(X[:, 0] > 0, "high", "low")
    preprocess = ColumnTransformer([
        ("scale", StandardScaler(), ["a", "b", "c"]),
        ("encode", OneHotEncoder(sparse_output=False), ["group"]),
    ])
    pipeline = Pipeline([("preprocess", preprocess), ("stack", small_stack())])
    pipeline.set_output(transform="pandas").fit(frame, y)
    assert list(pipeline[-1].feature_names_in_)[-1] == "encode__group_low"
    assert pipeline.predict(frame).shape == (len(frame),)
    # a member that selects columns by name sees the DataFrame as given
    by_name = IntervalStackingRegressor(
        [("ab", make_pipeline(ColumnTransformer([("keep", "passthrough", ["a", "b"])]),
                              MMIT(max_depth=3, random_state=0)))], cv=3).fit(frame, y)
    np.testing.assert_array_equal(by_name.predict(frame),
                                  MMIT(max_depth=3, random_state=0).fit(
                                      X[:, :2], y).predict(X[:, :2]))
