"""Maximum Margin Interval Trees: interval regression with trees and forests."""

import sys

from ._loss._optimal_costs import compute_optimal_costs
from ._persistence import load_model, save_model
from ._utils._version import __version__  # noqa: F401 (mmit.__version__)
from .ensemble import (
    IntervalStackingRegressor,
    LocationDistribution,
    MMITBoost,
    MMITForest,
    MMITForestCV,
    SpreadDistribution,
)
from .inspection import Explanation, shap_values
from .linear_model import IntervalLinearRegression, IntervalLinearRegressionCV, MeanImputer
from .survival import StepFunction, SurvivalRegressor, intervals_from_survival
from .tree import MMIT, MMITCV, MaxMarginIntervalTree, export_text

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

# A pickle names the module of every class it holds. The modules of the flat
# layout before the subpackages (0.2.0.dev0 up to November 2026) stay
# importable under their old names, so that the pickles they wrote load.
_MOVED_MODULES = {
    "mmit._boosting": "mmit.ensemble._boosting",
    "mmit._classes": "mmit.tree._classes",
    "mmit._forest": "mmit.ensemble._forest",
    "mmit._forest_cv": "mmit.ensemble._forest_cv",
    "mmit._imputation": "mmit.linear_model._imputation",
    "mmit._linear": "mmit.linear_model._linear",
    "mmit._mmit_cv": "mmit.tree._mmit_cv",
    "mmit._predictive": "mmit.ensemble._predictive",
    "mmit._stacking": "mmit.ensemble._stacking",
    "mmit._survival": "mmit.survival._survival",
    "mmit._tree": "mmit.tree._tree",
}
for _old, _new in _MOVED_MODULES.items():
    sys.modules.setdefault(_old, sys.modules[_new])
del _old, _new
