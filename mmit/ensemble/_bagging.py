"""Bagging: how a forest's trees draw their samples, and what is out of bag.

Every tree of a :class:`~mmit.MMITForest` draws its bootstrap sample as
integer sample weights (:class:`Bootstrap`) from a numpy Generator seeded
by the tree's own ``random_state``, so that its sample, and the rows it
left out, are regenerated from the seed rather than stored
(:class:`TreeSamples`). A forest grown by folds (its ``cv``) draws tree t's
sample from the rows outside fold ``t % n_folds`` only (:class:`FoldRows`).
What a fitted forest's distributions, its ``oob_score`` and its fold
predictions read of its training rows goes through these functions, which
read only the forest's parameters and fitted attributes:
:func:`bootstrap_of`, :func:`tree_samples`, :func:`out_of_bag_predictions`,
:func:`fold_predictions`.
"""

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from numbers import Integral

import numpy as np

from .._utils._sparse import walk_rows


@dataclass(frozen=True)
class Bootstrap:
    """How every tree of a fit draws its bootstrap sample: ``n_draws`` draws
    among ``n_samples``, uniform or with ``probabilities`` proportional to
    the sample weights."""

    n_samples: int
    n_draws: int
    probabilities: np.ndarray | None

    @classmethod
    def of(cls, sample_weight, n_draws):
        """Uniform draws when all weights are equal (the unweighted forest),
        else draws proportional to the weights."""
        uniform = np.all(sample_weight == sample_weight[0])
        return cls(sample_weight.shape[0], n_draws,
                   None if uniform else sample_weight / sample_weight.sum())

    def counts(self, generator, rows=None):
        """How many times each sample is drawn in one tree's sample: among
        all samples, or among ``rows`` only (indices)."""
        if rows is None:
            if self.probabilities is None:
                drawn = generator.integers(0, self.n_samples, self.n_draws)
            else:
                drawn = generator.choice(self.n_samples, self.n_draws,
                                         p=self.probabilities)
        elif self.probabilities is None:
            drawn = rows[generator.integers(0, rows.shape[0], self.n_draws)]
        else:
            probabilities = self.probabilities[rows]
            drawn = rows[generator.choice(rows.shape[0], self.n_draws,
                                          p=probabilities / probabilities.sum())]
        return np.bincount(drawn, minlength=self.n_samples)


def sample_of(generator, sample_weight, bootstrap, rows=None):
    """A tree's weights of the samples: its bootstrap counts (the generator's
    first draws) or, without bootstrap, the sample weights; drawn among
    ``rows`` only when given (the others weigh 0)."""
    if bootstrap is not None:
        return bootstrap.counts(generator, rows).astype(np.float64)
    if rows is None:
        return sample_weight
    weight = np.zeros_like(sample_weight)
    weight[rows] = sample_weight[rows]
    return weight


@dataclass(frozen=True)
class FoldRows:
    """The rows each tree of a forest grown by folds may draw: tree t those
    outside fold ``t % n_folds``; ``row_folds`` is the fold of each row (the
    one in whose test part it lies)."""

    row_folds: np.ndarray

    @cached_property
    def n_folds(self):
        return int(self.row_folds.max()) + 1

    def fold_of_tree(self, t):
        return t % self.n_folds

    def rows_of_tree(self, t):
        """The indices of the rows tree t may draw."""
        return np.flatnonzero(self.row_folds != self.fold_of_tree(t))

    def rows_of_trees(self, n_trees):
        """:meth:`rows_of_tree` of trees 0 to ``n_trees - 1`` (the trees of
        a fold share one array)."""
        by_fold = [self.rows_of_tree(fold) for fold in range(self.n_folds)]
        return [by_fold[self.fold_of_tree(t)] for t in range(n_trees)]

    @classmethod
    def of(cls, forest):
        """The FoldRows of a fitted ``forest`` (None: grown without folds)."""
        row_folds = getattr(forest, "row_folds_", None)
        return None if row_folds is None else cls(row_folds)


