"""The command line, saved models, plots and the data helpers."""

import json
import zipfile

import numpy as np
import pytest

from mmit import (
    MMIT,
    MMITCV,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    load_model,
    save_model,
)
from mmit._cli import main
from mmit.baselines import ConstantRegressor, IntervalCART, interval_cart_rows
from mmit.datasets import list_datasets, load_dataset, load_folder, make_interval_regression


def write_folder(path, X, y=None, folds=None):
    path.mkdir()
    np.savetxt(path / "features.csv", X, delimiter=",", comments="",
               header=",".join(f"f{j}" for j in range(X.shape[1])))
    if y is not None:
        with open(path / "targets.csv", "w") as file:
            file.write("lower,upper\n")
            for lower, upper in y:
                file.write(f"{float(lower)!r},{float(upper)!r}\n".replace("inf", "Inf"))
    if folds is not None:
        np.savetxt(path / "folds.csv", folds, fmt="%d", header="fold", comments="")
    return path


@pytest.fixture
def folder(tmp_path):
    X, y = make_interval_regression(60, 3, pattern="abs", random_state=0)
    return write_folder(tmp_path / "data", X, y, np.arange(60) % 3 + 1)


def test_every_command_has_help(capsys):
    for command in ([], ["cv"], ["fit"], ["predict"], ["plot"]):
        with pytest.raises(SystemExit) as exit_info:
            main(command + ["--help"])
        assert exit_info.value.code == 0
        assert "usage: mmit" in capsys.readouterr().out


