"""The binned booster fitted on Dask collections: the rows stay on the workers.

``MMITBoost(splitter="hist").fit`` of a Dask array or data frame (see
:func:`fit_on_cluster`) makes the model a local fit makes with the same bin
edges, through the user's Dask client (Dask's distributed scheduler: no
cluster code here). Each partition of rows (a block of every column) becomes
a :class:`PartitionRows` on the worker that holds it: its features binned
once, its bounds and weights, and a ``LevelBuilder``
(``mmit.tree._level_builder``) that keeps its rows' residual hinges sorted
from stage to stage and grows each stage's tree on them a level at a time,
with the local fit's histogram splitter. What crosses the network:

- **Bin edges**: the quantiles of the rows a local fit of as many rows
  takes (``binning_sample``: every row up to ``SUBSAMPLE``, else a uniform
  sample of that many, the same rows), each partition sending its own
  once: the local fit's bins at every size.
- **Histograms**: every stage grows its tree a level at a time. Each
  partition sums, per node of the level, feature and bin, its rows'
  gradients, curvatures and counts (of two siblings, the smaller from its
  rows, the larger by subtraction); each worker adds up its partitions'
  and the client theirs, chooses each node's split from the sums as the
  local histogram splitter does (``best_histogram_split``), and sends the
  splits back. With them go each node's rows, weight, and its largest
  lower and smallest upper breakpoint over every partition: a node whose
  intervals all meet costs nothing and stays a leaf, as locally.
- **Hinges near each node's optimum**: a node's value is the exact optimum
  of the hinge losses of all its rows, whichever partition holds them.
  Each partition solves its own rows of the node on their sorted hinges
  (as the local splitter solves a node): the node's optimum lies between
  the least and the largest of these (where every part's derivative is at
  most, then at least, zero), and a flat minimum spreads at most to the
  breakpoints next to that range, where the slope changes. So each
  partition then sends its hinges with breakpoints in the range widened to
  its next breakpoint on each side (binary searches of the sorted hinges),
  and the sums (weight, weight times position and its square) of the
  hinges beyond those that are active across the range (upper hinges below
  it, lower hinges above). The client solves each node exactly on these
  (``grouped_minima``), the active hinges beyond stood in for by one hinge
  on each side at their weighted mean position: on the range, a sum of
  linear or squared hinges that are all active is one such hinge of their
  total weight (plus a constant for the squared hinge, added to the
  cost). Only hinges near the optimum travel: about the square root of a
  partition's rows of a node.
- **Leaf values**: the client sends each stage's leaves' values; each
  partition moves its leaves' rows by them and merges its leaves' sorted
  hinges into the next stage's (``HingeCriterion.advance``).

A level's exact values travel with the next level's histograms: a round
per level, and one more for the last level's values.

Ties between features' gains (within the splitter's relative tolerance)
go to the first feature of the node's order, drawn from its key as a
local fit draws it (``draw_order``, ``child_keys``): the trees are
those of the local fit, up to the rounding of sums added in another
order.
"""

import functools
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._loss._loss import LOSSES, weighted_loss
from .._loss._solver import grouped_minima, hinge_positions
from .._utils._categorical import (
    n_categories,
    resolve_categorical_features,
    takes_categorical_features,
    validate_features,
)
from .._utils._validation import check_interval_target, check_sample_weight
from ..tree._binning import bin_features, binning_sample, place_values
from ..tree._features import BinnedFeatures
from ..tree._level_builder import LevelBuilder, best_histogram_split, child_keys, draw_order
from ..tree._tree import NODE_DTYPE, Tree

# what the Dask fit does not do yet, as the booster's parameters say it
_LOCAL_ONLY = {
    "subsample": lambda value: value < 1.0,
    "max_features": lambda value: value is not None,
    "max_leaf_nodes": lambda value: value is not None,
    "leaf_model": lambda value: value != "constant",
    "monotonic_cst": lambda value: value is not None,
    "interaction_cst": lambda value: value is not None,
}


class PartitionRows:
    """A partition's rows as its worker keeps them through a fit (a worker's
    actor owns it): its binned ``features``, its rows' ``weight`` and, until
    the fit's margin is known, their ``lower`` and ``upper`` bounds; then its
    ``builder`` (a ``LevelBuilder``, which keeps the bounds as it needs
    them). ``summary`` is what the last task made for the client."""

    def __init__(self, features, lower, upper, weight):
        self.features, self.lower, self.upper, self.weight = features, lower, upper, weight
        self.builder = None
        self.summary = None


