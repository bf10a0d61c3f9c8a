"""The ``mmit`` command line (``_main``: ``mmit cv``, ``fit``, ``predict``,
``explain``, ``plot``) and the cross-validated comparison of models behind
``mmit cv`` (``_evaluation``)."""

from ._main import main

__all__ = ["main"]