def test_cv_prints_a_table_per_fold(folder, capsys):
    assert main(["cv", "--data", str(folder), "--model", "tree"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert "Constant" in lines[1] and "Interval-CART" in lines[1] and "MMIT" in lines[1]
    assert sum(line.startswith(("1 ", "2 ", "3 ")) for line in lines) == 6
    assert "fold 3: MMIT fitted" in captured.err  # progress on stderr


def test_cv_compares_the_linear_models(folder, capsys):
    assert main(["cv", "--data", str(folder), "--model", "linear"]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert "L1-Linear" in header and "MMIT linear leaves" in header


def test_cv_scores_the_stack(folder, capsys):
    assert main(["cv", "--data", str(folder), "--model", "stack", "--n-jobs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["fold", "Constant", "Interval-CART", "Stacking"]
    mean = [line for line in lines if line.startswith("mean")][0].split()
    assert float(mean[3]) < float(mean[1])  # the stack beats the constant


@pytest.mark.parametrize("kind", ["tree", "linear", "forest", "boost", "stack"])
def test_fit_then_predict_matches_the_fitted_model(folder, tmp_path, kind, capsys):
    model_path, out = tmp_path / "model.npz", tmp_path / "pred.csv"
    assert main(["fit", "--data", str(folder), "--out", str(model_path),
                 "--model", kind]) == 0
    if kind in ("forest", "stack"):  # progress of the long fits on stderr
        assert {"forest": "[MMITForestCV] 1/",
                "stack": "[IntervalStackingRegressor] weights"}[kind] in \
            capsys.readouterr().err
    assert main(["predict", "--model", str(model_path), "--data", str(folder),
                 "--out", str(out)]) == 0
    predictions = np.loadtxt(out, skiprows=1)
    model = load_model(model_path)
    assert isinstance(model, {"tree": MMIT, "linear": MMIT, "forest": MMITForest,
                              "boost": MMITBoost, "stack": IntervalStackingRegressor}[kind])
    np.testing.assert_array_equal(predictions, model.predict(load_folder(folder).data))


def test_plot_writes_an_image(folder, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "plot.png"
    assert main(["plot", "--data", str(folder), "--feature", "f0", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", "--data", str(folder), "--feature", "nope", "--out",
                 str(out)]) == 2
    assert "no feature 'nope'" in capsys.readouterr().err


def test_commands_report_bad_input(tmp_path, capsys):
    assert main(["fit", "--data", str(tmp_path), "--out", str(tmp_path / "m.npz")]) == 2
    assert "no features.csv" in capsys.readouterr().err
    junk = tmp_path / "junk.npz"
    junk.write_text("not a model")
    assert main(["predict", "--model", str(junk), "--data", str(tmp_path),
                 "--out", str(tmp_path / "p.csv")]) == 2
    error = capsys.readouterr().err
    assert "not an mmit model file" in error and "allow_pickle" not in error


# --------------------------------------------------------------------------
# Saved models
# --------------------------------------------------------------------------

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


def test_saving_a_search_saves_its_best_tree(tmp_path):
    X, y = make_interval_regression(60, 2, random_state=1)
    search = MMITCV(cv=3, random_state=0).fit(X, y)
    save_model(search, tmp_path / "m.npz")
    restored = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(restored.predict(X), search.predict(X))
    with pytest.raises(TypeError, match="save_model saves MMIT.* not ConstantRegressor"):
        save_model(ConstantRegressor().fit(X, y), tmp_path / "c.npz")


def rewrite(path, target, change):
    """Copy a model archive, changing one entry."""
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    change(arrays)
    with open(target, "wb") as file:
        np.savez(file, **arrays)
    return target


def test_foreign_and_damaged_files_are_rejected(tmp_path):
    X, y = make_interval_regression(80, 2, random_state=2)
    path = tmp_path / "model.npz"
    save_model(MMIT(max_depth=3).fit(X, y), path)

    def metadata(change):
        def edit(arrays):
            document = json.loads(bytes(arrays["metadata"]).decode())
            change(document)
            arrays["metadata"] = np.frombuffer(json.dumps(document).encode(), np.uint8)
        return edit

    def bad_child(arrays):
        arrays["tree0_nodes"]["left_child"][0] = 10_000

    def cycle(arrays):
        arrays["tree0_nodes"]["left_child"][0] = 0

    cases = {
        "foreign.npz": (lambda arrays: arrays.pop("metadata"), "not an mmit model"),
        "format.npz": (metadata(lambda d: d.update(format="other")), "not an mmit model"),
        "version.npz": (metadata(lambda d: d.update(version=99)), "version"),
        "params.npz": (metadata(lambda d: d["params"].update(depth=3)), "damaged"),
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


# --------------------------------------------------------------------------
# Data sets, simulation, baselines, plots
# --------------------------------------------------------------------------

def test_bundled_data_sets():
    assert {"H3K27ac-H3K4me3_TDHAM_BP_FPOP", "H3K4me3_TDH_other_FPOP",
            "servo"} <= set(list_datasets())
    for name in list_datasets():
        data = load_dataset(name)
        assert data.target.shape == (data.data.shape[0], 2)
        assert data.folds.shape == (data.data.shape[0],)
        assert len(data.feature_names) == data.data.shape[1]
        assert "Drouin" in data.DESCR
    frame = load_dataset("servo", as_frame=True)
    assert list(frame.target.columns) == ["lower", "upper"]
    with pytest.raises(ValueError, match="Unknown data set"):
        load_dataset("iris")


def test_load_folder_matches_the_shared_copy(shared_data_dir):
    bundled = load_dataset("H3K4me3_TDH_other_FPOP")
    shared = load_folder(shared_data_dir / "H3K4me3_TDH_other_FPOP")
    np.testing.assert_array_equal(bundled.data, shared.data)
    np.testing.assert_array_equal(bundled.target, shared.target)
    np.testing.assert_array_equal(bundled.folds, shared.folds)


def test_load_folder_reads_inf_spellings_and_optional_files(tmp_path):
    X = np.arange(6.0).reshape(3, 2)
    folder = write_folder(tmp_path / "d", X, [(-np.inf, 1.0), (0.0, np.inf), (2.0, 2.0)])
    data = load_folder(folder)
    np.testing.assert_array_equal(data.target, [[-np.inf, 1], [0, np.inf], [2, 2]])
    assert data.folds is None
    (folder / "targets.csv").unlink()
    assert load_folder(folder).target is None
    (folder / "folds.csv").write_text("fold\n1\n2\n")
    with pytest.raises(ValueError, match="one fold id per example"):
        load_folder(folder)


@pytest.mark.parametrize("pattern", ["linear", "sin", "abs"])
def test_simulated_data_follow_the_paper_protocol(pattern):
    X, y = make_interval_regression(4000, 4, pattern=pattern, random_state=0)
    assert X.shape == (4000, 4) and X.min() >= 0 and X.max() <= 10
    assert np.isneginf(y[:, 0]).mean() == pytest.approx(0.1, abs=0.02)
    assert np.isposinf(y[:, 1]).mean() == pytest.approx(0.1, abs=0.02)
    closed = np.isfinite(y).all(axis=1)
    assert np.all(y[closed, 0] < y[closed, 1])
    # a tree on the signal feature alone recovers most of the signal
    model = MMIT(max_depth=4, random_state=0).fit(X[:, :1], y)
    assert model.score(X[:, :1], y) > -0.1
    with pytest.raises(ValueError, match="pattern"):
        make_interval_regression(pattern="cubic")


def test_baselines():
    X = np.arange(8.0).reshape(-1, 1)
    y = np.column_stack([np.r_[np.zeros(4), np.full(4, 5.0)],
                         np.r_[np.ones(4), np.full(4, 6.0)]])
    constant = ConstantRegressor().fit(X, y)
    assert np.all(constant.predict(X) == constant.constant_)
    cart = IntervalCART(max_depth=1).fit(X, y)
    np.testing.assert_allclose(cart.predict(X), np.r_[np.full(4, 0.5), np.full(4, 5.5)])
    rows, targets = interval_cart_rows(np.array([0.0, -np.inf]), np.array([1.0, 2.0]), 0.25)
    np.testing.assert_array_equal(rows, [0, 0, 1])
    np.testing.assert_array_equal(targets, [0.25, 0.75, 1.75])


def test_plots_draw_intervals_and_trees():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from mmit.plot import plot_intervals, plot_tree

    X, y = make_interval_regression(80, 2, pattern="sin", random_state=3)
    model = MMIT(max_depth=2, random_state=0).fit(X, y)
    ax = plot_intervals(X[:, 0], y, model.predict(X), feature_name="x0")
    assert ax.get_xlabel() == "x0" and len(ax.lines) >= 3
    linear = MMIT(max_depth=2, leaf_model="linear", random_state=0).fit(X, y)
    ax = plot_intervals(X[:, 0], y, {"constant": model.predict(X),
                                     "linear": linear.predict(X)})
    order = np.argsort(X[:, 0])
    drawn = {line.get_label(): line for line in ax.lines}
    np.testing.assert_array_equal(drawn["linear"].get_ydata(), linear.predict(X)[order])
    assert "constant" in drawn
    with pytest.raises(ValueError, match="predictions of bad"):
        plot_intervals(X[:, 0], y, {"bad": np.zeros(3)})
    ax = plot_tree(model)
    texts = [text.get_text() for text in ax.texts]
    assert len(texts) == model.tree_.node_count
    n_splits = model.tree_.node_count - model.get_n_leaves()
    assert sum("<=" in text for text in texts) == n_splits
    matplotlib.pyplot.close("all")