def partition_sample(X, sample_weight, rows):
    """The ``rows`` of a partition (in increasing order), with their
    weights."""
    n = X.shape[0]
    weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight)
    return X[rows] if not hasattr(X, "iloc") else X.iloc[rows], weight[rows]


def distinct_rows(X, columns):
    """The rows of a partition that first hold each distinct value of its
    ``columns`` (the categorical features): what the categories of every
    row come from."""
    if hasattr(X, "iloc"):
        first = np.zeros(X.shape[0], dtype=bool)
        for j in columns:
            first |= ~X.iloc[:, j].duplicated().to_numpy()
        return X.iloc[np.flatnonzero(first)]
    X = np.asarray(X)
    rows = [np.unique(X[:, j], return_index=True)[1] for j in columns]
    return X[np.unique(np.concatenate(rows))]


def partition_rows(X, y, sample_weight, encoding, thresholds, n_bins, n_threads):
    """A partition's :class:`PartitionRows`: its features checked and encoded
    as the fitted ``encoding`` (the estimator) reads new rows, then binned
    with ``thresholds`` (``n_bins`` per feature, a categorical feature's bin
    its category); its checks those of a local fit."""
    X = np.ascontiguousarray(validate_features(encoding, X, reset=False,
                                               ensure_min_samples=0))
    lower, upper = check_interval_target(y, X.shape[0])
    weight = check_sample_weight(sample_weight, X.shape[0])
    codes = np.empty(X.shape, dtype=np.uint8)
    place_values(X, thresholds, codes, n_threads)
    return PartitionRows(BinnedFeatures(codes, thresholds, n_bins, n_categories(encoding)),
                         lower, upper, weight)


def finite_bounds(rows):
    """The finite bounds of a partition's rows and their rows' weights."""
    bounds = np.concatenate([rows.lower, rows.upper])
    finite = np.isfinite(bounds)
    return bounds[finite], np.concatenate([rows.weight, rows.weight])[finite]


def bound_sums(rows):
    """Weight and weighted sum of the finite bounds, and their number."""
    bounds, weight = finite_bounds(rows)
    return np.array([weight.sum(), weight @ bounds, bounds.size])


def spread_sums(rows, mean):
    """Weight and weighted squared deviation from ``mean`` of the finite bounds."""
    bounds, weight = finite_bounds(rows)
    return np.array([weight.sum(), weight @ (bounds - mean) ** 2])


def prepare(rows, margin, loss_tag, merge, n_threads):
    """The partition's ``LevelBuilder`` for the fit's margin and loss, its
    predictions at 0."""
    rows.builder = LevelBuilder(rows.features, rows.lower, rows.upper, rows.weight, margin,
                                loss_tag, merge, n_threads)
    rows.lower = rows.upper = None  # the builder has them as it needs them
    return rows


class LevelSummary(NamedTuple):
    """What partitions sum of a level's nodes (each field one entry per
    node): what the client chooses their splits from."""

    histograms: np.ndarray | None  # per node, feature and bin: gradient, curvature, count
    low: np.ndarray                # least of the partitions' optima of the node
    high: np.ndarray               # largest of them
    rows: np.ndarray               # the node's rows
    weight: np.ndarray             # their weight
    largest_lower: np.ndarray      # the largest lower breakpoint of its rows
    smallest_upper: np.ndarray     # the smallest upper breakpoint


def level_summary(summary):
    """A partition's summary of a level (``LevelBuilder.grow``) as the sums
    across partitions take it."""
    histograms, optima, counts, weights, largest_lower, smallest_upper = summary
    return LevelSummary(histograms, optima, optima.copy(), counts, weights, largest_lower,
                        smallest_upper)


def add_level_summaries(one, other):
    """Two partitions' level summaries as one's."""
    return LevelSummary(
        None if one.histograms is None else one.histograms + other.histograms,
        np.fmin(one.low, other.low), np.fmax(one.high, other.high), one.rows + other.rows,
        one.weight + other.weight, np.fmax(one.largest_lower, other.largest_lower),
        np.fmin(one.smallest_upper, other.smallest_upper))


