"""MMITBoost(splitter="hist") fitted on Dask collections: the model a local
binned fit makes, the rows staying on the workers of a LocalCluster."""

import numpy as np
import pytest

from mmit import MMITBoost, load_model, save_model, shap_values
from mmit.tree import _binning as binning

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


def problem(n, p=4, seed=0, missing=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    center = np.sin(2 * X[:, 0]) + X[:, 1] - 3.0
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < 0.15] = -np.inf
    upper[rng.random(n) < 0.15] = np.inf
    exact = rng.random(n) < 0.1
    upper[exact] = lower[exact] = np.where(np.isfinite(lower[exact]), lower[exact], 0.0)
    X[rng.random(X.shape) < missing] = np.nan
    return X, np.column_stack([lower, upper])


def dask_rows(values, rows_per_chunk):
    return da.from_array(values, chunks=(rows_per_chunk,) + values.shape[1:])


def booster(**params):
    return MMITBoost(**{"n_estimators": 12, "splitter": "hist", "early_stopping": False,
                        "min_samples_leaf": 5, "random_state": 0, **params})


def assert_same_model(local, remote, X):
    assert remote.n_iter_ == local.n_iter_
    assert remote.margin_ == pytest.approx(local.margin_, rel=1e-12)
    assert remote.baseline_prediction_ == pytest.approx(local.baseline_prediction_,
                                                        rel=1e-10, abs=1e-12)
    for mine, theirs in zip(local.estimators_, remote.estimators_, strict=True):
        np.testing.assert_array_equal(mine.tree_.feature, theirs.tree_.feature)
        np.testing.assert_array_equal(mine.tree_.threshold, theirs.tree_.threshold)
    np.testing.assert_allclose(remote.train_score_, local.train_score_, rtol=1e-10)
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=0, atol=1e-10)


def test_without_a_client_the_fit_says_how_to_get_one():
    X, y = problem(50)
    if distributed.client._get_global_client() is not None:
        pytest.skip("a Dask client of another test is current")
    with pytest.raises(ValueError, match="Dask client"):
        booster().fit(dask_rows(X, 20), dask_rows(y, 20))


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


@pytest.mark.parametrize("loss", ["squared_hinge", "linear_hinge"])
def test_the_fit_on_the_cluster_is_the_local_fit(client, loss):
    X, y = problem(1500)
    local = booster(loss=loss).fit(X, y)
    # rows in uneven chunks, columns in two: the partitions are whole rows
    remote = booster(loss=loss).fit(da.from_array(X, chunks=(400, 2)), dask_rows(y, 350))
    assert_same_model(local, remote, X)
    assert remote.max_features_ == X.shape[1] and remote.n_features_in_ == X.shape[1]


def test_ties_between_features_go_as_locally(client):
    """Two copies of a feature tie at every node that splits on it, and small
    nodes of one row tie between most features: each node tries the features
    in the order of its key on the cluster as locally."""
    X, y = problem(400, p=3, seed=3, missing=0.0)
    X = np.column_stack([X, X[:, 0], np.round(X[:, 1])])
    params = dict(max_depth=6, min_samples_leaf=1, n_estimators=8)
    local = booster(**params).fit(X, y)
    remote = booster(**params).fit(dask_rows(X, 150), dask_rows(y, 150))
    assert_same_model(local, remote, X)
    assert any(np.isin(3, stage.tree_.feature) for stage in local.estimators_)


def test_above_the_binning_sample_the_bins_are_the_local_fits(client, monkeypatch):
    """A fit of more rows than the binning sample takes the bins of the rows a
    local fit samples (the same rows, from every partition)."""
    monkeypatch.setattr(binning, "SUBSAMPLE", 300)
    X, y = problem(1200, seed=4)
    local = booster().fit(X, y)
    remote = booster().fit(dask_rows(X, 250), dask_rows(y, 250))
    assert_same_model(local, remote, X)
    sample = binning.binning_sample(1200)
    assert sample.shape == (300,) and np.all(np.diff(sample) > 0)
    np.testing.assert_array_equal(sample, binning.binning_sample(1200))


def test_the_cluster_fit_is_an_ordinary_booster(client, tmp_path):
    X, y = problem(800, seed=6)
    remote = booster().fit(dask_rows(X, 300), dask_rows(y, 300))
    stages = list(remote.staged_predict(X))
    assert len(stages) == remote.n_iter_
    np.testing.assert_array_equal(stages[-1], remote.predict(X))
    save_model(remote, tmp_path / "booster")
    np.testing.assert_array_equal(load_model(tmp_path / "booster").predict(X),
                                  remote.predict(X))
    values = shap_values(remote, X[:20])
    np.testing.assert_allclose(values.values.sum(axis=1) + values.base_values,
                               remote.predict(X[:20]), atol=1e-10)


def test_weights_depth_and_margin_as_locally(client):
    X, y = problem(1200, seed=1)
    weight = np.random.default_rng(2).integers(0, 3, size=1200).astype(float)
    params = {"max_depth": 5, "margin": 0.2, "learning_rate": 0.3}
    local = booster(**params).fit(X, y, sample_weight=weight)
    remote = booster(**params).fit(dask_rows(X, 300), dask_rows(y, 300),
                                   sample_weight=dask_rows(weight, 300))
    assert_same_model(local, remote, X)


def test_the_booster_defaults_on_more_rows(client):
    # leaves of one row: ties between features are rare in large nodes
    X, y = problem(20_000, p=6, seed=5)
    local = booster(min_samples_leaf=1).fit(X, y)
    remote = booster(min_samples_leaf=1).fit(dask_rows(X, 5000), dask_rows(y, 5000))
    assert_same_model(local, remote, X)


