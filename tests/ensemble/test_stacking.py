"""IntervalStackingRegressor: out-of-fold predictions, convex weights, refits,
missing values, sample weights and its errors."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import GroupKFold, KFold, ShuffleSplit

from mmit import MeanImputer
from mmit.baselines import ConstantRegressor
from mmit.ensemble import IntervalStackingRegressor, MMITBoost, MMITForest
from mmit.ensemble._stacking import FOLDS_BELOW_ROWS
from mmit.linear_model import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit.metrics import interval_mse
from mmit.tree import MMIT, MMITCV


def interval_problem(n=150, seed=0, censored=0.2):
    """A signal that is part linear, part a step; censored intervals."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 4))
    signal = X[:, 0] + 2.0 * (X[:, 1] > 0)
    lower = signal - rng.exponential(0.2, n)
    upper = signal + rng.exponential(0.2, n)
    lower[rng.random(n) < censored] = -np.inf
    upper[rng.random(n) < censored] = np.inf
    return X, np.column_stack([lower, upper])


def small_members():
    return [("tree", MMIT(max_depth=3, random_state=0)),
            ("linear", IntervalLinearRegression(alpha=1e-3)),
            ("constant", ConstantRegressor(loss="squared_hinge"))]


def test_weights_are_convex_and_fit_the_out_of_fold_predictions():
    X, y = interval_problem()
    cv = KFold(4, shuffle=True, random_state=1)
    stack = IntervalStackingRegressor(small_members(), cv=cv).fit(X, y)
    assert stack.weights_.shape == (3,)
    assert np.all(stack.weights_ >= 0) and stack.weights_.sum() == pytest.approx(1.0)
    # each member's out-of-fold predictions are a clone fitted on the other folds
    for (name, member), column in zip(small_members(), stack.cv_predictions_.T,
                                      strict=True):
        for train, test in cv.split(X):
            fold = member.fit(X[train], y[train])
            np.testing.assert_allclose(column[test], fold.predict(X[test]), atol=1e-12)
        assert -stack.cv_scores_[list(stack.named_estimators_).index(name)] == \
            pytest.approx(interval_mse(y, column))
    # the members are refitted on all rows; the prediction is their weighted sum
    refits = np.column_stack([m.fit(X, y).predict(X) for _, m in small_members()])
    np.testing.assert_allclose(stack.predict(X), refits @ stack.weights_, atol=1e-12)
    assert list(stack.named_estimators_) == ["tree", "linear", "constant"]
    assert stack.estimators_[0] is stack.named_estimators_.tree
    # the mix beats the constant out of fold
    assert interval_mse(y, stack.cv_predictions_ @ stack.weights_) < -stack.cv_scores_[2]


def test_a_member_that_predicts_the_truth_gets_all_the_weight():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = X @ [1.0, -2.0, 0.5] + 3.0  # exact values, linear in X
    stack = IntervalStackingRegressor(
        [("tree", MMIT(max_depth=2, random_state=0)),
         ("truth", IntervalLinearRegression(alpha=0.0, tol=1e-12)),
         ("constant", ConstantRegressor())], cv=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(stack.weights_, [0.0, 1.0, 0.0], atol=1e-9)


def test_with_one_member_the_stack_is_that_member():
    X, y = interval_problem(seed=3)
    member = MMITBoost(n_estimators=10, random_state=0)
    stack = IntervalStackingRegressor([("boost", member)], random_state=0).fit(X, y)
    np.testing.assert_array_equal(stack.weights_, [1.0])
    np.testing.assert_array_equal(stack.predict(X), member.fit(X, y).predict(X))


def test_integer_weights_equal_repeated_rows():
    """With folds that keep a row's copies together, weighting by counts and
    repeating the rows give the same members, weights and predictions; NaN in
    X go through the linear model's imputer, whose means are weighted too."""
    X, y = interval_problem(seed=4)
    X[::7, 2] = np.nan
    counts = np.random.default_rng(4).integers(0, 4, len(X))
    counts[:4] = 1  # every fold keeps rows
    rows = np.repeat(np.arange(len(X)), counts)
    fold_of_row = np.arange(len(X)) % 4
    weighted_cv = [(np.flatnonzero(fold_of_row != k), np.flatnonzero(fold_of_row == k))
                   for k in range(4)]
    repeated_cv = [(np.flatnonzero(fold_of_row[rows] != k),
                    np.flatnonzero(fold_of_row[rows] == k)) for k in range(4)]
    members = [("tree", MMIT(max_depth=3, random_state=0)),
               ("boost", MMITBoost(n_estimators=8, random_state=0)),
               ("linear", IntervalLinearRegression(alpha=1e-3, tol=1e-12))]
    weighted = IntervalStackingRegressor(members, cv=weighted_cv).fit(
        X, y, sample_weight=counts.astype(float))
    repeated = IntervalStackingRegressor(members, cv=repeated_cv).fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, atol=1e-8)
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-8)
    np.testing.assert_allclose(weighted.cv_scores_, repeated.cv_scores_, rtol=1e-8)


