"""Missing values for models that need every feature: the weighted mean, and a
column marking where a value was missing.

:class:`IntervalStackingRegressor` puts :class:`MeanImputer` in front of the
members that cannot take NaN (the linear models). Unlike scikit-learn's
``SimpleImputer`` it takes ``sample_weight`` (so that an integer weight acts
as repeated rows) and its state is two arrays, which model files store.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils.validation import check_is_fitted, validate_data

from ._docstrings import fill_doc
from ._validation import check_sample_weight


@fill_doc
class MeanImputer(TransformerMixin, BaseEstimator):
    """Replace NaN by the feature's weighted training mean and append a 0/1
    indicator column for each feature that had missing values in training.

    A feature never missing in training gets no indicator; a NaN in it at
    transform time is filled with its mean all the same. A feature missing
    in every training row is filled with 0.

    Attributes
    ----------
    fill_values_ : ndarray of shape (n_features_in_,)
        Weighted mean of each feature over the rows where it is present.
    indicator_features_ : ndarray of shape (n_indicators,)
        Features with missing values in the training rows of positive
        weight, in order; their indicators follow the features.
    %(features_in)s

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import MeanImputer
    >>> MeanImputer().fit_transform([[1.0, 2.0], [np.nan, 4.0], [3.0, 6.0]])
    array([[1., 2., 0.],
           [2., 4., 1.],
           [3., 6., 0.]])
    """

    _parameter_constraints = {}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Learn the fill values and the features that get an indicator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value.
        y : ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the means.

        Returns
        -------
        self : MeanImputer
        """
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=False)
        missing = np.isnan(X)
        present_weight = weight @ ~missing
        totals = weight @ np.where(missing, 0.0, X)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.fill_values_ = np.where(present_weight > 0, totals / present_weight, 0.0)
        self.indicator_features_ = np.flatnonzero(missing[weight > 0].any(axis=0))
        return self

    def _export_state(self, writer):
        """The fill values and the features with an indicator, for a model
        file (``mmit._persistence``)."""
        writer.array("fill_values", self.fill_values_)
        writer.array("indicator_features", self.indicator_features_)
        return {}

    def _import_state(self, state, reader):
        """The fitted imputer of a model file (``n_features_in_`` set),
        checked: a fill value per feature, indicators of distinct features
        in order."""
        n_features = self.n_features_in_
        self.fill_values_ = reader.array("fill_values", np.float64, (n_features,))
        indicators = reader.array("indicator_features", shape=(None,))
        if not np.issubdtype(indicators.dtype, np.integer) or (
                indicators.size and (indicators.min() < 0 or indicators.max() >= n_features
                                     or np.any(np.diff(indicators) <= 0))):
            raise ValueError("invalid indicator features")
        self.indicator_features_ = indicators

    def transform(self, X):
        """Fill the missing values and append the indicators.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features + n_indicators)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64,
                          ensure_all_finite="allow-nan")
        missing = np.isnan(X)
        filled = np.where(missing, self.fill_values_, X)
        return np.hstack([filled, missing[:, self.indicator_features_].astype(np.float64)])
