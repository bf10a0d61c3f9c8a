"""Predictive distributions from a model's held-out residuals: the deferred
spread forest (:class:`SpreadDistribution`) grown on the residual intervals
of the rows' held-out predictions, weighed around the model's prediction.
The models whose fit makes held-out predictions of their rows (the stack's
out-of-fold predictions, a tree of predictors' held-out path predictions,
an additive model's cross-validation folds) take their distributions so
(:class:`HeldOutDistributionMixin`)."""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils._base import rows_as_read
from .._utils._categorical import non_numeric_columns, validate_features
from ..tree._growing import draw_seed
from ._distribution_strategies import DeferredDistribution, SpreadDistribution, TrainingRows
from ._forest import MMITForest
from ._predictive import PredictiveDistributionMixin


def held_out_distribution(distribution, X, lower, upper, weight, location,
                          random_state):
    """The deferred predictive distributions of a model whose held-out
    predictions of its training rows are ``location`` (NaN where none):
    ``distribution`` ("spread" or a :class:`SpreadDistribution`) grown on
    their residuals from a copy of the rows, seeded from ``random_state``
    (None with ``distribution=None``)."""
    if distribution is None:
        return None
    strategy = SpreadDistribution() if distribution == "spread" else distribution
    # the rows encoded as a forest encodes them, non-numeric columns as
    # categories: the spread forest reads them so
    categorical = non_numeric_columns(X)
    encoder = MMITForest(categorical_features="from_dtype" if categorical is None
                         else categorical)
    rows = validate_features(encoder, X, reset=True, order="C")
    rows = (sp.csr_matrix(rows, copy=True) if sp.issparse(rows)
            else np.array(rows, order="C"))
    seed = (strategy.random_state if strategy.random_state is not None
            else draw_seed(random_state))
    return DeferredDistribution(
        StackSpread(strategy, encoder, seed),
        TrainingRows(rows, lower.copy(), upper.copy(), weight.copy(), rows.shape[0],
                     location))


class HeldOutDistributionMixin(PredictiveDistributionMixin):
    """The predictive distributions of a model made by
    :func:`held_out_distribution` (its ``distribution_``)."""

    def _distribution_query(self, X, distribution):
        """``X`` as the spread forest takes it, and the model's predictions
        there (see ``PredictiveDistributionMixin``)."""
        location = self.predict(X)
        return rows_as_read(distribution.weighting, X), location



@dataclass(frozen=True)
class StackSpread:
    """How a stack (or a tree of predictors) makes its predictive
    distributions: ``strategy`` (a :class:`SpreadDistribution`) grown on the
    model's held-out residuals, its forest of ``tree_share`` times the
    default forest's trees, seeded by ``seed``, the rows encoded by
    ``encoder``."""

    strategy: SpreadDistribution
    encoder: MMITForest
    seed: int

    def fit(self, model, rows):
        """The ForestDistribution of a fitted model and its ``TrainingRows``
        (the encoder is a default forest: its trees and loss are the
        defaults')."""
        return self.strategy.grow(self.encoder, rows, rows.out_of_bag,
                                  self.encoder.n_estimators, self.encoder.loss,
                                  model.n_jobs, self.seed)
