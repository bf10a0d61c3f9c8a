"""What the studies that compare variants of a model share.

The studies behind the defaults (``forest_defaults.py``,
``boost_defaults.py``, ``stacking_defaults.py``, ``leaf_shrinkage.py``,
``hist_accuracy.py``, ``linear_clipping.py``, ``missing_values.py``) fit
each variant on the same splits and compare the test interval MSEs:

- the splits (:func:`splits_of`): every data set folder of a directory
  (the MMIT paper's protocol: each fold of ``folds.csv`` in turn is the
  test set, :func:`folder_splits`) and simulated shapes of
  ``make_interval_regression``;
- the variants' mean test MSE over the splits, in parallel
  (:func:`mean_test_mse`), optionally on transformed features
  (:func:`transformed_splits`);
- the comparison (:func:`ranking`): each variant's mean rank over the data
  sets (1 = best), and the median and worst ratio of its test MSE to the
  best variant's (or a reference's) on each data set; printed with each
  data set's row (:func:`print_variant_table`) or one row per variant,
  best first (:func:`print_ranking`);
- a comparison of models on named splits, their fits timed too
  (:func:`compare_models`: the studies of the trees of predictors and of
  the additive models).
"""

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata

from mmit.baselines import interval_cart_rows
from mmit.datasets import load_folder, make_interval_regression
from mmit.metrics import interval_mse

# (n_samples, noise features, censoring) of the simulated shapes, each pattern
SIMULATED_SHAPES = [
    (50, 5, 0.0), (50, 100, 0.4), (200, 20, 0.2), (200, 100, 0.0),
    (1000, 5, 0.4), (1000, 100, 0.2), (5000, 20, 0.0),
]
PATTERNS = ("linear", "sin", "abs")
N_TEST = 2000
SIMULATED_PREFIX = "sim."


def study_parser(doc):
    """The command line of a study on the bundled sets: the data folder and
    ``--n-jobs`` (2 by default); ``doc``: the study's docstring, whose first
    line describes it."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--n-jobs", type=int, default=2)
    return parser

def model_study_parser(doc, models):
    """:func:`study_parser` with the options of a comparison of ``models``
    (names): ``--folds K`` (the first K folds of each data set),
    ``--models NAME ...`` and ``--no-simulated``."""
    parser = study_parser(doc)
    parser.add_argument("--folds", type=int, default=None)
    parser.add_argument("--models", nargs="+", default=list(models), choices=list(models))
    parser.add_argument("--no-simulated", action="store_true")
    return parser


def splits_of(data_dir, quick=False, shapes=SIMULATED_SHAPES):
    """(data set name, list of (X_train, y_train, X_test, y_test)) of every
    data set folder of ``data_dir`` (one split per fold) and of each
    simulated shape of ``shapes`` (one split: ``N_TEST`` fresh test rows);
    names of the simulated ones start with ``SIMULATED_PREFIX``. ``quick``:
    one fold per folder and two shapes (a smoke test)."""
    yield from folder_splits(data_dir, 1 if quick else None)
    shapes = shapes[:2] if quick else shapes
    for (n, noise_features, censoring), pattern in itertools.product(shapes, PATTERNS):
        X, y = make_interval_regression(n + N_TEST, noise_features + 1, pattern,
                                        censoring=censoring,
                                        random_state=n + noise_features)
        yield (f"{SIMULATED_PREFIX}{pattern} n={n} p={noise_features + 1} cens={censoring}",
               [(X[:n], y[:n], X[n:], y[n:])])


def transformed_splits(splits, transform, rng):
    """The (X_train, y_train, X_test, y_test) splits with ``transform(X, rng)``
    applied to the training and test rows together."""
    out = []
    for X_train, y_train, X_test, y_test in splits:
        X = transform(np.vstack([X_train, X_test]), rng)
        out.append((X[:len(X_train)], y_train, X[len(X_train):], y_test))
    return out


def mean_test_mse(test_mse, variants, splits, n_jobs):
    """``test_mse(*variant, *split)`` of every variant (a tuple of arguments)
    on every split, in ``n_jobs`` processes; each variant's mean."""
    mse = Parallel(n_jobs=n_jobs)(delayed(test_mse)(*variant, *split)
                                  for variant in variants for split in splits)
    return np.array(mse).reshape(len(variants), -1).mean(axis=1)


def ranking(mse, base=None):
    """Mean rank, median ratio and worst ratio of each variant.

    Parameters
    ----------
    mse : ndarray of shape (n_data_sets, n_variants)
        Test MSE of every variant on every data set.
    base : ndarray of shape (n_data_sets,), default=None
        What the ratios divide by on each data set; None: the best variant's
        MSE there.

    Returns
    -------
    dict of str to ndarray of shape (n_variants,)
        "mean rank", "median ratio" and "worst ratio".
    """
    mse = np.asarray(mse, dtype=float)
    base = mse.min(axis=1) if base is None else np.asarray(base, dtype=float)
    ratio = mse / np.maximum(base, 1e-300)[:, np.newaxis]
    ranks = np.array([rankdata(row) for row in mse])
    return {"mean rank": ranks.mean(axis=0), "median ratio": np.median(ratio, axis=0),
            "worst ratio": ratio.max(axis=0)}


