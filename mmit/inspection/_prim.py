"""IntervalPRIM: the patient rule induction method (Friedman and Fisher 1999;
Hastie, Tibshirani and Friedman, section 9.3), "bump hunting", on interval
targets.

A box is a set of limits, ``low_j <= x_j <= high_j`` for numeric features
and a set of allowed levels for categorical ones. Its **value** is the
optimum of the interval loss on its rows, the constant the solver of every
mmit model finds (``optimal_constant``: a weighted median of the bounds for
the linear hinge, their weighted mean where they are exact values), so that
censored bounds count as what they say.

**Peeling.** From the box of all training rows, each step removes the face
whose removal gives the box of the highest value (``threshold_type="high"``;
the lowest with "low"): for each numeric feature, its lowest or its
highest ``peel_alpha`` share of the box's rows (by weight; ties go
together), for each categorical feature one of its levels. A peel is
admissible when it removes rows and leaves at least ``mass_min`` of the
training rows' weight in the box. Peeling stops when none is. **Pasting**
then grows the last box back along any face (the ``paste_alpha`` share of
its weight just outside a numeric limit, or a removed level) while that
raises its value. The boxes from the first to the pasted last one are the
**trajectory**; the box chosen is the largest whose value on held-out
validation rows (``validation_fraction``) is within one standard error of
the best validation value (CART's one-standard-error rule; the error from
the bootstrap of the best box's validation rows, as a box value pinned by
the few bounds it lies beyond has no simple formula): the best validation
value alone falls to the noise of the small boxes at the trajectory's end.
Without validation rows, the last box (R's prim and ema_workbench leave
the choice to the analyst with a test set).
**Covering** (``max_boxes``) repeats all of it on the rows outside the
boxes so far, while the new box's value beats ``threshold``.

Cost: a peel scores two faces per numeric feature (one per level for a
categorical one), each an O(m log m) solve on the box's ``m`` rows.
"""

import sys
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._loss._loss import LOSSES
from .._utils._base import rows_as_read, set_init_parameters
from .._utils._categorical import CATEGORICAL_FEATURES_CONSTRAINT, fitted_encoding
from .._utils._docstrings import fill_doc
from .._utils._methods import fit_method
from .._utils._validation import validate_training_data

#: The bootstrap draws of the standard error of the best validation value.
BOOTSTRAP_DRAWS = 100


@dataclass(frozen=True)
class Box:
    """Limits of numeric features (``low``, ``high``; infinite where free) and
    the allowed levels of categorical ones (``levels[j]``: a boolean array
    over the feature's codes, the last entry for a missing value; None for
    a numeric feature)."""

    low: np.ndarray
    high: np.ndarray
    levels: tuple = field(default=())

    @classmethod
    def everything(cls, n_features, n_levels):
        levels = tuple(None if n is None else np.ones(n + 1, dtype=bool) for n in n_levels)
        return cls(np.full(n_features, -np.inf), np.full(n_features, np.inf), levels)

    def contains(self, X):
        """Whether each row of ``X`` (codes for categorical features, NaN for
        a missing one) lies in the box."""
        inside = np.ones(X.shape[0], dtype=bool)
        for j, allowed in enumerate(self.levels):
            if allowed is None:
                if np.isfinite(self.low[j]) or np.isfinite(self.high[j]):
                    with np.errstate(invalid="ignore"):
                        inside &= (X[:, j] >= self.low[j]) & (X[:, j] <= self.high[j])
            elif not allowed.all():
                inside &= allowed[level_codes(X[:, j], allowed.size - 1)]
        return inside

    def with_limit(self, j, low=None, high=None):
        new_low, new_high = self.low.copy(), self.high.copy()
        if low is not None:
            new_low[j] = low
        if high is not None:
            new_high[j] = high
        return replace(self, low=new_low, high=new_high)

    def with_level(self, j, level, allowed):
        levels = list(self.levels)
        levels[j] = levels[j].copy()
        levels[j][level] = allowed
        return replace(self, levels=tuple(levels))


def level_codes(column, n_levels):
    """A categorical column's codes as indices of a box's levels: a missing
    value (NaN) the last."""
    codes = np.where(np.isnan(column), n_levels, column)
    return codes.astype(np.intp)


def reached(values, weights, share):
    """The value at which the cumulative weight of ``values`` (in the order
    given) first reaches ``share`` (the last value if it never does)."""
    return values[min(np.searchsorted(np.cumsum(weights), share), values.size - 1)]


