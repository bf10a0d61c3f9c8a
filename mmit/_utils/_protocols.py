"""The protocols through which mmit's models serve each other.

A model that takes part in an explanation or in a stack says so through a
method of its own, never through its type (the model files' protocol,
``_export_state`` and ``_import_state``, is described in
``mmit._persistence``):

- **Explanations.** A fitted model's ``__mmit_shap__()`` returns its
  :class:`Explainer`: what its prediction adds up, able to give each row's
  exact SHAP values (``contributions``) and the rows as the model reads them
  (``rows``). A tree model returns its trees' explainer, a linear model its
  terms', a search its chosen model's (:func:`explainer_of` of it), a model
  of models the :class:`WeightedExplainer` of its members, a model whose
  members differ from region to region an explainer that weighs their
  values row by row. An explainer that can stand behind the imputers of a
  scikit-learn ``Pipeline`` (steps with ``output_features``, as
  ``MeanImputer``) has ``behind(pipeline)``.
- **Out-of-fold predictions.** A model whose one fit can predict every
  training row by models that never saw its fold (a forest grown by the
  folds, its out-of-bag predictions, a linear CV's fold models) says how in
  ``__mmit_fold_predictions__(cv, out_of_fold)``, a
  :class:`OneFitFoldPredictions` (None: it must be fitted on each fold). The
  stack reads every member's that way.
"""

from dataclasses import dataclass, field

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils import _safe_indexing

from ._base import rows_as_read
from ._categorical import is_dataframe


class Explainer:
    """What a fitted model's ``__mmit_shap__()`` returns: exact SHAP values of
    its predictions (module doc). Subclasses define both methods."""

    def rows(self, X):
        """The rows of ``X`` as numbers, as the model reads them: (n_samples,
        n_features), a categorical feature as its category codes, NaN for a
        missing value."""
        raise NotImplementedError

    def contributions(self, X, interactions, n_threads):
        """``(values, base)`` of the rows of ``X`` (as the model's ``predict``
        takes them): values (n_samples, n_features), or with
        ``interactions`` (n_samples, n_features, n_features); base a float or
        one per row, ``values`` summed over the features plus ``base`` being
        each prediction."""
        raise NotImplementedError


class ReadRowsExplainer(Explainer):
    """The explainer of a model whose prediction is ``terms`` of its rows as it
    reads them (:func:`~mmit._utils._base.rows_as_read`): ``terms`` has
    ``contributions(rows, interactions, n_threads)`` (an ``AdditiveTrees``,
    say)."""

    def __init__(self, model, terms):
        self.model = model
        self.terms = terms

    def rows(self, X):
        return rows_as_read(self.model, X)

    def contributions(self, X, interactions, n_threads):
        return self.terms.contributions(rows_as_read(self.model, X), interactions,
                                        n_threads)


class WeightedExplainer(Explainer):
    """The explainer of a weighted sum of models (a stack's members): the
    weighted sum of their values and base values, the members of weight 0
    left out; the rows as its first member reads them.

    Parameters
    ----------
    model : estimator or None
        The model of models; the rows of an array ``X`` are checked as it
        reads them once, before its members read them (a data frame goes to
        the members as it is). None: the rows come read by the model around
        it (a tree of predictors' node combination, whose first member may
        be a pipeline that refuses NaN).
    members : list of (float, estimator)
        The weights and the fitted members (each explained by
        :func:`explainer_of`).
    """

    def __init__(self, model, members):
        self.model = model
        self.members = [(weight, explainer_of(member)) for weight, member in members]

    def rows(self, X):
        return self.members[0][1].rows(X)

    def contributions(self, X, interactions, n_threads):
        if self.model is not None and not is_dataframe(X):
            X = rows_as_read(self.model, X)
        total, base = 0.0, 0.0
        for weight, member in self.members:
            if weight > 0.0:
                values, member_base = member.contributions(X, interactions, n_threads)
                total = total + weight * values
                base += weight * member_base
        return total, base


class RowWeightedExplainer(Explainer):
    """The explainer of a model that weighs its members row by row (a tree of
    predictors' path predictors): each row's values are the weighted sum of
    its members' values, its base value the weighted sum of theirs (one per
    row); the rows as its first member reads them.

    Parameters
    ----------
    model : estimator
        The model of models (an array ``X`` checked as it reads it).
    members : list of estimators
        The fitted members (each explained by :func:`explainer_of`).
    weights : callable
        ``weights(X)``: the weight of each member in each row's prediction,
        of shape (n_members, n_samples).
    """

    def __init__(self, model, members, weights):
        self.model = model
        self.members = [explainer_of(member) for member in members]
        self.weights = weights

    def rows(self, X):
        return self.members[0].rows(X)

    def contributions(self, X, interactions, n_threads):
        if not is_dataframe(X):
            X = rows_as_read(self.model, X)
        weights = self.weights(X)
        n_samples, n_features = weights.shape[1], self.model.n_features_in_
        shape = (n_samples, n_features) + ((n_features,) if interactions else ())
        total, base = np.zeros(shape), np.zeros(n_samples)
        for member, explainer in enumerate(self.members):
            rows = np.flatnonzero(weights[member] > 0.0)
            if rows.size == 0:
                continue
            values, member_base = explainer.contributions(_safe_indexing(X, rows),
                                                          interactions, n_threads)
            weight = weights[member, rows]
            total[rows] += weight.reshape((-1,) + (1,) * (values.ndim - 1)) * values
            base[rows] += weight * member_base
        return total, base


def explainer_of(estimator):
    """The :class:`Explainer` of a fitted model (its ``__mmit_shap__()``), or
    of a scikit-learn ``Pipeline`` of imputers and such a model whose
    explainer stands behind them (``behind``). TypeError for any other
    model; scikit-learn's NotFittedError for one not fitted."""
    if isinstance(estimator, Pipeline):
        *imputers, model = (step for _, step in estimator.steps)
        behind = getattr(explainer_of(model), "behind", None)
        if behind is not None and all(hasattr(step, "output_features")
                                      for step in imputers):
            return behind(estimator)
    elif hasattr(estimator, "__mmit_shap__"):
        return estimator.__mmit_shap__()
    raise TypeError(f"shap_values explains mmit's models (each gives its explainer, "
                    f"__mmit_shap__) and pipelines of MeanImputer and a linear model; "
                    f"not {type(estimator).__name__}.")


@dataclass(frozen=True)
class OneFitFoldPredictions:
    """How one fit of a model gives every training row a prediction by models
    that never saw its fold (``__mmit_fold_predictions__``, module doc).

    Parameters
    ----------
    params : dict
        The parameters to set on a clone of the model: its one fit then makes
        them.
    attribute : str
        The fitted attribute that holds them (one per row).
    source : str
        Where they come from, as a progress report says it.
    allows_nan : bool, default=False
        A row may have none (NaN: no out-of-bag prediction).
    own_threads : bool, default=False
        The fit runs on threads of its own (``n_jobs``), beside no other.
    """

    params: dict = field(default_factory=dict)
    attribute: str = "cv_predictions_"
    source: str = "cv path"
    allows_nan: bool = False
    own_threads: bool = False