def print_variant_table(title, by_set, names, extra=None, width=18):
    """Each data set's row of test MSEs, then the :func:`ranking` rows.

    ``by_set``: data set name -> array of the variants' test MSEs, in the
    order of ``names``; ``extra``: more summary rows, label -> one value per
    variant.
    """
    mse = np.array(list(by_set.values()))
    summary = {**ranking(mse), **(extra or {})}
    print(f"\n{title}")
    print(f"{'data set':<42}" + "".join(f"{v:>{width}}" for v in names))
    for name, row in by_set.items():
        print(f"{name:<42}" + "".join(f"{v:>{width}.4g}" for v in row))
    for label, values in summary.items():
        print(f"{label:<42}" + "".join(f"{v:>{width}.2f}" for v in values))


def print_ranking(title, names, mse, base=None, extra=None):
    """One row per variant, by mean rank then worst ratio: its :func:`ranking`
    and the ``extra`` columns (column name -> one cell per variant)."""
    summary = ranking(mse, base)
    extra = extra or {}
    width = max(len(name) for name in names) + 2
    order = np.lexsort((summary["worst ratio"], summary["mean rank"]))
    print(f"\n{title}")
    print(f"{'':<{width}}" + "".join(f"{label:>14}" for label in summary)
          + "".join(f"{label:>{len(label) + 2}}" for label in extra))
    for index in order:
        print(f"{names[index]:<{width}}"
              + "".join(f"{values[index]:>14.3f}" for values in summary.values())
              + "".join(f"{str(cells[index]):>{len(label) + 2}}"
                        for label, cells in extra.items()))


def folder_splits(data_dir, n_folds=None):
    """(data set name, list of (X_train, y_train, X_test, y_test)) of every
    data set folder of ``data_dir``: each fold of its folds.csv in turn the
    test set (the first ``n_folds`` only, when given)."""
    for folder in sorted(p for p in data_dir.iterdir() if (p / "folds.csv").exists()):
        data = load_folder(folder)
        folds = np.unique(data.folds)[:n_folds]
        yield data.name, [(data.data[data.folds != k], data.target[data.folds != k],
                           data.data[data.folds == k], data.target[data.folds == k])
                          for k in folds]


def simulated_split(signal, n, seed, n_features=6, n_test=2000):
    """A training and a test set of a simulated shape: ``n_features``
    features uniform on [-2, 2], interval targets around ``signal(X)`` plus
    noise of standard deviation 0.3 (half-widths uniform on [0, 0.3]; 10% of
    the lower and 10% of the upper bounds censored), ``n`` training rows and
    ``n_test`` test rows."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n + n_test, n_features))
    center = signal(X) + 0.3 * rng.normal(size=X.shape[0])
    width = rng.uniform(0, 0.3, X.shape[0])
    y = np.column_stack([center - width, center + width])
    y[rng.random(X.shape[0]) < 0.1, 0] = -np.inf
    y[rng.random(X.shape[0]) < 0.1, 1] = np.inf
    return X[:n], y[:n], X[n:], y[n:]


class IntervalCARTPeer:
    """A peer for exact targets fitted on the Interval-CART transform of the
    training rows (``mmit.baselines.interval_cart_rows``)."""

    def __init__(self, make):
        self.make = make

    def fit(self, X, y):
        rows, targets = interval_cart_rows(y[:, 0], y[:, 1], 0.0)
        self.model = self.make().fit(X[rows], targets)
        return self

    def predict(self, X):
        return np.asarray(self.model.predict(X), dtype=float)


def timed_test_mse(models, name, X_train, y_train, X_test, y_test):
    """The test interval MSE of the model ``models[name]()`` fitted on the
    training rows (its warnings silenced), and its fit's seconds."""
    model = models[name]()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return interval_mse(y_test, model.predict(X_test)), seconds


def study_splits(args, simulated, shapes, sizes=(400, 2000)):
    """The named splits of a comparison's command line (``args`` of
    :func:`model_study_parser`): the data set folders' (:func:`folder_splits`),
    then unless ``--no-simulated`` one split of each simulated shape and
    training size, ``simulated(shape, n, seed)`` giving it."""
    yield from folder_splits(args.data_dir, args.folds)
    if not args.no_simulated:
        for shape in shapes:
            for n in sizes:
                yield f"sim.{shape} n={n}", [simulated(shape, n, n)]


def compare_models(named_splits, models, names, n_jobs, base=None):
    """Every model ``models[name]()`` of ``names`` fitted on every split of
    ``named_splits`` ((name, splits) pairs) in ``n_jobs`` processes, each
    data set's mean test MSE reported on stderr as it ends; then the table
    of :func:`print_variant_table`, with the median over the splits of each
    model's fit seconds over ``base``'s. Returns the test MSEs by data set."""
    mse, seconds = {}, {}
    for data_name, data_splits in named_splits:
        results = Parallel(n_jobs=n_jobs)(delayed(timed_test_mse)(models, name, *split)
                                          for name in names for split in data_splits)
        results = np.array(results).reshape(len(names), len(data_splits), 2)
        mse[data_name] = results[:, :, 0].mean(axis=1)
        seconds[data_name] = results[:, :, 1]
        print(f"{data_name}: " + ", ".join(f"{n} {v:.4g}" for n, v in
                                          zip(names, mse[data_name], strict=True)),
              file=sys.stderr, flush=True)
    extra = None
    if base in names:
        ratios = np.concatenate([times / times[names.index(base)]
                                 for times in seconds.values()], axis=1)
        extra = {f"fit s / {base}'s (median)": np.median(ratios, axis=1)}
    print_variant_table("Test interval MSE (mean over the folds)", mse, names, extra)
    return mse
