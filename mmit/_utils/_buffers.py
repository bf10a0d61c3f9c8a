"""Working arrays that a sequence of tree builds reuses.

A boosting fit grows one tree per stage on the same rows: the criterion,
the splitter and the stage's targets need arrays of the same sizes every
time (hundreds of megabytes at a million rows). Allocating them afresh made
the system hand out (and zero) new pages at every stage; a :class:`Buffers`
keeps each array from one build to the next instead.
"""

import numpy as np


class Buffers:
    """Named working arrays, kept from one use to the next.

    An array asked for by a name is a view of the memory of the previous
    array of that name when that is large enough and of the same type: the
    previous holder must be done with it. One build at a time (a
    ``TreeBuilder`` owns one, and refuses to build twice at once).
    """

    def __init__(self):
        self._arrays = {}

    def empty(self, name, shape, dtype=np.float64):
        """An uninitialised array of ``shape`` (an int or a tuple of ints) and
        ``dtype``."""
        dtype = np.dtype(dtype)
        if isinstance(shape, tuple):
            size = 1
            for extent in shape:
                size *= extent
        else:
            size = shape
        base = self._arrays.get(name)
        if base is None or base.dtype != dtype or base.size < size:
            base = np.empty(max(size, 1), dtype=dtype)
            self._arrays[name] = base
        return base[:size] if isinstance(shape, int) else base[:size].reshape(shape)


def empty(buffers, name, shape, dtype=np.float64):
    """``buffers.empty(name, shape, dtype)``, or a new array without buffers."""
    if buffers is None:
        return np.empty(shape, dtype=dtype)
    return buffers.empty(name, shape, dtype)
