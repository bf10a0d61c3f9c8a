"""What every mmit estimator shares."""

from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ._categorical import validate_features
from ._scores import interval_mse


class IntervalRegressorMixin(RegressorMixin):
    """Regressor whose targets may be intervals, scored by the interval MSE."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score() is the negative interval MSE (<= 0), not the R^2 that
        # scikit-learn's checks compare with 0.5
        tags.regressor_tags.poor_score = True
        # NaN in X marks a missing value
        tags.input_tags.allow_nan = True
        return tags

    def _validate_X_predict(self, X):
        """X for prediction: fitted estimator, same features, float64 rows
        (NaN for missing values where the estimator takes them, no inf;
        categorical features encoded as in fit)."""
        check_is_fitted(self)
        allow_nan = self.__sklearn_tags__().input_tags.allow_nan
        return validate_features(self, X, reset=False, order="C",
                                 ensure_all_finite="allow-nan" if allow_nan else True)

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
