"""The version of mmit: the one place it is written (``mmit.__version__``,
the command line's ``--version`` and the build, through ``pyproject.toml``,
read it from here)."""

__version__ = "0.2.0.dev0"
