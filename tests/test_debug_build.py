"""The test suites again, against extensions compiled with checks on.

Release builds run the hot loops with bounds checks off; this compiles the
extensions with ``MMIT_DEBUG=1`` (Cython's bounds, wraparound and
initialisation checks, plus index checks on every raw-pointer access that
abort with a message) and runs the kernel test modules against that build.
"""

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUITES = ["_loss/test_solver.py", "tree/test_tree.py", "tree/test_splitter.py",
          "ensemble/test_npmle.py", "tree/test_histogram_splitter.py",
          "tree/test_missing.py",
          "tree/test_categorical_splits.py", "test_entry_points.py",
          "linear_model/test_linear.py", "tree/test_leaf_models.py", "_loss/test_loss.py",
          "ensemble/test_forest.py", "ensemble/test_predictive.py",
          "linear_model/test_newton.py", "inspection/test_shap.py"]


@pytest.fixture(scope="session")
def debug_build(tmp_path_factory):
    if not (ROOT / "setup.py").exists():
        pytest.skip("needs the source tree")
    build = tmp_path_factory.mktemp("debug_build")
    shutil.copytree(
        ROOT / "mmit", build / "mmit",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "*.cpp", "__pycache__"),
    )
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, build / name)
    result = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=build, env=dict(os.environ, MMIT_DEBUG="1"), capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return build


def run_in_build(build, *args):
    return subprocess.run(
        [sys.executable, *args], cwd=build, capture_output=True, text=True,
        env=dict(os.environ, PYTHONPATH=str(build)),
    )


def test_debug_build_has_checks_on(debug_build):
    result = run_in_build(debug_build, "-c", "import mmit._loss._solver as s; "
                                             "print(s.DEBUG_BUILD, s.__file__)")
    assert result.returncode == 0, result.stderr
    flag, path = result.stdout.split()
    assert flag == "True" and path.startswith(str(debug_build))


@pytest.mark.parametrize("suite", SUITES)
def test_suite_passes_with_checks_on(debug_build, suite):
    result = run_in_build(debug_build, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(ROOT / "tests" / suite))
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]


FIT_AND_HASH = """
import hashlib, pickle, numpy as np
from mmit import MMIT
rng = np.random.default_rng(0)
X = rng.normal(size=(400, 40))
X[rng.random(X.shape) < 0.1] = np.nan
lower = np.sin(np.nan_to_num(X[:, 0])) - rng.exponential(0.3, 400)
upper = lower + rng.exponential(0.5, 400)
lower[::7] = -np.inf
upper[::5] = np.inf
y = np.column_stack([lower, upper])
# presorted lists everywhere (5 features, 3 drawn), then sorting on demand
# below the root (40 features, 2 drawn)
for loss in ("linear_hinge", "squared_hinge"):
    for columns, max_features in ((5, 3), (40, 2)):
        tree = MMIT(loss=loss, margin=0.1, max_features=max_features,
                    random_state=0).fit(X[:, :columns], y).tree_
        print(hashlib.sha256(pickle.dumps(tree.__getstate__())).hexdigest())
"""


def test_tree_is_identical_with_checks_on(debug_build):
    checked = run_in_build(debug_build, "-c", FIT_AND_HASH)
    assert checked.returncode == 0, checked.stderr
    release = io.StringIO()  # the same fits with the build under test
    with contextlib.redirect_stdout(release):
        exec(FIT_AND_HASH, {})
    assert checked.stdout.split() == release.getvalue().split()
