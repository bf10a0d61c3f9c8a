"""The sources pass the linters: ruff for Python, cython-lint for Cython
(both configured in pyproject.toml)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(tool, *args):
    if not (ROOT / "pyproject.toml").exists() or not (ROOT / "mmit").is_dir():
        pytest.skip("needs the source tree")
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed (the test extra has it)")
    return subprocess.run([tool, *args], cwd=ROOT, capture_output=True, text=True)


def test_python_passes_ruff():
    result = run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_cython_passes_cython_lint():
    sources = sorted(str(path.relative_to(ROOT)) for pattern in ("*.pyx", "*.pxd")
                     for path in (ROOT / "mmit").rglob(pattern))
    assert len(sources) >= 10
    result = run("cython-lint", *sources)
    assert result.returncode == 0, result.stdout + result.stderr
