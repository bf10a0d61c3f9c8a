"""Survival analysis with interval models: survival data as interval targets
(:func:`intervals_from_survival`), scikit-survival's conventions for any
mmit model (:class:`SurvivalRegressor`, :class:`StepFunction`; ``_survival``)
and Harrell's concordance index for interval targets (``_concordance``,
published as :func:`mmit.metrics.concordance_index`)."""

from ._survival import StepFunction, SurvivalRegressor, intervals_from_survival

__all__ = ["StepFunction", "SurvivalRegressor", "intervals_from_survival"]
