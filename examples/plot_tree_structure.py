"""
Reading a tree: ``export_text`` and ``plot_tree``
=================================================

A small :class:`~mmit.MMIT` on the bundled ``servo`` data set, printed as
rules with :func:`mmit.export_text` and drawn with
:func:`mmit.plot.plot_tree`. Each internal node shows the condition that
sends a sample to its left child; each leaf shows its prediction and its
number of training samples.
"""

import matplotlib.pyplot as plt

from mmit import MMIT, export_text
from mmit.datasets import load_dataset
from mmit.plot import plot_tree

data = load_dataset("servo")
print(data.DESCR)

# %%
# A tree of depth 3: at most eight leaves.
tree = MMIT(max_depth=3, margin=0.01, random_state=0).fit(data.data, data.target)
print(export_text(tree, feature_names=data.feature_names))

# %%
# The same tree as a figure.
fig, ax = plt.subplots(figsize=(10, 4.5))
plot_tree(tree, feature_names=data.feature_names, ax=ax)
ax.set_title("MMIT of depth 3 on servo")
plt.show()
