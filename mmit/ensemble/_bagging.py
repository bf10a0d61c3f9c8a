"""Bagging: how a forest's trees draw their samples, and what is out of bag.

Every tree of a :class:`~mmit.MMITForest` draws its bootstrap sample as
integer sample weights (:class:`Bootstrap`) from a numpy Generator seeded
by the tree's own ``random_state``, so that its sample, and the rows it
left out, are regenerated from the seed rather than stored
(:class:`TreeSamples`). What a fitted forest's distributions and its
``oob_score`` read of its training rows goes through these functions,
which read only the forest's parameters and fitted trees:
:func:`bootstrap_of`, :func:`tree_samples`, :func:`out_of_bag_predictions`.
"""

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
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

    def counts(self, generator):
        """How many times each sample is drawn in one tree's sample."""
        if self.probabilities is None:
            drawn = generator.integers(0, self.n_samples, self.n_draws)
        else:
            drawn = generator.choice(self.n_samples, self.n_draws, p=self.probabilities)
        return np.bincount(drawn, minlength=self.n_samples)


def sample_of(generator, sample_weight, bootstrap):
    """A tree's weights of the samples: its bootstrap counts (the generator's
    first draws) or, without bootstrap, the sample weights."""
    if bootstrap is None:
        return sample_weight
    return bootstrap.counts(generator).astype(np.float64)


@dataclass(frozen=True)
class TreeSamples:
    """The sample weights of every tree of a forest, regenerated from the
    trees' seeds (what ``LeafSamples`` asks for)."""

    seeds: tuple
    sample_weight: np.ndarray
    bootstrap: Bootstrap | None

    def __call__(self, t):
        return sample_of(np.random.default_rng(self.seeds[t]), self.sample_weight,
                         self.bootstrap)


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
                       sample_weight, bootstrap_of(forest, sample_weight))


def out_of_bag_predictions(forest, X, sample_weight):
    """Each training row's mean prediction by the trees of the fitted
    ``forest`` whose sample left it out (NaN if none did): ``X`` the
    validated training rows, ``sample_weight`` the fit's weights."""
    bootstrap = bootstrap_of(forest, sample_weight)
    n_samples = X.shape[0]
    total = np.zeros(n_samples)
    n_predictions = np.zeros(n_samples)
    for tree in forest.estimators_:
        counts = bootstrap.counts(np.random.default_rng(tree.random_state))
        out_of_bag = np.flatnonzero(counts == 0)
        total[out_of_bag] += walk_rows(tree.tree_.predict, X, out_of_bag)
        n_predictions[out_of_bag] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / n_predictions


@contextmanager
def rows_without_out_of_bag_prediction_ignored():
    """Silence the warning of forests fitted inside about rows in every
    bootstrap sample (few trees, or a weight that dominates the draws): the
    callers (model selection, stacking) leave such rows out alike."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Some samples were in the bootstrap sample",
                                UserWarning)
        yield
