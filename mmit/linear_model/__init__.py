"""Max-margin linear interval regression: :class:`IntervalLinearRegression`
and :class:`IntervalLinearRegressionCV` (``_linear``), the generalised
Newton solver of the penalised squared hinge they and the trees' linear
leaves minimise (``_newton``), and :class:`MeanImputer`, which puts the
linear models behind missing values (``_imputation``)."""

from ._imputation import MeanImputer
from ._linear import IntervalLinearRegression, IntervalLinearRegressionCV

__all__ = ["IntervalLinearRegression", "IntervalLinearRegressionCV", "MeanImputer"]
