"""Shared fixtures: where the reference outputs and benchmark data live.

``../shared`` beside the checkout holds the paper's data sets and the outputs
of the authors' implementation. Tests that need it skip cleanly when it is
absent (set ``MMIT_SHARED_DIR`` to point elsewhere).
"""

import json
import os
from pathlib import Path

import debug_build
import pytest
from hypothesis import settings

# Property tests draw their examples from a fixed seed: a test run, in CI or
# on a new machine, gives the same verdict every time. To look for new
# failing examples, run with MMIT_HYPOTHESIS_PROFILE=explore (random draws)
# and keep any example found as an explicit @example.
settings.register_profile("deterministic", derandomize=True, database=None,
                          print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("MMIT_HYPOTHESIS_PROFILE", "deterministic"))

SHARED_DIR = Path(
    os.environ.get("MMIT_SHARED_DIR", Path(__file__).resolve().parents[1].parent / "shared")
)


def _shared_path(*parts):
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not available")
    return path


def load_reference(name):
    """Load ``reference/<name>`` with "inf"/"-inf" strings turned into floats."""

    def decode(value):
        if isinstance(value, str) and value.lower() in ("inf", "-inf"):
            return float(value)
        if isinstance(value, list):
            return [decode(v) for v in value]
        if isinstance(value, dict):
            return {k: decode(v) for k, v in value.items()}
        return value

    with open(_shared_path("reference", name)) as f:
        return decode(json.load(f))


@pytest.fixture
def reference():
    """Loader of the reference outputs (skips when they are absent)."""
    return load_reference


@pytest.fixture
def shared_data_dir():
    """Directory of the benchmark data sets (skips when absent)."""
    return _shared_path("data")


def pytest_collection_modifyitems(session, config, items):
    """Start the debug build and its suites in the background when a test of
    ``test_debug_build.py`` is to run: they overlap the other tests."""
    if debug_build.available() and any(item.path.name == "test_debug_build.py"
                                       for item in items):
        debug_build.start(config)


def pytest_unconfigure(config):
    debug_build.stop(config)