def test_default_members_and_n_jobs_do_not_change_the_result():
    X, y = interval_problem(n=120, seed=5)
    one = IntervalStackingRegressor(out_of_fold="free", random_state=0, n_jobs=1).fit(X, y)
    two = IntervalStackingRegressor(out_of_fold="free", random_state=0, n_jobs=2).fit(X, y)
    assert list(one.named_estimators_) == ["forest", "boost", "linear"]
    assert isinstance(one.named_estimators_.forest, MMITForest)
    np.testing.assert_array_equal(one.weights_, two.weights_)
    np.testing.assert_array_equal(one.cv_predictions_, two.cv_predictions_)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    # the forest's column holds its out-of-bag predictions, from its one fit
    np.testing.assert_array_equal(one.cv_predictions_[:, 0],
                                  one.named_estimators_.forest.oob_prediction_)
    # the linear model's, its CV's fold models at the chosen alpha, the CV run
    # on the stack's folds by its one fit (behind the imputer)
    linear = one.named_estimators_.linear[-1]
    np.testing.assert_array_equal(one.cv_predictions_[:, 2], linear.cv_predictions_)
    stack_folds = [test for _, test in KFold(5, shuffle=True, random_state=linear.cv
                                             .random_state).split(X)]
    assert [list(test) for _, test in linear.cv.split(X)] == [list(t) for t in stack_folds]
    for test in stack_folds:
        train = np.setdiff1d(np.arange(len(X)), test)
        fold = IntervalLinearRegression(alpha=linear.alpha_, margin=linear.margin_,
                                        tol=linear.tol).fit(X[train], y[train])
        # a cold fit and the path's warm start agree to the solver's tolerance
        np.testing.assert_allclose(one.cv_predictions_[test, 2], fold.predict(X[test]),
                                   atol=2e-3)
    # the seeds come from random_state: another gives other folds and forests
    other = IntervalStackingRegressor(out_of_fold="free", random_state=1).fit(X, y)
    assert not np.array_equal(other.cv_predictions_, one.cv_predictions_)


@pytest.mark.parametrize("n_samples", [FOLDS_BELOW_ROWS - 1, FOLDS_BELOW_ROWS])
def test_the_default_fits_on_the_folds_below_a_size(n_samples):
    X, y = interval_problem(n=n_samples, seed=8)
    stack = IntervalStackingRegressor(random_state=0).fit(X, y)
    refit = IntervalStackingRegressor(out_of_fold="refit", random_state=0).fit(X, y)
    forest = stack.named_estimators_.forest
    if n_samples < FOLDS_BELOW_ROWS:  # every member fitted on every fold
        np.testing.assert_array_equal(stack.cv_predictions_, refit.cv_predictions_)
        assert not hasattr(forest, "cv_predictions_")
        np.testing.assert_array_equal(stack.predict(X), refit.predict(X))
    else:  # the forest grown by the stack's folds and the linear model's CV path
        folds = [test for _, test in KFold(5, shuffle=True, random_state=forest.cv
                                           .random_state).split(X)]
        for k, test in enumerate(folds):
            assert np.all(forest.row_folds_[test] == k)
        np.testing.assert_array_equal(stack.cv_predictions_[:, 0], forest.cv_predictions_)
        np.testing.assert_array_equal(stack.cv_predictions_[:, 2],
                                      stack.named_estimators_.linear[-1].cv_predictions_)
        # the forest's trees never saw the fold they predict: the fold
        # predictions are not its predictions of its training rows
        assert not np.allclose(stack.cv_predictions_[:, 0], forest.predict(X))
        assert not np.array_equal(stack.cv_predictions_[:, 0], refit.cv_predictions_[:, 0])
    # the boosting member is fitted on the folds either way
    np.testing.assert_array_equal(stack.cv_predictions_[:, 1], refit.cv_predictions_[:, 1])


def test_the_default_does_not_depend_on_n_jobs_and_auto_is_deprecated():
    X, y = interval_problem(n=FOLDS_BELOW_ROWS, seed=9)
    one = IntervalStackingRegressor(random_state=0, n_jobs=1).fit(X, y)
    two = IntervalStackingRegressor(random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.cv_predictions_, two.cv_predictions_)
    np.testing.assert_array_equal(one.weights_, two.weights_)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    with pytest.warns(FutureWarning, match="'auto' is deprecated"):
        auto = IntervalStackingRegressor(out_of_fold="auto", random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.cv_predictions_, one.cv_predictions_)


