"""The command line: mmit cv, fit, predict, explain and plot."""


import numpy as np
import pytest
from problems import write_folder

from mmit import (
    MMIT,
    IntervalStackingRegressor,
    MMITBoost,
    MMITForest,
    SurvivalRegressor,
    load_model,
)
from mmit._cli._main import main
from mmit._utils._files import replacing_file
from mmit.datasets import load_folder, make_interval_regression


@pytest.fixture
def folder(tmp_path):
    X, y = make_interval_regression(60, 3, pattern="abs", random_state=0)
    return write_folder(tmp_path / "data", X, y, np.arange(60) % 3 + 1)


def test_every_command_has_help(capsys):
    for command in ([], ["cv"], ["fit"], ["predict"], ["explain"], ["plot"]):
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
    # progress on stderr: each fit, with the time left
    assert "fold 3: MMIT fitted" in captured.err and "[9/9]" in captured.err
    assert "s left" in captured.err


def test_cv_results_do_not_depend_on_the_processes(folder, capsys):
    outputs = []
    for jobs in ("1", "2"):
        assert main(["cv", "--data", str(folder), "--model", "tree", "--n-jobs", jobs]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]


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


def test_fit_survival_then_predict_risks(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))
    time = np.exp(1 + 2 * X[:, 0] + 0.3 * rng.normal(size=120))
    censored = rng.random(120) < 0.3
    times = np.column_stack([time, np.where(censored, np.inf, time)])
    folder = write_folder(tmp_path / "survival", X, times, np.arange(120) % 3 + 1)
    model_path, out = tmp_path / "survival.npz", tmp_path / "risk.csv"
    assert main(["fit", "--data", str(folder), "--out", str(model_path), "--survival",
                 "--n-jobs", "2"]) == 0
    assert "training concordance index" in capsys.readouterr().out
    assert main(["predict", "--model", str(model_path), "--data", str(folder),
                 "--out", str(out)]) == 0
    assert out.read_text().splitlines()[0] == "risk"
    model = load_model(model_path)
    assert isinstance(model, SurvivalRegressor) and model.estimator is None
    risks = np.loadtxt(out, skiprows=1)
    np.testing.assert_array_equal(risks, model.predict(load_folder(folder).data))
    assert np.corrcoef(risks, X[:, 0])[0, 1] < -0.8  # a larger x0: a later event
    assert main(["fit", "--data", str(folder), "--out", str(model_path), "--survival",
                 "--model", "boost"]) == 2
    assert "--model does not apply" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["tree", "forest", "boost", "stack", "survival"])
def test_fit_with_monotone_constraints(tmp_path, kind, capsys):
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(90, 3))
    time = np.exp(1 + 2 * X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=90))
    y = np.column_stack([time, np.where(rng.random(90) < 0.3, np.inf, time)])
    folder = write_folder(tmp_path / "data", X, y, np.arange(90) % 3 + 1)
    names = load_folder(folder).feature_names
    model_path = tmp_path / "model.npz"
    options = ["--survival"] if kind == "survival" else ["--model", kind]
    assert main(["fit", "--data", str(folder), "--out", str(model_path), *options,
                 "--monotonic", f"{names[0]}=+1", f"{names[1]}=-1"]) == 0
    model = load_model(model_path)
    grid = np.repeat(X[:1], 50, axis=0)
    for feature, sign in ((0, 1), (1, -1)):
        line = grid.copy()
        line[:, feature] = np.linspace(-0.5, 1.5, 50)
        predicted = (-model.predict(line) if kind == "survival" else model.predict(line))
        assert np.all(sign * np.diff(predicted) >= -1e-12)
    for bad, message in ((f"{names[0]}=2", "takes NAME=+1, NAME=-1 or NAME=0"),
                         ("nope=1", "'nope', which is not a column")):
        assert main(["fit", "--data", str(folder), "--out", str(model_path), *options,
                     "--monotonic", bad]) == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["tree", "boost", "stack"])
