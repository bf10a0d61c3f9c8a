"""Maximum Margin Interval Trees: the tree estimators and everything that grows
one.

:class:`MMIT` (``_classes``) and :class:`MMITCV` (``_mmit_cv``) on one
growing service (``_growing``: training data prepared once, parameters
resolved, build, leaf model, pruning) over the compiled core: the split
criterion of a loss (``_criterion``; boosting stages' merge of its
sorted hinges in ``_stages``), features presorted or binned (``_features``,
``_binning``), the split searches behind one ``Splitter`` interface
(``_splitter``, which also holds the constraints, and ``_monotone``, the
monotone bounds read from the other leaves; ``_exact_splitter``: on the
values, ``_histogram_splitter``: binned, its histograms and their scan in
``_histogram``), the builder (``_builder``), boosting stages grown a level
at a time on one partition of rows with splits chosen elsewhere
(``_level_builder``: a Dask cluster's workers, with the client's split
search), the fitted tree's arrays and walks (``_tree``), leaf
models (``_leaf_models``, compiled in ``_node_models``), minimal
cost-complexity pruning (``_pruning``), sums of trees
(:class:`AdditiveTrees`, ``_additive``) and text export (``_export``).
"""

from ._additive import AdditiveTrees
from ._classes import MMIT, MaxMarginIntervalTree
from ._export import export_text
from ._mmit_cv import MMITCV

__all__ = ["AdditiveTrees", "MMIT", "MMITCV", "MaxMarginIntervalTree", "export_text"]
