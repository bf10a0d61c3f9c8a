"""MMITForestCV: a forest whose margin, loss, max_features and leaf size are
chosen out of bag."""

import itertools
import sys
import time
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from .._utils._base import set_init_parameters
from .._utils._categorical import CATEGORICAL_FEATURES_CONSTRAINT, encoded
from .._utils._constraints import (
    INTERACTION_CST_CONSTRAINT,
    MONOTONIC_CST_CONSTRAINT,
    monotonic_constraints,
)
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._scores import distance_outside
from .._utils._search import IntervalSearch
from .._utils._validation import bounds_spread, validate_training_data
from ..tree._growing import check_leaf_model_growth, draw_seed, tree_params
from ..tree._leaf_models import LEAF_PARAMETERS
from ._bagging import rows_without_out_of_bag_prediction_ignored
from ._forest import MAX_SAMPLES_CONSTRAINT, MMITForest
from ._predictive import ChosenForestDistributionMixin

#: The MMITForest parameters MMITForestCV's grid may set.
FOREST_GRID_PARAMETERS = ("margin", "loss", "max_features", "min_samples_leaf", "max_depth",
                          "leaf_model", *LEAF_PARAMETERS, "categorical_penalty")


def default_forest_grid(lower, upper):
    """MMITForestCV's default candidates, each list in order of preference."""
    spread = bounds_spread(lower, upper)
    return {
        "margin": [0.0] + ([0.1 * spread] if spread > 0.0 else []),
        "loss": ["squared_hinge", "linear_hinge"],
        "max_features": [1.0, 1 / 3, "sqrt"],
        "min_samples_leaf": [1, 5],
    }


def _out_of_bag_errors(params, X, y, sample_weight, seed):
    """Squared distance of each row's out-of-bag prediction to its interval
    (NaN for a row in every bootstrap sample), and the fit time."""
    start = time.perf_counter()
    with rows_without_out_of_bag_prediction_ignored():
        forest = MMITForest(**params, oob_score=True, random_state=seed,
                            distribution=None).fit(X, y, sample_weight)
    seconds = time.perf_counter() - start
    return distance_outside(y[:, 0], y[:, 1], forest.oob_prediction_) ** 2, seconds