def test_data_frames_and_early_stopping_on_held_out_rows(client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = problem(1600, seed=3)
    names = [f"x{j}" for j in range(X.shape[1])]
    train, held = slice(0, 1200), slice(1200, None)
    frame = pd.DataFrame(X[train], columns=names)
    params = {"n_estimators": 300, "learning_rate": 0.5, "n_iter_no_change": 3,
              "early_stopping": True}
    local = booster(**params).fit(frame, y[train], X_val=X[held], y_val=y[held])
    remote = booster(**params).fit(
        dd.from_pandas(frame, npartitions=3),
        dd.from_pandas(pd.DataFrame(y[train], columns=["lower", "upper"]), npartitions=3),
        X_val=dask_rows(X[held], 150), y_val=dask_rows(y[held], 150))
    assert local.n_iter_ < 300  # it stopped early
    assert_same_model(local, remote, frame)
    np.testing.assert_allclose(remote.validation_score_, local.validation_score_,
                               rtol=1e-10)
    assert list(remote.feature_names_in_) == names


def with_categories(X, seed, n_categories=7):
    """X with its first feature replaced by category codes (some missing)
    that shift the targets' centre, so that the trees split on them."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_categories, size=X.shape[0]).astype(float)
    codes[rng.random(X.shape[0]) < 0.05] = np.nan
    X = X.copy()
    X[:, 0] = codes
    return X, np.where(np.isnan(codes), 0.0, np.sin(3.0 * np.nan_to_num(codes)))


def test_categorical_features_as_locally(client, monkeypatch):
    """Category codes declared categorical, some of them only in the rows the
    binning sample leaves out: the categories of every row, the splits of
    sets (their bar in units of each node's cost) of the local fit."""
    monkeypatch.setattr(binning, "SUBSAMPLE", 300)
    X, y = problem(1500, seed=7)
    X, shift = with_categories(X, seed=7)
    rare = [1400, 1401, 1402]  # rows of a category the binning sample leaves out
    assert not np.isin(rare, binning.binning_sample(1500)).any()
    X[rare, 0] = 7.0
    y = y + shift[:, None]
    params = dict(categorical_features=[0], max_depth=4)
    local = booster(**params).fit(X, y)
    remote = booster(**params).fit(dask_rows(X, 400), dask_rows(y, 400))
    assert_same_model(local, remote, X)
    np.testing.assert_array_equal(remote.categories_[0], np.arange(8.0))
    assert any(stage.tree_.is_categorical.any() for stage in remote.estimators_)


def test_categorical_columns_of_data_frames_as_locally(client):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = problem(1200, seed=8)
    X, shift = with_categories(X, seed=8, n_categories=5)
    y = y + shift[:, None]
    names = [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    frame["x0"] = pd.Categorical.from_codes(np.nan_to_num(X[:, 0], nan=-1).astype(int),
                                            categories=list("abcde"))
    train, held = slice(0, 900), slice(900, None)
    params = {"n_estimators": 60, "learning_rate": 0.5, "n_iter_no_change": 3,
              "early_stopping": True}
    local = booster(**params).fit(frame[train], y[train], X_val=frame[held],
                                  y_val=y[held])
    remote = booster(**params).fit(
        dd.from_pandas(frame[train], npartitions=3), dask_rows(y[train], 300),
        X_val=dd.from_pandas(frame[held], npartitions=2), y_val=dask_rows(y[held], 150))
    assert_same_model(local, remote, frame)
    np.testing.assert_allclose(remote.validation_score_, local.validation_score_,
                               rtol=1e-10)
    assert list(remote.categories_[0]) == list("abcde")


def test_what_the_cluster_fit_does_not_take_is_refused(client):
    X, y = problem(100)
    rows, targets = dask_rows(X, 50), dask_rows(y, 50)
    with pytest.raises(ValueError, match="splitter='hist'"):
        MMITBoost().fit(rows, targets)
    for params in ({"subsample": 0.5}, {"max_features": 2}, {"max_leaf_nodes": 4},
                   {"monotonic_cst": [1, 0, 0, 0]}):
        with pytest.raises(ValueError, match="not available"):
            booster(**params).fit(rows, targets)
    with pytest.raises(ValueError, match="held-out rows given as X_val"):
        booster(early_stopping=True).fit(rows, targets)
    with pytest.raises(TypeError, match="y must be a Dask array or data frame"):
        booster().fit(rows, y)
    with pytest.raises(ValueError, match="y has 60 rows but X has 100"):
        booster().fit(rows, dask_rows(y[:60], 30))


def test_held_out_rows_replace_the_validation_fraction():
    X, y = problem(600, seed=4)
    model = MMITBoost(n_estimators=40, random_state=0).fit(X[:400], y[:400],
                                                           X_val=X[400:], y_val=y[400:])
    assert model.validation_score_.shape == (model.n_iter_ + 1,)
    objective = model.validation_score_[-1]
    loss = booster().set_params(loss=model.loss)
    from mmit._loss._loss import LOSSES
    held = LOSSES[loss.loss].objective(y[400:, 0], y[400:, 1], model.margin_,
                                       np.ones(200))
    assert objective == pytest.approx(-held(model.predict(X[400:])), rel=1e-12)
    with pytest.raises(ValueError, match="X_val and y_val are given together"):
        MMITBoost().fit(X, y, X_val=X)
    with pytest.raises(ValueError, match="early_stopping=False"):
        MMITBoost(early_stopping=False).fit(X, y, X_val=X, y_val=y)
