"""The losses of interval regression and their exact solver.

The list of losses (``_loss_list``) from which the build generates every
dispatch on a loss (``_loss.pxd`` from ``_loss.pxd.tp``,
``_solver_dispatch.pxi`` from ``_solver_dispatch.pxi.tp``), each loss's
compiled algebra (``_linear_hinge.pxd``, ``_squared_hinge.pxd``) on the
solver's state (``_pieces.pxd``), the dynamic-programming solver of sums of
interval hinges (``_solver``), the registry of loss entries the estimators
take (``_loss``) and the public entry point of the solver
(``_optimal_costs``: :func:`mmit.compute_optimal_costs`).

It knows nothing of the models that minimise the losses (trees, linear
models, the stack's combiner): they take a registry entry.
"""
