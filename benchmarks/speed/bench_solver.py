"""Time of the interval solver versus the number of interval limits.

For n = 1e3 ... 1e7 finite limits in random order, two distributions:

- ``jitter``: the bundled histone targets resampled with replacement, each
  finite bound moved by a small Gaussian jitter (censoring pattern kept);
- ``ties``: bounds on a coarse integer grid, so most breakpoints are shared.

Prints, per loss, the median time of ``mmit.compute_optimal_costs`` over
several runs, the median time of ``np.sort`` of n float64 values (timed in
turn with it, so both see the same machine), their ratio, and the mean and
maximum pointer moves per insertion (the paper's Figure 3). The paper's C++ solver
needs 2.1 s for 1e6
jittered limits on this machine (figure given in the project's issue).

Usage: python benchmarks/speed/bench_solver.py [--max-n 1e7] [--repeats 7] [--csv PATH]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds, size
from timing import interleaved_medians

from mmit import compute_optimal_costs
from mmit.datasets import load_dataset

PAPER_SECONDS_1E6 = 2.1


def jittered_targets(n_limits, rng):
    """Resample the histone intervals until they hold ``n_limits`` finite bounds."""
    target = load_dataset().target
    rows = rng.integers(0, len(target), size=n_limits)  # >= n_limits / 2 rows needed
    lower, upper = target[rows, 0].copy(), target[rows, 1].copy()
    limits = np.cumsum(np.isfinite(lower).astype(int) + np.isfinite(upper))
    stop = int(np.searchsorted(limits, n_limits)) + 1
    lower, upper = lower[:stop], upper[:stop]
    noise = rng.normal(0.0, 0.05, size=(2, stop))
    lower = lower + noise[0]
    upper = np.maximum(upper + noise[1], lower)
    return lower, upper


def tied_targets(n_limits, rng):
    """Intervals on an integer grid of 100 values; 10% left-, 10% right-censored."""
    n = n_limits // 2
    lower = rng.integers(0, 100, size=n).astype(float)
    upper = lower + rng.integers(0, 10, size=n)
    censoring = rng.random(n)
    lower[censoring < 0.1] = -np.inf
    upper[censoring > 0.9] = np.inf
    return lower, upper


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e7)
    parser.add_argument("--repeats", type=int, default=7)
    add_csv_argument(parser)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [int(10**k) for k in range(3, 8) if 10**k <= args.max_n]

    table = Table(["n limits", "data", "loss", "solver ms", "np.sort ms", "ratio",
                   "moves mean / max"], args.csv)
    for n in sizes:
        repeats = args.repeats if n < 10**7 else max(3, args.repeats // 2)
        for name, make in (("jitter", jittered_targets), ("ties", tied_targets)):
            lower, upper = make(n, rng)
            n_limits = int(np.isfinite(lower).sum() + np.isfinite(upper).sum())
            values = rng.normal(size=n_limits)
            for loss in ("linear_hinge", "squared_hinge"):
                sort_time, solver_time = interleaved_medians(
                    [partial(np.sort, values),
                     partial(compute_optimal_costs, lower, upper, 0.1, loss)],
                    repeats)
                _, _, moves = compute_optimal_costs(lower, upper, 0.1, loss)
                table.add(size(n), name, loss.split("_")[0], seconds(1e3 * solver_time),
                          seconds(1e3 * sort_time), f"{solver_time / sort_time:.2f}",
                          f"{moves.mean():.2f} / {moves.max()}")
                if n == 10**6 and name == "jitter":
                    speedup = PAPER_SECONDS_1E6 / solver_time
                    print(f"  {speedup:.0f}x faster than the paper's solver "
                          f"({PAPER_SECONDS_1E6} s)")

if __name__ == "__main__":
    main()
