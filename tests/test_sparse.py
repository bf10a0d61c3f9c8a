"""Sparse input: every estimator fitted on a scipy.sparse X makes the model
its dense fit makes, whatever the sample weights (the trees' split search
reads compressed columns, the linear models' solver makes the standardised
rows of the stored values)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from problems import grid_intervals
from sklearn.base import clone

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
    load_model,
    save_model,
    shap_values,
)
from mmit._registry import ESTIMATORS as REGISTERED
from mmit._utils._sparse import (
    ROWS_PER_BLOCK,
    VALUES_PER_BLOCK,
    block_rows,
    dense_rows,
    row_blocks,
    walk_rows,
)
from mmit.baselines import ConstantRegressor, IntervalCART
from mmit.linear_model._elastic_net_path import elastic_net_path
from mmit.linear_model._standardisation import StandardisedFeatures, transpose_dot
from mmit.tree._binning import bin_features

# stored values: zeros (+0.0 and -0.0, stored explicitly), values on a
# coarse grid (ties), NaN (a missing value)
STORED = st.one_of(st.just(0.0), st.just(-0.0), st.just(np.nan),
                   st.integers(-3, 3).map(lambda k: k / 2))
FORMATS = ["csr", "csc", "coo", "csr_array", "csc_array"]


def as_format(coo, layout):
    matrix = sp.coo_array(coo) if layout.endswith("_array") else coo
    return matrix.asformat(layout.removesuffix("_array"))


@st.composite
def sparse_problems(draw, max_rows=40, values=STORED, empty_column=False):
    """``(dense, sparse, lower, upper)``: a sparse X (some entries stored, of
    ``values``: explicit zeros and NaN among them, a duplicate stored as two
    summands) in one of ``FORMATS`` and the dense X it equals; with
    ``empty_column``, one of its columns stores nothing."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, 4))
    stored = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, p - 1), values),
                           max_size=n * p, unique_by=lambda entry: entry[:2]))
    if empty_column:
        empty = draw(st.integers(0, p - 1))
        stored = [entry for entry in stored if entry[1] != empty]
    rows = [row for row, _, _ in stored]
    columns = [column for _, column, _ in stored]
    values = [value for _, _, value in stored]
    if stored and draw(st.booleans()):  # a value stored as two summands
        row, column, value = stored[0]
        if np.isfinite(value):
            values[0] = value - 1.0
            rows.append(row)
            columns.append(column)
            values.append(1.0)
    coo = sp.coo_matrix((values, (rows, columns)), shape=(n, p))
    dense = coo.toarray()
    lower, upper = draw(grid_intervals(n, st.integers(-4, 4).map(lambda k: k / 2)))
    return dense, as_format(coo, draw(st.sampled_from(FORMATS))), lower, upper


def same_tree(a, b):
    for field in ("children_left", "children_right", "feature", "threshold", "value",
                  "missing_go_to_left", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@settings(max_examples=150, deadline=None)
@given(problem=sparse_problems(), seed=st.integers(1, 1000),
       max_features=st.sampled_from([None, 0.5]), min_samples_leaf=st.integers(1, 3),
       signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=4, max_size=4))
def test_a_tree_grown_on_sparse_features_is_the_dense_fit_s_tree(
        problem, seed, max_features, min_samples_leaf, signs):
    dense, sparse, lower, upper = problem
    y = np.column_stack([lower, upper])
    for monotonic_cst in (None, signs[:dense.shape[1]]):
        params = dict(max_features=max_features, min_samples_leaf=min_samples_leaf,
                      monotonic_cst=monotonic_cst, random_state=seed)
        expected = MMIT(**params).fit(dense, y)
        fitted = MMIT(**params).fit(sparse, y)
        same_tree(fitted.tree_, expected.tree_)
        np.testing.assert_array_equal(fitted.predict(sparse), expected.predict(dense))


@settings(max_examples=100, deadline=None)
@given(problem=sparse_problems(), seed=st.integers(1, 1000),
       max_features=st.sampled_from([None, 0.5]), min_samples_leaf=st.integers(1, 3),
       max_bins=st.integers(2, 6),
       signs=st.lists(st.sampled_from([-1, 0, 1]), min_size=4, max_size=4))
