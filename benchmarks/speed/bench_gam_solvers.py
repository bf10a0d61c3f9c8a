"""IntervalGAM's solver: penalized Newton against backfitting.

Both minimise the objective of ``IntervalGAM(lam).fit`` (the mean squared
hinge plus the penalty over the weights' sum and the solver's tiny ridge,
as ``_fit_at`` builds them) from the same start (the optimal constant), on
the same design:

- penalized Newton: the estimator's solver (``_fit_at``: generalised
  Newton steps on all parameters at once, an Armijo search on the
  objective);
- backfitting (Hastie, Tibshirani and Friedman, ch. 9), written here as a
  baseline: sweeps over the terms, each minimising the objective over its
  term's parameters and the intercept, the other terms fixed, by the same
  generalised Newton method on that block (the module's
  ``penalized_newton`` on the block's problem, the other terms' predictions
  moved into the bounds); it stops when a sweep lowers the objective by
  less than ``SWEEP_TOLERANCE`` relatively, or after ``--max-sweeps``.

Data: ``make_interval_regression`` (the "sin" pattern, 20% censored bounds)
of ``--sizes`` rows and ``--features`` features (``--sizes`` with no value
leaves them out) and, with ``--data-dir DIR``, every data set folder of DIR
(features.csv and targets.csv). The two are timed in turn, Newton then
backfitting, in ``--repeats`` pairs with single-threaded BLAS (as
``IntervalGAM.fit``); only the solves are timed, the design is made before.
Prints the median seconds of each, the median and range of the pairs'
ratios (backfitting / Newton), each solver's final objective and their
relative difference ((backfitting - Newton) / Newton), whether backfitting
reached Newton's objective (within ``SAME_OBJECTIVE`` relatively; "no
(cap)": not within ``--max-sweeps``, "no (stalled)": its sweeps stopped
lowering the objective first), Newton's steps ("(cap)": not converged
in ``max_iter``), backfitting's sweeps and its Newton steps over all
blocks.

Usage: python benchmarks/speed/bench_gam_solvers.py [--sizes 1e3 1e4 1e5]
       [--features 5 20] [--data-dir DIR] [--lam 1.0 ...] [--repeats 3]
       [--max-sweeps 200] [--csv PATH]
"""

import argparse
import itertools
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))  # the helpers
from tables import Table, add_csv_argument, seconds, size

from mmit import IntervalGAM
from mmit._utils._blas import single_threaded_blas
from mmit.additive._penalized_newton import (
    REGULARISATION,
    PenalizedProblem,
    penalized_newton,
)
from mmit.datasets import load_folder, make_interval_regression

#: Backfitting stops when a sweep lowers the objective by less than this share.
SWEEP_TOLERANCE = 1e-10
#: Backfitting reached Newton's objective when above it by at most this share.
SAME_OBJECTIVE = 1e-8
#: The signal of the simulated data (``make_interval_regression``).
PATTERN = "sin"


def objective_penalty(design, lam, shrinkage, weight_sum):
    """The penalty matrix of the objective, as ``IntervalGAM._fit_at`` builds
    it: the design's penalty at ``lam`` and ``shrinkage`` over the weights'
    sum, plus the ridge on every parameter but the intercept."""
    penalty = design.penalty(lam, shrinkage) / weight_sum
    penalty[1:, 1:] += REGULARISATION * np.eye(penalty.shape[0] - 1)
    return penalty


def term_blocks(design, problem, penalty):
    """Each term's block of the problem: its parameters (the intercept's, then
    the term's), its columns of the design (the intercept's, then the
    term's), the coefficient map, penalty and signs restricted to them (the
    map and the penalty are block diagonal over the terms, so that the
    block's columns times its map are the block's columns of ``columns @
    mapping``)."""
    blocks = []
    for term in design.terms:
        parameters = np.r_[0, term.parameter:term.parameter + term.n_parameters]
        columns = np.r_[0, term.column:term.column + term.n_columns]
        blocks.append((parameters, problem.columns[:, columns],
                       problem.mapping[np.ix_(columns, parameters)],
                       penalty[np.ix_(parameters, parameters)], problem.signs[parameters]))
    return blocks


def shifted_objective(objective, offset):
    """The objective of predictions added to ``offset``: its breakpoints
    moved by ``-offset`` (margin 0: they already are the breakpoints)."""
    return objective.loss.objective(objective.lower - offset, objective.upper - offset, 0.0,
                                    objective.weight)


