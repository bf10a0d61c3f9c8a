"""Ensembles of Maximum Margin Interval Trees and of model families.

:class:`MMITForest` (``_forest``) and :class:`MMITForestCV`
(``_forest_cv``), bagged trees and their out-of-bag machinery (``_bagging``)
with predictive distributions (``_distributions``: the distributions of a
forest's leaves; ``_distribution_strategies``: how a model makes them,
:class:`SpreadDistribution` and :class:`LocationDistribution`;
``_predictive``: the estimators' methods that read them; compiled,
``_turnbull``: the leaves' Turnbull estimates, ``_forest_readout``: their
read-outs); :class:`MMITBoost` (``_boosting``);
what the tree ensembles share (``_base``); and
:class:`IntervalStackingRegressor` (``_stacking``) with its convex combiner
(``_combiner``); :class:`TreeOfPredictors` (``_trees_of_predictors``), a
tree whose nodes hold the members that predict their regions best (its
search, ``_predictor_tree_search``; its fitted tree,
:class:`PredictorTree`, ``_predictor_tree``).
"""

from ._boosting import MMITBoost
from ._distribution_strategies import LocationDistribution, SpreadDistribution
from ._forest import MMITForest
from ._forest_cv import MMITForestCV
from ._predictor_tree import PredictorTree
from ._stacking import IntervalStackingRegressor
from ._trees_of_predictors import TreeOfPredictors

__all__ = ["IntervalStackingRegressor", "LocationDistribution", "MMITBoost", "MMITForest",
           "MMITForestCV", "PredictorTree", "SpreadDistribution", "TreeOfPredictors"]