def test_a_binned_booster_grown_on_sparse_codes_is_the_dense_fit(
        problem, seed, max_features, min_samples_leaf, max_bins, signs):
    dense, sparse, lower, upper = problem
    y = np.column_stack([lower, upper])
    for monotonic_cst in (None, signs[:dense.shape[1]]):
        params = dict(splitter="hist", n_estimators=3, max_depth=3, learning_rate=0.5,
                      early_stopping=False, max_bins=max_bins, max_features=max_features,
                      min_samples_leaf=min_samples_leaf, monotonic_cst=monotonic_cst,
                      random_state=seed)
        expected = MMITBoost(**params).fit(dense, y)
        fitted = MMITBoost(**params).fit(sparse, y)
        for tree, expected_tree in zip(fitted.estimators_, expected.estimators_,
                                       strict=True):
            same_tree(tree.tree_, expected_tree.tree_)
        np.testing.assert_array_equal(fitted.predict(sparse), expected.predict(dense))


@settings(max_examples=100, deadline=None)
@given(problem=sparse_problems(), max_bins=st.integers(2, 6))
def test_binning_sparse_features_gives_the_dense_codes(problem, max_bins):
    dense, sparse, _, _ = problem
    weight = np.linspace(0.5, 1.5, dense.shape[0])
    expected = bin_features(dense, weight, max_bins)
    binned = bin_features(sparse, weight, max_bins)
    assert binned.sparse and not expected.sparse
    np.testing.assert_array_equal(binned.toarray(), expected.codes)
    # only the codes other than their feature's bin of 0 are kept
    zero_bins = np.asarray(binned.zero_bins)
    np.testing.assert_array_equal(zero_bins, [np.searchsorted(edges, 0.0)
                                              for edges in expected.thresholds])
    assert binned.n_stored == np.count_nonzero(expected.codes != zero_bins)
    np.testing.assert_array_equal(binned.thresholds, expected.thresholds)
    np.testing.assert_array_equal(binned.n_bins, expected.n_bins)


def sparse_data(n=240, p=8, density=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, random_state=rng, format="csr")
    X.data = np.round(4 * X.data - 2, 1)
    dense = X.toarray()
    center = 2 * dense[:, 0] + dense[:, 1]
    lower = center - rng.exponential(0.3, n)
    upper = np.where(rng.random(n) < 0.3, np.inf, center + rng.exponential(0.3, n))
    return X, dense, np.column_stack([lower, upper])


ESTIMATORS = [
    MMIT(max_depth=4, random_state=0),
    MMIT(max_depth=2, leaf_model="linear", random_state=0),
    MMITCV(cv=3, random_state=0),
    MMITForest(n_estimators=10, random_state=0),
    MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=10, random_state=0),
    MMITBoost(n_estimators=10, random_state=0),
    MMITBoost(n_estimators=10, splitter="hist", random_state=0),
    MMITBoost(n_estimators=30, early_stopping=True, subsample=0.7, random_state=0),
    IntervalLinearRegression(),
    IntervalLinearRegressionCV(cv=3),
    IntervalStackingRegressor(random_state=0),
    SurvivalRegressor(random_state=0),
]


# the fits that sum weighted values through BLAS on a dense X and over the
# stored values on a sparse one (the linear models' means, scales and
# gradients, the imputer's means): the dense fit's to rounding; every other
# sparse fit is its dense fit to the last bit
SUMMED_IN_ANOTHER_ORDER = (IntervalLinearRegression, IntervalLinearRegressionCV,
                           MeanImputer)
ROUNDING = {"rtol": 1e-9, "atol": 1e-9}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_a_sparse_fit_predicts_as_the_dense_fit(estimator, layout):
    X, dense, y = sparse_data()
    X = X.asformat(layout)
    if isinstance(estimator, SurvivalRegressor):
        y = np.exp(y)  # times
    expected = clone(estimator).fit(dense, y)
    fitted = clone(estimator).fit(X, y)
    if isinstance(estimator, (*SUMMED_IN_ANOTHER_ORDER, IntervalStackingRegressor)):
        # the stack by its linear member
        np.testing.assert_allclose(fitted.predict(X), expected.predict(dense), **ROUNDING)
        return
    np.testing.assert_array_equal(fitted.predict(X), expected.predict(dense))
    np.testing.assert_array_equal(fitted.predict(dense), expected.predict(dense))


