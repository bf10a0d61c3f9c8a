"""IntervalGAM against the linear model, the booster, the forest, pygam and EBM.

Data: the data sets of DATA_DIR (each fold of folds.csv in turn is the test
set; ``--folds K``: the first K only) and simulated shapes (6 features
uniform on [-2, 2], 20% of the bounds censored, 400 and 2000 training rows,
2000 test rows): ``additive`` (``sin(2 x0) + x1^2 / 2 + x2 / 2``),
``monotone`` (``exp(x0) / 3 + tanh(2 x1) + x2 / 2``, every term increasing)
and ``interacting`` (``x0 x1 + sin(x2)``).

Models: ``GAM CV`` (``IntervalGAMCV()``), ``GAM`` (``IntervalGAM()``, its
default ``lam``), ``GAM monotone`` (``IntervalGAMCV`` with the monotone
shape's three increasing terms constrained; only on that shape), ``GAM
pair`` (``IntervalGAMCV`` with the interaction of ``x0`` and ``x1``; only on
the interacting shape),
``Linear CV`` (``IntervalLinearRegressionCV()``), ``MMITBoost()``,
``MMITForest()``, and where installed pygam's ``LinearGAM`` (10 splines a
feature, its ``gridsearch`` over the same 15 penalties as ``GAM CV``) and
interpret's ``ExplainableBoostingRegressor()`` on the Interval-CART
transform of the training rows (one row per finite bound: a midpoint of
each side of a finite interval, the finite bound of a censored one).
Prints each data set's test interval MSE, the mean rank and the ratios to
the best, then the fit seconds of each over ``GAM CV``'s (median over the
splits), and on 8 fresh draws of the monotone (interacting) shape at each
size the constrained (with the pair) / free test MSE: median and range.

Usage: python benchmarks/studies/additive.py DATA_DIR [--n-jobs 2] [--folds K]
       [--models NAME ...] [--no-simulated]
"""

import sys
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from variant_study import (
    IntervalCARTPeer,
    compare_models,
    model_study_parser,
    simulated_split,
    study_splits,
    timed_test_mse,
)

from mmit import (
    IntervalGAM,
    IntervalGAMCV,
    IntervalLinearRegressionCV,
    MMITBoost,
    MMITForest,
)

LAMS = np.geomspace(1e4, 1e-3, 15)
MONOTONE = [1, 1, 1, 0, 0, 0]


def pygam_gam():
    from pygam import LinearGAM

    class SearchedGAM:
        def fit(self, X, y):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.model = LinearGAM(n_splines=10).gridsearch(X, y, lam=LAMS,
                                                               progress=False)
            return self

        def predict(self, X):
            return self.model.predict(X)

    return IntervalCARTPeer(SearchedGAM)


def ebm():
    from interpret.glassbox import ExplainableBoostingRegressor
    return IntervalCARTPeer(lambda: ExplainableBoostingRegressor(n_jobs=1, random_state=0))


MODELS = {
    "GAM CV": lambda: IntervalGAMCV(),
    "GAM": lambda: IntervalGAM(),
    "GAM monotone": lambda: IntervalGAMCV(monotonic_cst=MONOTONE),
    "GAM pair": lambda: IntervalGAMCV(interactions=[(0, 1)]),
    "Linear CV": lambda: IntervalLinearRegressionCV(),
    "MMITBoost": lambda: MMITBoost(random_state=0),
    "MMITForest": lambda: MMITForest(random_state=0),
    "pygam": lambda: pygam_gam(),
    "EBM": lambda: ebm(),
}
OPTIONAL = {"pygam": "pygam", "EBM": "interpret"}
#: the variants fitted on one simulated shape only, against GAM CV there
SHAPE_VARIANTS = {"GAM monotone": "monotone", "GAM pair": "interacting"}
#: the fresh draws of a shape the variants are compared on, and their first seed
REPLICATES, REPLICATE_SEED = 8, 100


def available(name):
    if name not in OPTIONAL:
        return True
    try:
        __import__(OPTIONAL[name])
    except ImportError:
        print(f"{name}: {OPTIONAL[name]} is not installed, left out", file=sys.stderr)
        return False
    return True


#: The simulated shapes (module doc).
SHAPES = {
    "additive": lambda X: np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2 + X[:, 2] / 2,
    "monotone": lambda X: np.exp(X[:, 0]) / 3 + np.tanh(2 * X[:, 1]) + X[:, 2] / 2,
    "interacting": lambda X: X[:, 0] * X[:, 1] + np.sin(X[:, 2]),
}


def simulated(shape, n, seed):
    """A simulated shape (module doc): training and test rows."""
    return simulated_split(SHAPES[shape], n, seed)


def main():
    args = model_study_parser(__doc__, MODELS).parse_args()
    names = [name for name in args.models if name not in SHAPE_VARIANTS and available(name)]
    named_splits = list(study_splits(args, simulated, tuple(SHAPES)))
    compare_models(named_splits, MODELS, names, args.n_jobs, base="GAM CV")
    for variant, shape in SHAPE_VARIANTS.items():
        if variant in args.models and "GAM CV" in names and not args.no_simulated:
            variant_ratios(variant, shape, args.n_jobs)


def variant_ratios(variant, shape, n_jobs):
    """The variant's test MSE over GAM CV's on REPLICATES fresh draws of its
    shape at each training size (seeds apart from the comparison's): the
    median and the range of the ratios."""
    for n in (400, 2000):
        splits = [simulated(shape, n, REPLICATE_SEED + seed) for seed in range(REPLICATES)]
        results = Parallel(n_jobs=n_jobs)(delayed(timed_test_mse)(MODELS, name, *split)
                                          for split in splits
                                          for name in (variant, "GAM CV"))
        values = np.array([mse for mse, _ in results]).reshape(REPLICATES, 2)
        ratios = values[:, 0] / values[:, 1]
        print(f"sim.{shape} n={n}: {variant} / GAM CV test MSE, median of {REPLICATES} "
              f"draws {np.median(ratios):.4f} (range {ratios.min():.4f} - "
              f"{ratios.max():.4f})")

if __name__ == "__main__":
    main()
