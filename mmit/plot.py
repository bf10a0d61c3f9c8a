"""Plots of interval data, of trees, of additive terms and of PRIM's boxes
(needs matplotlib: the ``plot`` extra)."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._utils._validation import check_interval_target
from .tree._export import parents_of, resolve_feature_names, split_conditions
from .tree._tree import TREE_LEAF

__all__ = ["plot_intervals", "plot_predictive_distribution", "plot_prim_box",
           "plot_prim_trajectory", "plot_terms", "plot_tree"]


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("mmit.plot needs matplotlib: pip install 'scikit-mmit[plot]'") \
            from error
    return plt.figure(figsize=(7, 4)).gca()


def plot_intervals(x, y, predictions=None, *, ax=None, feature_name="feature",
                   model_name="model"):
    """Target intervals as vertical segments along one feature (the paper's Fig. 4).

    A finite interval is a segment from its lower to its upper bound; a
    censored bound is drawn as a segment running to the edge of the plot
    with a triangle marking the open end; an exact value is a dot. When
    ``predictions`` are given they are drawn as a line through the points
    in the order of ``x`` (steps for a tree of constant leaves, slopes for
    linear leaves or a linear model; with several features, the other
    features move the line too).

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        The feature.
    y : array-like of shape (n_samples, 2) or (n_samples,)
        Target intervals (lower, upper), or exact values.
    predictions : array-like of shape (n_samples,) or dict, default=None
        A model's predictions for the same samples, or several models'
        as ``{name: predictions}`` (one line each).
    ax : matplotlib Axes, default=None
        Where to draw; a new figure by default.
    feature_name, model_name : str
        Axis label, and legend entry of ``predictions`` given as an array.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from mmit import MMIT
    >>> from mmit.datasets import make_interval_regression
    >>> from mmit.plot import plot_intervals
    >>> X, y = make_interval_regression(100, 1, pattern="sin", random_state=0)
    >>> model = MMIT(max_depth=3).fit(X, y)
    >>> ax = plot_intervals(X[:, 0], y, model.predict(X), feature_name="x0")
    """
    x = np.asarray(x, dtype=float).ravel()
    lower, upper = check_interval_target(y, x.shape[0])
    ax = _axes(ax)
    finite = np.concatenate([lower[np.isfinite(lower)], upper[np.isfinite(upper)]])
    span = finite.max() - finite.min() if finite.size else 1.0
    bottom = finite.min() - 0.1 * span if finite.size else -1.0
    top = finite.max() + 0.1 * span if finite.size else 1.0
    shown_lower = np.where(np.isfinite(lower), lower, bottom)
    shown_upper = np.where(np.isfinite(upper), upper, top)
    exact = lower == upper
    ax.vlines(x[~exact], shown_lower[~exact], shown_upper[~exact], color="0.45",
              linewidth=1.2, label="target interval")
    ax.plot(x[exact], lower[exact], ".", color="0.45")
    ax.plot(x[np.isneginf(lower)], np.full(np.isneginf(lower).sum(), bottom), "v",
            color="0.45", markersize=4)
    ax.plot(x[np.isposinf(upper)], np.full(np.isposinf(upper).sum(), top), "^",
            color="0.45", markersize=4)
    if predictions is not None and not isinstance(predictions, dict):
        predictions = {model_name: predictions}
    order = np.argsort(x, kind="stable")
    for name, values in (predictions or {}).items():
        values = np.asarray(values, dtype=float).ravel()
        if values.shape != x.shape:
            raise ValueError(f"the predictions of {name} have shape {values.shape}, "
                             f"x has {x.shape}.")
        ax.plot(x[order], values[order], linewidth=1.8, label=name)
    ax.set_ylim(bottom, top)
    ax.set_xlabel(feature_name)
    ax.set_ylabel("target")
    ax.legend(loc="best", frameon=False)
    return ax


def plot_predictive_distribution(model, X, x, y=None, *, coverages=(0.5, 0.8, 0.9),
                                 ax=None, feature_name="feature"):
    """Each example's predictive distribution as nested bands along a feature.

    For every row of ``X`` a model's central prediction intervals
    (``predict_interval``, one shade per coverage, the widest lightest) are
    drawn as a vertical band at the row's ``x``, with the median as a dot;
    the examples' target intervals (``y``, as :func:`plot_intervals` draws
    them) go behind. An interval end the data cannot place (infinite) runs
    to the edge of the plot. To show new examples over the training data,
    draw the training intervals first (``plot_intervals``) and pass its
    ``ax``.

    Parameters
    ----------
    model : MMITForest, MMITForestCV or IntervalStackingRegressor
        A model fitted with a ``distribution``.
    X : array-like of shape (n_samples, n_features)
        The examples.
    x : array-like of shape (n_samples,)
        Where each is drawn (a feature of ``X``, say).
    y : array-like of shape (n_samples, 2) or (n_samples,), default=None
        Their target intervals, drawn behind.
    coverages : sequence of float, default=(0.5, 0.8, 0.9)
        The intervals' coverages, in (0, 1).
    ax : matplotlib Axes, default=None
    feature_name : str, default="feature"

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from mmit import MMITForest
    >>> from mmit.datasets import make_interval_regression
    >>> from mmit.plot import plot_predictive_distribution
    >>> X, y = make_interval_regression(200, 1, pattern="sin", random_state=0)
    >>> forest = MMITForest(20, random_state=0).fit(X, y)
    >>> ax = plot_predictive_distribution(forest, X, X[:, 0], y, feature_name="x0")
    """
    x = np.asarray(x, dtype=float).ravel()
    drawn_before = ax is not None and ax.has_data()
    ax = _axes(ax)
    if y is not None:
        plot_intervals(x, y, ax=ax, feature_name=feature_name)
    # infinite ends run to the edges of what is drawn already
    bottom, top = ax.get_ylim() if y is not None or drawn_before else (None, None)
    order = np.argsort(x, kind="stable")
    width = 0.8 * np.median(np.diff(x[order])) if x.size > 1 else 1.0
    shades = np.linspace(0.25, 0.6, len(coverages))
    for shade, coverage in zip(shades, sorted(coverages, reverse=True), strict=True):
        interval = model.predict_interval(X, coverage)
        if interval.shape[0] != x.shape[0]:
            raise ValueError(f"X has {interval.shape[0]} rows, x has {x.shape[0]}.")
        finite = interval[np.isfinite(interval)]
        low = np.where(np.isfinite(interval[:, 0]), interval[:, 0],
                       bottom if bottom is not None else finite.min())
        high = np.where(np.isfinite(interval[:, 1]), interval[:, 1],
                        top if top is not None else finite.max())
        ax.bar(x, high - low, width=max(width, 1e-12), bottom=low, color="tab:blue",
               alpha=shade, linewidth=0, label=f"{coverage:.0%} interval")
    median = model.predict_quantiles(X, [0.5])[:, 0]
    ax.plot(x, median, ".", color="tab:blue", markersize=3, label="median")
    ax.set_xlabel(feature_name)
    ax.set_ylabel("target")
    ax.legend(loc="best", frameon=False)
    return ax


def plot_terms(model, X, y=None, *, features=None, n_points=200, confidence=0.95,
               axes=None):
    """The terms of an additive model, one panel per feature or interaction.

    A numeric feature's panel draws its term along its training range (a
    line; constant beyond it) and its pointwise band (see
    ``IntervalGAM.shape_function``) over the rug of ``X``'s values; a
    categorical feature's, each category's effect as a bar with its band.
    With ``y``, each row's partial residual interval goes behind: its
    target interval minus the other terms and the intercept (``[lower,
    upper] - (f(x) - f_j(x_j))``), which the term would pass through to fit
    the row, censored ends drawn as :func:`plot_intervals` draws them. An
    interaction's panel draws its term over the grid of its two features'
    training ranges as a colour map, ``X``'s rows as points on it.

    Parameters
    ----------
    model : IntervalGAM or IntervalGAMCV
        A fitted additive model.
    X : array-like or data frame of shape (n_samples, n_features)
        The rows of the rug (and of the residuals).
    y : array-like of shape (n_samples, 2) or (n_samples,), default=None
        Their target intervals.
    features : list of int, str or pairs of them, default=None
        The features drawn (indices or names) and the interactions (pairs);
        None: every term, the features' then the interactions'.
    n_points : int, default=200
        Points of a numeric term's line (of each side of an interaction's
        grid: at most 60).
    confidence : float, default=0.95
        The bands' pointwise coverage.
    axes : array of matplotlib Axes, default=None
        One per feature drawn; a new figure by default.

    Returns
    -------
    axes : ndarray of matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> from mmit import IntervalGAM
    >>> from mmit.plot import plot_terms
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(100, 2))
    >>> y = np.sin(X[:, 0]) + X[:, 1]
    >>> axes = plot_terms(IntervalGAM(lam=0.1).fit(X, y), X, y)
    >>> axes.shape
    (2,)
    """
    check_is_fitted(model, "design_")
    names = [str(name) for name in resolve_feature_names(model, None)]
    if features is None:
        features = [term.features if term.kind == "tensor" else term.feature
                    for term in model.design_.terms]

    def index(feature):
        return names.index(feature) if isinstance(feature, str) else int(feature)

    indices = [tuple(index(f) for f in feature)
               if not isinstance(feature, str) and np.ndim(feature) == 1 else index(feature)
               for feature in features]
    rows = model._validate_X_predict(X)
    terms = model._term_values(rows)
    figure = None
    if axes is None:
        try:
            import matplotlib.pyplot as plt
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise ImportError("mmit.plot needs matplotlib: pip install "
                              "'scikit-mmit[plot]'") from error
        n_columns = min(3, len(indices))
        n_rows = -(-len(indices) // n_columns)
        figure, grid = plt.subplots(n_rows, n_columns, squeeze=False,
                                    figsize=(4 * n_columns, 3 * n_rows))
        for extra in grid.ravel()[len(indices):]:
            figure.delaxes(extra)
        axes = grid.ravel()[:len(indices)]
    axes = np.asarray(axes, dtype=object).ravel()
    if axes.size != len(indices):
        raise ValueError(f"axes has {axes.size} panels for {len(indices)} features.")
    others = None
    if y is not None:
        lower, upper = check_interval_target(y, rows.shape[0])
        prediction = terms.sum(axis=1) + model.intercept_
    def column(j):
        return np.asarray(rows[:, [j]].toarray() if hasattr(rows, "toarray")
                          else rows[:, j], dtype=float).ravel()

    for ax, j in zip(axes, indices, strict=True):
        if isinstance(j, tuple):
            _plot_interaction(ax, model.shape_function(j, n_points=min(n_points, 60)),
                              column(j[0]), column(j[1]), [names[k] for k in j])
            continue
        values = column(j)
        present = ~np.isnan(values)
        if y is not None:
            others = prediction - terms[:, j]
            plot_intervals(values[present], np.column_stack(
                [lower - others, upper - others])[present], ax=ax, feature_name=names[j])
        shape = model.shape_function(j, n_points=n_points, confidence=confidence)
        if shape.kind == "categorical":
            positions = np.arange(len(shape.grid))
            ax.bar(positions, shape.term, color="tab:blue", alpha=0.6, label="term")
            ax.errorbar(positions, shape.term, yerr=[shape.term - shape.lower,
                                                     shape.upper - shape.term],
                        fmt="none", ecolor="tab:blue", label=f"{confidence:.0%} band")
            ax.set_xticks(positions, [str(label) for label in shape.grid])
        else:
            ax.fill_between(shape.grid, shape.lower, shape.upper, color="tab:blue",
                            alpha=0.2, linewidth=0, label=f"{confidence:.0%} band")
            ax.plot(shape.grid, shape.term, color="tab:blue", linewidth=2, label="term")
            ax.plot(values[present], np.full(present.sum(), ax.get_ylim()[0]), "|",
                    color="0.3", markersize=6)
        ax.set_xlabel(names[j])
        ax.set_ylabel(f"f({names[j]})")
        ax.legend(loc="best", frameon=False)
    if figure is not None:  # laid out once drawn, so that no label is cut
        figure.tight_layout()
    return axes


def _plot_interaction(ax, shape, first, second, labels):
    """An interaction's panel of :func:`plot_terms`: its term as a colour
    map over its grid (symmetric about 0), the rows' values as points."""
    extent = float(np.abs(shape.term).max()) or 1.0
    mesh = ax.pcolormesh(shape.grid[0], shape.grid[1], shape.term.T, shading="auto",
                         cmap="RdBu_r", vmin=-extent, vmax=extent)
    ax.figure.colorbar(mesh, ax=ax, label=f"f({labels[0]}, {labels[1]})")
    ax.plot(first, second, ".", color="0.3", markersize=2)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])