# every estimator that takes a sparse X (its tags say so), set small: the
# registered ones and the baselines (the stack's and the trees of predictors'
# members trees, whose sparse fits are exact)
TIGHT = 1e-10
SPARSE_SETTINGS = {
    "MMIT": [{"random_state": 0},
             {"max_depth": 2, "leaf_model": "linear", "max_features": 0.5,
              "random_state": 0}],
    "MMITCV": [{"cv": 2, "margins": [0.0, 0.5], "random_state": 0}],
    "MMITForest": [{"n_estimators": 3, "max_features": 0.5, "random_state": 0}],
    "MMITForestCV": [{"param_grid": {"min_samples_leaf": [1, 3]}, "n_estimators": 3,
                      "random_state": 0}],
    "MMITBoost": [{"n_estimators": 3, "subsample": 0.8, "random_state": 0},
                  {"n_estimators": 3, "splitter": "hist", "max_bins": 4,
                   "random_state": 0}],
    "IntervalLinearRegression": [{"tol": TIGHT}],
    "IntervalLinearRegressionCV": [{"n_alphas": 3, "cv": 2, "tol": TIGHT}],
    "IntervalGAM": [{"n_splines": 5}],
    "IntervalGAMCV": [{"n_splines": 5, "lams": [0.1, 10.0], "cv": 2,
                       "random_state": 0}],
    "IntervalMARS": [{"max_terms": 7, "max_degree": 2}],
    "IntervalStackingRegressor": [{
        "estimators": [("tree", MMIT(max_depth=2)),
                       ("forest", MMITForest(n_estimators=3, random_state=0))],
        "cv": 2, "random_state": 0}],
    "TreeOfPredictors": [{
        "base_estimators": [("deep", MMIT(max_depth=3)), ("stump", MMIT(max_depth=1))],
        "min_samples_leaf": 3, "validation": 2, "random_state": 0}],
    "MeanImputer": [{}],
    "SurvivalRegressor": [{"estimator": MMITForest(n_estimators=3, random_state=0)}],
    "ConstantRegressor": [{}],
    "IntervalCART": [{"random_state": 0}],
}
CLASSES = {entry.name: entry.cls for entry in REGISTERED} | {
    "ConstantRegressor": ConstantRegressor, "IntervalCART": IntervalCART}
SPARSE_ESTIMATORS = [CLASSES[name](**params) for name, cases in SPARSE_SETTINGS.items()
                     for params in cases]
# stored values, and values off the grid of halves (whose sums round)
OFF_GRID = st.one_of(STORED, st.floats(-3.0, 3.0))
# a row's weight: an integer (0 among them: a dropped row) or a fraction
WEIGHT = st.one_of(st.integers(0, 3).map(float), st.floats(0.01, 4.0))
MAX_ROWS = 30


def test_every_estimator_that_takes_sparse_x_is_held_to_its_dense_fit():
    takes_sparse = {name for name, cls in CLASSES.items()
                    if cls().__sklearn_tags__().input_tags.sparse}
    assert set(SPARSE_SETTINGS) == takes_sparse


def fit_or_error(estimator, X, y, sample_weight):
    """A fitted clone of ``estimator``, or the error its fit raised (a warning
    among them: the tests turn warnings into errors)."""
    try:
        return clone(estimator).fit(X, y, sample_weight=sample_weight)
    except Exception as error:
        return error


@pytest.mark.parametrize("estimator", SPARSE_ESTIMATORS, ids=lambda e: type(e).__name__)
@settings(max_examples=12, deadline=None)
@given(problem=sparse_problems(MAX_ROWS, OFF_GRID, empty_column=True),
       weights=st.lists(WEIGHT, min_size=MAX_ROWS, max_size=MAX_ROWS))