def lower_cut(values, weights, share):
    """The new lower limit that peels the lowest ``share`` of the weight off
    the sorted ``values``: the rows up to the value where the cumulative
    weight reaches it go (ties together), the limit is the next value (inf
    when none is left)."""
    rest = np.searchsorted(values, reached(values, weights, share), side="right")
    return values[rest] if rest < values.size else np.inf


def upper_cut(values, weights, share):
    """:func:`lower_cut` from above: the new upper limit."""
    return -lower_cut(-values[::-1], weights[::-1], share)


@dataclass
class _Peeler:
    """The rows a box is grown on, their targets and weights, and how a box is
    valued and compared."""

    X: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    weight: np.ndarray
    loss: object
    margin: float
    sign: float  # 1: the higher value is better, -1: the lower
    least_weight: float  # of a box's rows (mass_min)
    n_levels: list  # of each feature: its categories' number (None: numeric)

    def value(self, rows):
        """The box value of the rows (a boolean mask): the loss's optimal
        constant (NaN for rows without weight or a finite bound)."""
        lower, upper, weight = self.lower[rows], self.upper[rows], self.weight[rows]
        if not np.any(weight > 0) or not np.any(np.isfinite(lower) | np.isfinite(upper)):
            return np.nan
        return float(self.loss.optimal_constant(lower, upper, self.margin, weight))

    def bootstrap_error(self, rows, rng):
        """The standard error of the box value of the rows (a boolean mask),
        from BOOTSTRAP_DRAWS draws of them with replacement (NaN for fewer
        than two rows)."""
        index = np.flatnonzero(rows)
        if index.size < 2:
            return np.nan
        draws = []
        for _ in range(BOOTSTRAP_DRAWS):
            sample = rng.choice(index, index.size)
            lower, upper = self.lower[sample], self.upper[sample]
            weight = self.weight[sample]
            if np.any(np.isfinite(lower) | np.isfinite(upper)) and weight.sum() > 0:
                draws.append(self.loss.optimal_constant(lower, upper, self.margin, weight))
        return float(np.std(draws, ddof=1)) if len(draws) > 1 else np.nan

    def better(self, value, best):
        """Whether ``value`` beats ``best`` (None: nothing yet)."""
        return not np.isnan(value) and (best is None or self.sign * (value - best) > 0)

    def peels(self, box, inside, orders, alpha):
        """The admissible peels of ``box`` (its rows ``inside``, indices; each
        numeric feature's ``orders``, the rows sorted by it): (the peeled
        box, its rows), each numeric feature's from below and from above,
        each categorical feature's one level at a time."""
        for j, allowed in enumerate(box.levels):
            column = self.X[inside, j]
            if allowed is None:
                values, weights = self.X[orders[j], j], self.weight[orders[j]]
                share = alpha * weights.sum()
                low = lower_cut(values, weights, share)
                yield from self._admissible(box.with_limit(j, low=low), inside,
                                            inside[column >= low])
                high = upper_cut(values, weights, share)
                yield from self._admissible(box.with_limit(j, high=high), inside,
                                            inside[column <= high])
            else:
                codes = level_codes(column, allowed.size - 1)
                for level in np.unique(codes):
                    yield from self._admissible(box.with_level(j, level, False), inside,
                                                inside[codes != level])

    def _admissible(self, box, inside, kept):
        if kept.size < inside.size and self.weight[kept].sum() >= self.least_weight:
            yield box, kept

    def pastes(self, box, available, alpha):
        """The pastes of ``box`` among the ``available`` rows: each restricted
        numeric limit moved out over the ``alpha`` share of the box's weight
        just beyond it (ties together), each removed level put back."""
        inside = available & box.contains(self.X)
        share = alpha * self.weight[inside].sum()
        for j, allowed in enumerate(box.levels):
            column = self.X[:, j]
            if allowed is None:
                free = box.with_limit(j, low=-np.inf, high=np.inf)
                beside = available & free.contains(self.X)
                for side in ("low", "high"):
                    limit = getattr(box, side)[j]
                    if not np.isfinite(limit):
                        continue
                    below = side == "low"
                    outside = np.flatnonzero(beside & ((column < limit) if below
                                                       else (column > limit)))
                    if outside.size == 0:
                        continue
                    # the rows nearest the limit first
                    nearest_first = -column[outside] if below else column[outside]
                    order = outside[np.argsort(nearest_first, kind="stable")]
                    new = reached(column[order], self.weight[order], share)
                    pasted = box.with_limit(j, **{side: new})
                    yield pasted, np.flatnonzero(available & pasted.contains(self.X))
            else:
                for level in np.flatnonzero(~allowed):
                    pasted = box.with_level(j, level, True)
                    rows = np.flatnonzero(available & pasted.contains(self.X))
                    if rows.size > inside.sum():
                        yield pasted, rows


