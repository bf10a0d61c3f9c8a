"""What the searches share (:class:`~mmit.MMITCV`,
:class:`~mmit.MMITForestCV`): their results in scikit-learn's form
(``cv_results_``, ``best_index_``, ``best_params_``, ``best_score_``),
predictions and explanations by the chosen model (``best_estimator_``), and
their state in model files (the search, its results and its chosen model).
"""

import numbers

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._base import IntervalRegressorMixin
from ._docstrings import fill_doc
from ._protocols import explainer_of

#: The model-file format version that first holds searches.
SEARCH_FILE_VERSION = 8


def parameter_column(values):
    """The ``param_<name>`` column of ``cv_results_`` of a parameter's values:
    integers as int64, real numbers as float64, anything else (strings, a
    mix) as objects."""
    def number(value):
        return isinstance(value, numbers.Real) and not isinstance(value, bool)

    if all(isinstance(value, numbers.Integral) and number(value) for value in values):
        return np.array(values, dtype=np.int64)
    if all(number(value) for value in values):
        return np.array(values, dtype=np.float64)
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


class IntervalSearch(IntervalRegressorMixin, BaseEstimator):
    """A search over a grid of candidates that keeps the best one's model
    (abstract): a subclass's ``fit`` scores its candidates and calls
    :meth:`_set_results`, then fits ``best_estimator_``."""

    def _set_results(self, params, scores, fit_times, *, best_index=None,
                     standard_errors=None):
        """Record the candidates' results and the chosen one.

        Parameters
        ----------
        params : list of dict
            Each candidate's parameters, in grid order.
        scores : ndarray of shape (n_candidates, n_splits) or (n_candidates,)
            Each candidate's test score on each split of a cross-validation
            (higher is better), or its one score (out of bag).
        fit_times : ndarray of shape (n_candidates, n_fits)
            The seconds each candidate's fits took.
        best_index : int, default=None
            The chosen candidate; None: the first of the best mean scores, as
            ``GridSearchCV`` chooses.
        standard_errors : ndarray of shape (n_candidates,), default=None
            ``std_test_score`` of one score per candidate (its standard
            error); with splits, the deviation of their scores.
        """
        results = {f"param_{name}": parameter_column([candidate[name]
                                                      for candidate in params])
                   for name in params[0]}
        results["params"] = params
        if scores.ndim == 2:
            for k in range(scores.shape[1]):
                results[f"split{k}_test_score"] = scores[:, k]
            mean, deviation = scores.mean(axis=1), scores.std(axis=1)
        else:
            mean, deviation = scores, standard_errors
        results["mean_test_score"] = mean
        results["std_test_score"] = deviation
        results["rank_test_score"] = rankdata(-mean, method="min").astype(np.int32)
        results["mean_fit_time"] = fit_times.mean(axis=1)
        results["std_fit_time"] = fit_times.std(axis=1)
        self.cv_results_ = results
        self.best_index_ = int(np.argmax(mean)) if best_index is None else int(best_index)
        self.best_params_ = params[self.best_index_]
        self.best_score_ = float(mean[self.best_index_])

    @fill_doc
    def predict(self, X):
        """Predictions of the chosen model (``best_estimator_``).

        %(predict)s
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the chosen model's."""
        check_is_fitted(self)
        return explainer_of(self.best_estimator_)

    def _export_state(self, writer):
        """The chosen model (its description), the results (numeric columns as
        arrays, the others as JSON) and the choice, for a model file."""
        writer.requires(SEARCH_FILE_VERSION)
        columns = {}
        for key, column in self.cv_results_.items():
            if key != "params" and column.dtype != object:
                writer.array(f"cv_results_{key}", column)
                columns[key] = None
            else:
                columns[key] = list(column)
        return {"best_estimator": writer.model("best", self.best_estimator_),
                "best_index": self.best_index_, "best_score": self.best_score_,
                "cv_results": columns}

    def _import_state(self, state, reader):
        """The fitted search of a model file (``n_features_in_`` and
        ``feature_names_in_`` set), checked: the chosen model of the search's
        features, a choice among the candidates."""
        self.best_estimator_ = reader.model("best", state["best_estimator"])
        if self.best_estimator_.n_features_in_ != self.n_features_in_:
            raise ValueError("the chosen model has the wrong number of features")
        results = {}
        for key, values in state["cv_results"].items():
            if values is None:
                results[key] = reader.array(f"cv_results_{key}")
            elif key == "params":
                results[key] = list(values)
            else:
                results[key] = parameter_column(values)
        n_candidates = len(results["params"])
        if any(len(column) != n_candidates for column in results.values()):
            raise ValueError("the search's results have columns of different lengths")
        self.cv_results_ = results
        self.best_index_ = int(state["best_index"])
        if not 0 <= self.best_index_ < n_candidates:
            raise ValueError("the chosen candidate is not one of the search's")
        self.best_params_ = results["params"][self.best_index_]
        self.best_score_ = float(state["best_score"])
