"""The estimators' methods that read their predictive distributions:
quantiles, central intervals, CDFs, survival curves and restricted mean
survival times at new rows (:class:`PredictiveDistributionMixin`: the
forests and the stack), of the training rows out of bag
(:class:`OutOfBagDistributionMixin`: the forests) and of a search's chosen
forest (:class:`ChosenForestDistributionMixin`), with the checks of their
arguments. The distributions themselves are in ``_distributions``, how a
model makes them in ``_distribution_strategies``.

Cost: the read-outs' (``_distributions``), the rows a block at a time.
"""

import functools

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.validation import check_is_fitted

from .._utils._docstrings import fill_doc
from .._utils._sparse import by_row_blocks
from .._utils._validation import check_thresholds, check_times

# pickles of earlier versions name this module
from ._distribution_strategies import (  # noqa: F401
    DeferredDistribution,
    LocationDistribution,
    SpreadDistribution,
    TrainingRows,
)
from ._distributions import ForestDistribution, LeafSamples  # noqa: F401


def check_levels(quantiles):
    """Quantile levels as a 1-D float array in [0, 1] (ValueError otherwise)."""
    levels = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(f"quantiles must be a non-empty 1-D list of levels, got "
                         f"{quantiles!r}.")
    if not np.all((levels >= 0.0) & (levels <= 1.0)):
        raise ValueError(f"quantiles must lie in [0, 1], got {quantiles!r}.")
    return levels


def interval_levels(coverage):
    """The quantile levels of a central interval of ``coverage`` in (0, 1)."""
    if isinstance(coverage, bool) or not isinstance(coverage, (int, float, np.floating)):
        raise TypeError(f"coverage must be a float in (0, 1), got {coverage!r}.")
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must lie in (0, 1), got {coverage!r}.")
    return np.array([(1.0 - coverage) / 2.0, (1.0 + coverage) / 2.0])


class PredictiveDistributionMixin:
    """Quantiles, intervals, CDFs and survival curves of a model's predictive
    distributions, at new rows: for a model holding ``distribution_`` (a
    forest, a stack), whose ``_distribution_query(X, distribution)`` gives X
    as the distribution's weighting forest takes it and the model's
    predictions there."""

    def _distribution(self):
        check_is_fitted(self)
        if getattr(self, "distribution_", None) is None:
            raise ValueError(f"this {type(self).__name__} has no predictive distributions "
                             "(fitted with distribution=None, or loaded from a model "
                             "file written without them): fit it with a distribution.")
        return self.distribution_.fitted(self)

    def _readout(self, X, points, quantiles):
        distribution = self._distribution()
        X, location = self._distribution_query(X, distribution)
        return distribution.readout(X, location, points, quantiles,
                                    effective_n_jobs(self.n_jobs))

    @fill_doc
    @by_row_blocks
    def predict_restricted_mean(self, X, times, *, log=False):
        """Restricted mean survival times: the area from 0 to ``times[-1]``
        under the survival step function that :meth:`predict_survival` gives
        at ``times`` (1 before the first time), for a model fitted on the
        targets of :func:`mmit.intervals_from_survival` (with the same
        ``log``).

        ``times[0] + sum_k S(times[k]) * (times[k + 1] - times[k])``, computed
        from the leaves' estimates without the curves: in O(trees' items *
        log(n_times)) time a sample and O(n_samples) memory, where the curves
        take O(n_samples * n_times).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        times : array-like of shape (n_times,)
            Increasing finite non-negative times (positive with ``log``).
        log : bool, default=False
            Whether the targets were made with ``log=True`` (log times).

        Returns
        -------
        time : ndarray of shape (n_samples,)

        %(survival_forest_example)s
        >>> times = np.sort(time)
        >>> mean = forest.predict_restricted_mean(X[:3], times, log=True)
        >>> curves = forest.predict_survival(X[:3], times, log=True)
        >>> bool(np.allclose(mean, times[0] + curves[:, :-1] @ np.diff(times)))
        True
        """
        times = check_times(times, log, grid=True)
        distribution = self._distribution()
        X, location = self._distribution_query(X, distribution)
        thresholds = np.log(times[:-1]) if log else times[:-1]
        return times[-1] - distribution.cdf_sums(X, location, thresholds, np.diff(times),
                                                 effective_n_jobs(self.n_jobs))

    @by_row_blocks
    def predict_quantiles(self, X, quantiles=(0.1, 0.5, 0.9)):
        """Quantiles of each sample's predictive distribution.

        The distribution is the average over a forest's trees of the
        weighted nonparametric maximum-likelihood estimates of training
        intervals in the sample's leaves (see the estimator's
        ``distribution``; with exact values, a weighted empirical
        distribution): a quantile falls where the CDF reaches the level,
        spreading the mass of a bounded Turnbull interval evenly over it;
        it is -inf or +inf where the level falls in mass that the data
        place only beyond their last finite bound (censored rows).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        quantiles : array-like of shape (n_quantiles,), default=(0.1, 0.5, 0.9)
            Levels in [0, 1].

        Returns
        -------
        quantiles : ndarray of shape (n_samples, n_quantiles)
            Non-decreasing along each row.

        Examples
        --------
        >>> from mmit import MMITForest
        >>> from mmit.datasets import load_dataset
        >>> data = load_dataset("servo")
        >>> forest = MMITForest(20, random_state=0).fit(data.data, data.target)
        >>> quantiles = forest.predict_quantiles(data.data[:4], [0.1, 0.5, 0.9])
        >>> quantiles.shape, bool((quantiles[:, 0] <= quantiles[:, 2]).all())
        ((4, 3), True)
        """
        return self._readout(X, check_levels(quantiles), True)

    @by_row_blocks
    def predict_interval(self, X, coverage=0.9):
        """A central prediction interval of each sample: the quantiles at
        ``(1 - coverage) / 2`` and ``(1 + coverage) / 2``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        coverage : float, default=0.9
            Probability of the interval, in (0, 1).

        Returns
        -------
        interval : ndarray of shape (n_samples, 2)
            Lower and upper ends.
        """
        return self._readout(X, interval_levels(coverage), True)

    @by_row_blocks
    def predict_cdf(self, X, thresholds):
        """P(value <= threshold) under each sample's predictive distribution.

        For data made with :func:`mmit.intervals_from_survival`,
        :meth:`predict_survival` gives one minus it, each sample's survival
        curve.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        thresholds : array-like of shape (n_thresholds,)

        Returns
        -------
        cdf : ndarray of shape (n_samples, n_thresholds)
            In [0, 1], non-decreasing in the threshold.
        """
        return self._readout(X, check_thresholds(thresholds), False)

    @fill_doc
    @by_row_blocks
    def predict_survival(self, X, times, *, log=False):
        """Survival curves: P(time > t) under each sample's predictive
        distribution, for a model fitted on the targets of
        :func:`mmit.intervals_from_survival` (with the same ``log``).

        ``1 - predict_cdf(X, times)``, at ``np.log(times)`` with ``log``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        times : array-like of shape (n_times,)
            Times (positive with ``log``).
        log : bool, default=False
            Whether the targets were made with ``log=True`` (log times).

        Returns
        -------
        survival : ndarray of shape (n_samples, n_times)
            In [0, 1], non-increasing in the time.

        %(survival_forest_example)s
        >>> curves = forest.predict_survival(X[:3], [1.0, 3.0, 10.0], log=True)
        >>> curves.shape, bool(np.all(np.diff(curves, axis=1) <= 0))
        ((3, 3), True)
        """
        times = check_thresholds(times, "times")
        if log:
            if np.any(times <= 0):
                raise ValueError("log=True needs positive times.")
            times = np.log(times)
        return 1.0 - self._readout(X, times, False)



