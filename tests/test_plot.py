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