def test_a_warm_started_forest_member_is_refitted_on_the_folds():
    X, y = interval_problem(n=FOLDS_BELOW_ROWS, seed=10)
    members = [("forest", MMITForest(n_estimators=10, warm_start=True, random_state=0)),
               ("linear", IntervalLinearRegressionCV(cv=3))]
    stack = IntervalStackingRegressor(members, random_state=0).fit(X, y)
    refit = IntervalStackingRegressor(members, out_of_fold="refit", random_state=0)
    refit.fit(X, y)
    np.testing.assert_array_equal(stack.cv_predictions_[:, 0], refit.cv_predictions_[:, 0])


def test_missing_values_reach_the_trees_and_the_imputer():
    X, y = interval_problem(seed=6)
    X[::3, 0] = np.nan
    X[::5, 1] = np.nan
    stack = IntervalStackingRegressor(
        [("tree", MMIT(max_depth=3, random_state=0)),
         ("linear", IntervalLinearRegressionCV(cv=3))], random_state=0).fit(X, y)
    linear = stack.named_estimators_.linear
    assert isinstance(linear[0], MeanImputer) and linear[1].coef_.shape == (4 + 2,)
    assert isinstance(stack.named_estimators_.tree, MMIT)  # NaN go to the tree itself
    X_test = X[:10].copy()
    X_test[:, 3] = np.nan  # a feature never missing in training
    prediction = stack.predict(X_test)
    assert prediction.shape == (10,) and np.all(np.isfinite(prediction))


def test_exact_targets_take_scikit_learn_regressors_intervals_do_not():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    members = [("ridge", Ridge(alpha=1.0)), ("tree", MMIT(max_depth=2, random_state=0))]
    stack = IntervalStackingRegressor(members, cv=3, random_state=0).fit(X, y)
    assert stack.weights_[0] > 0.5
    intervals = np.column_stack([y - 0.1, y + 0.1])
    stack.fit(X, np.column_stack([y, y]))  # intervals of exact values: values
    with pytest.raises(ValueError, match="'ridge' \\(Ridge\\) does not take interval"):
        IntervalStackingRegressor(members, cv=3).fit(X, intervals)
    # a search ending in an mmit estimator takes them
    IntervalStackingRegressor([("search", MMITCV(cv=2))], cv=3).fit(X, intervals)


def test_group_folds_and_sample_weight_reach_the_members():
    X, y = interval_problem(n=90, seed=8)
    groups = np.arange(90) // 10
    stack = IntervalStackingRegressor(small_members(), cv=GroupKFold(3)).fit(
        X, y, groups=groups)
    for train, test in GroupKFold(3).split(X, y, groups):
        assert not set(groups[train]) & set(groups[test])
        fold = MMIT(max_depth=3, random_state=0).fit(X[train], y[train])
        np.testing.assert_allclose(stack.cv_predictions_[test, 0], fold.predict(X[test]))
    weight = np.where(np.arange(90) < 45, 5.0, 0.0)
    weighted = IntervalStackingRegressor(small_members(), cv=3, random_state=0).fit(
        X, y, sample_weight=weight)
    refit = MMIT(max_depth=3, random_state=0).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(weighted.named_estimators_.tree.predict(X),
                                  refit.predict(X))


def test_bad_members_and_folds_are_refused():
    X, y = interval_problem(n=40, seed=9)
    cases = [
        (dict(estimators=[]), ValueError, "at least one"),
        (dict(estimators=[("a", MMIT()), ("a", MMIT())]), ValueError, "not unique"),
        (dict(estimators=[("a", "drop")]), ValueError, "All estimators are 'drop'"),
        (dict(estimators=[("a", MMIT)]), TypeError, "estimator instance"),
        (dict(estimators=[("a", 3)]), TypeError, "fit and predict"),
        (dict(estimators=[("a__b", MMIT())]), ValueError, "__"),
        (dict(estimators=small_members(), cv=1), ValueError, "'cv' parameter"),
        (dict(estimators=small_members(), cv=ShuffleSplit(3, random_state=0)), ValueError,
         "partition"),
        (dict(estimators=[MMIT()]), ValueError, "pairs"),
    ]
    for params, error, message in cases:
        with pytest.raises(error, match=message):
            IntervalStackingRegressor(**params).fit(X, y)
    stack = IntervalStackingRegressor([("tree", MMIT(max_depth=2)), ("none", "drop")],
                                      cv=3).fit(X, y)
    assert list(stack.named_estimators_) == ["tree"]


def test_parameters_of_named_members_and_progress(capsys):
    stack = IntervalStackingRegressor(small_members())
    params = stack.get_params()
    assert params["tree"] is stack.estimators[0][1] and params["tree__max_depth"] == 3
    stack.set_params(tree__max_depth=2, constant="drop")
    assert stack.estimators[0][1].max_depth == 2 and stack.estimators[2][1] == "drop"
    X, y = interval_problem(n=60, seed=10)
    stack.set_params(verbose=1, cv=3).fit(X, y)
    err = capsys.readouterr().err
    assert "tree: fold 3/3 fitted" in err and "linear: all rows fitted" in err
    assert "weights: tree" in err