def start_stage(rows, values, learning_rate, search):
    """End the last stage with its leaves' ``values`` (None before the
    first), then start the next at its root (its histogram when
    ``search``; None: no next stage). Summary: the weighted sum of the
    rows' losses at their predictions (None before the first end), whether
    a row has curvature, the root's level summary."""
    builder = rows.builder
    loss = None if values is None else builder.finish(values, learning_rate)
    if search is None:
        rows.summary = (loss, (False, False), None)
        return rows
    curved, summary = builder.start(search)
    rows.summary = (loss, (curved, curved), level_summary(summary))
    return rows


def add_stage_summaries(one, other):
    """Two partitions' stage summaries as one's: losses, whether any and
    whether every partition's rows have curvature, the root."""
    return (None if one[0] is None else one[0] + other[0],
            (one[1][0] or other[1][0], one[1][1] and other[1][1]),
            None if one[2] is None else add_level_summaries(one[2], other[2]))


def use_curvature(rows):
    """The root's level summary with every partition's rows' curvatures
    (some partition's rows have curvature, this one's may have none)."""
    rows.summary = level_summary(rows.builder.use_curvature())
    return rows


def near_level(rows, lows, highs):
    """The hinges of a level's nodes near their optima's ranges (summary),
    before their splits are chosen."""
    rows.summary = rows.builder.near(lows, highs)
    return rows


def grow_level(rows, lows, highs, routing, search):
    """The hinges of a level's nodes near their optima's ranges, then the
    next level (``routing``: each node's split feature (-1: a leaf), bin,
    side of the missing values and category sets, :func:`no_splits`).
    Summary: the near hinges and the next level's summary."""
    near, summary = rows.builder.grow(lows, highs, *routing, search)
    rows.summary = (near, level_summary(summary))
    return rows


def concatenated(hinges):
    """Lists of hinges (node, position, weight, parity arrays) as one."""
    empty = (np.empty(0, np.intp), np.empty(0), np.empty(0), np.empty(0, np.int32))
    return [np.concatenate(column) for column in zip(empty, *hinges, strict=True)]


def near_hinges(listed, edges, below, above):
    """The hinges near each node's optimum as one tuple: the listed hinges'
    nodes, positions, weights and parities (concatenated), the edges, and
    the sums below and above. Listed hinges outside their node's edges are
    moved to the sums (upper hinges below, lower ones above) or dropped
    (inactive across the edges)."""
    node, positions, weights, parity = concatenated(listed)
    low, high = edges[node, 0], edges[node, 1]
    for sums, side, hinge_parity in ((below, positions < low, 1),
                                     (above, positions > high, 0)):
        moved = side & (parity == hinge_parity)
        for column, values in enumerate((weights, weights * positions,
                                         weights * positions ** 2)):
            np.add.at(sums[:, column], node[moved], values[moved])
    inside = (positions >= low) & (positions <= high)
    return (node[inside], positions[inside], weights[inside], parity[inside], edges,
            below, above)


def add_near_hinges(one, other):
    """Two partitions' hinges near the optima as one's: the tighter edges of
    the two, their hinges within them, the others' sums moved as
    :func:`near_hinges` does."""
    edges = np.column_stack([np.maximum(one[4][:, 0], other[4][:, 0]),
                             np.minimum(one[4][:, 1], other[4][:, 1])])
    listed = [part[:4] for part in (one, other)]
    return near_hinges(listed, edges, one[5] + other[5], one[6] + other[6])


