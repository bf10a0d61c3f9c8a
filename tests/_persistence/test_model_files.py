"""Model files: every saved model kind predicts as before saving, damaged and
foreign files are refused, files of earlier releases still load."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GroupKFold

from mmit import (
    MMIT,
    MMITCV,
    IntervalLinearRegression,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    LocationDistribution,
    MeanImputer,
    MMITBoost,
    MMITForest,
    MMITForestCV,
    SpreadDistribution,
    SurvivalRegressor,
    load_model,
    save_model,
)
from mmit.baselines import ConstantRegressor
from mmit.datasets import load_dataset, make_interval_regression

pd = pytest.importorskip("pandas")


def servo(missing=False):
    data = load_dataset("servo", as_frame=True)
    X = data.data.copy()
    if missing:
        X.iloc[::4, 0] = np.nan
        X.iloc[::7, 5] = np.nan
    return X, data.target


def round_trip(model, path):
    save_model(model, path)
    with zipfile.ZipFile(path) as archive:  # plain arrays: nothing pickled
        assert all(name.endswith(".npy") for name in archive.namelist())
    return load_model(path)


@pytest.mark.parametrize("model", [IntervalLinearRegression(alpha=0.01, margin=0.05),
                                   IntervalLinearRegressionCV(n_alphas=10, cv=3)])
def test_linear_models_predict_identically(tmp_path, model):
    X, y = servo()
    model.fit(X, y)
    restored = round_trip(model, tmp_path / "linear.npz")
    assert type(restored) is type(model) and restored.get_params() == model.get_params()
    far = X.copy() * 10.0  # beyond the training range: clipped alike
    np.testing.assert_array_equal(restored.predict(far), model.predict(far))
    for name in ("coef_", "data_min_", "data_max_", "intercept_", "n_features_in_",
                 "feature_names_in_"):
        np.testing.assert_array_equal(getattr(restored, name), getattr(model, name))
    if isinstance(model, IntervalLinearRegressionCV):
        np.testing.assert_array_equal(restored.mse_path_, model.mse_path_)
        assert (restored.alpha_, restored.margin_) == (model.alpha_, model.margin_)


def test_default_stack_with_missing_values_predicts_identically(tmp_path):
    X, y = servo(missing=True)
    stack = IntervalStackingRegressor(n_jobs=2, random_state=0).fit(X, y)
    restored = round_trip(stack, tmp_path / "stack.npz")
    np.testing.assert_array_equal(restored.predict(X), stack.predict(X))
    assert restored.get_params(deep=False) == stack.get_params(deep=False)
    for name in ("weights_", "cv_predictions_", "cv_scores_", "feature_names_in_"):
        np.testing.assert_array_equal(getattr(restored, name), getattr(stack, name))
    assert list(restored.named_estimators_) == ["forest", "boost", "linear"]
    assert isinstance(restored.named_estimators_.forest, MMITForest)
    assert isinstance(restored.named_estimators_.boost, MMITBoost)
    linear = restored.named_estimators_.linear
    assert isinstance(linear[0], MeanImputer) and isinstance(
        linear[1], IntervalLinearRegressionCV)
    np.testing.assert_array_equal(linear[0].indicator_features_, [0, 5])
    # (a KFold equals only itself: compared by its settings)
    assert repr(linear[1].get_params()) == repr(
        stack.named_estimators_.linear[1].get_params())


def test_given_members_a_search_is_saved_whole(tmp_path):
    X, y = servo()
    X = X.to_numpy()
    stack = IntervalStackingRegressor(
        [("search", MMITCV(cv=3)), ("linear", IntervalLinearRegression()),
         ("none", "drop")], cv=3, random_state=0).fit(X, y)
    restored = round_trip(stack, tmp_path / "stack.npz")
    np.testing.assert_array_equal(restored.predict(X), stack.predict(X))
    search = restored.named_estimators_.search
    assert isinstance(search, MMITCV) and isinstance(search.best_estimator_, MMIT)
    assert search.best_params_ == stack.named_estimators_.search.best_params_
    assert [name for name, _ in restored.estimators] == ["search", "linear"]
    assert not hasattr(restored, "feature_names_in_")


def test_what_cannot_be_saved_is_named(tmp_path):
    X, y = servo()
    values = X.to_numpy()[:, 0] * 2.0  # exact values: any regressor may be a member
    with pytest.raises(TypeError, match="not Ridge"):
        save_model(IntervalStackingRegressor([("ridge", Ridge())], cv=3).fit(X, values),
                   tmp_path / "s.npz")
    groups = np.arange(len(X)) % 5
    stack = IntervalStackingRegressor([("tree", MMIT(max_depth=2))], cv=GroupKFold(3))
    with pytest.raises(TypeError, match="cannot save the parameter cv=GroupKFold"):
        save_model(stack.fit(X, y, groups=groups), tmp_path / "s.npz")


def rewritten(path, target, change):
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    metadata = json.loads(bytes(arrays["metadata"]).decode())
    change(metadata, arrays)
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), np.uint8)
    with open(target, "wb") as file:
        np.savez(file, **arrays)
    return target


def test_damaged_stacks_and_linear_models_are_refused(tmp_path):
    X, y = servo(missing=True)
    path = tmp_path / "stack.npz"
    save_model(IntervalStackingRegressor(
        [("tree", MMIT(max_depth=2)), ("linear", IntervalLinearRegression())], cv=3,
        random_state=0).fit(X, y), path)

    def weights(metadata, arrays):
        arrays["weights"] = arrays["weights"] * 2.0

    def indicators(metadata, arrays):
        arrays["member1_step0_indicator_features"] = np.array([0, 99])

    def coefficients(metadata, arrays):
        arrays["member1_step1_coef"] = arrays["member1_step1_coef"][:3]

    def features(metadata, arrays):
        metadata["members"][0]["n_features_in"] = 3

    def unknown(metadata, arrays):
        metadata["members"][1]["steps"][1]["estimator"] = "Ridge"

    def parameter(metadata, arrays):
        metadata["members"][1]["steps"][1]["params"]["alpha"] = -1.0

    for change in (weights, indicators, coefficients, features, unknown, parameter):
        with pytest.raises(ValueError, match="damaged"):
            load_model(rewritten(path, tmp_path / f"{change.__name__}.npz", change))


MODEL_FILES = sorted((Path(__file__).resolve().parents[1] / "data").glob("models-*"))
QUANTILE_LEVELS = (0.05, 0.5, 0.95)  # those of tests/data/make_fixtures.py


@pytest.mark.parametrize("folder", MODEL_FILES, ids=[f.name for f in MODEL_FILES])
def test_model_files_of_earlier_releases_predict_as_written(folder):
    """Files written by tests/data/make_fixtures.py (or the scripts before it)
    with an earlier mmit (format version 4 in models-0.2.0.dev0, 5 in
    models-0.2.0.dev0-format5, ...): their predictions, and their forests'
    quantiles, as written."""
    with np.load(folder / "expected.npz") as archive:
        expected = {key: archive[key] for key in archive.files}
    rows = expected.pop("X")
    quantiles = {key.removesuffix("__quantiles"): expected.pop(key)
                 for key in list(expected) if key.endswith("__quantiles")}
    assert len(expected) >= 8
    distributions = set()
    for name, predictions in expected.items():
        model = load_model(folder / f"{name}.npz")
        X = rows if model.__sklearn_tags__().input_tags.allow_nan else np.nan_to_num(rows)
        output = model.predict(X) if hasattr(model, "predict") else model.transform(X)
        np.testing.assert_array_equal(output, predictions, err_msg=name)
        if name in quantiles:
            np.testing.assert_array_equal(model.predict_quantiles(X, QUANTILE_LEVELS),
                                          quantiles[name], err_msg=name)
            if isinstance(model, MMITForest):
                distributions.add(model.distribution_.kind)
    # the forests' two kinds of distributions (none in the version-4 files)
    assert folder.name == "models-0.2.0.dev0" or {"spread", "location"} <= distributions


@pytest.mark.parametrize("distribution", ["spread", "location", None,
                                          SpreadDistribution(min_samples_leaf=10),
                                          LocationDistribution()])
def test_saved_forests_keep_their_predictive_distributions(tmp_path, distribution):
    data = load_dataset("servo")
    forest = MMITForest(n_estimators=8, distribution=distribution,
                        random_state=0).fit(data.data, data.target)
    save_model(forest, tmp_path / "forest.npz")  # made now: not yet asked for
    restored = load_model(tmp_path / "forest.npz")
    assert restored.get_params() == forest.get_params()
    if distribution is None:
        assert restored.distribution_ is None
        with pytest.raises(ValueError, match="no predictive distributions"):
            restored.predict_interval(data.data)
        return
    levels = [0.05, 0.5, 0.95]
    np.testing.assert_array_equal(restored.predict_quantiles(data.data, levels),
                                  forest.predict_quantiles(data.data, levels))
    np.testing.assert_array_equal(restored.oob_cdf([0.0, 1.0]), forest.oob_cdf([0.0, 1.0]))
    # a damaged distribution is refused, not read
    with np.load(tmp_path / "forest.npz") as archive:
        arrays = {key: archive[key] for key in archive.files}
    arrays["distribution_leaves"] = arrays["distribution_leaves"] + 10_000
    np.savez(tmp_path / "damaged.npz", **arrays)
    with pytest.raises(ValueError, match="damaged"):
        load_model(tmp_path / "damaged.npz")


@pytest.mark.parametrize("model", [
    MMIT(margin=0.1, max_depth=4, random_state=0),
    MMITForest(n_estimators=5, max_features=2, random_state=0),
    MMITBoost(n_estimators=8, learning_rate=0.3, random_state=0),
])
def test_saved_models_predict_identically(tmp_path, model):
    data = load_dataset("servo", as_frame=True)
    model.fit(data.data, data.target)
    path = tmp_path / "model.npz"
    save_model(model, path)
    restored = load_model(path)
    np.testing.assert_array_equal(restored.predict(data.data), model.predict(data.data))
    assert restored.get_params() == model.get_params()
    np.testing.assert_array_equal(restored.feature_names_in_, model.feature_names_in_)
    with zipfile.ZipFile(path) as archive:  # plain arrays: nothing pickled
        assert all(name.endswith(".npy") for name in archive.namelist())
    if isinstance(model, MMITBoost):
        np.testing.assert_array_equal(restored.train_score_, model.train_score_)
        assert restored.n_iter_ == model.n_iter_
        stages = zip(restored.staged_predict(data.data), model.staged_predict(data.data),
                     strict=True)
        assert all(np.array_equal(a, b) for a, b in stages)


def file_version(path):
    with np.load(path) as archive:
        return json.loads(bytes(archive["metadata"]).decode())["version"]


@pytest.mark.parametrize("model", [
    MMIT(random_state=0), MMITForest(n_estimators=3, random_state=0),
    MMITBoost(n_estimators=3, random_state=0),
    IntervalStackingRegressor(cv=2, random_state=0, distribution=None)],
    ids=["MMIT", "MMITForest", "MMITBoost", "IntervalStackingRegressor"])
def test_unconstrained_models_are_written_without_the_constraints(tmp_path, model):
    # a reader of version 7 knows no constraint parameters: none is written
    X, y = make_interval_regression(60, 3, random_state=3)
    save_model(model.fit(X, y), tmp_path / "m.npz")
    assert file_version(tmp_path / "m.npz") == 7
    with np.load(tmp_path / "m.npz") as archive:
        text = bytes(archive["metadata"]).decode()
    assert "monotonic_cst" not in text and "interaction_cst" not in text
    restored = load_model(tmp_path / "m.npz")
    assert restored.get_params() == model.get_params()
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))


@pytest.mark.parametrize("model", [
    MMIT(monotonic_cst={"x0": 1}, random_state=0),
    MMITForest(n_estimators=5, monotonic_cst=[1, 0, -1], random_state=0),
    MMITForest(n_estimators=5, interaction_cst="no_interactions", random_state=0),
    MMITBoost(n_estimators=10, splitter="hist", monotonic_cst=np.array([0, 1, 0]),
              interaction_cst=[[0, 1], [2]])],
    ids=["MMIT", "MMITForest", "MMITForest-interactions", "MMITBoost"])
def test_constrained_models_are_saved_with_their_constraints(tmp_path, model):
    X, y = make_interval_regression(80, 3, random_state=2)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"])
    model.fit(frame, y)
    save_model(model, tmp_path / "m.npz")
    restored = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(restored.predict(frame), model.predict(frame))
    if isinstance(model.monotonic_cst, dict):
        assert restored.monotonic_cst == model.monotonic_cst
    elif model.monotonic_cst is not None:
        np.testing.assert_array_equal(restored.monotonic_cst, model.monotonic_cst)
    assert restored.interaction_cst == model.interaction_cst
    # readers before the parameter cannot read it: the version that has it
    assert file_version(tmp_path / "m.npz") == 8
    # refitted after loading, the same constrained model
    np.testing.assert_array_equal(clone(restored).fit(frame, y).predict(frame),
                                  model.predict(frame))


@pytest.mark.parametrize("search", [
    MMITCV(cv=3, random_state=0),
    MMITForestCV({"max_features": [1.0, "sqrt"], "min_samples_leaf": [1, 5]},
                 n_estimators=8, random_state=0)], ids=["MMITCV", "MMITForestCV"])
def test_a_search_is_saved_whole(tmp_path, search):
    X, y = make_interval_regression(60, 2, random_state=1)
    search.fit(X, y)
    save_model(search, tmp_path / "m.npz")
    restored = load_model(tmp_path / "m.npz")
    assert type(restored) is type(search) and file_version(tmp_path / "m.npz") == 8
    np.testing.assert_array_equal(restored.predict(X), search.predict(X))
    assert restored.get_params(deep=False).keys() == search.get_params(deep=False).keys()
    assert (restored.best_index_, restored.best_params_, restored.best_score_) == (
        search.best_index_, search.best_params_, search.best_score_)
    assert restored.cv_results_.keys() == search.cv_results_.keys()
    for key, column in search.cv_results_.items():
        if key == "params":
            assert restored.cv_results_[key] == column
        else:
            assert restored.cv_results_[key].dtype == column.dtype, key
            np.testing.assert_array_equal(restored.cv_results_[key], column)
    if isinstance(search, MMITForestCV):  # the chosen forest's distributions
        np.testing.assert_array_equal(restored.predict_quantiles(X, [0.1, 0.9]),
                                      search.predict_quantiles(X, [0.1, 0.9]))
    # the file of a model without a search keeps the version that read it before
    save_model(search.best_estimator_, tmp_path / "best.npz")
    assert file_version(tmp_path / "best.npz") == 7
    with pytest.raises(TypeError, match="save_model saves MMIT.* not ConstantRegressor"):
        save_model(ConstantRegressor().fit(X, y), tmp_path / "c.npz")


def metadata_edit(change):
    """An edit of a model file's arrays (for ``rewrite``) that applies
    ``change`` to its metadata document."""
    def edit(arrays):
        document = json.loads(bytes(arrays["metadata"]).decode())
        change(document)
        arrays["metadata"] = np.frombuffer(json.dumps(document).encode(), np.uint8)
    return edit


def test_a_damaged_search_is_refused(tmp_path):
    X, y = make_interval_regression(60, 2, random_state=1)
    save_model(MMITCV(cv=3, random_state=0).fit(X, y), tmp_path / "m.npz")

    for name, change in {"index": lambda d: d.update(best_index=10_000),
                         "columns": lambda d: d["cv_results"]["params"].pop()}.items():
        with pytest.raises(ValueError, match="damaged"):
            load_model(rewrite(tmp_path / "m.npz", tmp_path / f"{name}.npz",
                               metadata_edit(change)))


def survival_records(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    y = np.empty(n, dtype=[("event", bool), ("time", float)])
    y["event"] = rng.random(n) < 0.7
    y["time"] = np.exp(1 + 2 * X[:, 0] + 0.3 * rng.normal(size=n))
    return X, y


@pytest.mark.parametrize("front_end", [
    SurvivalRegressor(n_jobs=2, random_state=0, curve_times=30),
    SurvivalRegressor(IntervalStackingRegressor(random_state=0), log=False,
                      curve_times=None),
    SurvivalRegressor(MMITBoost(n_estimators=20), risk="prediction")],
    ids=["default", "stack", "boost"])
def test_a_survival_front_end_is_saved_with_its_model(tmp_path, front_end):
    X, y = survival_records(150, 3)
    front_end.fit(X, y)
    restored = round_trip(front_end, tmp_path / "s.npz")
    assert type(restored) is SurvivalRegressor and file_version(tmp_path / "s.npz") == 8
    assert type(restored.estimator_) is type(front_end.estimator_)
    assert (restored.estimator is None) == (front_end.estimator is None)
    # the default model's booster comes back with it, and its share
    assert (restored.booster_ is None) == (front_end.estimator is not None)
    assert restored.booster_share_ == front_end.booster_share_
    params = front_end.get_params(deep=False)
    assert {key: value for key, value in restored.get_params(deep=False).items()
            if key != "estimator"} == {key: value for key, value in params.items()
                                       if key != "estimator"}
    np.testing.assert_array_equal(restored.predict(X), front_end.predict(X))
    np.testing.assert_array_equal(restored.unique_times_, front_end.unique_times_)
    np.testing.assert_array_equal(restored.curve_times_, front_end.curve_times_)
    assert restored.score(X, y) == front_end.score(X, y)
    if hasattr(front_end, "predict_survival_function"):
        np.testing.assert_array_equal(
            restored.predict_survival_function(X[:5], return_array=True),
            front_end.predict_survival_function(X[:5], return_array=True))
    # refitting the loaded front-end fits a model like the saved one
    refitted = restored.fit(X, y)
    assert type(refitted.estimator_) is type(front_end.estimator_)


def test_a_default_front_end_keeps_its_booster_share(tmp_path):
    """Above 1000 rows the booster weighs more than the forest: the file
    keeps its share, and a file written without one weighs them evenly."""
    X, y = survival_records(1500, 4)
    front_end = SurvivalRegressor(random_state=0).fit(X, y)
    assert front_end.booster_share_ > 0.5
    restored = round_trip(front_end, tmp_path / "s.npz")
    assert restored.booster_share_ == front_end.booster_share_
    np.testing.assert_array_equal(restored.predict(X), front_end.predict(X))
    with np.load(tmp_path / "s.npz") as archive:
        arrays = dict(archive)
    metadata = json.loads(bytes(arrays["metadata"]).decode())
    del metadata["booster_share"]  # as written before the share
    arrays["metadata"] = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    np.savez(tmp_path / "even.npz", **arrays)
    even = load_model(tmp_path / "even.npz")
    assert even.booster_share_ == 0.5
    np.testing.assert_array_equal(
        even.predict(X), -(front_end.estimator_.predict(X)
                           + front_end.booster_.predict(X)) / 2)


def test_a_damaged_survival_front_end_is_refused(tmp_path):
    X, y = survival_records(80, 4)
    front_end = SurvivalRegressor(MMITForest(5, random_state=0)).fit(X, y)
    save_model(front_end, tmp_path / "s.npz")

    def shuffled_times(arrays):
        arrays["curve_times"] = arrays["curve_times"][::-1].copy()

    with pytest.raises(ValueError, match="damaged.*times"):
        load_model(rewrite(tmp_path / "s.npz", tmp_path / "bad.npz", shuffled_times))
    with pytest.raises(TypeError, match="not ConstantRegressor"):
        save_model(SurvivalRegressor(ConstantRegressor()).fit(X, y), tmp_path / "c.npz")


def test_foreign_and_damaged_files_are_rejected(tmp_path):
    X, y = make_interval_regression(80, 2, random_state=2)
    path = tmp_path / "model.npz"
    save_model(MMIT(max_depth=3).fit(X, y), path)

    def bad_child(arrays):
        arrays["tree0_nodes"]["left_child"][0] = 10_000

    def cycle(arrays):
        arrays["tree0_nodes"]["left_child"][0] = 0

    cases = {
        "foreign.npz": (lambda arrays: arrays.pop("metadata"), "not an mmit model"),
        "format.npz": (metadata_edit(lambda d: d.update(format="other")),
                       "not an mmit model"),
        "version.npz": (metadata_edit(lambda d: d.update(version=99)), "version"),
        "params.npz": (metadata_edit(lambda d: d["params"].update(depth=3)), "damaged"),
        "child.npz": (bad_child, "damaged"),
        "cycle.npz": (cycle, "damaged"),
        "dtype.npz": (lambda a: a.update(tree0_values=a["tree0_values"].astype(np.float32)),
                      "damaged"),
    }
    for name, (change, message) in cases.items():
        with pytest.raises(ValueError, match=message):
            load_model(rewrite(path, tmp_path / name, change))
    np.save(tmp_path / "array.npy", np.zeros(3))
    with pytest.raises(ValueError, match="not an mmit model"):
        load_model(tmp_path / "array.npy")


def rewrite(path, target, change):
    """Copy a model archive, changing one entry."""
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    change(arrays)
    with open(target, "wb") as file:
        np.savez(file, **arrays)
    return target


def test_a_file_is_replaced_whole_or_not_at_all(tmp_path):
    X, y = make_interval_regression(60, 2, random_state=3)
    path = tmp_path / "model.npz"
    save_model(MMIT(max_depth=2).fit(X, y), path)
    written = path.read_bytes()
    stack = IntervalStackingRegressor([("ridge", Ridge())], cv=3).fit(X, X[:, 0])
    with pytest.raises(TypeError, match="not Ridge"):
        save_model(stack, path)
    assert path.read_bytes() == written
    save_model(MMIT(max_depth=3).fit(X, y), path)
    assert path.read_bytes() != written
    assert [file.name for file in tmp_path.iterdir()] == ["model.npz"]  # no leftovers


def test_node_models_are_nested_in_the_file_and_checked(tmp_path):
    X, y = make_interval_regression(80, 3, random_state=4)
    path = tmp_path / "model.npz"
    model = MMIT(max_depth=2, leaf_model="linear").fit(X, y)
    save_model(model, path)
    with np.load(path) as archive:
        metadata = json.loads(bytes(archive["metadata"]).decode())
        assert metadata["tree_node_models"] == ["linear"]
        assert {"tree0_node_models_models", "tree0_node_models_slopes",
                "tree0_node_models_center"} <= set(archive.files)
    np.testing.assert_array_equal(load_model(path).predict(X), model.predict(X))

    def kind(metadata, arrays):
        metadata["tree_node_models"] = ["quadratic"]

    def missing(metadata, arrays):
        del arrays["tree0_node_models_slopes"]

    def count(metadata, arrays):
        metadata["tree_node_models"] = ["linear", None]

    for change in (kind, missing, count):
        with pytest.raises(ValueError, match="damaged"):
            load_model(rewritten(path, tmp_path / f"{change.__name__}.npz", change))
