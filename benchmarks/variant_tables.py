"""The table the evidence scripts print: each variant's test interval MSE on
each data set, then its mean rank, median and worst ratio to the best
variant of each data set."""

import numpy as np
from scipy.stats import rankdata


def print_variant_table(title, by_set, names, width=18):
    """``by_set``: data set name -> array of the variants' test MSEs, in the
    order of ``names``."""
    mse = np.array(list(by_set.values()))
    ratio = mse / np.maximum(mse.min(axis=1, keepdims=True), 1e-300)
    ranks = np.array([rankdata(row) for row in mse])
    print(f"\n{title}")
    print(f"{'data set':<42}" + "".join(f"{v:>{width}}" for v in names))
    for name, row in by_set.items():
        print(f"{name:<42}" + "".join(f"{v:>{width}.4g}" for v in row))
    for label, values in (("mean rank", ranks.mean(axis=0)),
                          ("median ratio", np.median(ratio, axis=0)),
                          ("worst ratio", ratio.max(axis=0))):
        print(f"{label:<42}" + "".join(f"{v:>{width}.2f}" for v in values))