def test_a_sparse_fit_with_weights_predicts_as_the_dense_fit(estimator, problem, weights):
    dense, sparse, lower, upper = problem
    sample_weight = np.array(weights[:dense.shape[0]])
    if not sample_weight.any():
        sample_weight[0] = 1.0
    if not estimator.__sklearn_tags__().input_tags.allow_nan:  # its missing values 0
        dense = np.nan_to_num(dense, nan=0.0)
        sparse.data = np.nan_to_num(sparse.data, nan=0.0)
    y = np.column_stack([lower, upper])
    if isinstance(estimator, SurvivalRegressor):
        y = np.exp(y)  # times
    expected = fit_or_error(estimator, dense, y, sample_weight)
    fitted = fit_or_error(estimator, sparse, y, sample_weight)
    if isinstance(expected, Exception):  # refused alike (a fold of weight 0, ...)
        assert type(fitted) is type(expected)
        return
    if isinstance(fitted, Exception):
        raise fitted
    method = "transform" if isinstance(estimator, MeanImputer) else "predict"
    prediction = getattr(expected, method)(dense)
    for X in (sparse, dense):
        found = getattr(fitted, method)(X)
        found = found.toarray() if sp.issparse(found) else found
        if isinstance(estimator, SUMMED_IN_ANOTHER_ORDER):
            np.testing.assert_allclose(found, prediction, **ROUNDING)
        else:
            np.testing.assert_array_equal(found, prediction)


def test_a_sparse_fit_s_distributions_shap_values_and_model_file(tmp_path):
    X, dense, y = sparse_data()
    expected = MMITForest(n_estimators=10, random_state=0).fit(dense, y)
    fitted = MMITForest(n_estimators=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(fitted.predict_quantiles(X[:20], [0.1, 0.9]),
                                  expected.predict_quantiles(dense[:20], [0.1, 0.9]))
    np.testing.assert_array_equal(shap_values(fitted, X[:10]).values,
                                  shap_values(expected, dense[:10]).values)
    save_model(fitted, tmp_path / "forest.json")
    np.testing.assert_array_equal(load_model(tmp_path / "forest.json").predict(X),
                                  expected.predict(dense))


def test_mean_imputer_keeps_sparse_input_sparse():
    X, dense, _ = sparse_data()
    X = X.tolil()
    X[3, 1] = X[7, 4] = np.nan
    X = X.tocsr()
    dense = X.toarray()
    weight = np.linspace(0.5, 2.0, X.shape[0])
    expected = MeanImputer().fit(dense, sample_weight=weight)
    imputer = MeanImputer().fit(X, sample_weight=weight)
    np.testing.assert_allclose(imputer.fill_values_, expected.fill_values_, rtol=1e-12)
    np.testing.assert_array_equal(imputer.indicator_features_, [1, 4])
    transformed = imputer.transform(X)
    assert sp.issparse(transformed)
    np.testing.assert_allclose(transformed.toarray(), expected.transform(dense),
                               rtol=1e-12)


@pytest.mark.parametrize("n_features", [3, 300])
def test_row_blocks_densify_a_block_of_rows_at_a_time(n_features):
    step = block_rows(n_features)
    # at most ROWS_PER_BLOCK rows, and at most VALUES_PER_BLOCK values
    assert step == min(ROWS_PER_BLOCK, VALUES_PER_BLOCK // n_features)
    X = sp.random(2 * step + 5, n_features, density=0.01, random_state=0, format="csc")
    blocks = list(row_blocks(X))
    assert [rows.stop - rows.start for rows, _ in blocks] == [step, step, 5]
    np.testing.assert_array_equal(np.vstack([block for _, block in blocks]), X.toarray())
    assert all(block.flags.c_contiguous for _, block in blocks)
    # a walk over chosen rows, a block at a time: the walk of the dense rows
    rows = np.r_[0, step + 3, 2 * step + 4, 1]
    np.testing.assert_array_equal(walk_rows(lambda block: block.sum(axis=1), X, rows),
                                  X.toarray()[rows].sum(axis=1))
    assert walk_rows(lambda block: block.sum(axis=1), X, []).shape == (0,)
    dense = X.toarray(order="C")
    [(rows, block)] = row_blocks(dense)
    assert rows == slice(0, dense.shape[0]) and np.shares_memory(block, dense)
    np.testing.assert_array_equal(dense_rows(X, [4, 2]), dense[[4, 2]])


def test_categorical_features_cannot_be_declared_for_sparse_x():
    X, dense, y = sparse_data()
    with pytest.raises(TypeError, match="categorical_features cannot be declared"):
        MMIT(categorical_features=[0]).fit(X, y)
    codes = np.abs(np.round(dense))  # integer labels
    model = MMIT(categorical_features=[0], random_state=0).fit(codes, y)
    with pytest.raises(TypeError, match="fitted with categorical features"):
        model.predict(sp.csr_matrix(codes))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), density=st.sampled_from([0.05, 0.3, 1.0]),
       l1_ratio=st.sampled_from([0.0, 0.5, 1.0]))
