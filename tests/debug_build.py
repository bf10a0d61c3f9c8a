"""The extensions built with their checks on, and the kernel suites run
against them: what ``tests/test_debug_build.py`` checks.

Release builds run the hot loops with bounds checks off. This copies the
sources, compiles them with ``MMIT_DEBUG=1`` (Cython's bounds, wraparound
and initialisation checks, plus index checks on every raw-pointer access
that abort with a message) and runs the kernel test modules against that
build in one process, writing what happened to a folder. The test session
starts it in the background as soon as it has collected a test of
``test_debug_build.py`` (``tests/conftest.py``), so that it runs beside the
other tests instead of after them; the tests of ``test_debug_build.py`` wait
for it and read the folder.

Usage: python tests/debug_build.py FOLDER
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SUITES = ["_loss/test_solver.py", "_loss/test_loss.py", "tree/test_tree.py",
          "tree/test_splitter.py", "tree/test_histogram_splitter.py",
          "tree/test_missing.py", "tree/test_categorical_splits.py",
          "tree/test_leaf_models.py", "tree/test_monotonic.py",
          "tree/test_interaction_constraints.py", "tree/test_stage_criterion.py",
          "tree/test_binning.py", "tree/test_pruning.py", "test_sparse.py",
          "test_entry_points.py", "linear_model/test_linear.py",
          "linear_model/test_newton.py", "ensemble/test_turnbull.py",
          "ensemble/test_forest_readout.py", "ensemble/test_cluster_kernels.py",
          "ensemble/test_forest.py", "ensemble/test_predictive.py",
          "inspection/test_shap.py", "survival/test_concordance.py"]

# trees whose pickled state the debug build and the release build must agree on
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


#: Where the test session keeps the background run: (process, folder).
DEBUG_RUN = pytest.StashKey()


def available():
    """Whether the sources are here to build from."""
    return (ROOT / "setup.py").exists() and (ROOT / "mmit").is_dir()


def start(config):
    """Start the run in the background, into a new temporary folder, kept in
    ``config.stash[DEBUG_RUN]``."""
    folder = Path(tempfile.mkdtemp(prefix="mmit-debug-build-"))
    process = subprocess.Popen([sys.executable, __file__, str(folder)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    config.stash[DEBUG_RUN] = (process, folder)


def stop(config):
    """End the run if the session ends first, and remove its folder."""
    run = config.stash.get(DEBUG_RUN, None)
    if run is not None:
        process, folder = run
        if process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def run(arguments, folder, name, **options):
    """Run a command, writing its output to ``folder/name.log`` and its exit
    status to ``folder/name.status``; returns the status."""
    result = subprocess.run(arguments, capture_output=True, text=True, **options)
    (folder / f"{name}.log").write_text(result.stdout + result.stderr)
    (folder / f"{name}.status").write_text(str(result.returncode))
    return result.returncode


def main(folder):
    folder = Path(folder)
    build = folder / "build"
    shutil.copytree(ROOT / "mmit", build / "mmit", ignore=shutil.ignore_patterns(
        "*.so", "*.pyd", "*.c", "*.cpp", "__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, build / name)
    if run([sys.executable, "setup.py", "build_ext", "--inplace"], folder, "build",
           cwd=build, env=dict(os.environ, MMIT_DEBUG="1")):
        return 1
    env = dict(os.environ, PYTHONPATH=str(build))
    run([sys.executable, "-c", "import mmit._loss._solver as s; "
         "print(s.DEBUG_BUILD, s.__file__)"], folder, "flag", cwd=build, env=env)
    run([sys.executable, "-c", FIT_AND_HASH], folder, "hashes", cwd=build, env=env)
    run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
         "addopts=", f"--junitxml={folder / 'suites.xml'}",
         *(str(TESTS / suite) for suite in SUITES)], folder, "suites", cwd=build, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