class OutOfBagDistributionMixin:
    """The predictive distributions of a forest's training rows, out of bag
    (with :class:`PredictiveDistributionMixin`)."""

    def _out_of_bag_readout(self, points, quantiles):
        return self._distribution().out_of_bag_readout(points, quantiles,
                                                       effective_n_jobs(self.n_jobs))

    def oob_quantiles(self, quantiles=(0.1, 0.5, 0.9)):
        """:meth:`predict_quantiles` of each training sample out of bag (from
        the trees whose bootstrap sample left it out; NaN for a sample in
        every one): for checking the distributions' calibration.

        Parameters
        ----------
        quantiles : array-like of shape (n_quantiles,), default=(0.1, 0.5, 0.9)

        Returns
        -------
        quantiles : ndarray of shape (n_samples, n_quantiles)
        """
        return self._out_of_bag_readout(check_levels(quantiles), True)

    def oob_interval(self, coverage=0.9):
        """:meth:`predict_interval` of each training sample out of bag.

        Parameters
        ----------
        coverage : float, default=0.9

        Returns
        -------
        interval : ndarray of shape (n_samples, 2)
        """
        return self._out_of_bag_readout(interval_levels(coverage), True)

    def oob_cdf(self, thresholds):
        """:meth:`predict_cdf` of each training sample out of bag.

        Parameters
        ----------
        thresholds : array-like of shape (n_thresholds,)

        Returns
        -------
        cdf : ndarray of shape (n_samples, n_thresholds)
        """
        return self._out_of_bag_readout(check_thresholds(thresholds), False)


def _delegated(method):
    """``method`` of a search, read from the forest it chose
    (``best_estimator_``)."""

    @functools.wraps(method)
    def delegate(self, *args, **kwargs):
        check_is_fitted(self)
        return getattr(self.best_estimator_, method.__name__)(*args, **kwargs)

    return delegate


class ChosenForestDistributionMixin:
    """The predictive distributions of a search's chosen forest
    (``best_estimator_``): every method of :class:`PredictiveDistributionMixin`
    and :class:`OutOfBagDistributionMixin`, the forest's own."""

    predict_quantiles = _delegated(PredictiveDistributionMixin.predict_quantiles)
    predict_interval = _delegated(PredictiveDistributionMixin.predict_interval)
    predict_cdf = _delegated(PredictiveDistributionMixin.predict_cdf)
    predict_survival = _delegated(PredictiveDistributionMixin.predict_survival)
    predict_restricted_mean = _delegated(
        PredictiveDistributionMixin.predict_restricted_mean)
    oob_quantiles = _delegated(OutOfBagDistributionMixin.oob_quantiles)
    oob_interval = _delegated(OutOfBagDistributionMixin.oob_interval)
    oob_cdf = _delegated(OutOfBagDistributionMixin.oob_cdf)