def peel_and_paste(peeler, available, alpha, paste_alpha):
    """The trajectory of boxes from all the ``available`` rows (a mask; module
    doc): the boxes, and each one's rows (indices)."""
    box = Box.everything(peeler.X.shape[1], peeler.n_levels)
    inside = np.flatnonzero(available)
    orders = [None if n_levels is not None else
              inside[np.argsort(peeler.X[inside, j], kind="stable")]
              for j, n_levels in enumerate(peeler.n_levels)]
    trajectory = [(box, inside)]
    member = np.zeros(peeler.X.shape[0], dtype=bool)
    while True:
        best = None
        for candidate, rows in peeler.peels(box, inside, orders, alpha):
            value = peeler.value(rows)
            if best is None or peeler.better(value, best[0]):
                best = (value, candidate, rows)
        if best is None or np.isnan(best[0]):
            break
        _, box, inside = best
        member[:] = False
        member[inside] = True
        orders = [None if order is None else order[member[order]] for order in orders]
        trajectory.append((box, inside))
    current = peeler.value(inside)
    pasted = False
    while paste_alpha > 0:
        best = None
        for candidate, rows in peeler.pastes(box, available, paste_alpha):
            value = peeler.value(rows)
            if peeler.better(value, current if best is None else best[0]):
                best = (value, candidate, rows)
        if best is None:
            break
        current, box, inside = best
        pasted = True
    if pasted:
        trajectory.append((box, inside))
    return trajectory


