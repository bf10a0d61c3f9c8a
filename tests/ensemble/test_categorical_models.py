"""Fitted models with categorical features: model files keep their
categories, the rules name the categories of each side, the forests'
distributions and out-of-bag estimates, importances, and native splits
against the codes as numbers."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mmit import (
    MMIT,
    IntervalLinearRegressionCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    export_text,
    load_model,
    save_model,
)
from mmit.metrics import interval_mse

pd = pytest.importorskip("pandas")

SITES = [f"s{k:02d}" for k in range(12)]


def frame_and_target(n=400, seed=0):
    """A 12-level site whose effects are shuffled against its codes, a grade
    with an order, a numeric dose; missing sites; censored targets."""
    rng = np.random.default_rng(seed)
    site = rng.integers(0, 12, n)
    effect = rng.permutation(12) / 2.0
    grade = rng.integers(1, 4, n)
    dose = rng.uniform(0, 1, n)
    centre = effect[site] + 0.5 * grade + dose
    y = np.column_stack([centre - 0.2, centre + 0.2])
    y[::5, 1] = np.inf
    frame = pd.DataFrame({
        "site": pd.Categorical(np.array(SITES)[site], categories=SITES[::-1]),
        "grade": pd.Categorical(grade, categories=[1, 2, 3], ordered=True),
        "dose": dose,
    })
    frame.loc[::9, "site"] = None
    return frame, y


def queries(frame):
    """The frame with unseen sites and missing values."""
    new = frame.head(30).copy()
    new["site"] = new["site"].cat.add_categories(["new site"])
    new.loc[new.index[::3], "site"] = "new site"
    new.loc[new.index[1::3], "site"] = None
    return new


MODELS = [
    MMIT(max_depth=4, random_state=0),
    MMITForest(n_estimators=20, random_state=0),
    MMITBoost(n_estimators=20, random_state=0),
    MMITBoost(n_estimators=20, splitter="hist", random_state=0),
    IntervalLinearRegressionCV(n_alphas=5, cv=3),
    IntervalStackingRegressor(cv=3, random_state=0),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda model: type(model).__name__)
def test_model_files_keep_the_categories(model, tmp_path):
    frame, y = frame_and_target()
    model.fit(frame, y)
    path = tmp_path / "model.npz"
    save_model(model, path)
    loaded = load_model(path)
    new = queries(frame)
    assert_array_equal(loaded.predict(new), model.predict(new))
    # a frame whose categories come in another order means the same
    reordered = new.copy()
    reordered["site"] = reordered["site"].cat.reorder_categories(
        sorted(reordered["site"].cat.categories))
    assert_array_equal(loaded.predict(reordered), model.predict(new))
    if hasattr(model, "categories_"):
        assert_array_equal(loaded.is_categorical_, model.is_categorical_)
        assert [None if c is None else list(c) for c in loaded.categories_] == \
            [None if c is None else list(c) for c in model.categories_]
    if hasattr(model, "predict_quantiles"):
        assert_array_equal(loaded.predict_quantiles(new), model.predict_quantiles(new))


def test_model_files_refuse_labels_they_cannot_keep(tmp_path):
    frame, y = frame_and_target()
    frame["site"] = frame["site"].cat.rename_categories(
        {label: (label, 1) for label in SITES})
    model = MMIT(max_depth=2, random_state=0).fit(frame, y)
    with pytest.raises(TypeError, match="strings, numbers or booleans"):
        save_model(model, tmp_path / "model.npz")
    assert not (tmp_path / "model.npz").exists()


def test_rules_name_the_categories_that_reach_each_split():
    frame, y = frame_and_target()
    tree = MMIT(max_depth=3, random_state=0).fit(frame, y)
    text = export_text(tree)
    assert "site in {" in text
    for line in text.splitlines():
        if "site in {" not in line:
            continue
        labels = line.split("{")[1].split("}")[0].split(", ")
        assert set(labels) <= set(SITES)
    # the two sides of the root split the sites
    root = tree.tree_
    assert root.is_categorical[0] and tree.feature_names_in_[root.feature[0]] == "site"
    lines = [line for line in text.splitlines() if line.startswith("|--- ")]
    sides = [set(line.split("{")[1].split("}")[0].split(", ")) for line in lines]
    assert sides[0].isdisjoint(sides[1]) and sides[0] | sides[1] == set(SITES)


def test_plot_tree_draws_categorical_splits():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from mmit.plot import plot_tree

    frame, y = frame_and_target()
    ax = plot_tree(MMIT(max_depth=2, random_state=0).fit(frame, y))
    texts = [text.get_text() for text in ax.texts]
    assert any("in {" in text for text in texts)


def test_forest_distributions_and_out_of_bag_estimates_take_categories():
    frame, y = frame_and_target()
    forest = MMITForest(n_estimators=30, oob_score=True, random_state=0).fit(frame, y)
    new = queries(frame)
    quantiles = forest.predict_quantiles(new, (0.1, 0.5, 0.9))
    assert np.all(np.diff(quantiles, axis=1) >= 0)
    assert forest.oob_prediction_.shape == (len(frame),)
    assert np.isfinite(forest.oob_score_)
    assert forest.oob_cdf([1.0, 2.0]).shape == (len(frame), 2)


def test_importances_count_categorical_splits():
    frame, y = frame_and_target()
    tree = MMIT(max_depth=4, random_state=0).fit(frame, y)
    importances = tree.feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    assert importances[0] == importances.max()  # the site carries most of the signal


def test_native_splits_beat_the_codes_when_effects_are_shuffled():
    everything, y = frame_and_target(n=1200)
    codes = everything.assign(site=everything["site"].cat.codes.replace(-1, np.nan),
                              grade=everything["grade"].cat.codes)
    train, test = slice(0, 800), slice(800, None)
    model = MMIT(max_depth=3, random_state=0)
    native = interval_mse(y[test], model.fit(everything[train], y[train])
                          .predict(everything[test]))
    ordinal = interval_mse(y[test], model.fit(codes[train], y[train]).predict(codes[test]))
    assert native < 0.8 * ordinal


def test_a_frame_and_its_codes_grow_the_same_tree():
    frame, y = frame_and_target()
    # a category no row has, in the middle of the codes
    frame["site"] = frame["site"].cat.add_categories(["unused"]).cat.reorder_categories(
        SITES[::-1][:6] + ["unused"] + SITES[::-1][6:])
    codes = np.column_stack([frame["site"].cat.codes.replace(-1, np.nan),
                             frame["grade"].cat.codes, frame["dose"]])
    by_frame = MMIT(max_depth=5, random_state=0).fit(frame, y).tree_
    by_codes = MMIT(max_depth=5, categorical_features=[0, 1], random_state=0).fit(
        codes, y).tree_
    for field in ("children_left", "feature", "value", "cost", "is_categorical",
                  "missing_go_to_left"):
        assert_array_equal(getattr(by_frame, field), getattr(by_codes, field))
