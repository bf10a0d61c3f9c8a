"""Every docstring example and the README's Python example run as shown."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import mmit

README = Path(__file__).resolve().parents[1] / "README.md"
MODULES = sorted(
    name for _, name, _ in pkgutil.iter_modules(mmit.__path__, prefix="mmit.")
    if name != "mmit.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_readme_examples():
    if not README.exists():
        pytest.skip("needs the source tree")
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
