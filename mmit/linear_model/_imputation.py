"""Missing values for models that need every feature: the weighted mean, and a
column marking where a value was missing.

:class:`IntervalStackingRegressor` puts :class:`MeanImputer` in front of the
members that cannot take NaN (the linear models). Unlike scikit-learn's
``SimpleImputer`` it takes ``sample_weight`` (so that an integer weight acts
as repeated rows), passes the categorical (non-numeric) columns of a data
frame through for the model behind it to encode, and its state is two
arrays, which model files store.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._utils._categorical import non_numeric_columns, numeric_values
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._validation import check_sample_weight


@fill_doc
class MeanImputer(TransformerMixin, BaseEstimator):
    """Replace NaN by the feature's weighted training mean and append a 0/1
    indicator column for each feature that had missing values in training.

    A feature never missing in training gets no indicator; a NaN in it at
    transform time is filled with its mean all the same. A feature missing
    in every training row is filled with 0.

    The non-numeric columns of a pandas data frame (categories, strings)
    are passed through as they are, missing values included, for the model
    behind to encode; the output is then a data frame (the indicators named
    ``missingindicator_<name>``, or every column numbered when the names
    are not all strings). A ``scipy.sparse`` X (its stored NaN missing, its
    other entries 0) gives a sparse output (CSR).

    Attributes
    ----------
    fill_values_ : ndarray of shape (n_features_in_,)
        Weighted mean of each feature over the rows where it is present;
        NaN for a column passed through.
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
        tags.input_tags.sparse = True
        return tags

    @fit_method
    def fit(self, X, y=None, sample_weight=None):
        """Learn the fill values and the features that get an indicator.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value.
        y : ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the means.

        %(fit_returns)s
        """
        passed = non_numeric_columns(X)
        X = numeric_values(self, X, passed, reset=True)
        weight = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=False)
        if sp.issparse(X):
            missing, values = _sparse_parts(X)
            present_weight = weight.sum() - missing.T @ weight
            totals = values.T @ weight
            with np.errstate(invalid="ignore", divide="ignore"):
                self.fill_values_ = np.where(present_weight > 0, totals / present_weight,
                                             0.0)
            self.indicator_features_ = np.flatnonzero(missing.T @ (weight > 0))
            return self
        missing = np.isnan(X)
        if passed is not None:
            missing[:, passed] = False  # passed through: no indicator
        present_weight = weight @ ~missing
        totals = weight @ np.where(missing, 0.0, X)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.fill_values_ = np.where(present_weight > 0, totals / present_weight, 0.0)
        if passed is not None:
            self.fill_values_[passed] = np.nan
        self.indicator_features_ = np.flatnonzero(missing[weight > 0].any(axis=0))
        return self

    def _export_state(self, writer):
        """The fill values and the features with an indicator, for a model
        file (``mmit._persistence._model_files``)."""
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
        passed = np.isnan(self.fill_values_)
        found = non_numeric_columns(X)
        if not np.array_equal(passed, np.zeros_like(passed) if found is None else found):
            raise ValueError("X's non-numeric columns differ from those seen in fit: "
                             "give every column the kind it had in fit.")
        numeric = numeric_values(self, X, found, reset=False)
        if sp.issparse(numeric):
            missing, values = _sparse_parts(numeric.tocsr())
            values.data = np.where(missing.data, self.fill_values_[values.indices],
                                   values.data)
            return sp.hstack([values, missing[:, self.indicator_features_]], format="csr")
        missing = np.isnan(numeric)
        filled = np.where(missing, self.fill_values_, numeric)
        indicators = missing[:, self.indicator_features_].astype(np.float64)
        if found is None:
            return np.hstack([filled, indicators])
        return self._frame(X, passed, filled, indicators)

    def output_features(self):
        """The input feature each output column of :meth:`transform` comes
        from: every feature in place, then the features of the indicators.

        Returns
        -------
        features : ndarray of shape (n_features_in_ + n_indicators,)

        Examples
        --------
        >>> import numpy as np
        >>> from mmit import MeanImputer
        >>> imputer = MeanImputer().fit([[1.0, np.nan], [2.0, 3.0]])
        >>> imputer.output_features()
        array([0, 1, 1])
        """
        check_is_fitted(self)
        return np.concatenate([np.arange(self.n_features_in_), self.indicator_features_])

    def _frame(self, X, passed, filled, indicators):
        """The output for a data frame ``X``: its passed columns as they are,
        the others filled, then the indicators."""
        import pandas as pd

        names = list(X.columns)
        columns = [X.iloc[:, j] if passed[j] else pd.Series(filled[:, j], index=X.index)
                   for j in range(X.shape[1])]
        columns += [pd.Series(indicators[:, k], index=X.index)
                    for k in range(indicators.shape[1])]
        out = pd.concat(columns, axis=1)
        if all(isinstance(name, str) for name in names):
            out.columns = names + [f"missingindicator_{names[j]}"
                                   for j in self.indicator_features_]
        else:
            out.columns = range(out.shape[1])
        return out


def _sparse_parts(X):
    """A sparse X's missing values (1.0 where it stores NaN, a matrix of its
    layout) and its values with NaN stored as 0."""
    nan = np.isnan(X.data)
    missing = X.copy()
    missing.data = nan.astype(np.float64)
    values = X.copy()
    values.data = np.where(nan, 0.0, X.data)
    return missing, values

