"""IntervalMARS' fit against IntervalLinearRegressionCV's, timed in pairs.

Data: speed_data.py's (interval targets, 40% censored bounds) at each of
``--sizes`` rows and ``--features`` features (1e4 x 20 by default).
``IntervalMARS()`` (degree 1) and ``IntervalMARS(max_degree=2)`` are each
timed in alternation with ``IntervalLinearRegressionCV()`` (its alphas and
margin by 5-fold CV), at least ``--pairs`` (5) pairs and more until the
pairs took ``--min-seconds``; the table gives each one's median seconds,
the median and range of the pairs' ratios (MARS / linear CV's), and the
MARS model's forward and kept terms.

Usage: python benchmarks/speed/bench_mars.py [--sizes 1e4] [--features 20]
       [--pairs 5] [--min-seconds 10] [--csv PATH]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from speed_data import benchmark_data
from tables import Table, add_csv_argument, seconds, size
from timing import add_pair_arguments, paired_ratios, paired_seconds

from mmit import IntervalLinearRegressionCV, IntervalMARS


def fit(make, X, y):
    return make().fit(X, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4])
    parser.add_argument("--features", type=int, default=20)
    add_pair_arguments(parser)
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["n", "p", "model", "MARS s", "linear CV s", "ratio", "ratio range",
                   "terms (forward, kept)"], args.csv)
    for n in [int(value) for value in args.sizes]:
        X, y = benchmark_data(n, args.features)
        for degree in (1, 2):
            def mars(degree=degree):
                return IntervalMARS(max_degree=degree)
            mine, theirs = paired_seconds(partial(fit, mars, X, y),
                                          partial(fit, IntervalLinearRegressionCV, X, y),
                                          args.pairs, args.min_seconds)
            model = fit(mars, X, y)
            table.add(size(n), args.features, f"degree {degree}", seconds(np.median(mine)),
                      seconds(np.median(theirs)), *paired_ratios(mine, theirs),
                      f"{len(model.forward_basis_)}, {len(model.basis_)}")


if __name__ == "__main__":
    main()
