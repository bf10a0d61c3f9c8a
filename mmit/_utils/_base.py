"""What every mmit estimator shares."""

from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ._categorical import validate_features
from ._scores import interval_mse


def rows_as_read(estimator, X):
    """The rows of ``X`` as the fitted ``estimator`` reads them to predict:
    checked to have its features, float64, C-contiguous, its categorical
    features encoded as in its fit (NaN for a missing value, where its tags
    allow NaN; no inf)."""
    check_is_fitted(estimator)
    allow_nan = estimator.__sklearn_tags__().input_tags.allow_nan
    return validate_features(estimator, X, reset=False, order="C",
                             ensure_all_finite="allow-nan" if allow_nan else True)


class IntervalRegressorMixin(RegressorMixin):
    """Regressor whose targets may be intervals, scored by the interval MSE."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score() is the negative interval MSE (<= 0), not the R^2 that
        # scikit-learn's checks compare with 0.5
        tags.regressor_tags.poor_score = True
        # NaN in X marks a missing value
        tags.input_tags.allow_nan = True
        # scipy.sparse X (numeric features; see validate_features)
        tags.input_tags.sparse = True
        return tags

    def _validate_X_predict(self, X):
        """X for prediction (:func:`rows_as_read`)."""
        return rows_as_read(self, X)

    def score(self, X, y, sample_weight=None):
        """Negative interval MSE of the predictions (higher is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, 2) or (n_samples,)
            Target intervals (lower, upper; infinite bounds allowed), or
            exact values.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
            ``-interval_mse(y, self.predict(X))``; 0 when every prediction
            lies in its interval.
        """
        return -interval_mse(y, self.predict(X), sample_weight=sample_weight)


def set_feature_attributes(estimator, n_features, feature_names):
    """Set what ``fit`` records of the features (``n_features_in_``, and
    ``feature_names_in_`` unless ``feature_names`` is None) on an estimator
    put together from parts fitted elsewhere (a tree of an ensemble, a
    model file's model)."""
    estimator.n_features_in_ = n_features
    if feature_names is not None:
        estimator.feature_names_in_ = feature_names


def set_init_parameters(estimator, parameters):
    """Keep the arguments of an estimator's ``__init__`` (its ``locals()``)
    as the attributes of their names, unchanged and unchecked, as
    scikit-learn's estimators keep them: ``get_params`` and ``clone`` read
    them back, ``fit`` validates them."""
    for name, value in parameters.items():
        if name != "self" and not name.startswith("__"):
            setattr(estimator, name, value)
