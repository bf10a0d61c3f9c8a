"""The bundled data sets, folders of CSV files and the simulated data."""


import numpy as np
import pytest
from problems import write_folder

from mmit import MMIT
from mmit.datasets import list_datasets, load_dataset, load_folder, make_interval_regression


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