# labels of a categorical split's left side drawn in its box, at most
PLOTTED_LABELS = 6


def plot_tree(model, *, feature_names=None, ax=None, decimals=2):
    """Draw a fitted MMIT: split rules in the internal nodes, predictions in the leaves.

    An internal node shows its left child's condition, which says whether
    missing values (NaN) go left (``or missing``); they go right otherwise.
    A categorical split shows the categories going left (``site in {a,
    b}``, the first few of a long list).

    Parameters
    ----------
    model : MMIT
        A fitted tree (an ``MMITCV`` draws its ``best_estimator_``).
    feature_names : list of str, default=None
        Names of the features (``feature_names_in_`` or ``x0, x1, ...``).
    ax : matplotlib Axes, default=None
    decimals : int, default=2

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> from mmit import MMIT
    >>> from mmit.datasets import load_dataset
    >>> from mmit.plot import plot_tree
    >>> data = load_dataset("servo")
    >>> ax = plot_tree(MMIT(max_depth=2).fit(data.data, data.target))
    """
    model = getattr(model, "best_estimator_", model)
    check_is_fitted(model, "tree_")
    tree = model.tree_
    feature_names = resolve_feature_names(model, feature_names)
    parents = parents_of(tree)
    left, right = tree.children_left, tree.children_right
    # leaves spread left to right in depth-first order, parents over their children
    x = np.zeros(tree.node_count)
    depth = np.zeros(tree.node_count, dtype=int)
    next_leaf = 0.0
    stack = [(0, False)]
    while stack:
        node, children_placed = stack.pop()
        if left[node] == TREE_LEAF:
            x[node], next_leaf = next_leaf, next_leaf + 1.0
        elif children_placed:
            x[node] = 0.5 * (x[left[node]] + x[right[node]])
        else:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
            stack += [(node, True), (right[node], False), (left[node], False)]
    ax = _axes(ax)
    for node in range(tree.node_count):
        if left[node] != TREE_LEAF:
            for child in (left[node], right[node]):
                ax.plot([x[node], x[child]], [-depth[node], -depth[child]], color="0.6",
                        zorder=1)
            text = split_conditions(
                tree, node, feature_names, decimals, getattr(model, "categories_", None),
                parents, max_labels=PLOTTED_LABELS)[0].replace(" <= ", "\n<= ").replace(
                " in {", "\nin {").replace(" or missing", "\nor missing")
            box = {"boxstyle": "round", "facecolor": "white", "edgecolor": "0.4"}
        else:
            text = f"{tree.value[node]:.{decimals}f}\nn={tree.n_node_samples[node]}"
            box = {"boxstyle": "round", "facecolor": "#fde0c5", "edgecolor": "0.4"}
        ax.text(x[node], -depth[node], text, ha="center", va="center", fontsize=8,
                bbox=box, zorder=2)
    ax.set_xlim(-0.7, max(next_leaf - 0.3, 0.7))
    ax.set_ylim(-depth.max() - 0.6, 0.6)
    ax.set_axis_off()
    return ax


