"""Sphinx configuration of the mmit documentation.

Build it from the repository root with the package and the ``docs`` extra
installed::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The build needs no network: no intersphinx inventories are fetched.
"""

import os
import re
from pathlib import Path

import mmit

# the installed package is documented (its compiled extensions must be built)
project = "mmit"
author = "the mmit developers"
copyright = "the mmit developers"
release = mmit.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
# api_estimators.rst is generated below and included by api.rst (not a page)
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "api_estimators.rst"]
root_doc = "index"
default_role = "literal"

autodoc_default_options = {"member-order": "alphabetical"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
# parameter types become cross-references (unresolved ones print as code),
# so that a name such as ``n_iter_`` in a type is not read as a link target
# (see escape_type_underscores below for the ones numpydoc leaves as text)
numpydoc_xref_param_type = True
numpydoc_xref_ignore = {"of", "shape", "default", "or", "and", "optional", "instance"}
# numpydoc's own aliases of these link to the Python and NumPy docs, which an
# offline build (no intersphinx) cannot reach: keep them as plain names
numpydoc_xref_aliases = {
    name: name for name in (
        "None", "True", "False", "bool", "boolean", "int", "float", "str", "string",
        "list", "tuple", "dict", "callable", "iterable", "sequence", "generator",
        "array", "ndarray", "array-like", "array_like", "scalar", "RandomState",
    )
}

# examples gallery: examples/*.py run at build time into docs/auto_examples/
DOCS = Path(__file__).resolve().parent
sphinx_gallery_conf = {
    "examples_dirs": str(DOCS.parent / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "backreferences_dir": str(DOCS / "generated" / "backreferences"),
    "doc_module": ("mmit",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 1,
}
# MMIT_DOCS_SKIP_GALLERY=1 builds the pages without running the examples
if os.environ.get("MMIT_DOCS_SKIP_GALLERY"):
    sphinx_gallery_conf["plot_gallery"] = "False"

html_theme = "pydata_sphinx_theme"
html_title = f"mmit {release}"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}

# Methods that scikit-learn's base classes give every estimator: the
# metadata-routing ones (set_fit_request, ...) and set_output refer to pages
# of scikit-learn's own documentation, so only the common ones are shown.
SKLEARN_MEMBERS_SHOWN = {"get_params", "set_params", "fit_transform"}


def skip_sklearn_members(app, what, name, obj, skip, options):
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn") and name not in SKLEARN_MEMBERS_SHOWN:
        return True
    return None


# In a parameter's type, a name ending in "_" before "," or ")" (as in
# "ndarray of shape (n_features_in_,)") would read as a reST link: escape it
# before numpydoc renders the docstring.
PARAMETER_LINE = re.compile(r"^(\s*\*{0,2}\w[\w, *]* : )(.*)$")
TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[,)])")


def escape_type_underscores(app, what, name, obj, options, lines):
    for index, line in enumerate(lines):
        match = PARAMETER_LINE.match(line)
        if match and "`" not in match.group(2):
            lines[index] = match.group(1) + TRAILING_UNDERSCORE.sub(r"\\_", match.group(2))


# The API reference of the estimators is generated from their one list
# (mmit._registry): a section per SECTIONS entry, each estimator with its
# aliases and companions; docs/api.rst includes it.
ESTIMATOR_REFERENCE = DOCS / "api_estimators.rst"


def write_estimator_reference():
    from mmit._registry import ESTIMATORS, SECTIONS

    lines = [".. currentmodule:: mmit", ""]
    for section in SECTIONS:
        names = [name for entry in ESTIMATORS if entry.section == section
                 for name in (entry.name, *entry.aliases,
                              *(companion.__name__ for companion in entry.companions))]
        lines += [section, "-" * len(section), "", ".. autosummary::",
                  "   :toctree: generated/", "   :nosignatures:", "",
                  *(f"   {name}" for name in names), ""]
    text = "\n".join(lines)
    if not ESTIMATOR_REFERENCE.exists() or ESTIMATOR_REFERENCE.read_text() != text:
        ESTIMATOR_REFERENCE.write_text(text)


write_estimator_reference()

# API reference: one generated page per public name (docs/generated/), from
# the autosummary lists of every page (the included estimator list too,
# which autosummary reads as a file of its own)
autosummary_generate = sorted(path.name for path in DOCS.glob("*.rst"))


def setup(app):
    app.connect("autodoc-skip-member", skip_sklearn_members)
    # before numpydoc's own handler (priority 500) renders the sections
    app.connect("autodoc-process-docstring", escape_type_underscores, priority=400)
