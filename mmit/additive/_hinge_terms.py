"""The terms of :class:`~mmit.IntervalMARS`: products of hinges
(:class:`Hinge`, :class:`BasisTerm`), their values, their arrays in model
files, and the model's exact SHAP values (:class:`MARSTerms`: each term's
value shared among its features as the Shapley values of its game)."""

from dataclasses import dataclass
from itertools import combinations
from math import factorial

import numpy as np

from .._utils._protocols import Explainer


@dataclass(frozen=True)
class Hinge:
    """``max(0, direction * (x_feature - knot))``."""

    feature: int
    knot: float
    direction: int

    def values(self, X):
        return np.maximum(0.0, self.direction * (X[:, self.feature] - self.knot))

    def describe(self, names):
        name = f"x{self.feature}" if names is None else str(names[self.feature])
        if self.direction < 0:
            return f"h({self.knot:.6g} - {name})"
        sign = "-" if self.knot >= 0 else "+"
        return f"h({name} {sign} {abs(self.knot):.6g})"


@dataclass(frozen=True)
class BasisTerm:
    """A basis term: the product of its hinges (the intercept: none)."""

    hinges: tuple = ()

    @property
    def degree(self):
        return len(self.hinges)

    @property
    def features(self):
        return tuple(hinge.feature for hinge in self.hinges)

    def values(self, X):
        product = np.ones(X.shape[0])
        for hinge in self.hinges:
            product *= hinge.values(X)
        return product

    def describe(self, names=None):
        return " * ".join(h.describe(names) for h in self.hinges) or "(intercept)"


def basis_matrix(terms, X):
    """The values of the terms in the rows of ``X``: (n_samples, n_terms)."""
    return np.column_stack([term.values(X) for term in terms])


def background_means(term, X, weight):
    """The weighted training means of the products of each subset of the
    term's hinges (by bit mask: bit ``i`` set, hinge ``i`` in the product),
    the background of its SHAP values."""
    values = [hinge.values(X) for hinge in term.hinges]
    means = np.empty(2 ** term.degree)
    for mask in range(means.size):
        product = np.ones(X.shape[0])
        for i, value in enumerate(values):
            if mask >> i & 1:
                product *= value
        means[mask] = np.average(product, weights=weight)
    return means


def encode_terms(terms, width):
    """The terms as three arrays (features, knots, directions: one row per term,
    -1 / 0 past its degree), for model files."""
    features = np.full((len(terms), width), -1, dtype=np.int64)
    knots = np.zeros((len(terms), width))
    directions = np.zeros((len(terms), width), dtype=np.int8)
    for k, term in enumerate(terms):
        for i, hinge in enumerate(term.hinges):
            features[k, i], knots[k, i], directions[k, i] = (hinge.feature, hinge.knot,
                                                             hinge.direction)
    return features, knots, directions


def decode_terms(features, knots, directions, n_features):
    """The terms of :func:`encode_terms`' arrays, checked."""
    terms = []
    for row_features, row_knots, row_directions in zip(features, knots, directions,
                                                       strict=True):
        degree = int(np.sum(row_features >= 0))
        if (np.any(row_features[degree:] != -1) or degree == 0
                or np.any(row_features[:degree] >= n_features)
                or len(set(row_features[:degree])) < degree
                or not np.all(np.isin(row_directions[:degree], (-1, 1)))
                or not np.all(np.isfinite(row_knots[:degree]))):
            raise ValueError("a MARS term is damaged")
        terms.append(BasisTerm(tuple(Hinge(int(j), float(t), int(d)) for j, t, d in zip(
            row_features[:degree], row_knots[:degree], row_directions[:degree],
            strict=True))))
    return terms


class MARSTerms(Explainer):
    """A fitted IntervalMARS' prediction as its terms' exact SHAP values: the
    training rows (by their weights) as the background, each term's
    product of hinges shared among its features as the Shapley values of
    its game (``v(S)`` the term with the hinges of ``S`` at the row's values
    and the others averaged over the background, ``background_means_``),
    the base value the mean training prediction. ``read_rows(X)`` gives
    the rows as the model reads them to predict."""

    def __init__(self, model, read_rows):
        self.model = model
        self.read_rows = read_rows

    def rows(self, X):
        return self.read_rows(X)

    def contributions(self, X, interactions, n_threads):
        model = self.model
        X = self.rows(X)
        n_features = model.n_features_in_
        shape = (X.shape[0], n_features) + ((n_features,) if interactions else ())
        values = np.zeros(shape)
        base = model.intercept_
        for term, coef, means in zip(model.basis_, model.coef_, model.background_means_,
                                     strict=True):
            hinge_values = np.column_stack([hinge.values(X) for hinge in term.hinges])
            base += coef * means[-1]
            game = _term_game(coef, hinge_values, means)
            players = range(term.degree)
            shapley = _shapley_values(game, term.degree)
            for i, feature in zip(players, term.features, strict=True):
                if interactions:
                    values[:, feature, feature] += shapley[i]
                else:
                    values[:, feature] += shapley[i]
            if interactions:
                for (i, a), (k, b) in combinations(enumerate(term.features), 2):
                    pair = _shapley_interaction(game, term.degree, i, k)
                    values[:, a, b] += pair
                    values[:, b, a] += pair
                    values[:, a, a] -= pair
                    values[:, b, b] -= pair
        return values, float(base)


def _term_game(coef, hinge_values, means):
    """The game of a term's SHAP values: ``v(S)``, the term with the hinges of
    ``S`` (a tuple of their positions) at the rows' values and the others'
    product averaged over the background (``means``, by bit mask)."""
    full = means.size - 1

    def game(subset):
        mask = sum(1 << i for i in subset)
        return coef * np.prod(hinge_values[:, list(subset)], axis=1) * means[full & ~mask]
    return game


def _shapley_values(game, n_players):
    """Each player's Shapley value of ``game`` (subsets as tuples)."""
    players = range(n_players)
    result = []
    for i in players:
        others = [k for k in players if k != i]
        total = 0.0
        for size in range(n_players):
            share = factorial(size) * factorial(n_players - size - 1) / factorial(n_players)
            for subset in combinations(others, size):
                total = total + share * (game(tuple(sorted(subset + (i,)))) - game(subset))
        result.append(total)
    return result


def _shapley_interaction(game, n_players, i, k):
    """The Shapley interaction value of players ``i`` and ``k`` (half of the
    Shapley interaction index, as SHAP splits it between the two sides)."""
    others = [j for j in range(n_players) if j not in (i, k)]
    total = 0.0
    for size in range(n_players - 1):
        share = factorial(size) * factorial(n_players - size - 2) / factorial(n_players - 1)
        for subset in combinations(others, size):
            def value(*extra, subset=subset):
                return game(tuple(sorted(subset + extra)))
            total = total + share * (value(i, k) - value(i) - value(k) + value()) / 2.0
    return total