def plot_prim_trajectory(prim, *, ax=None):
    """Draw a fitted :class:`~mmit.inspection.IntervalPRIM`'s trajectory: each
    box's value against its mass (training rows, and validation rows where
    there are some), one colour per covering round, the chosen boxes
    circled.

    Parameters
    ----------
    prim : IntervalPRIM
        Fitted.
    ax : matplotlib Axes, default=None
        Where to draw (a new figure's if None).

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _axes(ax)
    trajectory = prim.peeling_trajectory_
    for round_ in np.unique(trajectory.box):
        rows = trajectory.box == round_
        ax.plot(trajectory.mass[rows], trajectory.value[rows], marker=".",
                label=f"box {round_}: training")
        if np.any(trajectory.n_validation_rows[rows] > 0):
            ax.plot(trajectory.mass[rows], trajectory.validation_value[rows], ls=":",
                    label=f"box {round_}: validation")
    ax.scatter(trajectory.mass[prim.chosen_], trajectory.value[prim.chosen_], s=80,
               facecolors="none", edgecolors="black", label="chosen", zorder=3)
    ax.set_xlabel("mass")
    ax.set_ylabel("box value")
    ax.invert_xaxis()  # peeling goes from large boxes to small
    ax.legend()
    return ax


def plot_prim_box(prim, i=None, *, ax=None):
    """Draw a box of a fitted :class:`~mmit.inspection.IntervalPRIM`: each
    restricted numeric feature's limits as a bar over its training range
    (scaled to [0, 1], the limits written at its ends), each restricted
    categorical feature's allowed categories written beside it.

    Parameters
    ----------
    prim : IntervalPRIM
        Fitted.
    i : int, default=None
        The box's index in the trajectory (``IntervalPRIM.inspect``); None:
        the first chosen box.
    ax : matplotlib Axes, default=None
        Where to draw (a new figure's if None).

    Returns
    -------
    ax : matplotlib Axes
    """
    ax = _axes(ax)
    box = prim.inspect(i)
    names = list(box.limits)
    feature_names = getattr(prim, "feature_names_in_", None)
    for row, name in enumerate(names):
        limit = box.limits[name]
        if isinstance(limit, tuple):
            j = name if feature_names is None else list(feature_names).index(name)
            low, high = prim.data_min_[j], prim.data_max_[j]
            span = (high - low) or 1.0
            start = (max(limit[0], low) - low) / span
            end = (min(limit[1], high) - low) / span
            ax.barh(row, end - start, left=start, color="tab:blue", alpha=0.6)
            ax.text(start, row, f"{max(limit[0], low):.3g} ", ha="right", va="center")
            ax.text(end, row, f" {min(limit[1], high):.3g}", ha="left", va="center")
        else:
            ax.text(0.5, row, ", ".join(map(str, limit)), ha="center", va="center")
    ax.set_yticks(range(len(names)), [str(name) for name in names])
    ax.set_xlim(-0.2, 1.2)
    ax.set_xlabel("share of the training range")
    ax.set_title(f"box {i if i is not None else int(prim.chosen_[0])}: value "
                 f"{box.value:.4g}, mass {box.mass:.3f}")
    return ax
