"""Max-margin linear interval regression: :class:`IntervalLinearRegression`
and :class:`IntervalLinearRegressionCV` (``_linear``), the generalised
Newton solvers of the penalised squared hinge they and the trees' linear
leaves minimise (``_newton``: the method and its loss check; the problem's
declarations in ``_hinge_problem.pxd``, the standardised features in
``_standardisation``, the ridge solver of the leaves in ``_ridge_newton``,
the elastic-net path of the linear models in ``_elastic_net_path``), and
:class:`MeanImputer`, which puts the linear models behind missing values
(``_imputation``)."""

from ._imputation import MeanImputer
from ._linear import IntervalLinearRegression, IntervalLinearRegressionCV

__all__ = ["IntervalLinearRegression", "IntervalLinearRegressionCV", "MeanImputer"]