class CombinePairs:
    """Combine pairs of summaries, each part with its own function."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, one, other):
        return self.first(one[0], other[0]), self.second(one[1], other[1])


# two partitions' grow_level summaries as one's
add_grown_levels = CombinePairs(add_near_hinges, add_level_summaries)


def solve_near_hinges(near, quadratic, loss_tag):
    """Each node's exact value and cost from its hinges near the optimum (all
    partitions' :func:`add_near_hinges`), the sums stood in for by one hinge
    each side at their weighted mean (module doc); ``found``: whether the node
    has a hinge."""
    node, positions, weights, parity, edges, below, above = near
    n_nodes = edges.shape[0]
    parts = [(node, positions, weights, parity)]
    offsets = np.zeros(n_nodes)
    for sums, hinge_parity, toward in ((below, 1, -np.inf), (above, 0, np.inf)):
        has = np.flatnonzero(sums[:, 0] > 0.0)
        mean = sums[has, 1] / sums[has, 0]
        # strictly beyond the edge, as all the hinges it stands for
        edge = edges[has, 0 if hinge_parity else 1]
        beyond = np.where(np.isfinite(edge), np.nextafter(edge, toward), mean)
        mean = np.minimum(mean, beyond) if hinge_parity else np.maximum(mean, beyond)
        parts.append((has, mean, sums[has, 0], np.full(has.size, hinge_parity)))
        if quadratic:
            offsets[has] += np.maximum(sums[has, 2] - sums[has, 1] ** 2 / sums[has, 0],
                                       0.0)
    node, positions, weights, parity = concatenated(parts)
    order = np.lexsort((parity, positions, node))
    starts = np.searchsorted(node[order], np.arange(n_nodes + 1)).astype(np.intp)
    values, costs, found = grouped_minima(positions[order], weights[order],
                                          parity[order].astype(np.int32), starts,
                                          loss_tag)
    return values, costs + offsets, found


def check_dask_fit(booster):
    """Refuse the parameters a fit on Dask collections does not take."""
    if not LOSSES[booster.loss].sums_to_one_hinge:
        allowed = tuple(name for name, loss in LOSSES.items() if loss.sums_to_one_hinge)
        raise ValueError(f"loss={booster.loss!r} is not available for a fit on Dask "
                         "collections (its exact values stand in for the hinges far "
                         f"from a node's optimum as the losses {allowed} allow).")
    if booster.splitter != "hist":
        raise ValueError("A fit on Dask collections needs splitter='hist' (the exact "
                         "split search reads every row of a node at once).")
    for name, local_only in _LOCAL_ONLY.items():
        if local_only(getattr(booster, name)):
            raise ValueError(f"{name}={getattr(booster, name)!r} is not available for a "
                             "fit on Dask collections; fit on arrays or use its default.")
    if booster.warm_start and hasattr(booster, "estimators_"):
        raise ValueError("warm_start is not available for a fit on Dask collections.")


class ValidationRows:
    """A partition of held-out rows: features, the breakpoints of their
    hinges, weights, predictions."""

    def __init__(self, X, lower_position, upper_position, weight, prediction):
        self.X, self.lower_position, self.upper_position = X, lower_position, upper_position
        self.weight, self.prediction = weight, prediction


def validation_rows(X, y, sample_weight, encoding, baseline, margin):
    """A partition's :class:`ValidationRows`, its features checked and
    encoded as the fitted ``encoding`` (the estimator) reads new rows,
    predicted ``baseline``."""
    X = np.ascontiguousarray(validate_features(encoding, X, reset=False,
                                               ensure_min_samples=0))
    lower, upper = check_interval_target(y, X.shape[0])
    weight = check_sample_weight(sample_weight, X.shape[0])
    return ValidationRows(X, *hinge_positions(lower, upper, margin), weight,
                          np.full(X.shape[0], baseline))


def advance_validation(rows, tree, learning_rate, loss_tag):
    """The held-out rows after a stage's ``tree`` (a Tree; None: none yet).
    Summary: the weighted sum of their losses (``weighted_loss``), and their
    weight."""
    if tree is not None and rows.X.shape[0]:
        rows.prediction += learning_rate * tree.predict(rows.X)
    rows.summary = np.array([weighted_loss(rows.lower_position, rows.upper_position,
                                           rows.prediction, rows.weight, loss_tag),
                             rows.weight.sum()])
    return rows


def dask_client():
    """The Dask client of the session (``distributed.get_client``)."""
    try:
        from distributed import get_client
    except ImportError as error:
        raise ImportError("A fit on Dask collections needs the dask extra: "
                          "pip install 'scikit-mmit[dask]'.") from error
    try:
        return get_client()
    except ValueError as error:
        raise ValueError("A fit on Dask collections runs through the session's Dask "
                         "client: make one first (distributed.Client(...)).") from error


def dask_rows(collection, name):
    """A Dask array of the rows of a Dask array or data frame (lengths known)."""
    import dask.array

    frames = sys.modules.get("dask.dataframe")
    if frames is not None and isinstance(collection, (frames.DataFrame, frames.Series)):
        collection = collection.to_dask_array(lengths=True)
    if not isinstance(collection, dask.array.Array):
        raise TypeError(f"{name} must be a Dask array or data frame, as X is, not a "
                        f"{type(collection).__name__}.")
    return collection


def delayed_partitions(X, y, sample_weight, prefix=""):
    """The partitions of Dask collections X, y and sample_weight, aligned:
    the rows' and their features' number, each partition's first row (and
    one past the last), and per partition its delayed rows of X (every
    column: a pandas data frame for a Dask data frame, so that its columns
    keep their dtypes, else an array), y and the weights (None without), y
    and the weights rechunked as X's rows."""
    frames = sys.modules.get("dask.dataframe")
    if frames is not None and isinstance(X, frames.DataFrame):
        sizes = tuple(int(size) for size in X.map_partitions(len).compute())
        shape, x_blocks = (sum(sizes), len(X.columns)), X.to_delayed()
    else:
        X = dask_rows(X, f"{prefix}X")
        if X.ndim != 2:
            raise ValueError(f"{prefix}X must be 2-D, not of {X.ndim} dimensions.")
        X = X.rechunk({1: -1})
        sizes, shape, x_blocks = X.chunks[0], X.shape, X.to_delayed().ravel()
    parts = [x_blocks]
    for name, values in ((f"{prefix}y", y), (f"{prefix}sample_weight", sample_weight)):
        if values is None:
            parts.append([None] * len(sizes))
            continue
        values = dask_rows(values, name)
        if values.shape[0] != shape[0]:
            raise ValueError(f"{name} has {values.shape[0]} rows but {prefix}X has "
                             f"{shape[0]} samples.")
        parts.append(values.rechunk({0: sizes, **({1: -1} if values.ndim == 2 else {})})
                     .to_delayed().ravel())
    return shape, np.cumsum([0, *sizes]), list(zip(*parts, strict=True))