def test_the_elastic_net_path_on_sparse_rows_is_the_dense_path(seed, density, l1_ratio):
    rng = np.random.default_rng(seed)
    n, p = 60, 5
    X = sp.random(n, p, density=density, random_state=rng, format="csr")
    X.data = np.round(4 * X.data - 2, 1)
    weight = rng.uniform(0.5, 1.5, n)
    weight /= weight.sum()
    center = X @ rng.normal(size=p)
    lower = np.where(rng.random(n) < 0.2, -np.inf, center - 0.5)
    upper = np.where(rng.random(n) < 0.2, np.inf, center + 0.5)
    features = StandardisedFeatures(X, weight)
    Z = np.ascontiguousarray((X.toarray() - features.mean) * (1.0 / features.scale))
    sparse_rows = features.Z
    gradient = rng.normal(size=n)
    np.testing.assert_allclose(transpose_dot(sparse_rows, gradient), Z.T @ gradient,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sparse_rows.row_squares(), (Z * Z).sum(axis=1),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sparse_rows.weighted_column_squares(weight),
                               weight @ (Z * Z), rtol=1e-12, atol=1e-12)
    # the dense features' mean and scale, from the dense X
    dense = StandardisedFeatures(X.toarray(), weight)
    np.testing.assert_allclose(features.mean, dense.mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(features.scale, dense.scale, rtol=1e-12)
    alphas = np.array([0.5, 0.1, 0.01])
    expected = elastic_net_path(Z, lower, upper, weight, alphas, l1_ratio, 1e-10, 10_000,
                                0.0)
    found = elastic_net_path(sparse_rows, lower, upper, weight, alphas, l1_ratio, 1e-10,
                             10_000, 0.0)
    np.testing.assert_allclose(found[0], expected[0], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(found[1], expected[1], rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(found[3], expected[3])


def test_predictions_of_many_sparse_rows_are_made_a_block_at_a_time():
    X, dense, y = sparse_data()
    rng = np.random.default_rng(1)
    many = sp.random(ROWS_PER_BLOCK + 700, X.shape[1], density=0.3, random_state=rng,
                     format="csc")
    many_dense = many.toarray()
    forest = MMITForest(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(forest.predict(many), forest.predict(many_dense))
    np.testing.assert_array_equal(forest.predict_quantiles(many, [0.2, 0.8]),
                                  forest.predict_quantiles(many_dense, [0.2, 0.8]))
    tree = MMIT(max_depth=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(tree.apply(many), tree.apply(many_dense))
    linear = IntervalLinearRegression().fit(X, y)
    np.testing.assert_array_equal(linear.predict(many), linear.predict(many_dense))
    survival = SurvivalRegressor(MMITForest(n_estimators=5, random_state=0)).fit(
        X, np.exp(y))
    np.testing.assert_array_equal(survival.predict(many), survival.predict(many_dense))
    curves = survival.predict_survival_function(many)
    assert curves.shape == (many.shape[0],)
    np.testing.assert_array_equal(curves[-1].y,
                                  survival.predict_survival_function(many_dense[-1:])[0].y)
