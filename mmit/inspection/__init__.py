"""Why a model predicts what it does: exact SHAP values of every mmit model
(:func:`shap_values`, :class:`Explanation`; ``_shap``), through the
explainers the models give (``mmit._utils._protocols``): path-dependent
TreeSHAP of the trees (``mmit.tree._treeshap``, compiled), the linear
models' terms, a stack's weighted members."""

from ._shap import Explanation, shap_values

__all__ = ["Explanation", "shap_values"]
