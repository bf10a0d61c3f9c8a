"""Maximum Margin Interval Trees: interval regression with trees and forests."""

from ._boosting import MMITBoost
from ._classes import MMIT, MaxMarginIntervalTree
from ._explain import Explanation, shap_values
from ._export import export_text
from ._forest import MMITForest
from ._forest_cv import MMITForestCV
from ._imputation import MeanImputer
from ._linear import IntervalLinearRegression, IntervalLinearRegressionCV
from ._mmit_cv import MMITCV
from ._optimal_costs import compute_optimal_costs
from ._persistence import load_model, save_model
from ._predictive import LocationDistribution, SpreadDistribution
from ._stacking import IntervalStackingRegressor
from ._survival import StepFunction, SurvivalRegressor, intervals_from_survival

# the one place the version is written (pyproject.toml reads it from here)
__version__ = "0.2.0.dev0"

__all__ = [
    "Explanation",
    "IntervalLinearRegression",
    "IntervalLinearRegressionCV",
    "IntervalStackingRegressor",
    "LocationDistribution",
    "MMIT",
    "MMITBoost",
    "MMITCV",
    "MMITForest",
    "MMITForestCV",
    "MaxMarginIntervalTree",
    "MeanImputer",
    "SpreadDistribution",
    "StepFunction",
    "SurvivalRegressor",
    "compute_optimal_costs",
    "export_text",
    "intervals_from_survival",
    "load_model",
    "save_model",
    "shap_values",
]