def concatenated_rows(parts):
    """Rows of several partitions as one array or data frame."""
    if hasattr(parts[0], "iloc"):
        import pandas as pd

        return pd.concat(parts)
    return np.concatenate(parts)


class WorkerPartitions:
    """The partitions of rows one worker holds, kept there through a fit (a
    Dask actor: the client calls it directly, not through the scheduler, a
    few milliseconds a round). Each call applies a task to every partition
    in turn and combines their summaries on the worker."""

    def __init__(self, *parts):
        self.parts = list(parts)

    def apply(self, task, combine, *args):
        """The partitions become ``task(part, *args)``; their summaries
        combined (None without ``combine``)."""
        self.parts = [task(part, *args) for part in self.parts]
        if combine is None:
            return None
        return functools.reduce(combine, [part.summary for part in self.parts])

    def read(self, function, combine, *args):
        """``function(part, *args)`` of every partition, combined."""
        return functools.reduce(combine, [function(part, *args) for part in self.parts])


def worker_partitions(client, parts):
    """A :class:`WorkerPartitions` actor on each worker holding some of the
    futures ``parts``, with those."""
    held = {}
    for key, workers in client.who_has(parts).items():
        held.setdefault(sorted(workers)[0], []).append(key)
    by_key = {part.key: part for part in parts}
    actors = [client.submit(WorkerPartitions, *(by_key[key] for key in keys), actor=True,
                            workers=[worker], allow_other_workers=False)
              for worker, keys in held.items()]
    return [actor.result() for actor in actors]


def on_workers(actors, method, task, combine, *args):
    """``method`` ("apply" or "read") of ``task`` on every worker's
    partitions; their results combined on the client."""
    calls = [getattr(actor, method)(task, combine, *args) for actor in actors]
    results = [call.result() for call in calls]
    return None if combine is None else functools.reduce(combine, results)


@dataclass(slots=True)
class StageNode:
    """A node of a stage's tree as the client grows it, a level at a time."""

    depth: int
    parent: int                    # its parent's index in the grown nodes (-1: root)
    key: int                       # draws the order its features are tried in
    feature: int = -1              # its split's feature (-1: a leaf)
    bin: int = 0                   # the last bin going left
    threshold: float = np.nan      # the last value going left (NaN: categorical)
    missing_left: bool = False     # where missing values go
    has_missing: bool = False      # whether its rows hold missing values of the feature
    categories: np.ndarray | None = None  # a categorical split's words (left, then present)
    left: int = -1                 # its children's indices in the grown nodes
    right: int = -1
    rows: int = 0                  # its rows
    weight: float = 0.0            # their weight
    value: float = 0.0             # its exact value
    cost: float = 0.0              # the loss of its rows at it


