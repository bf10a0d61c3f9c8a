"""IntervalMARS against the linear model, MMIT with linear leaves, the
booster and MARS on the Interval-CART transform.

Data: the data sets of DATA_DIR (each fold of folds.csv in turn is the test
set; ``--folds K``: the first K only) and simulated smooth shapes (6
features uniform on [-2, 2], 20% of the bounds censored, 400 and 2000
training rows, 2000 test rows): ``smooth`` (``sin(2 x0) + x1^2 / 2``),
``hinges`` (``2 max(0, x0 - 0.5) + max(0, -x1) - x2 / 2``) and ``product``
(``x0 x1 + max(0, x2)``).

Models: ``MARS`` (``IntervalMARS()``), ``MARS degree 2``
(``IntervalMARS(max_degree=2)``), ``Linear CV``
(``IntervalLinearRegressionCV()``), ``MMIT linear leaves``
(``MMITCV(losses=["squared_hinge"], leaf_models=["constant", "linear"],
cv=3)``: depth, margin and leaf model by inner CV), ``MMITBoost()``, and
``MARS on Interval-CART`` (``IntervalMARS()`` on exact targets, the
Interval-CART transform of the training rows: one row per finite bound, a
midpoint of each side of a finite interval, the finite bound of a censored
one; least-squares MARS, the algorithm of R's earth). py-earth, the Python
MARS, is left out: it does not install on current numpy and Python.
Prints each data set's test interval MSE, the mean rank and the ratios to
the best, then the fit seconds of each over ``MARS``'s (median over the
splits).

Usage: python benchmarks/studies/mars.py DATA_DIR [--n-jobs 2] [--folds K]
       [--models NAME ...] [--no-simulated]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import (
    IntervalCARTPeer,
    compare_models,
    model_study_parser,
    simulated_split,
    study_splits,
)

from mmit import MMITCV, IntervalLinearRegressionCV, IntervalMARS, MMITBoost

MODELS = {
    "MARS": lambda: IntervalMARS(),
    "MARS degree 2": lambda: IntervalMARS(max_degree=2),
    "Linear CV": lambda: IntervalLinearRegressionCV(),
    "MMIT linear leaves": lambda: MMITCV(losses=["squared_hinge"],
                                         leaf_models=["constant", "linear"], cv=3,
                                         random_state=0),
    "MMITBoost": lambda: MMITBoost(random_state=0),
    "MARS on Interval-CART": lambda: IntervalCARTPeer(IntervalMARS),
}


#: The simulated shapes (module doc).
SHAPES = {
    "smooth": lambda X: np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2,
    "hinges": lambda X: 2 * np.maximum(0, X[:, 0] - 0.5) + np.maximum(0, -X[:, 1])
    - X[:, 2] / 2,
    "product": lambda X: X[:, 0] * X[:, 1] + np.maximum(0, X[:, 2]),
}


def simulated(shape, n, seed):
    """A simulated shape (module doc): training and test rows."""
    return simulated_split(SHAPES[shape], n, seed)


def main():
    args = model_study_parser(__doc__, MODELS).parse_args()
    named_splits = study_splits(args, simulated, tuple(SHAPES))
    compare_models(named_splits, MODELS, args.models, args.n_jobs, base="MARS")


if __name__ == "__main__":
    main()
