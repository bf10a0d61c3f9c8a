"""Every docstring example and the README's Python example run as shown; the
README stays a first page whose two commands CI finds; the documents cite
only files that users have; every measured table of the docs is a file of
docs/results that a page includes."""

import csv
import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import mmit

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 400
# .ci/run runs the command on the second line after each marker (after the fence)
CI_COMMANDS = {"<!-- test-command -->": "pytest",
               "<!-- docs-command -->": "sphinx-build -W --keep-going -b html docs"}
# files that only the project's own workspace has, never a user
PRIVATE_FILES = ("DESIGN.md", "../shared")
DOCS_BUILD_OUTPUTS = ("_build", "generated", "auto_examples")
MODULES = sorted(
    name for _, name, _ in pkgutil.iter_modules(mmit.__path__, prefix="mmit.")
    if name != "mmit.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    # the plots' examples draw on no screen
    monkeypatch.setenv("MPLBACKEND", "Agg")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_readme_examples():
    if not README.exists():
        pytest.skip("needs the source tree")
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def needs_source_tree():
    if not README.exists() or not DOCS.exists():
        pytest.skip("needs the source tree")


def test_readme_is_a_first_page_with_the_two_commands():
    needs_source_tree()
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES
    for marker, runs in CI_COMMANDS.items():
        assert lines.count(marker) == 1, marker
        index = lines.index(marker)
        fence, command = lines[index + 1], lines[index + 2]
        assert fence == "```"
        assert command.startswith("python -m venv .venv && . .venv/bin/activate && ")
        assert runs in command


def documents():
    """The README and the text files of the package and the docs (not the
    docs' build outputs)."""
    yield README
    for folder in (ROOT / "mmit", DOCS):
        for path in sorted(folder.rglob("*")):
            parts = path.relative_to(folder).parts
            if (path.suffix in (".py", ".pyx", ".pxd", ".rst", ".md", ".csv", ".txt")
                    and not (folder == DOCS and parts[0] in DOCS_BUILD_OUTPUTS)):
                yield path


def test_documents_cite_no_private_file():
    needs_source_tree()
    citations = [f"{path.relative_to(ROOT)}: {name}" for path in documents()
                 for name in PRIVATE_FILES if name in path.read_text(errors="replace")]
    assert citations == []


def test_every_results_table_is_included_and_rectangular():
    needs_source_tree()
    included = set()
    for page in DOCS.rglob("*.rst"):
        for name in re.findall(r":file: (\S+)", page.read_text()):
            path = (page.parent / name).resolve()
            assert path.exists(), f"{page.name} includes a missing {name}"
            included.add(path)
    tables = sorted((DOCS / "results").glob("*.csv"))
    assert tables and set(tables) == included
    for table in tables:
        with open(table, newline="") as file:
            header, *rows = list(csv.reader(file))
        assert rows and all(len(row) == len(header) for row in rows), table.name


def readme_paragraph(start):
    """The README's paragraph that starts with ``start``, on one line."""
    text = README.read_text()
    begin = text.index(start)
    return " ".join(text[begin:text.index("\n\n", begin)].split())


def named(paragraph, name):
    return re.search(rf"`{name}`", paragraph) is not None


def test_readme_says_which_estimators_take_nan_and_which_models_files_hold():
    """The README's lists follow the estimators' own tags and the registry:
    every public estimator whose tags allow NaN is named among those that
    take it, every other among those that refuse it, and every estimator
    model files hold among those that ``save_model`` takes."""
    needs_source_tree()
    from mmit._registry import ESTIMATORS, model_kinds

    missing = readme_paragraph("Missing values:")
    takes, refuses = missing.split(" refuse NaN")[0].rsplit(". ", 1)
    for entry in ESTIMATORS:
        model = entry.all_examples()[0].make()
        where = takes if model.__sklearn_tags__().input_tags.allow_nan else refuses
        assert named(where, entry.name), entry.name
    files = readme_paragraph("Model files:")
    for name in model_kinds():
        assert named(files, name), name
