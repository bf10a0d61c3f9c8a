"""What the tree ensembles share: trees of MMITs grown from seeds and summed.

:class:`TreeEnsemble` is the base of :class:`~mmit.MMITForest` and
:class:`~mmit.MMITBoost`: the fitted trees (``estimators_``, each an MMIT
made from its grown tree and seed by :meth:`MMIT.from_tree
<mmit.MMIT.from_tree>`) and their sum (``additive_trees_``, an
:class:`~mmit.tree.AdditiveTrees`) behind ``predict``, SHAP values and
feature importances; the checks of a warm start; the trees' state in model
files; and :class:`Progress`, what a long fit reports with ``verbose``.
"""

import sys
import time

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._utils._base import IntervalRegressorMixin
from .._utils._categorical import check_warm_start_encoding, fitted_encoding
from .._utils._methods import predict_method
from .._utils._protocols import ReadRowsExplainer
from ..tree._additive import AdditiveTrees
from ..tree._classes import MMIT


class Progress:
    """What a long fit has done, on stderr: ``[name] done/total units``, what
    the caller adds, the time elapsed and left; a line every tenth of the
    work (every step with ``verbose > 1``) and at the end, nothing without
    ``verbose``."""

    def __init__(self, name, total, unit, verbose, done=0):
        self.name, self.total, self.unit, self.verbose = name, total, unit, verbose
        self.first = self.done = done
        self.every = 1 if verbose > 1 else max(1, (total - done) // 10)
        self.start = time.perf_counter()

    def step(self, detail=""):
        """One more unit done; ``detail`` (say, the losses) goes in its line."""
        self.done += 1
        if not self.verbose or ((self.done - self.first) % self.every
                                and self.done != self.total):
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / (self.done - self.first) * (self.total - self.done)
        print(f"[{self.name}] {self.done}/{self.total} {self.unit}"
              f"{', ' + detail if detail else ''}, {elapsed:.1f} s elapsed, "
              f"{left:.1f} s left", file=sys.stderr, flush=True)


class TreeEnsemble(IntervalRegressorMixin, BaseEstimator):
    """A fitted sum of MMITs (abstract): a subclass defines ``_tree_params()``
    (the parameters of its trees' MMITs, seeds aside) and ``_sum_terms()``
    (the offset, the scale of every tree and the divisor of its sum)."""

    def _fitted_tree(self, tree, seed, params):
        """The fitted MMIT of a grown ``tree``, its ``seed`` and the trees'
        ``params`` (``_tree_params()``), reading the ensemble's features
        (their names and categories)."""
        return MMIT.from_tree(tree, **params, random_state=seed,
                              feature_names_in=getattr(self, "feature_names_in_", None),
                              categories=fitted_encoding(self)[1])

    def _continues(self, previous_encoding):
        """Whether this fit adds trees to the fitted ones (``warm_start``), its
        features' categories being those of the first fit (``previous_encoding``:
        the fitted encoding before this fit's validation) and ``n_estimators``
        at least the trees kept; otherwise ``estimators_`` starts empty."""
        if not (self.warm_start and hasattr(self, "estimators_")):
            self.estimators_ = []
            return False
        check_warm_start_encoding(self, previous_encoding)
        if self.n_estimators < len(self.estimators_):
            raise ValueError(f"n_estimators={self.n_estimators} must be at least the "
                             f"number of trees already fitted ({len(self.estimators_)}) "
                             "when warm_start=True.")
        return True

    @property
    def additive_trees_(self):
        """The fitted trees as one sum (:class:`~mmit.tree.AdditiveTrees`):
        what ``predict``, SHAP values and the feature importances use."""
        check_is_fitted(self)
        offset, scale, divisor = self._sum_terms()
        return AdditiveTrees([tree.tree_ for tree in self.estimators_],
                             np.full(len(self.estimators_), scale), offset, divisor)

    @predict_method
    def predict(self, X):
        """Predicted value of each sample: the ensemble's sum of trees.

        %(predict)s
        """
        return self.additive_trees_.predict(self._validate_X_predict(X), self.n_jobs)

    def __mmit_shap__(self):
        """The explainer of :func:`~mmit.shap_values`: the sum of trees'
        TreeSHAP."""
        return ReadRowsExplainer(self, self.additive_trees_)

    @property
    def feature_importances_(self):
        """Mean of the trees' normalised cost decreases per feature."""
        return self.additive_trees_.feature_importances()

    def _trees_state(self, writer):
        """The trees' arrays and seeds, for a model file."""
        return {**writer.trees([tree.tree_ for tree in self.estimators_]),
                "tree_random_states": [tree.random_state for tree in self.estimators_]}

    def _trees_from_state(self, state, reader):
        """The fitted MMITs of :meth:`_trees_state` (``n_features_in_`` and the
        feature names and categories set)."""
        trees = reader.trees(state, self.n_features_in_)
        seeds = state["tree_random_states"]
        if len(seeds) != len(trees):
            raise ValueError("the number of trees does not match")
        params = self._tree_params()
        return [self._fitted_tree(tree, seed, params)
                for seed, tree in zip(seeds, trees, strict=True)]
