"""Writing a file that replaces a user's file (model files, the command line's
outputs): into a temporary file beside it, moved into place once complete,
so that a failed or interrupted write leaves the old file as it was."""

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replacing_file(path, mode="wb", **options):
    """Open a temporary file in ``path``'s folder (``open``'s ``mode`` and
    ``options``) and move it to ``path`` when the block ends without an
    error; on an error it is removed and ``path`` is left untouched."""
    path = Path(path)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                             suffix=".tmp")
    try:
        with os.fdopen(descriptor, mode, **options) as file:
            yield file
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
