"""Why a model predicts what it does: exact SHAP values of every mmit model
(:func:`shap_values`, :class:`Explanation`; ``_shap``), through the
explainers the models give (``mmit._utils._protocols``): path-dependent
TreeSHAP of the trees (``mmit.tree._treeshap``, compiled), the linear
models' terms, a stack's weighted members; and where the target is highest
or lowest: bump hunting on interval targets (:class:`IntervalPRIM`,
``_prim``)."""

from ._prim import IntervalPRIM
from ._shap import Explanation, shap_values

__all__ = ["Explanation", "IntervalPRIM", "shap_values"]
