"""The losses, in tag order: the one list every loss dispatch is made from.

An entry's position is its tag. From this list, ``setup.py`` expands the
Cython templates (``*.tp``) before compiling: the ``Loss`` fused type, the
``LossTag`` enum and every dispatch on them in ``_loss.pxd`` (from
``_loss.pxd.tp``), the solver's run-time dispatchers in
``_solver_dispatch.pxi`` (from ``_solver_dispatch.pxi.tp``); ``_loss.pyx``
makes one registry entry per item. A loss named ``name`` has its whole
compiled algebra in ``mmit/_loss/_<name>.pxd``.

Plain Python with no import of the package: the build reads it before
anything is compiled.
"""

from typing import NamedTuple


class LossSpec(NamedTuple):
    """A loss as the build and the registry know it.

    Parameters
    ----------
    name : str
        What estimators take as ``loss``; ``mmit/_loss/_<name>.pxd`` holds
        its algebra.
    differentiable : bool
        Whether the loss has a gradient everywhere and a curvature (what the
        Newton solvers of the linear model, the linear leaves and the stack's
        combiner need).
    sums_to_one_hinge : bool
        Whether the hinges of rows whose margins a range of predictions
        crosses sum, on that range, to one hinge at their weighted mean
        position plus a constant (what the booster's fit on a cluster needs
        to stand in for the rows far from a node's optimum).
    """

    name: str
    differentiable: bool
    sums_to_one_hinge: bool

    @property
    def type_name(self):
        """The struct naming the loss in the ``Loss`` fused type (CamelCase)."""
        return self.name.title().replace("_", "")

    @property
    def tag_name(self):
        """Its member of the ``LossTag`` enum."""
        return f"{self.name.upper()}_TAG"


LOSS_LIST = (
    LossSpec("linear_hinge", differentiable=False, sums_to_one_hinge=True),
    LossSpec("squared_hinge", differentiable=True, sums_to_one_hinge=True),
)