@dataclass(frozen=True)
class TreeSamples:
    """The sample weights of every tree of a forest, regenerated from the
    trees' seeds (what ``LeafSamples`` asks for)."""

    seeds: tuple
    sample_weight: np.ndarray
    bootstrap: Bootstrap | None
    fold_rows: FoldRows | None = None

    def __call__(self, t):
        rows = None if self.fold_rows is None else self.fold_rows.rows_of_tree(t)
        return sample_of(np.random.default_rng(self.seeds[t]), self.sample_weight,
                         self.bootstrap, rows)


def n_draws(forest, sample_weight):
    """Draws per bootstrap sample of ``forest`` (its ``bootstrap`` and
    ``max_samples``; a fraction is of the total weight, as in scikit-learn, of
    ``n_samples`` without weights), None without bootstrap."""
    n_samples = sample_weight.shape[0]
    if not forest.bootstrap:
        if forest.max_samples is not None:
            raise ValueError("max_samples needs bootstrap=True.")
        return None
    if forest.max_samples is None:
        return n_samples
    if isinstance(forest.max_samples, Integral):
        if forest.max_samples > n_samples:
            raise ValueError(f"max_samples={forest.max_samples} exceeds the number of "
                             f"samples ({n_samples}).")
        return forest.max_samples
    return max(1, round(forest.max_samples * float(sample_weight.sum())))


def bootstrap_of(forest, sample_weight):
    """How every tree of ``forest`` draws its sample from rows of
    ``sample_weight`` (a :class:`Bootstrap`; None without bootstrap)."""
    draws = n_draws(forest, sample_weight)
    return None if draws is None else Bootstrap.of(sample_weight, draws)


def tree_samples(forest, sample_weight):
    """The weights of the training rows (of ``sample_weight``) in each tree of
    the fitted ``forest`` (:class:`TreeSamples`)."""
    return TreeSamples(tuple(tree.random_state for tree in forest.estimators_),
                       sample_weight, bootstrap_of(forest, sample_weight),
                       FoldRows.of(forest))


def out_of_bag_predictions(forest, X, sample_weight):
    """Each training row's mean prediction by the trees of the fitted
    ``forest`` whose sample left it out (NaN if none did): ``X`` the
    validated training rows, ``sample_weight`` the fit's weights."""
    samples = tree_samples(forest, sample_weight)
    n_samples = X.shape[0]
    total = np.zeros(n_samples)
    n_predictions = np.zeros(n_samples)
    for t, tree in enumerate(forest.estimators_):
        out_of_bag = np.flatnonzero(samples(t) == 0)
        total[out_of_bag] += walk_rows(tree.tree_.predict, X, out_of_bag)
        n_predictions[out_of_bag] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / n_predictions


def fold_predictions(forest, X):
    """Each training row's mean prediction by the trees of the ``forest``
    grown by folds that never saw its fold (``X`` the validated training
    rows): K-fold predictions of the fit."""
    fold_rows = FoldRows.of(forest)
    n_folds = fold_rows.n_folds
    total = np.zeros(X.shape[0])
    rows_of_fold = [np.flatnonzero(fold_rows.row_folds == k) for k in range(n_folds)]
    for t, tree in enumerate(forest.estimators_):
        rows = rows_of_fold[fold_rows.fold_of_tree(t)]
        total[rows] += walk_rows(tree.tree_.predict, X, rows)
    trees_per_fold = np.bincount(np.arange(len(forest.estimators_)) % n_folds,
                                 minlength=n_folds)
    return total / trees_per_fold[fold_rows.row_folds]


@contextmanager
def rows_without_out_of_bag_prediction_ignored():
    """Silence the warning of forests fitted inside about rows in every
    bootstrap sample (few trees, or a weight that dominates the draws): the
    callers (model selection, stacking) leave such rows out alike."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Some samples were in the bootstrap sample",
                                UserWarning)
        yield