def backfit(design, problem, penalty, start, tol, max_iter, max_change, max_sweeps):
    """The parameters minimising the problem's objective plus ``penalty`` by
    backfitting from ``start`` (module doc): each block solved by
    ``penalized_newton`` (``tol``, ``max_iter`` and ``max_change`` as there)
    on the objective of its predictions plus the other terms' ones (the
    whole objective less the other blocks' penalty, a constant).

    Returns
    -------
    parameters : ndarray of shape (n_parameters,)
    sweeps : int
        Sweeps over the terms taken.
    steps : int
        Newton steps taken over all blocks.
    converged : bool
        Whether the last sweep lowered the objective by less than
        ``SWEEP_TOLERANCE`` relatively (else ``max_sweeps`` were taken).
    """
    blocks = term_blocks(design, problem, penalty)
    parameters = start.copy()
    predictions = problem.predictions(parameters)
    current = problem.value(parameters, penalty)
    steps = 0
    for sweep in range(1, max_sweeps + 1):
        for indices, columns, mapping, block_penalty, signs in blocks:
            offset = predictions - columns @ (mapping @ parameters[indices])
            block = PenalizedProblem(columns, mapping,
                                     shifted_objective(problem.objective, offset), signs)
            parameters[indices], block_steps, _ = penalized_newton(
                block, block_penalty, parameters[indices], tol, max_iter, max_change)
            predictions = offset + block.predictions(parameters[indices])
            steps += block_steps
        previous, current = current, problem.value(parameters, penalty)
        if previous - current < SWEEP_TOLERANCE * abs(previous):
            return parameters, sweep, steps, True
    return parameters, max_sweeps, steps, False


def paired_runs(first, second, repeats):
    """``first()`` and ``second()`` timed in turn, ``repeats`` pairs: the
    seconds of each (an array each) and what each returned the last time."""
    times, results = [[], []], [None, None]
    for _ in range(repeats):
        for k, solve in enumerate((first, second)):
            start = time.perf_counter()
            results[k] = solve()
            times[k].append(time.perf_counter() - start)
    return np.array(times[0]), np.array(times[1]), results[0], results[1]


def reached(relative_gap, converged):
    """Whether backfitting reached Newton's objective, and if not why."""
    if relative_gap <= SAME_OBJECTIVE:
        return "yes"
    return "no (stalled)" if converged else "no (cap)"


def cases_of(args):
    """(label, X, y) of every data set folder of ``--data-dir`` and of every
    simulated size and number of features."""
    cases = []
    if args.data_dir:
        for folder in sorted(args.data_dir.iterdir()):
            if (folder / "features.csv").exists() and (folder / "targets.csv").exists():
                data = load_folder(folder)
                cases.append((f"{data.name} ({data.data.shape[0]} x {data.data.shape[1]})",
                              data.data, data.target))
    for n, p in itertools.product(args.sizes, args.features):
        X, y = make_interval_regression(int(n), p, PATTERN, random_state=0)
        cases.append((f"simulated {size(n)} x {p}", X, y))
    return cases


def compared_cells(X, y, lam, repeats, max_sweeps):
    """The table's cells after the data and lam: Newton's and backfitting's
    solves of ``IntervalGAM(lam)``'s problem on ``X, y`` timed in pairs, and
    their results."""
    model = IntervalGAM(lam=lam)
    _, _, _, weight, _, design, problem, start, spread = model._training_problem(X, y, None)
    penalty = objective_penalty(design, lam, model.shrinkage, weight.sum())
    with single_threaded_blas():
        newton_seconds, backfit_seconds, newton_result, backfit_result = paired_runs(
            partial(model._fit_at, design, problem, lam, weight.sum(), start, spread),
            partial(backfit, design, problem, penalty, start, model.tol, model.max_iter,
                    spread, max_sweeps), repeats)
    newton_parameters, newton_steps, newton_converged = newton_result
    backfit_parameters, sweeps, block_steps, converged = backfit_result
    newton_value = problem.value(newton_parameters, penalty)
    backfit_value = problem.value(backfit_parameters, penalty)
    gap = (backfit_value - newton_value) / abs(newton_value)
    ratios = backfit_seconds / newton_seconds
    return [seconds(np.median(newton_seconds)), seconds(np.median(backfit_seconds)),
            f"{np.median(ratios):.2f}", f"{ratios.min():.2f}-{ratios.max():.2f}",
            f"{newton_value:.10g}", f"{backfit_value:.10g}", f"{gap:+.1e}",
            reached(gap, converged), newton_steps if newton_converged else
            f"{newton_steps} (cap)", sweeps, block_steps]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="*", default=[1e3, 1e4, 1e5])
    parser.add_argument("--features", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--data-dir", type=Path, metavar="DIR",
                        help="also every data set folder of DIR")
    parser.add_argument("--lam", type=float, nargs="+", default=[1.0])
    parser.add_argument("--repeats", type=int, default=3, help="pairs of solves timed")
    parser.add_argument("--max-sweeps", type=int, default=200,
                        help="backfitting's sweeps at most")
    add_csv_argument(parser)
    args = parser.parse_args()
    table = Table(["data", "lam", "Newton s", "backfit s", "ratio", "ratio range",
                   "Newton objective", "backfit objective", "rel. diff", "reached",
                   "steps", "sweeps", "block steps"], args.csv,
                  "IntervalGAM: penalized Newton vs backfitting (ratio: backfit / Newton)")
    for label, X, y in cases_of(args):
        for lam in args.lam:
            table.add(label, f"{lam:g}", *compared_cells(X, y, lam, args.repeats,
                                                          args.max_sweeps))
            print(f"  {label}, lam={lam:g} done", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
