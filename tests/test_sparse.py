"""Sparse input: every estimator fitted on a scipy.sparse X makes the model
its dense fit makes (the trees' split search reads compressed columns, the
linear models' solver makes the standardised rows of the stored values)."""

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
from mmit._utils._sparse import (
    ROWS_PER_BLOCK,
    VALUES_PER_BLOCK,
    block_rows,
    dense_rows,
    row_blocks,
    walk_rows,
)
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
def sparse_problems(draw, max_rows=40):
    """``(dense, sparse, lower, upper)``: a sparse X (some entries stored,
    explicit zeros and NaN among them, a duplicate stored as two summands)
    in one of ``FORMATS`` and the dense X it equals."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, 4))
    stored = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, p - 1), STORED),
                           max_size=n * p, unique_by=lambda entry: entry[:2]))
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


LINEAR = (IntervalLinearRegression, IntervalLinearRegressionCV, IntervalStackingRegressor)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("layout", ["csr", "csc"])
def test_a_sparse_fit_predicts_as_the_dense_fit(estimator, layout):
    X, dense, y = sparse_data()
    X = X.asformat(layout)
    if isinstance(estimator, SurvivalRegressor):
        y = np.exp(y)  # times
    expected = clone(estimator).fit(dense, y)
    fitted = clone(estimator).fit(X, y)
    if isinstance(estimator, LINEAR):
        # the solver reads the same standardised rows, its means and scales
        # summed in another order: equal to rounding
        np.testing.assert_allclose(fitted.predict(X), expected.predict(dense),
                                   rtol=1e-9, atol=1e-9)
        return
    np.testing.assert_array_equal(fitted.predict(X), expected.predict(dense))
    np.testing.assert_array_equal(fitted.predict(dense), expected.predict(dense))


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
