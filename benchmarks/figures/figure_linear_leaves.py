"""The figure of linear leaves on the accuracy page (like the MMIT paper's Figure 4).

For the paper's three simulated data sets (``linear``, ``sin``, ``abs``:
the signal is a function of ``x0``, the other features are noise), the
target intervals along ``x0`` and the predictions of three models fitted on
all rows, each tuned by 5-fold cross-validation: the MMIT with constant
leaves, the MMIT with constant or linear leaves (MMITCV's grid), and the
L1-regularised linear model.

DATA_DIR: a folder of the paper's data sets (simulated.linear, simulated.sin
and simulated.abs among them).

Usage: python benchmarks/figures/figure_linear_leaves.py DATA_DIR docs/linear_leaves.png
"""

import argparse
from pathlib import Path

import matplotlib

from mmit._cli._evaluation import make_model
from mmit.datasets import load_folder
from mmit.metrics import interval_mse
from mmit.plot import plot_intervals

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PATTERNS = ("linear", "sin", "abs")


# legend label -> the model of studies/accuracy.py (mmit._cli._evaluation.make_model)
MODELS = {"constant leaves": "MMIT squared", "linear leaves": "MMIT linear leaves",
          "linear model": "L1-Linear"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    figure, axes = plt.subplots(1, len(PATTERNS), figsize=(15, 4.2))
    for ax, pattern in zip(axes, PATTERNS, strict=True):
        data = load_folder(args.data_dir / f"simulated.{pattern}")
        predictions = {}
        for name, model_name in MODELS.items():
            model = make_model(model_name, data.target)
            predictions[name] = model.fit(data.data, data.target).predict(data.data)
            print(f"simulated.{pattern} {name}: training interval MSE "
                  f"{interval_mse(data.target, predictions[name]):.5f}")
        feature = list(data.feature_names).index("x0")
        plot_intervals(data.data[:, feature], data.target, predictions, ax=ax,
                       feature_name="x0")
        ax.set_title(f"simulated.{pattern}")
    figure.savefig(args.out, dpi=110, bbox_inches="tight")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
