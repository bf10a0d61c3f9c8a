"""The package's layers: dependencies point one way.

Each subpackage (and each public module) is a unit in a layer; a module
imports (or cimports) only modules of its own unit or of the layers below.
The compiled kernels import only compiled modules and the few plain modules
made for them (no validation of users' input, no scikit-learn). The top
level holds only the public modules, ``__init__``, ``__main__`` and the
subpackages. The layers, bottom up, as the development guide lists them.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "mmit"

LAYERS = [
    ["_utils"],
    ["_loss"],
    ["linear_model"],
    ["tree"],
    ["ensemble"],
    ["survival", "inspection", "additive"],
    ["_registry"],
    ["_persistence"],
    ["metrics", "datasets", "baselines", "plot"],
    ["_cli"],
    ["__init__", "__main__"],
]
LAYER_OF = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}
# plain modules a kernel may import: they import nothing above them
KERNEL_HELPERS = {"mmit._utils._checks", "mmit._utils._buffers", "mmit._loss._loss_list"}

CYTHON_IMPORT = re.compile(
    r"^\s*(?:from\s+(\.*[\w.]*)\s+c?import\s+([\w, ()]+)|c?import\s+([\w.]+))",
    re.MULTILINE)


def sources():
    if not ROOT.is_dir():
        pytest.skip("needs the source tree")
    return sorted(path for pattern in ("*.py", "*.pyx", "*.pxd", "*.tp")
                  for path in ROOT.rglob(pattern) if "data" not in path.parts)


def module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1].endswith(".pxd"):  # a template's stem: X.pxd.tp
        parts[-1] = parts[-1][:-4]
    if parts[-1] == "__init__":
        parts = parts[:-1] if len(parts) > 1 else parts
    return ".".join(parts)


def absolute(module, level, package):
    """The absolute name of ``from <level dots><module> import``."""
    if level == 0:
        return module
    base = package.split(".")[:len(package.split(".")) - level + 1]
    return ".".join(base + ([module] if module else []))


def imports(path):
    """The mmit modules a source file imports or cimports (names imported
    from a package count as its submodules when they are)."""
    name = module_name(path)
    package = name if path.stem == "__init__" else name.rsplit(".", 1)[0]
    found = set()
    text = path.read_text()
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom):
                base = absolute(node.module or "", node.level, package)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    else:
        code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
        for match in CYTHON_IMPORT.finditer(code):
            source, names, plain = match.groups()
            if plain:
                found.add(plain)
                continue
            level = len(source) - len(source.lstrip("."))
            base = absolute(source.lstrip("."), level, package)
            found.add(base)
            found.update(f"{base}.{item.strip(' ()')}" for item in names.split(",")
                         if item.strip(" ()"))
    return {module for module in found if module.split(".")[0] == "mmit"
            and existing(module)}


def existing(module):
    """Whether ``module`` names a module (or package) of the source tree."""
    path = ROOT.parent.joinpath(*module.split("."))
    return (path.is_dir() or any(path.with_suffix(suffix).exists()
                                 for suffix in (".py", ".pyx", ".pxd"))
            or path.with_suffix(".pxd.tp").exists())


def unit(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_unit_has_a_layer():
    units = {unit(module_name(path)) for path in sources()}
    assert units == set(LAYER_OF), "list every subpackage and public module in LAYERS"


def test_the_top_level_holds_public_modules_and_subpackages():
    private = sorted(path.name for path in ROOT.iterdir()
                     if path.is_file() and path.name.startswith("_")
                     and path.name not in ("__init__.py", "__main__.py"))
    assert private == []
    for folder in ROOT.iterdir():
        if folder.is_dir() and folder.name not in ("data", "__pycache__"):
            assert (folder / "__init__.py").exists(), folder
            init = ast.parse((folder / "__init__.py").read_text())
            assert ast.get_docstring(init), f"{folder.name}/__init__.py says what it holds"


def test_no_module_imports_one_above_it():
    upward = []
    for path in sources():
        name = module_name(path)
        own = unit(name)
        for module in imports(path):
            other = unit(module)
            if other != own and (LAYER_OF[other] >= LAYER_OF[own]):
                upward.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert upward == []


def test_kernels_import_only_kernels():
    compiled = {module_name(path) for path in sources() if path.suffix in (".pyx", ".pxd")}
    front_end = []
    for path in sources():
        if path.suffix not in (".pyx", ".pxd", ".tp"):
            continue
        for module in imports(path):
            if module not in compiled | KERNEL_HELPERS and not ROOT.parent.joinpath(
                    *module.split(".")).is_dir():
                front_end.append(f"{path.relative_to(ROOT.parent)} imports {module}")
    assert front_end == []