def tree_of(nodes, n_features):
    """The Tree of grown ``nodes`` (StageNode, the root first), numbered as
    the local depth-first builder numbers them (children get the next ids
    when their parent is split, the left subtree first). A categorical split
    sends the categories absent from its node where its missing values go,
    as the local splitter does."""
    ids, stack = {0: 0}, [0]
    while stack:
        node = nodes[stack.pop()]
        if node.feature >= 0:
            ids[node.left], ids[node.right] = len(ids), len(ids) + 1
            stack += [node.right, node.left]
    state = np.zeros(len(ids), dtype=NODE_DTYPE)
    values = np.empty(len(ids))
    category_sets, category_words = [], []
    for grown, k in sorted(ids.items(), key=lambda item: item[1]):
        node = nodes[grown]
        leaf = node.feature < 0
        category_set = -1
        if not leaf and node.categories is not None:
            left, present = np.split(node.categories, 2)
            absent_side = np.uint32(0xFFFFFFFF if node.missing_left else 0)
            category_set = len(category_sets)
            category_sets.append((0, 32 * left.size, len(category_words)))
            category_words += (left | (~present & absent_side)).tolist()
        state[k] = (-1 if leaf else ids[node.left], -1 if leaf else ids[node.right],
                    -2 if leaf else node.feature, -2.0 if leaf else node.threshold,
                    node.cost, node.rows, node.weight, 0 if leaf else node.missing_left,
                    category_set)
        values[k] = node.value
    tree = Tree(n_features)
    tree.__setstate__({
        "nodes": state, "values": values, "node_models": None,
        "category_sets": np.array(category_sets, dtype=np.int64).reshape(-1, 3),
        "category_words": np.array(category_words, dtype=np.uint32)})
    return tree


