"""Time of mmit.shap_values against shap's TreeExplainer on the same trees.

Models, fitted on the speed benchmarks' data (``speed_data``: 1e4 rows x 20
features, interval targets): a default ``MMITForest`` of 100 trees and an
``MMITBoost`` of 300 stages (exact splitter, its other defaults). Each
explains its first ``--rows`` training rows (default 2000) with
``shap_values`` on 1 and 2 threads and with shap's ``TreeExplainer`` given
the same trees in its dictionary format (``shap_tree_dictionary``; its
construction timed with it; shap's TreeSHAP is compiled and
single-threaded), timed in turn (median of ``--repeats``). Interaction values
are timed on ``--interaction-rows`` rows (default 100). The last column is
the largest difference between the two sets of values.

Usage: python benchmarks/speed/bench_explain.py [--rows 2000] [--interaction-rows 100]
       [--repeats 3] [--csv PATH]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import shap

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from speed_data import benchmark_data
from tables import Table, add_csv_argument, seconds
from timing import interleaved_medians

from mmit import MMITBoost, MMITForest, shap_values
from mmit.inspection._shap import shap_tree_dictionary


def described(model):
    trees = [tree.tree_ for tree in model.estimators_]
    return (f"{type(model).__name__} {len(trees)} trees, depth "
            f"{max(tree.max_depth for tree in trees)}, "
            f"{np.mean([tree.n_leaves for tree in trees]):.0f} leaves")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--interaction-rows", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    add_csv_argument(parser)
    args = parser.parse_args()
    X, y = benchmark_data(10_000, 20)
    models = [MMITForest(n_estimators=100, random_state=0, n_jobs=2),
              MMITBoost(n_estimators=300, random_state=0)]
    table = Table(["model", "values", "rows", "mmit 1 thread s", "mmit 2 threads s",
                   "shap s", "1 thread / shap", "2 threads / shap", "largest difference"],
                  args.csv, title=f"shap_values against shap {shap.__version__} "
                                  f"TreeExplainer (1e4 x 20 training rows)")
    for model in models:
        model.fit(X, y)
        for interactions, n_rows in ((False, args.rows), (True, args.interaction_rows)):
            rows = X[:n_rows]

            def ours(n_jobs, rows=rows, interactions=interactions, model=model):
                return shap_values(model, rows, interactions=interactions,
                                   n_jobs=n_jobs).values

            def theirs(rows=rows, interactions=interactions, model=model):
                explainer = shap.TreeExplainer(shap_tree_dictionary(model))
                if interactions:
                    return explainer.shap_interaction_values(rows)
                return explainer.shap_values(rows, check_additivity=False)

            one, two, reference = interleaved_medians(
                [lambda: ours(1), lambda: ours(2), theirs], args.repeats)
            difference = np.max(np.abs(ours(2) - theirs()))
            table.add(described(model), "interactions" if interactions else "SHAP",
                      n_rows, seconds(one), seconds(two), seconds(reference),
                      f"{one / reference:.2f}", f"{two / reference:.2f}",
                      f"{difference:.1e}")


if __name__ == "__main__":
    main()
