"""The figure of predictive distributions on the accuracy page (docs/predictive.png).

Simulated data: the value is ``sin(1.5 x0) + s * noise`` with a spread
``s = 0.05 + 0.3 [x1 > 0]`` that the second feature switches; 40% of the
training values are known only between inspection times (a grid of step
0.5). An ``MMITForest()`` (its default ``distribution="spread"``) is fitted
on 600 rows; its 50/80/90% intervals and median are drawn along x0 for new
rows with x1 = -1 (narrow) and x1 = 1 (wide), over the training intervals.

Usage: python benchmarks/figures/figure_predictive.py [--out docs/predictive.png]
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from mmit import MMITForest  # noqa: E402
from mmit.plot import plot_intervals, plot_predictive_distribution  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[1] / "docs" /
                        "predictive.png")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = 600
    X = rng.uniform(-2, 2, size=(n, 2))
    value = np.sin(1.5 * X[:, 0]) + (0.05 + 0.3 * (X[:, 1] > 0)) * rng.normal(size=n)
    lower, upper = value.copy(), value.copy()
    hidden = rng.random(n) < 0.4
    lower[hidden] = (0.5 * np.floor(value / 0.5))[hidden]
    upper[hidden] = lower[hidden] + 0.5
    y = np.column_stack([lower, upper])
    forest = MMITForest(random_state=0).fit(X, y)
    grid = np.linspace(-2, 2, 60)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, side in zip(axes, (-1.0, 1.0), strict=True):
        rows = np.sign(X[:, 1]) == side
        plot_intervals(X[rows, 0], y[rows], ax=ax, feature_name="x0")
        plot_predictive_distribution(forest, np.column_stack([grid, np.full(60, side)]),
                                     grid, ax=ax, feature_name="x0")
        ax.set_title(f"x1 {'<' if side < 0 else '>'} 0: spread "
                     f"{0.05 if side < 0 else 0.35:.2f}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
