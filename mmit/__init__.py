"""Maximum Margin Interval Trees: interval regression with trees and forests."""

import sys

# the package's functions (and the Explanation that shap_values returns),
# re-exported as themselves
from ._loss._optimal_costs import compute_optimal_costs as compute_optimal_costs
from ._persistence import load_model as load_model
from ._persistence import save_model as save_model
from ._registry import exported
from ._utils._version import __version__  # noqa: F401 (mmit.__version__)
from .inspection import Explanation as Explanation
from .inspection import shap_values as shap_values
from .tree import export_text as export_text

# the public estimators, their aliases and what comes with them, from their
# one list (mmit._registry), beside the package's functions
globals().update(exported())
_FUNCTIONS = ("Explanation", "compute_optimal_costs", "export_text", "load_model",
              "save_model", "shap_values")
__all__ = sorted([*exported(), *_FUNCTIONS])

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