class ClusterRows:
    """A booster's training rows on a Dask cluster (module doc): each
    partition a :class:`PartitionRows` on the worker that holds it, the
    bins from a sample of the rows; the client keeps the bins and the last
    tree grown.

    Parameters
    ----------
    estimator : MMITBoost
        Gets the fitted features' attributes (``n_features_in_``,
        ``feature_names_in_``, the categorical ones) from the sample.
    X, y, sample_weight : Dask collections
        Rows (array or data frame), their targets and weights (or None).
    max_bins : int
    n_threads : int
        Threads of a partition's binning and histograms.
    """

    def __init__(self, estimator, X, y, sample_weight, max_bins, n_threads):
        from dask import delayed
        from distributed import wait

        self.client = dask_client()
        (self.n_samples, self.n_features), starts, blocks = delayed_partitions(
            X, y, sample_weight)
        # the bins: quantiles of the rows a local fit of as many rows takes
        # (all of them up to SUBSAMPLE), each partition giving its own
        sample = binning_sample(self.n_samples)
        cuts = np.searchsorted(sample, starts)
        drawn = self.client.gather(self.client.compute([
            delayed(partition_sample)(x, w, sample[cuts[k]:cuts[k + 1]] - starts[k])
            for k, (x, _, w) in enumerate(blocks)]))
        sample = concatenated_rows([rows for rows, _ in drawn])
        # the categories of every row, as a local fit takes them: from the
        # rows holding each value of a categorical feature, in any partition
        reference = sample
        is_categorical = (resolve_categorical_features(sample,
                                                       estimator.categorical_features)
                          if takes_categorical_features(estimator) else None)
        if is_categorical is not None:
            columns = np.flatnonzero(is_categorical)
            reference = concatenated_rows([sample, *self.client.gather(self.client.compute(
                [delayed(distinct_rows)(x, columns) for x, _, _ in blocks]))])
        validate_features(estimator, reference, reset=True, ensure_all_finite="allow-nan",
                          ensure_min_samples=1)
        sample = validate_features(estimator, sample, reset=False)
        binned = bin_features(sample, np.concatenate([weight for _, weight in drawn]),
                              max_bins, n_categories=n_categories(estimator))
        self.thresholds = np.asarray(binned.thresholds)
        self.n_bins = np.asarray(binned.n_bins)
        self.n_categories = np.asarray(binned.n_categories)
        self.n_threads = n_threads
        parts = self.client.compute([
            delayed(partition_rows)(x, labels, w, estimator, self.thresholds, self.n_bins,
                                    n_threads)
            for x, labels, w in blocks])
        wait(parts)
        self.workers = worker_partitions(self.client, parts)
        self.loss = None
        self.root = None
        self.leaf_values = None  # of the last tree grown, as the partitions list them

    def summed(self, task, combine, *args):
        """``task`` of every partition (with ``args``), their summaries
        combined on each worker, then on the client; the total."""
        return on_workers(self.workers, "apply", task, combine, *args)

    def bounds_spread(self):
        """The weighted standard deviation of the finite bounds (0 with fewer
        than two or no weight), as ``bounds_spread`` of the rows at once."""
        weight, total, count = on_workers(self.workers, "read", bound_sums, np.add)
        if count < 2 or not weight > 0.0:
            return 0.0
        weight, squares = on_workers(self.workers, "read", spread_sums, np.add,
                                     total / weight)
        return float(np.sqrt(squares / weight))

    def optimal_constant(self, margin, loss, merge):
        """The optimal constant of the intervals at ``margin`` (0.0 without a
        finite bound), which becomes every row's prediction at the next
        stage; ``loss`` (its registry entry) and the margin are the fit's
        from now on; ``merge``: whether the stages' leaves merge their sorted
        hinges (``LevelBuilder``)."""
        self.loss = loss
        self.summed(prepare, None, margin, loss.tag, merge, self.n_threads)
        _, _, root = self.summed(start_stage, add_stage_summaries, None, 1.0, False)
        self.weight = root.weight[0]
        if not self.weight > 0.0:
            raise ValueError("No training row has a positive weight.")
        near, _ = self.summed(grow_level, add_grown_levels, root.low, root.high,
                              no_splits(1), False)
        values, _, found = self.solve(near)
        baseline = float(values[0]) if found[0] else 0.0
        self.leaf_values, self.leaf_rate = np.array([baseline]), 1.0
        return baseline

    def solve(self, near):
        """The exact values, costs and hinge flags of nodes from their hinges
        near the optimum."""
        return solve_near_hinges(near, self.loss.differentiable, self.loss.tag)

    def next_stage(self, learning_rate, last):
        """Add the last tree grown, shrunk by ``learning_rate`` (the optimal
        constant at first, as is), to the predictions and, unless it is the
        ``last``, make the next stage's root histogram; returns the mean
        loss of the predictions."""
        loss, (any_curved, all_curved), self.root = self.summed(
            start_stage, add_stage_summaries, self.leaf_values, self.leaf_rate,
            None if last else True)
        self.leaf_rate = learning_rate
        if self.root is not None and any_curved and not all_curved:
            # as a local fit's splitter, every partition sums the rows' curvatures
            # when some row has any
            self.root = self.summed(use_curvature, add_level_summaries)
        return loss / self.weight

    def grow_stage_tree(self, builder, seed):
        """The Tree of this stage's residual hinges, grown a level at a time
        (module doc) by the rules of ``builder`` (the ``TreeBuilder`` of the
        booster's tree parameters: which nodes may split, which splits gain
        enough, its depth limit and categorical penalty), as the local build
        grows it with ``seed``: each node tries the features in the order its
        key gives (``draw_order``; the root's key is the seed). A round
        per level: the level's exact values and the next level's summary;
        one more for the last level's values. With categorical features,
        whose splits' bar needs the node's cost, a level's exact values take
        a round of their own, before its splits."""
        nodes = [StageNode(depth=0, parent=-1, key=seed)]
        frontier, level = [0], self.root
        costs_first = bool(np.any(self.n_categories))
        leaves = []  # the nodes in the order the partitions make them leaves
        while frontier:
            lows = level.low
            if costs_first:
                value_nodes(nodes, frontier, self.solve(self.summed(
                    near_level, add_near_hinges, level.low, level.high)))
                lows = np.full(len(frontier), np.nan)  # solved: no hinges to send
            routing = no_splits(len(frontier))
            children, first_child = [], {}
            for k, node_id in enumerate(frontier):
                node = nodes[node_id]
                node.rows, node.weight = int(level.rows[k]), level.weight[k]
                # a node whose intervals all meet costs nothing: it stays a leaf
                if not builder.may_split(node.depth, node.rows,
                                         level.largest_lower[k] > level.smallest_upper[k]):
                    leaves.append(node_id)
                    continue
                # in gain units, per category beyond two (the local splitter's bar)
                penalty = (2.0 * builder.category_penalty * node.cost / node.weight
                           if costs_first and node.weight > 0.0 else 0.0)
                (feature, bin_, missing_left, has_missing, gain,
                 categories) = best_histogram_split(
                    level.histograms[k], self.n_bins, builder.min_samples_leaf,
                    draw_order(node.key, self.n_features), self.n_categories, penalty)
                # half the gain: the cost decrease the local histogram splitter measures
                if feature < 0 or not builder.keeps_split(0.5 * gain, self.weight):
                    leaves.append(node_id)
                    continue
                node.feature, node.bin, node.categories = feature, bin_, categories
                node.missing_left, node.has_missing = missing_left, has_missing
                node.left, node.right = len(nodes), len(nodes) + 1
                node.threshold = (np.nan if categories is not None
                                  else np.inf if bin_ == self.n_bins[feature] - 1
                                  else self.thresholds[feature, bin_])
                nodes += [StageNode(depth=node.depth + 1, parent=node_id, key=key)
                          for key in child_keys(node.key)]
                routing[0][k], routing[1][k], routing[2][k] = feature, bin_, missing_left
                routing[3][k] = categories
                first_child[k] = len(children)
                children += [node.left, node.right]
            search = any(nodes[child].depth < builder.max_depth for child in children)
            near, level = self.summed(grow_level, add_grown_levels, lows, level.high,
                                      routing, search)
            if not costs_first:
                value_nodes(nodes, frontier, self.solve(near))
            # without missing rows in a node, NaN follows the heavier child
            for k, first in first_child.items():
                node = nodes[frontier[k]]
                if not node.has_missing:
                    node.missing_left = level.weight[first] >= level.weight[first + 1]
            frontier = children
        self.leaf_values = np.array([nodes[node_id].value for node_id in leaves])
        return tree_of(nodes, self.n_features)


