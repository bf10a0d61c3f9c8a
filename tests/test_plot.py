"""The plots of intervals and trees."""


import numpy as np
import pytest

from mmit import (
    MMIT,
)
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
