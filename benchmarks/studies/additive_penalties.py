"""IntervalGAMCV's penalty defaults: the shrinkage of the splines' slopes
and the choice of a penalty per term.

Data: the first ``--folds`` (2) folds of each data set of DATA_DIR (each in
turn the test set) and the simulated shapes of ``additive.py`` (400
training rows), alone and with 14 uniform noise features.

Variants of ``IntervalGAMCV()``: ``shrinkage`` 0, 0.01, 0.1 and 1 with
``term_penalties="shared"`` (one ``lam`` for all terms), and with the
default shrinkage ``term_penalties`` "per_term" and "best" (the default).
Prints each data set's test interval MSE, the mean rank and the ratios to
the best, and the fit seconds over the default's (median over the
splits).

Usage: python benchmarks/studies/additive_penalties.py DATA_DIR [--n-jobs 2]
       [--folds 2] [--models NAME ...] [--no-simulated]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from additive import simulated
from variant_study import compare_models, folder_splits, model_study_parser

from mmit import IntervalGAMCV

N_NOISE = 14
MODELS = {
    **{f"shared, shrinkage {value}": (lambda value=value: IntervalGAMCV(
        shrinkage=value, term_penalties="shared")) for value in (0.0, 0.01, 0.1, 1.0)},
    "per term": lambda: IntervalGAMCV(term_penalties="per_term"),
    "best": lambda: IntervalGAMCV(),
}
DEFAULT = "best"


def with_noise(split, seed):
    """The split with ``N_NOISE`` uniform noise features appended."""
    rng = np.random.default_rng(seed)
    X_train, y_train, X_test, y_test = split
    noise = rng.uniform(-2, 2, (X_train.shape[0] + X_test.shape[0], N_NOISE))
    return (np.hstack([X_train, noise[:X_train.shape[0]]]), y_train,
            np.hstack([X_test, noise[X_train.shape[0]:]]), y_test)


def named_splits(args):
    yield from folder_splits(args.data_dir, args.folds)
    if args.no_simulated:
        return
    for shape in ("additive", "monotone", "interacting"):
        split = simulated(shape, 400, 0)
        yield f"sim.{shape}", [split]
        yield f"sim.{shape}+{N_NOISE} noise", [with_noise(split, 2)]


def main():
    parser = model_study_parser(__doc__, MODELS)
    parser.set_defaults(folds=2)
    args = parser.parse_args()
    compare_models(named_splits(args), MODELS, args.models, args.n_jobs,
                   base=DEFAULT if DEFAULT in args.models else None)


if __name__ == "__main__":
    main()