def test_explain_writes_values_that_add_up_to_the_predictions(folder, tmp_path, kind,
                                                               capsys):
    model_path, out = tmp_path / "model.npz", tmp_path / "values.csv"
    assert main(["fit", "--data", str(folder), "--out", str(model_path),
                 "--model", kind]) == 0
    capsys.readouterr()
    assert main(["explain", str(model_path), str(folder), "--out", str(out)]) == 0
    assert "mean |value| per feature" in capsys.readouterr().out
    header = out.read_text().splitlines()[0].split(",")
    assert header == ["f0", "f1", "f2", "base_value"]
    values = np.loadtxt(out, delimiter=",", skiprows=1)
    data = load_folder(folder).data
    np.testing.assert_allclose(values.sum(axis=1), load_model(model_path).predict(data),
                               atol=1e-10)


def test_explain_refuses_other_features(folder, tmp_path, capsys):
    model_path, out = tmp_path / "model.npz", tmp_path / "values.csv"
    assert main(["fit", "--data", str(folder), "--out", str(model_path)]) == 0
    other = write_folder(tmp_path / "other", np.zeros((5, 2)))
    assert main(["explain", str(model_path), str(other), "--out", str(out)]) == 2
    assert "X has 2 features, but MMIT is expecting 3" in capsys.readouterr().err
    assert not out.exists()


def test_an_interrupted_write_leaves_the_old_file(tmp_path):
    out = tmp_path / "values.csv"
    out.write_text("old\n")
    with pytest.raises(KeyboardInterrupt):
        with replacing_file(out, "w") as file:
            file.write("half of the new")
            raise KeyboardInterrupt
    assert out.read_text() == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["values.csv"]
    with replacing_file(out, "w") as file:
        file.write("new\n")
    assert out.read_text() == "new\n"
    assert [path.name for path in tmp_path.iterdir()] == ["values.csv"]


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


@pytest.fixture
def categorical_folder(tmp_path):
    """A folder whose features.csv has a column of site labels (some empty)."""
    pytest.importorskip("pandas")
    X, y = make_interval_regression(90, 2, pattern="abs", random_state=1)
    sites = np.array(["north", "south", "east", "west", "centre"])[np.arange(90) % 5]
    effect = {"north": 2.0, "south": -1.0, "east": 0.5, "west": 3.0, "centre": 0.0}
    shift = np.array([effect[site] for site in sites])
    sites[::11] = ""
    folder = write_folder(tmp_path / "sites", X, y + shift[:, None], np.arange(90) % 3 + 1)
    lines = (folder / "features.csv").read_text().splitlines()
    rows = [f"site,{lines[0]}"] + [f"{site},{line}"
                                    for site, line in zip(sites, lines[1:], strict=True)]
    (folder / "features.csv").write_text("\n".join(rows) + "\n")
    return folder


def test_a_string_column_must_be_declared(categorical_folder, tmp_path, capsys):
    assert main(["fit", "--data", str(categorical_folder), "--out",
                 str(tmp_path / "m.npz")]) == 2
    assert "--categorical site" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["tree", "stack"])
def test_categorical_columns_fit_save_and_predict(categorical_folder, tmp_path, kind):
    model_path, out = tmp_path / "model.npz", tmp_path / "pred.csv"
    assert main(["fit", "--data", str(categorical_folder), "--out", str(model_path),
                 "--model", kind, "--categorical", "site"]) == 0
    # predict reads the site labels as the saved model took them
    assert main(["predict", "--model", str(model_path), "--data",
                 str(categorical_folder), "--out", str(out)]) == 0
    model = load_model(model_path)
    data = load_folder(categorical_folder, categorical=["site"])
    np.testing.assert_array_equal(np.loadtxt(out, skiprows=1), model.predict(data.data))
    if kind == "tree":
        assert model.is_categorical_.tolist() == [True, False, False]
        assert list(model.categories_[0]) == ["centre", "east", "north", "south", "west"]


def test_cv_takes_categorical_columns(categorical_folder, capsys):
    assert main(["cv", "--data", str(categorical_folder), "--model", "boost",
                 "--categorical", "site"]) == 0
    lines = capsys.readouterr().out.splitlines()
    mean = [line for line in lines if line.startswith("mean")][0].split()
    assert float(mean[3]) < float(mean[1])  # MMITBoost beats the constant
