"""The plots of intervals and trees."""


import numpy as np
import pytest

from mmit import MMIT
from mmit.datasets import make_interval_regression


def test_plots_draw_intervals_and_trees():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from mmit.plot import plot_intervals, plot_tree

    X, y = make_interval_regression(80, 2, pattern="sin", random_state=3)
    model = MMIT(max_depth=2, random_state=0).fit(X, y)
    ax = plot_intervals(X[:, 0], y, model.predict(X), feature_name="x0")
    assert ax.get_xlabel() == "x0" and len(ax.lines) >= 3
    linear = MMIT(max_depth=2, leaf_model="linear", random_state=0).fit(X, y)
    ax = plot_intervals(X[:, 0], y, {"constant": model.predict(X),
                                     "linear": linear.predict(X)})
    order = np.argsort(X[:, 0])
    drawn = {line.get_label(): line for line in ax.lines}
    np.testing.assert_array_equal(drawn["linear"].get_ydata(), linear.predict(X)[order])
    assert "constant" in drawn
    with pytest.raises(ValueError, match="predictions of bad"):
        plot_intervals(X[:, 0], y, {"bad": np.zeros(3)})
    ax = plot_tree(model)
    texts = [text.get_text() for text in ax.texts]
    assert len(texts) == model.tree_.node_count
    n_splits = model.tree_.node_count - model.get_n_leaves()
    assert sum("<=" in text for text in texts) == n_splits
    matplotlib.pyplot.close("all")


def test_predictive_distributions_are_drawn_as_nested_bands():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from mmit import MMITForest
    from mmit.plot import plot_predictive_distribution

    X, y = make_interval_regression(120, 2, pattern="sin", random_state=3)
    forest = MMITForest(10, random_state=0).fit(X, y)
    ax = plot_predictive_distribution(forest, X[:30], X[:30, 0], y[:30],
                                      coverages=(0.5, 0.9), feature_name="x0")
    bands = [container for container in ax.containers
             if container.get_label().endswith("interval")]
    assert [band.get_label() for band in bands] == ["90% interval", "50% interval"]
    heights = [np.array([bar.get_height() for bar in band]) for band in bands]
    assert np.all(heights[0] >= heights[1] - 1e-12)  # the 90% band holds the 50% one
    median = {line.get_label(): line for line in ax.lines}["median"]
    np.testing.assert_allclose(median.get_ydata(),
                               forest.predict_quantiles(X[:30], [0.5])[:, 0])
    with pytest.raises(ValueError, match="X has 30 rows, x has 29"):
        plot_predictive_distribution(forest, X[:30], X[:29, 0])
    matplotlib.pyplot.close("all")


def test_terms_are_drawn_one_panel_per_feature():
    matplotlib = pytest.importorskip("matplotlib")
    pd = pytest.importorskip("pandas")
    matplotlib.use("Agg")
    from mmit import IntervalGAM
    from mmit.plot import plot_terms

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(-2, 2, 120),
                          "site": pd.Categorical(rng.choice(list("abc"), 120))})
    center = np.sin(frame["x"].to_numpy()) + (frame["site"] == "b").to_numpy()
    y = np.column_stack([center - 0.1, center + 0.1])
    y[::5, 1] = np.inf
    model = IntervalGAM(lam=0.1).fit(frame, y)
    axes = plot_terms(model, frame, y)
    assert [ax.get_xlabel() for ax in axes] == ["x", "site"]
    term = next(line for line in axes[0].lines if line.get_label() == "term")
    grid = term.get_xdata()
    expected = model.term_values(pd.DataFrame({"x": grid, "site": pd.Categorical(
        ["a"] * grid.size, categories=list("abc"))}))[:, 0]
    np.testing.assert_allclose(term.get_ydata(), expected, atol=1e-12)
    bars = [patch.get_height() for patch in axes[1].patches]
    assert len(bars) == 3
    axes = plot_terms(model, frame, features=["site"])
    assert len(axes) == 1
    with pytest.raises(ValueError, match="panels"):
        plot_terms(model, frame, axes=[axes[0], axes[0], axes[0]])
    matplotlib.pyplot.close("all")
