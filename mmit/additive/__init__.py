"""Generalized additive models of interval targets: :class:`IntervalGAM`
and :class:`IntervalGAMCV` (``_gam``: the additive design, its penalized
Newton solver, the terms and their bands), fitted on P-spline bases
(``_splines``), their predictive distributions from the folds' held-out
residuals as the ensembles make them."""

from ._gam import IntervalGAM, IntervalGAMCV

__all__ = ["IntervalGAM", "IntervalGAMCV"]
