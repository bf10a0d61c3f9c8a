"""Why a model predicts what it does: exact SHAP values of every mmit model
(:func:`shap_values`, :class:`Explanation`; ``_shap``) on compiled
path-dependent TreeSHAP (``_treeshap``)."""

from ._shap import Explanation, shap_values

__all__ = ["Explanation", "shap_values"]
