"""export_text: the rules of a tree as text."""


import numpy as np
import pytest

from mmit import MMIT, export_text


def test_export_text_shows_the_leaf_models():
    rng = np.random.default_rng(10)
    X = rng.uniform(-2, 2, size=(200, 3))
    signal = 1.5 * X[:, 0] - 0.5 * X[:, 1] + np.where(X[:, 2] > 0, 1.0, -1.0)
    y = np.column_stack([signal - rng.exponential(0.2, 200),
                         signal + rng.exponential(0.2, 200)])
    model = MMIT(max_depth=1, leaf_model="linear").fit(X, y)
    text = export_text(model, feature_names=["a", "b", "c"])
    assert text.count("* a") == 2 and "value:" in text
    # the printed intercept and slopes give the predictions
    tree = model.tree_
    leaf = int(np.flatnonzero(tree.children_left == -1)[0])
    slopes = tree.node_models.slopes[tree.node_models.models[leaf]]
    intercept = tree.value[leaf] - slopes @ tree.node_models.center
    row = X[model.apply(X) == leaf][0]
    assert intercept + slopes @ row == pytest.approx(model.predict(row[None])[0])
