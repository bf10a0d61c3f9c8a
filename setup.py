"""Build the Cython extensions of mmit.

Set ``MMIT_DEBUG=1`` to compile with bounds, wraparound, initialisation and
None checks turned back on, and index checks on raw-pointer accesses.

The Cython templates (``mmit/**/*.tp``) are expanded first with the list of
losses in ``mmit/_loss/_loss_list.py`` (``Cython.Tempita``, as scikit-learn
expands its ``*.tp`` files): ``mmit/_loss/_loss.pxd.tp`` gives
``mmit/_loss/_loss.pxd``.
A generated file is rewritten only when its text changes, so that an
unchanged one does not rebuild its dependents.

The modules with parallel loops (``prange``) are compiled with OpenMP when
the C++ compiler supports it (checked by compiling a small program);
without it, or with ``MMIT_OPENMP=0``, they build and run on one thread.

The utility code Cython writes into every module (memoryviews, most of each
generated file) is compiled once, in the shared module
``mmit._utils._cyutility`` (Cython >= 3.1, as scikit-learn does): half the
C++ to compile. Cython and the C++ compiler run on every core
(``MMIT_BUILD_JOBS`` sets how many).
"""
import os
import runpy
import shlex
import subprocess
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from Cython.Tempita import sub as expand_template
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
DEBUG = os.environ.get("MMIT_DEBUG", "0") not in ("", "0")
JOBS = int(os.environ.get("MMIT_BUILD_JOBS", "0")) or os.cpu_count() or 1
# the module holding the utility code every compiled module shares
SHARED_UTILITY = "mmit._utils._cyutility"
# a debug build's checks are in its code: -O1 keeps every one, and the
# tests run against it a third faster than at -O0
OPTIMISATION = ["-O1"] if DEBUG else ["-O3"]

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "nonecheck": DEBUG,
    "cdivision": not DEBUG,
}
macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
if DEBUG:
    macros.append(("MMIT_DEBUG", "1"))

# the compiled modules, by package; those whose loops run on several threads
EXTENSIONS = {
    "_loss": ["_loss", "_solver"],
    "linear_model": ["_newton", "_standardisation", "_ridge_newton", "_elastic_net_path"],
    "tree": ["_stages", "_criterion", "_node_models", "_tree", "_features", "_monotone",
             "_splitter", "_exact_splitter", "_binning", "_histogram",
             "_histogram_splitter", "_builder", "_pruning", "_level_builder", "_treeshap"],
    "ensemble": ["_turnbull", "_forest_readout"],
    "survival": ["_pair_counts"],
}
OPENMP_MODULES = {"_loss._loss", "_loss._solver", "tree._criterion", "tree._stages",
                  "tree._binning", "tree._histogram_splitter", "ensemble._turnbull",
                  "ensemble._forest_readout", "tree._treeshap"}


def openmp_flag():
    """``-fopenmp`` when the C++ compiler builds and links an OpenMP program
    with it, else None."""
    if os.environ.get("MMIT_OPENMP", "1") in ("", "0"):
        return None
    compiler = shlex.split(sysconfig.get_config_var("CXX") or "c++")
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "check_openmp.cpp"
        source.write_text("#include <omp.h>\n"
                          "int main() { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
        try:
            subprocess.run([*compiler, "-fopenmp", str(source), "-o",
                            str(Path(directory) / "check_openmp")],
                           check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            return None
    return "-fopenmp"


OPENMP = openmp_flag()


def expand_templates():
    """Write each ``mmit/**/X.tp`` to ``X`` beside it, expanded with ``losses``."""
    losses = runpy.run_path(str(ROOT / "mmit" / "_loss" / "_loss_list.py"))["LOSS_LIST"]
    for template in sorted((ROOT / "mmit").rglob("*.tp")):
        target = template.with_suffix("")
        text = expand_template(template.read_text(), name=str(template), losses=losses)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)


expand_templates()


def extension(name):
    """The extension ``mmit.<name>`` (``name`` dotted below the package)."""
    parallel = [OPENMP] if OPENMP and name in OPENMP_MODULES else []
    return Extension(
        f"mmit.{name}",
        [f"mmit/{name.replace('.', '/')}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=macros,
        language="c++",
        extra_compile_args=OPTIMISATION + parallel,
        extra_link_args=parallel,
    )


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling ``JOBS`` extensions at once unless told
    otherwise (``--parallel``)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = JOBS


# Cython generates the shared module's C++ itself (no .pyx; language left to
# the file's suffix: Cython 3.3 refuses a language given twice for it)
shared_utility = Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", "/") + ".cpp"],
                           define_macros=macros, extra_compile_args=OPTIMISATION)
extensions = [extension(f"{package}.{name}")
              for package, names in EXTENSIONS.items() for name in names]

setup(ext_modules=cythonize([shared_utility, *extensions], compiler_directives=directives,
                            shared_utility_qualified_name=SHARED_UTILITY, nthreads=JOBS),
      cmdclass={"build_ext": ParallelBuildExt})
