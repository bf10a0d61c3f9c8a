"""Categorical features as users give them: the declarations, the encoding
by label and its errors, and every estimator on data frames with
categories, missing values and unseen levels."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from mmit import MeanImputer
from mmit._utils._categorical import resolve_categorical_features
from mmit.ensemble import IntervalStackingRegressor, MMITBoost, MMITForest, MMITForestCV
from mmit.linear_model import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit.tree import MMIT, MMITCV

pd = pytest.importorskip("pandas")

LEVELS = list("abcdefgh")


def estimators():
    """Every estimator with categorical features, small and seeded."""
    return [
        MMIT(max_depth=4, random_state=0),
        MMITForest(10, random_state=0),
        MMITBoost(n_estimators=10, random_state=0),
        MMITBoost(n_estimators=10, splitter="hist", random_state=0),
        MMITCV(cv=3, margins=[0.0], random_state=0),
        MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=10, random_state=0),
        IntervalLinearRegression(),
        IntervalLinearRegressionCV(n_alphas=5, cv=3),
    ]


def frame_and_target(n=120, seed=0):
    """A frame with a category column (its categories in no sorted order,
    one never observed), a numeric column, missing values in both, and
    censored interval targets that depend on the category."""
    rng = np.random.default_rng(seed)
    site = rng.choice(LEVELS[:6], n)
    effect = dict(zip(LEVELS, rng.normal(scale=3.0, size=len(LEVELS)), strict=True))
    x = rng.normal(size=n)
    centre = np.array([effect[s] for s in site]) + x
    y = np.column_stack([centre - 0.5, centre + 0.5])
    y[::4, 1] = np.inf
    frame = pd.DataFrame({"site": pd.Categorical(site, categories=["f", "d", "b", "a", "c",
                                                                   "e", "g"]),
                          "x": x})
    frame.loc[::7, "site"] = None
    return frame, y


def fills_numeric_gaps(estimator):
    return not estimator.__sklearn_tags__().input_tags.allow_nan


# --- the declarations -------------------------------------------------------------


def test_every_declaration_form_gives_the_same_mask():
    X = pd.DataFrame({"a": pd.Categorical(["x", "y"]), "b": [1.0, 2.0],
                      "c": pd.Categorical(["u", "v"])})
    expected = np.array([True, False, True])
    for declared in ("from_dtype", [0, 2], [True, False, True], ["a", "c"],
                     np.array(["c", "a"])):
        assert_array_equal(resolve_categorical_features(X, declared), expected)
    assert resolve_categorical_features(X, None) is None
    assert resolve_categorical_features(X, []) is None
    assert resolve_categorical_features(X, [False, False, False]) is None
    # "from_dtype" on an array: no categorical feature
    assert resolve_categorical_features(np.zeros((2, 3)), "from_dtype") is None
    assert_array_equal(resolve_categorical_features(np.zeros((2, 3)), [1]),
                       [False, True, False])


@pytest.mark.parametrize("declared, message", [
    ([3], r"indices must be in \[0, n_features - 1\] = \[0, 2\]"),
    ([-1], "indices must be in"),
    ([True, False], "boolean mask must have one entry per feature"),
    (["zz"], r"names \['zz'\], which are not features of X"),
    (["a", "a"], r"names \['a'\] more than once"),
    ([0, 0], r"names \[0\] more than once"),
    ([1.5], "array-like of int"),
])
def test_bad_declarations_are_refused(declared, message):
    X = pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, 2.0], "c": [1.0, 2.0]})
    with pytest.raises(ValueError, match=message):
        MMIT(categorical_features=declared).fit(X, [1.0, 2.0])


def test_names_need_feature_names():
    with pytest.raises(ValueError, match="needs X with feature names"):
        MMIT(categorical_features=["a"]).fit(np.zeros((2, 2)), [1.0, 2.0])


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_a_string_column_not_declared_is_refused(estimator):
    X = pd.DataFrame({"site": ["a", "b", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(ValueError, match=r"'site' \((str|object)\) are not numeric and "
                       r"not declared categorical: declare them with "
                       r"categorical_features=\['site'\]"):
        estimator.fit(X, [1.0, 2.0, 3.0, 4.0])


def test_a_category_column_excluded_from_the_declaration_is_refused():
    X = pd.DataFrame({"site": pd.Categorical(["a", "b"]), "x": [1.0, 2.0]})
    with pytest.raises(ValueError, match="'site' .* not declared categorical"):
        MMIT(categorical_features=None).fit(X, [1.0, 2.0])


# --- the encoding -------------------------------------------------------------------


def test_pandas_categories_as_given_and_their_codes():
    X, y = frame_and_target()
    model = MMIT(max_depth=2).fit(X, y)
    assert_array_equal(model.is_categorical_, [True, False])
    assert model.categories_[1] is None
    # the dtype's order, the unobserved category kept
    assert_array_equal(model.categories_[0], ["f", "d", "b", "a", "c", "e", "g"])
    assert model.feature_names_in_.tolist() == ["site", "x"]


def test_string_and_numeric_columns_declared_categorical_take_sorted_values():
    X = pd.DataFrame({"s": ["b", None, "a", "b"], "n": [10.0, 2.0, np.nan, 2.0],
                      "x": [1.0, 2.0, 3.0, 4.0]})
    model = MMIT(categorical_features=["s", "n"]).fit(X, [1.0, 2.0, 3.0, 4.0])
    assert_array_equal(model.categories_[0], ["a", "b"])
    assert_array_equal(model.categories_[1], [2.0, 10.0])
    with pytest.raises(ValueError, match="'n' holds an infinite value"):
        MMIT(categorical_features=["s", "n"]).fit(X.assign(n=[1.0, np.inf, 2.0, 3.0]),
                                                  [1.0, 2.0, 3.0, 4.0])


def test_reordered_categories_give_the_same_predictions():
    X, y = frame_and_target()
    test, _ = frame_and_target(seed=1)
    model = MMIT(max_depth=4, random_state=0).fit(X, y)
    reordered = test.assign(site=test["site"].cat.reorder_categories(
        ["a", "b", "c", "d", "e", "f", "g"]))
    as_strings = test.assign(site=test["site"].astype(object))
    expected = model.predict(test)
    assert_array_equal(model.predict(reordered), expected)
    assert_array_equal(model.predict(as_strings), expected)


def test_unseen_labels_take_the_path_of_missing_values():
    X, y = frame_and_target()
    model = MMIT(max_depth=4, random_state=0).fit(X, y)
    x = np.linspace(-1.0, 1.0, 5)
    missing = pd.DataFrame({"site": pd.Categorical([None] * 5, categories=["a"]), "x": x})
    unseen = pd.DataFrame({"site": pd.Categorical(["zz"] * 5), "x": x})
    assert_array_equal(model.predict(unseen), model.predict(missing))


def test_a_change_of_kind_is_refused_when_predicting():
    X, y = frame_and_target()
    model = MMIT(max_depth=3).fit(X, y)
    codes = X.assign(site=X["site"].cat.codes.astype(float))
    with pytest.raises(ValueError, match="'site' was fitted on labels .* and is given "
                       "numbers here"):
        model.predict(codes)
    numeric = MMIT(max_depth=3).fit(codes.assign(site=codes["site"].fillna(0)), y)
    with pytest.raises(ValueError, match="'site' .* were numeric in fit"):
        numeric.predict(X)
    by_number = MMIT(max_depth=3, categorical_features=[0]).fit(codes, y)
    with pytest.raises(ValueError, match="fitted on numbers .* given labels"):
        by_number.predict(X.assign(site=X["site"].astype(str)))


def test_mixed_labels_get_a_clear_error():
    X = np.array([["a", 1.0], [2, 2.0]], dtype=object)
    with pytest.raises(ValueError, match=r"mixes labels of types \['int', 'str'\]"):
        MMIT(categorical_features=[0]).fit(X, [1.0, 2.0])


def test_mean_imputer_passes_categories_through():
    X, _ = frame_and_target()
    X.loc[::5, "x"] = np.nan
    out = MeanImputer().fit(X).transform(X)
    assert list(out.columns) == ["site", "x", "missingindicator_x"]
    assert out["site"].equals(X["site"])
    assert not out["x"].isna().any()


# --- every estimator ---------------------------------------------------------------


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_a_frame_and_its_codes_declared_by_index_predict_alike(estimator):
    X, y = frame_and_target()
    X = X.assign(site=X["site"].cat.remove_unused_categories())
    test, _ = frame_and_target(seed=1)
    if fills_numeric_gaps(estimator):
        X.loc[::7, "site"] = "d"  # only categories can be missing
    codes = np.column_stack([X["site"].cat.codes.replace(-1, np.nan), X["x"]])
    test_codes = np.column_stack([
        test["site"].cat.set_categories(X["site"].cat.categories).cat.codes
        .replace(-1, np.nan), test["x"]])
    from_frame = estimator.fit(X, y).predict(test)
    from_codes = estimator.set_params(categorical_features=[0]).fit(codes, y).predict(
        test_codes)
    assert_allclose(from_frame, from_codes, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("estimator", [*estimators(), IntervalStackingRegressor(
    [("tree", MMIT(max_depth=3)), ("linear", IntervalLinearRegression())], cv=3,
    random_state=0)], ids=lambda e: type(e).__name__)
def test_every_estimator_takes_categories_missing_values_and_unseen_levels(estimator):
    X, y = frame_and_target()
    X["grade"] = pd.Categorical(np.resize([1, 2, 3], len(X)), categories=[3, 2, 1])
    if not fills_numeric_gaps(estimator):
        X.loc[::9, "x"] = np.nan
    test = pd.DataFrame({"site": pd.Categorical(["a", "zz", None, "g"]),
                         "x": [0.0, 1.0, -1.0, 0.5],
                         "grade": pd.Categorical([1, 4, None, 3])})
    prediction = estimator.fit(X, y).predict(test)
    assert prediction.shape == (4,) and np.all(np.isfinite(prediction))
    assert_allclose(estimator.score(X, y), estimator.score(X, y))


def test_the_default_stack_takes_categories_missing_values_and_unseen_levels():
    X, y = frame_and_target()
    X.loc[::9, "x"] = np.nan
    test = pd.DataFrame({"site": pd.Categorical(["a", "zz", None]),
                         "x": [0.0, np.nan, -1.0]})
    stack = IntervalStackingRegressor(cv=3, random_state=0).fit(X, y)
    assert np.all(np.isfinite(stack.predict(test)))


def test_trees_of_ensembles_and_refitted_models_predict_frames():
    X, y = frame_and_target()
    forest = MMITForest(5, random_state=0).fit(X, y)
    assert_allclose(np.mean([tree.predict(X) for tree in forest.estimators_], axis=0),
                    forest.predict(X))
    assert forest.predict_quantiles(X).shape == (len(X), 3)
    search = MMITCV(cv=3, margins=[0.0], random_state=0).fit(X, y)
    assert_array_equal(search.best_estimator_.predict(X), search.predict(X))
    assert_array_equal(search.best_estimator_.categories_[0], search.categories_[0])


def test_linear_coefficients_are_named_by_category():
    X, y = frame_and_target()
    X.loc[::7, "site"] = "d"
    model = IntervalLinearRegression().fit(X, y)
    assert model.coef_names_.tolist() == [f"site_{c}" for c in "fdbaceg"] + ["x"]
    assert model.coef_.shape == model.data_min_.shape == (8,)
    # an unseen level: all its columns zero, the intercept and x alone
    unseen = pd.DataFrame({"site": pd.Categorical(["zz"]), "x": [2.0]})
    assert_allclose(model.predict(unseen), model.intercept_ + 2.0 * model.coef_[-1])


def test_the_histogram_splitter_refuses_more_categories_than_bins():
    n = 10**6
    X = np.arange(n, dtype=np.float64).reshape(-1, 1)
    y = np.zeros(n)
    booster = MMITBoost(n_estimators=1, splitter="hist", categorical_features=[0],
                        early_stopping=False)
    with pytest.raises(ValueError, match="1000000 categories; the histogram splitter "
                       "takes at most max_bins=255"):
        booster.fit(X, y)


@pytest.mark.parametrize("estimator", [MMITForest(5, warm_start=True, random_state=0),
                                       MMITBoost(n_estimators=5, warm_start=True)],
                         ids=lambda e: type(e).__name__)
def test_a_warm_start_refuses_other_categories(estimator):
    X, y = frame_and_target()
    estimator.fit(X, y).set_params(n_estimators=8).fit(X, y)  # the same categories
    reordered = X.assign(site=X["site"].cat.reorder_categories(list("abcdefg")))
    with pytest.raises(ValueError, match="warm_start=True continues a fit whose "
                       "categorical features or categories differ"):
        estimator.set_params(n_estimators=10).fit(reordered, y)
