"""The decorators that every estimator's ``fit`` and ``predict`` carry, as
one each: a fit's shared docstring sections and scikit-learn's fit context
(parameter validation, nested or not), a prediction's shared docstring
sections, Dask collections a partition at a time and sparse rows a block at
a time."""

import functools

from sklearn.base import _fit_context

from ._dask_collections import by_partitions
from ._docstrings import fill_doc
from ._sparse import by_row_blocks


def fit_method(fit=None, *, nested_validation=False):
    """Decorate ``fit``: fill its docstring's shared sections and run it in
    scikit-learn's fit context, which validates the parameters of the
    estimator (and of the estimators it holds when ``nested_validation``,
    as a meta-estimator's fit must). ``@fit_method`` or
    ``@fit_method(nested_validation=True)``."""
    if fit is None:
        return functools.partial(fit_method, nested_validation=nested_validation)
    return fill_doc(_fit_context(prefer_skip_nested_validation=not nested_validation)(fit))


def predict_method(predict):
    """Decorate ``predict(self, X)``: fill its docstring's shared sections, and
    take Dask collections (:func:`by_partitions`) and sparse matrices of many
    rows (:func:`by_row_blocks`)."""
    return fill_doc(by_partitions(by_row_blocks(predict)))
