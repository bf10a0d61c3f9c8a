"""Generalized additive models of interval targets: :class:`IntervalGAM`
and :class:`IntervalGAMCV` (``_gam``; the fitted model they share,
``_additive_model``: its terms and their bands; the design,
``_additive_design``; the penalized Newton solver, ``_penalized_newton``;
the SHAP values, ``_additive_terms``), fitted on P-spline bases
(``_splines``), their predictive distributions from the folds' held-out
residuals as the ensembles make them; multivariate adaptive regression
splines, :class:`IntervalMARS` (``_mars``: the forward pass' fast knot
updates, the backward pass by GCV; ``_hinge_terms``: its terms, products
of hinges, and their SHAP values)."""

from ._gam import IntervalGAM, IntervalGAMCV
from ._mars import IntervalMARS

__all__ = ["IntervalGAM", "IntervalGAMCV", "IntervalMARS"]
