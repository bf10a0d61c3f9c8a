"""Every model predicts a Dask array or data frame a partition at a time, with
the values of the same rows given at once."""

import numpy as np
import pytest
from problems import random_intervals
from sklearn.exceptions import NotFittedError

from mmit import SurvivalRegressor
from mmit.baselines import ConstantRegressor, IntervalCART
from mmit.ensemble import IntervalStackingRegressor, MMITBoost, MMITForest, MMITForestCV
from mmit.linear_model import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit.tree import MMIT, MMITCV

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

MODELS = {
    "tree": MMIT(max_depth=4),
    "tree_cv": MMITCV(cv=3),
    "forest": MMITForest(n_estimators=10, random_state=0),
    "forest_cv": MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=10,
                              random_state=0),
    "boost": MMITBoost(n_estimators=10, random_state=0),
    "boost_hist": MMITBoost(n_estimators=10, splitter="hist", random_state=0),
    "linear": IntervalLinearRegression(),
    "linear_cv": IntervalLinearRegressionCV(n_alphas=5, cv=3),
    "stack": IntervalStackingRegressor(n_jobs=1, random_state=0),
    "constant": ConstantRegressor(),
    "cart": IntervalCART(),
}


def problem():
    return random_intervals(150, 4, seed=3)


@pytest.fixture(scope="module")
def fitted():
    X, y = problem()
    return {name: model.fit(X, y) for name, model in MODELS.items()}


@pytest.mark.parametrize("name", MODELS)
def test_a_dask_array_is_predicted_as_its_rows(fitted, name):
    model = fitted[name]
    X, _ = problem()
    rows = da.from_array(X, chunks=(40, 3))  # rows and columns in several chunks
    prediction = model.predict(rows)
    assert isinstance(prediction, da.Array)
    assert prediction.chunks == ((40, 40, 40, 30),)
    with dask.config.set(scheduler="synchronous"):
        np.testing.assert_array_equal(prediction.compute(), model.predict(X))


def test_a_dask_data_frame_is_predicted_by_partition():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    X, y = problem()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    for model in (MMITForest(n_estimators=5, random_state=0), IntervalLinearRegression(),
                  IntervalStackingRegressor(random_state=0)):
        model.fit(frame, y)
        prediction = model.predict(dd.from_pandas(frame, npartitions=3))
        assert isinstance(prediction, da.Array)
        with dask.config.set(scheduler="synchronous"):
            np.testing.assert_array_equal(prediction.compute(), model.predict(frame))


def test_survival_risk_of_a_dask_array():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    time = np.exp(X[:, 0] + rng.normal(size=200))
    y = np.empty(200, dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = rng.random(200) < 0.7, time
    model = SurvivalRegressor(random_state=0).fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        risk = model.predict(da.from_array(X, chunks=(64, 3))).compute()
    np.testing.assert_array_equal(risk, model.predict(X))


def test_empty_partitions_give_no_values(fitted):
    X, _ = problem()
    rows = da.concatenate([da.from_array(X[:0], chunks=(1, 4)),
                           da.from_array(X, chunks=(50, 4))])
    with dask.config.set(scheduler="synchronous"):
        prediction = fitted["forest"].predict(rows).compute()
    np.testing.assert_array_equal(prediction, fitted["forest"].predict(X))


def test_bad_dask_input_fails_before_computing(fitted):
    X, _ = problem()
    with pytest.raises(NotFittedError):
        MMIT().predict(da.from_array(X))
    with pytest.raises(ValueError, match="X has 3 features, but MMITForest is expecting 4"):
        fitted["forest"].predict(da.from_array(X[:, :3]))
    with pytest.raises(ValueError, match="2-D Dask array"):
        fitted["forest"].predict(da.from_array(X[:, 0]))
    with pytest.raises(TypeError, match="Dask array or data frame"):
        fitted["forest"].predict(dask.delayed(X))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_partitions_are_predicted_on_the_workers(fitted):
    distributed = pytest.importorskip("distributed")
    X, _ = problem()
    model = fitted["boost_hist"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            rows = client.persist(da.from_array(X, chunks=(40, 4)))
            prediction = model.predict(rows).compute()
    np.testing.assert_array_equal(prediction, model.predict(X))