def value_nodes(nodes, level, solved):
    """Give a level's nodes their exact values and costs (``solved``: from
    their hinges near the optimum); a node without a hinge takes its
    parent's value (0 at the root) and no cost."""
    values, costs, found = solved
    for k, node_id in enumerate(level):
        node = nodes[node_id]
        parent = nodes[node.parent] if node.parent >= 0 else None
        node.value = (values[k] if found[k] else
                      parent.value if parent is not None else 0.0)
        node.cost = costs[k] if found[k] else 0.0


def no_splits(n_nodes):
    """The routing of a level of ``n_nodes`` nodes that all stay leaves: per
    node, the split's feature (-1), bin, side of the missing values and
    category sets (None: not a categorical split)."""
    return [np.full(n_nodes, -1, dtype=np.intp), np.zeros(n_nodes, dtype=np.intp),
            np.zeros(n_nodes, dtype=np.uint8), [None] * n_nodes]


class ClusterValidation:
    """Held-out rows on a Dask cluster, predicted stage by stage.

    Parameters
    ----------
    X, y, sample_weight : Dask collections
    encoding : MMITBoost
        Fitted on the training rows' features: encodes these.
    baseline : float
        Their first prediction.
    margin : float
    loss : IntervalLoss
    """

    def __init__(self, X, y, sample_weight, encoding, baseline, margin, loss):
        from dask import delayed
        from distributed import wait

        client = dask_client()
        _, _, blocks = delayed_partitions(X, y, sample_weight, prefix="validation ")
        parts = client.compute([delayed(validation_rows)(x, labels, w, encoding, baseline,
                                                         margin)
                                for x, labels, w in blocks])
        wait(parts)
        self.workers = worker_partitions(client, parts)
        self.loss = loss

    def mean_loss(self, tree=None, learning_rate=1.0):
        """The mean loss of the predictions after adding ``tree`` (a Tree, if
        given), shrunk by ``learning_rate``."""
        loss, weight = on_workers(self.workers, "apply", advance_validation, np.add, tree,
                                  learning_rate, self.loss.tag)
        return loss / weight