@fill_doc
class IntervalPRIM(BaseEstimator):
    """Bump hunting on interval targets: the patient rule induction method.

    Finds boxes of the feature space (limits of numeric features, sets of
    levels of categorical ones) whose rows have the highest (or lowest)
    value of the target, the value of a box being the optimum of the
    interval loss on its rows, as the solver of every mmit model finds it:
    censored bounds count as what they say. The box is peeled a small
    share of its rows at a time, keeping the side that raises its value
    most, then pasted back where that raises it (Friedman and Fisher 1999);
    the box of best value on held-out rows is chosen along the trajectory,
    and covering finds further boxes among the rows outside the first.

    Parameters
    ----------
    peel_alpha : float, default=0.05
        The share of the box's weight a numeric feature's peel removes (ties
        together); a categorical peel removes one level.
    paste_alpha : float, default=0.01
        The share of the box's weight a paste adds back along a numeric
        face; 0: no pasting.
    mass_min : float, default=0.05
        The least share of the training rows' weight a box keeps.
    threshold_type : {"high", "low"}, default="high"
        Whether boxes of high or of low values are sought.
    threshold : float, default=None
        A row is of interest (its coverage and density) when its interval
        lies above it ("high": lower bound above; "low": upper bound below),
        and covering goes on while a new box's value beats it; None: the
        value of all training rows.
    max_boxes : int, default=1
        Boxes at most (covering).
    validation_fraction : float, default=0.25
        The share of the rows held out to choose each box along its
        trajectory: the largest box whose value on them is within one
        (bootstrap) standard error of the best (module doc of
        ``mmit.inspection._prim``); 0: the last box of the trajectory.
    loss : {"squared_hinge", "linear_hinge"}, default="squared_hinge"
        The loss whose optimum values a box: the squared hinge's is unique
        (a mean where the bounds are exact values), the linear hinge's a
        median-like point of a flat minimum (robust to a few extreme rows,
        but many peels then tie).
    margin : float, default=0.0
        Margin of the hinges, see :class:`~mmit.MMIT`.
    %(categorical_features)s
    random_state : int, RandomState instance or None, default=None
        The draw of the validation rows and of the bootstrap.
    verbose : int, default=0
        With 1 or more, each box found on stderr.

    Attributes
    ----------
    peeling_trajectory_ : Bunch
        One entry per box of the trajectories (of every covering round, in
        turn), arrays of ``box`` (the round), ``value`` (the box value on
        its training rows), ``n_rows``, ``mass`` (their share of the training
        weight), ``coverage`` (the share of the training rows of interest
        inside the box), ``density`` (the share of the box's rows of
        interest), ``validation_value`` and ``n_validation_rows``.
    boxes_ : list of dict
        The chosen boxes, only their restricted features: a feature's name
        (or index) to ``(low, high)`` (inclusive; an infinite side is free),
        or for a categorical feature the list of its allowed categories
        (None for a missing value, where training rows missed it; a missing
        value of a feature none missed in training lies in every box).
    box_values_ : ndarray of shape (n_boxes,)
        Their values on their training rows.
    chosen_ : ndarray of shape (n_boxes,)
        Their indices in the trajectory.
    threshold_ : float
        The threshold used.
    data_min_, data_max_ : ndarray of shape (n_features,)
        The training range of each numeric feature (NaN for a categorical one).
    %(features_in)s
    %(categorical_attributes)s

    Examples
    --------
    >>> import numpy as np
    >>> from mmit.inspection import IntervalPRIM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(2000, 3))
    >>> center = np.where((X[:, 0] > 0.6) & (X[:, 1] < 0.3), 3.0, 0.0)
    >>> y = np.column_stack([center - 0.5, center + 0.5])
    >>> prim = IntervalPRIM(random_state=0).fit(X, y)
    >>> sorted(prim.boxes_[0])
    [0, 1]
    >>> round(prim.box_values_[0], 1)
    3.0
    """

    _parameter_constraints = {
        "peel_alpha": [Interval(Real, 0.0, 0.5, closed="neither")],
        "paste_alpha": [Interval(Real, 0.0, 0.5, closed="left")],
        "mass_min": [Interval(Real, 0.0, 1.0, closed="neither")],
        "threshold_type": [StrOptions({"high", "low"})],
        "threshold": [Real, None],
        "max_boxes": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [Interval(Real, 0.0, 1.0, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "margin": [Interval(Real, 0.0, None, closed="left")],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, *, peel_alpha=0.05, paste_alpha=0.01, mass_min=0.05,
                 threshold_type="high", threshold=None, max_boxes=1,
                 validation_fraction=0.25, loss="squared_hinge", margin=0.0,
                 categorical_features="from_dtype", random_state=None, verbose=0):
        set_init_parameters(self, locals())

    @fit_method
    def fit(self, X, y, sample_weight=None):
        """Find the boxes.

        %(fit_weighted)s
        """
        X, lower, upper, weight = validate_training_data(self, X, y, sample_weight,
                                                         allow_nan=False)
        if not isinstance(X, np.ndarray):
            X = X.toarray()
        categories = fitted_encoding(self)[1] or [None] * X.shape[1]
        n_levels = [None if c is None else len(c) for c in categories]
        numeric = np.array([n is None for n in n_levels])
        self._missing_seen = ~numeric & np.isnan(X).any(axis=0)
        self.data_min_ = np.where(numeric, X.min(axis=0, initial=np.inf), np.nan)
        self.data_max_ = np.where(numeric, X.max(axis=0, initial=-np.inf), np.nan)
        n = X.shape[0]
        held_out = np.zeros(n, dtype=bool)
        n_validation = int(round(self.validation_fraction * n))
        rng = check_random_state(self.random_state)
        if n_validation:
            if n - n_validation < 1:
                raise ValueError(f"validation_fraction={self.validation_fraction} leaves "
                                 f"no training row of {n}.")
            held_out[rng.permutation(n)[:n_validation]] = True
        training = ~held_out & (weight > 0)
        if not training.any():
            raise ValueError("IntervalPRIM needs a training row of positive weight.")
        loss = LOSSES[self.loss]
        sign = 1.0 if self.threshold_type == "high" else -1.0

        def peeler(rows):
            return _Peeler(X, lower, upper, np.where(rows, weight, 0.0), loss,
                           self.margin, sign, self.mass_min * weight[training].sum(),
                           n_levels)

        train_peeler, validation_peeler = peeler(training), peeler(held_out)
        self.threshold_ = float(train_peeler.value(training) if self.threshold is None
                                else self.threshold)
        interest = weight * ((lower > self.threshold_) if sign > 0
                             else (upper < self.threshold_))
        columns = {name: [] for name in ("box", "value", "n_rows", "mass", "coverage",
                                         "density", "validation_value",
                                         "n_validation_rows")}
        boxes, chosen, values = [], [], []
        self._trajectory = []
        available = np.ones(n, dtype=bool)
        for round_ in range(self.max_boxes):
            if weight[available & training].sum() < train_peeler.least_weight:
                break
            trajectory = peel_and_paste(train_peeler, available & training,
                                        self.peel_alpha, self.paste_alpha)
            scores, validation_boxes = [], []
            for box, index in trajectory:
                rows = np.zeros(n, dtype=bool)
                rows[index] = True
                validation_rows = available & held_out & box.contains(X)
                box_weight = weight[rows].sum()
                entry = {"box": round_, "value": train_peeler.value(rows),
                         "n_rows": int(rows.sum()),
                         "mass": box_weight / weight[training].sum(),
                         "coverage": interest[rows].sum() / interest[training].sum()
                         if interest[training].sum() > 0 else np.nan,
                         "density": interest[rows].sum() / box_weight,
                         "validation_value": validation_peeler.value(validation_rows),
                         "n_validation_rows": int(validation_rows.sum())}
                for name, value in entry.items():
                    columns[name].append(value)
                scores.append(entry["validation_value"])
                validation_boxes.append(validation_rows)
                self._trajectory.append(box)
            start = len(self._trajectory) - len(trajectory)
            k = _chosen_box(np.array(scores), sign, validation_peeler, validation_boxes,
                            rng) if n_validation else len(trajectory) - 1
            box, rows = trajectory[k]
            value = train_peeler.value(rows)
            n_rows = rows.size
            if round_ > 0 and not sign * (value - self.threshold_) > 0:
                del self._trajectory[start:]
                for name in columns:
                    del columns[name][start:]
                break
            boxes.append(box)
            chosen.append(start + k)
            values.append(value)
            if self.verbose:
                print(f"[IntervalPRIM] box {round_}: value {value:.6g}, "
                      f"{n_rows} rows", file=sys.stderr, flush=True)
            available &= ~box.contains(X)
        self.peeling_trajectory_ = Bunch(**{name: np.asarray(values_)
                                            for name, values_ in columns.items()})
        self._boxes = boxes
        self.boxes_ = [self._readable(box) for box in boxes]
        self.chosen_ = np.asarray(chosen, dtype=np.intp)
        self.box_values_ = np.asarray(values)
        return self

    def _readable(self, box):
        """A box's restricted features (:attr:`boxes_`' form)."""
        names = getattr(self, "feature_names_in_", None)
        categories = fitted_encoding(self)[1]
        limits = {}
        for j, allowed in enumerate(box.levels):
            key = j if names is None else str(names[j])
            if allowed is None:
                if np.isfinite(box.low[j]) or np.isfinite(box.high[j]):
                    limits[key] = (float(box.low[j]), float(box.high[j]))
            elif not allowed.all():
                labels = list(categories[j]) + [None]
                limits[key] = [labels[k] for k in np.flatnonzero(allowed)
                               if k < len(categories[j]) or self._missing_seen[j]]
        return limits

    def inspect(self, i=None):
        """A box of the trajectory: its restricted limits and statistics.

        Parameters
        ----------
        i : int, default=None
            Its index in :attr:`peeling_trajectory_`; None: the first chosen
            box.

        Returns
        -------
        box : Bunch
            ``limits`` (as in :attr:`boxes_`), ``value``, ``n_rows``,
            ``mass``, ``coverage``, ``density``, ``validation_value``,
            ``n_validation_rows``, ``box`` (its covering round) and ``text``
            (all of it, readably).
        """
        check_is_fitted(self)
        i = int(self.chosen_[0]) if i is None else i
        if not isinstance(i, Integral) or not -len(self._trajectory) <= i < \
                len(self._trajectory):
            raise ValueError(f"i must index the trajectory's {len(self._trajectory)} "
                             f"boxes, got {i!r}.")
        stats = {name: values[i].item()
                 for name, values in self.peeling_trajectory_.items()}
        limits = self._readable(self._trajectory[i])
        lines = [f"box {i} (covering round {stats['box']}): value {stats['value']:.6g} on "
                 f"{stats['n_rows']} rows (mass {stats['mass']:.3f}), validation value "
                 f"{stats['validation_value']:.6g} on {stats['n_validation_rows']} rows, "
                 f"coverage {stats['coverage']:.3f}, density {stats['density']:.3f}"]
        lines += [f"  {name}: {limit}" for name, limit in limits.items()]
        return Bunch(limits=limits, text="\n".join(lines), **stats)

    def apply(self, X):
        """The index of the first chosen box holding each row (-1: none).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        boxes : ndarray of shape (n_samples,) of int
        """
        X = rows_as_read(self, X)
        result = np.full(X.shape[0], -1, dtype=np.intp)
        for k, box in reversed(list(enumerate(self._boxes))):
            result[box.contains(X)] = k
        return result

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.required = True
        return tags


def _chosen_box(values, sign, peeler, rows, rng):
    """The index of the largest box (the first along the trajectory) whose
    validation value (``values``; the boxes' validation ``rows``) is within
    one standard error of the best one, the error bootstrapped (the last
    box when no box holds a validation row)."""
    if np.all(np.isnan(values)):
        return values.size - 1
    best = int(np.nanargmax(sign * values))
    error = peeler.bootstrap_error(rows[best], rng)
    good_enough = sign * values >= sign * values[best] - np.nan_to_num(error)
    return int(np.flatnonzero(good_enough)[0])