@fill_doc
class MMITForestCV(ChosenForestDistributionMixin, IntervalSearch):
    """MMITForest with margin, loss, max_features and leaf size chosen out of bag.

    Each candidate of a small grid is one forest scored by its out-of-bag
    interval MSE: every tree predicts the rows left out of its bootstrap
    sample, so no inner folds are needed (one forest per candidate instead
    of one per candidate and fold). All candidates share the same bootstrap
    samples, so their out-of-bag errors compare row by row: the choice is
    the most preferred candidate (fewest parameters changed from the first
    value of each list, then grid order) whose out-of-bag MSE exceeds the
    best one by at most one standard error of their paired difference.
    Noise in the estimate, large on small data, thus does not move the
    choice away from the preferred values without evidence. The chosen
    forest is then grown on all data with ``n_jobs``.

    Parameters
    ----------
    param_grid : dict of lists, default=None
        Candidate values of ``margin``, ``loss``, ``max_features``,
        ``min_samples_leaf``, ``max_depth``, ``leaf_model``,
        ``leaf_shrinkage`` and ``categorical_penalty``, each list in order
        of preference. None: margin 0
        and a tenth of the standard deviation of the finite training
        bounds, the squared and linear hinge,
        ``max_features`` 1.0 (all features), 1/3 and "sqrt",
        ``min_samples_leaf`` 1 and 5 (24 candidates, MMITForest's defaults
        first: the settings that were best on some data set of the study
        behind those defaults, :ref:`defaults`). Parameters not in the grid
        keep MMITForest's defaults.
    n_estimators : int, default=100
        Trees per forest; with the default bootstrap each row is out of bag
        for about 37% of them.
    max_samples : int or float, default=None
        Size of each bootstrap sample, see :class:`MMITForest`.
    n_jobs : int, default=None
        Candidates grown in parallel (threads).
    random_state : int, RandomState instance or None, default=None
        Draws the one seed of every candidate forest: the same bootstrap
        samples for all.
    verbose : int, default=0
        With 1 or more, report each candidate's out-of-bag MSE on stderr.
    %(categorical_features)s
    monotonic_cst : array-like of int, dict or None, default=None
        Monotone constraints of every candidate's trees (see
        :class:`MMIT`); constant leaves only.
    %(interaction_cst)s
        The same for every candidate's trees (see :class:`MMITForest`).

    Attributes
    ----------
    best_estimator_ : MMITForest
        The chosen forest, grown on all data (with its ``oob_score_``).
    best_params_ : dict
        Its parameters from the grid.
    best_score_ : float
        Its out-of-bag score (negative interval MSE).
    best_index_ : int
        Its index in ``cv_results_``.
    cv_results_ : dict of ndarray
        ``params`` and ``param_<name>`` for every grid parameter (most
        preferred candidates first), ``mean_test_score`` (out-of-bag
        score), ``std_test_score`` (standard error of the paired difference
        with the best candidate's out-of-bag MSE), ``rank_test_score`` and
        ``mean_fit_time``.
    %(features_in)s
    %(categorical_attributes)s

    See Also
    --------
    MMITForest : The forest.
    MMITCV : A single tree chosen by cross-validation.

    Examples
    --------
    >>> from mmit import MMITForestCV
    >>> from mmit.datasets import load_dataset
    >>> data = load_dataset("servo")
    >>> grid = {"loss": ["linear_hinge", "squared_hinge"], "min_samples_leaf": [1, 5]}
    >>> search = MMITForestCV(grid, n_estimators=30, random_state=0)
    >>> search = search.fit(data.data, data.target)
    >>> sorted(search.best_params_), len(search.cv_results_["params"])
    (['loss', 'min_samples_leaf'], 4)
    """

    _parameter_constraints = {
        "param_grid": [dict, None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_samples": MAX_SAMPLES_CONSTRAINT,
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "monotonic_cst": MONOTONIC_CST_CONSTRAINT,
        "interaction_cst": INTERACTION_CST_CONSTRAINT,
    }

    def __init__(self, param_grid=None, *, n_estimators=100, max_samples=None,
                 n_jobs=None, random_state=None, verbose=0,
                 categorical_features="from_dtype", monotonic_cst=None,
                 interaction_cst=None):
        set_init_parameters(self, locals())

    def _candidates(self, lower, upper):
        """Every combination of the grid's values, the most preferred first."""
        grid = (default_forest_grid(lower, upper) if self.param_grid is None
                else self.param_grid)
        unknown = sorted(set(grid) - set(FOREST_GRID_PARAMETERS))
        if unknown:
            raise ValueError(f"param_grid may set {list(FOREST_GRID_PARAMETERS)}, "
                             f"not {unknown}.")
        for name, values in grid.items():
            if isinstance(values, str) or not hasattr(values, "__len__") or not values:
                raise ValueError(f"param_grid[{name!r}] must be a non-empty list, "
                                 f"got {values!r}.")
        names = list(grid)
        indices = sorted(itertools.product(*(range(len(grid[name])) for name in names)),
                         key=lambda index: (sum(i > 0 for i in index), index))
        candidates = [{name: grid[name][i] for name, i in zip(names, index, strict=True)}
                      for index in indices]
        for params in candidates:
            forest = MMITForest(**params)
            forest._validate_params()
            check_leaf_model_growth(tree_params(forest.get_params()), lower.shape[0])
        return candidates

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Grow one forest per candidate and keep the one chosen out of bag.

        %(fit_parameters)s
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in the bootstrap samples (see
            :class:`MMITForest`) and in the out-of-bag MSE.

        %(fit_returns)s
        """
        X_input = X
        X, lower, upper, sample_weight = validate_training_data(self, X, y, sample_weight)
        candidates = self._candidates(lower, upper)
        y = np.column_stack([lower, upper])
        seed = draw_seed(check_random_state(self.random_state))
        # the constraints by position: the candidates fit X as encoded
        common = {"n_estimators": self.n_estimators, "max_samples": self.max_samples,
                  "monotonic_cst": monotonic_constraints(self),
                  "interaction_cst": self.interaction_cst, "n_jobs": 1}
        # the candidates take X as encoded here, with its categories
        results = Parallel(n_jobs=self.n_jobs, prefer="threads", return_as="generator")(
            delayed(_out_of_bag_errors)({**common, **params}, encoded(self, X), y,
                                        sample_weight, seed)
            for params in candidates)
        errors, fit_times = [], []
        for number, (error, seconds) in enumerate(results):
            errors.append(error)
            fit_times.append(seconds)
            if self.verbose:
                mse = np.nanmean(error)
                print(f"[MMITForestCV] {number + 1}/{len(candidates)} "
                      f"{candidates[number]}: out-of-bag MSE {mse:.4g} ({seconds:.1f} s)",
                      file=sys.stderr, flush=True)
        self._choose(candidates, np.array(errors), sample_weight, fit_times)
        with rows_without_out_of_bag_prediction_ignored():
            self.best_estimator_ = MMITForest(
                **{**common, "n_jobs": self.n_jobs}, **self.best_params_, oob_score=True,
                random_state=seed, verbose=self.verbose,
                categorical_features=self.categorical_features,
            ).fit(X_input, y, sample_weight)
        return self

    def _choose(self, candidates, errors, sample_weight, fit_times):
        """Out-of-bag scores and the most preferred candidate within one
        standard error of the best."""
        scored = ~np.isnan(errors).any(axis=0) & (sample_weight > 0)
        if not scored.any():
            raise ValueError("No sample is out of bag in any tree: use more trees.")
        errors = errors[:, scored]
        weight = sample_weight[scored] / sample_weight[scored].sum()
        mse = errors @ weight
        best = int(np.argmin(mse))
        difference = errors - errors[best]
        mean_difference = difference @ weight
        variance = ((difference - mean_difference[:, np.newaxis]) ** 2) @ weight
        effective_size = 1.0 / np.sum(weight**2)
        standard_error = np.sqrt(variance / effective_size)
        chosen = next(c for c in range(len(candidates))
                      if mean_difference[c] <= standard_error[c])
        self._set_results(candidates, -mse, np.array(fit_times)[:, np.newaxis],
                          best_index=chosen, standard_errors=standard_error)
