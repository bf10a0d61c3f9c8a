"""Build the Cython extensions of mmit.

Set ``MMIT_DEBUG=1`` to compile with bounds, wraparound, initialisation and
None checks turned back on, and index checks on raw-pointer accesses.
"""
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("MMIT_DEBUG", "0") not in ("", "0")

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

extensions = [
    Extension(
        f"mmit.{name}",
        [f"mmit/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=macros,
        language="c++",
        extra_compile_args=["-O0", "-g"] if DEBUG else ["-O3"],
    )
    for name in ("_loss", "_solver", "_criterion", "_leaf_models", "_tree", "_features",
                 "_splitter", "_histogram_splitter", "_builder", "_pruning",
                 "_coordinate_descent")
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
