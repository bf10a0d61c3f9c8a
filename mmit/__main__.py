"""``python -m mmit``: the optimal constant model of a bundled data set.

Runs the interval solver over the paper's histone data set and prints, for
each loss and margin, the best constant prediction, its cost and the time
the solver took.
"""

import sys
import time

from . import compute_optimal_costs
from .datasets import load_dataset


def main(argv=None):
    name = (argv if argv is not None else sys.argv[1:]) or ["H3K27ac-H3K4me3_TDHAM_BP_FPOP"]
    data = load_dataset(name[0])
    lower, upper = data.target[:, 0], data.target[:, 1]
    print(data.DESCR.splitlines()[0], f"({len(lower)} intervals)")
    print(f"{'loss':<14} {'margin':>6} {'prediction':>11} {'cost':>10} {'time (ms)':>9}")
    for loss in ("linear_hinge", "squared_hinge"):
        for margin in (0.0, 0.5, 1.0):
            start = time.perf_counter()
            predictions, costs, _ = compute_optimal_costs(lower, upper, margin, loss)
            elapsed = 1e3 * (time.perf_counter() - start)
            print(f"{loss:<14} {margin:>6.1f} {predictions[-1]:>11.4f} "
                  f"{costs[-1]:>10.3f} {elapsed:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
