"""The cross-validated comparison behind ``mmit cv`` and the accuracy study of
the benchmarks.

Each fold of a data set's ``folds`` is in turn the test set; every method
chooses its hyperparameters by inner cross-validation on the other folds
(the protocol of the MMIT paper; forests: out of bag), is refitted on them,
and is scored on the test fold by the interval MSE and the interval accuracy.
The baselines, which take numbers only, read a categorical column's codes.
"""

import functools
import sys
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils import _safe_indexing

from .._utils._validation import bounds_spread, default_margins
from ..baselines import ConstantRegressor, IntervalCART
from ..ensemble._boosting import MMITBoost
from ..ensemble._forest import MMITForest
from ..ensemble._forest_cv import MMITForestCV
from ..ensemble._stacking import IntervalStackingRegressor
from ..linear_model._linear import IntervalLinearRegressionCV
from ..metrics import interval_accuracy, interval_mse
from ..tree._mmit_cv import MMITCV

MODEL_GROUPS = {
    "tree": ["MMIT"],
    "linear": ["L1-Linear", "MMIT linear leaves"],
    "forest": ["MMITForest", "MMITForestCV"],
    "boost": ["MMITBoost", "MMITBoost CV"],
    "stack": ["Stacking"],
    "all": ["Constant", "L1-Linear", "Interval-CART", "MMIT", "MMIT squared",
            "MMIT linear leaves", "MMITForest", "MMITForestCV", "MMITBoost", "MMITBoost CV",
            "Stacking"],
}
BASELINES = ("Constant", "Interval-CART")
# the models that search a grid by inner cross-validation, longest fit first
SEARCHES = ("MMITBoost CV", "MMITForestCV", "Interval-CART", "Stacking",
            "MMIT linear leaves")
_DEPTHS = [1, 2, 3, 4, 6, 9, 12, 16]
# MMITBoost CV's inner-CV grid around MMITBoost's defaults (100 stages, learning
# rate 0.05), margins as fractions of the spread of the training bounds
BOOST_GRID = {"loss": ["squared_hinge", "linear_hinge"], "max_depth": [2, 3]}
BOOST_MARGIN_SCALES = [0.0, 0.1, 0.3]


def make_model(name, y_train, *, n_jobs=None, random_state=0, verbose=0,
               monotonic_cst=None):
    """An unfitted model whose hyperparameters are chosen by inner 5-fold CV
    (MMITForestCV: out of bag; MMITForest and MMITBoost: their defaults;
    MMITBoost CV: loss, depth and margin; L1-Linear: the lasso's alpha and the margin; MMIT
    linear leaves: margin, constant or linear leaves, their shrinkage and
    the pruning, with the squared hinge of the leaves' models; Stacking:
    IntervalStackingRegressor with its default members, weighted by their
    5-fold out-of-fold predictions).

    ``verbose`` reports the progress of forests and stacks (the long fits)
    on stderr; ``monotonic_cst`` constrains the model (see :class:`MMIT`).
    """
    model = _unconstrained_model(name, y_train, n_jobs=n_jobs, random_state=random_state,
                                 verbose=verbose)
    if monotonic_cst is None:
        return model
    key = "estimator__monotonic_cst" if isinstance(model, GridSearchCV) else "monotonic_cst"
    if key not in model.get_params():
        raise ValueError(f"{name} takes no monotone constraints.")
    return model.set_params(**{key: monotonic_cst})


def _unconstrained_model(name, y_train, *, n_jobs, random_state, verbose):
    """The model of :func:`make_model`, without constraints."""
    inner = KFold(5, shuffle=True, random_state=random_state)
    margins = default_margins(y_train[:, 0], y_train[:, 1])
    if name == "Constant":
        return GridSearchCV(ConstantRegressor(), {"margin": margins}, cv=inner,
                            n_jobs=n_jobs)
    if name == "Interval-CART":
        return GridSearchCV(IntervalCART(random_state=random_state),
                            {"margin": margins, "max_depth": _DEPTHS}, cv=inner,
                            n_jobs=n_jobs)
    if name in ("MMIT", "MMIT squared"):
        loss = "squared_hinge" if name.endswith("squared") else "linear_hinge"
        return MMITCV(margins=margins, losses=[loss], cv=inner, n_jobs=n_jobs,
                      random_state=random_state)
    if name == "L1-Linear":
        return IntervalLinearRegressionCV(cv=inner, n_jobs=n_jobs)
    if name == "MMIT linear leaves":
        return MMITCV(margins=margins, losses=["squared_hinge"],
                      leaf_models=["constant", "linear"], cv=inner, n_jobs=n_jobs,
                      random_state=random_state)
    if name == "MMITForest":
        return MMITForest(n_jobs=n_jobs, random_state=random_state, verbose=verbose)
    if name == "MMITForestCV":
        return MMITForestCV(n_jobs=n_jobs, random_state=random_state, verbose=verbose)
    if name == "Stacking":
        return IntervalStackingRegressor(n_jobs=n_jobs, random_state=random_state,
                                         verbose=verbose)
    if name == "MMITBoost":
        return MMITBoost(random_state=random_state)
    if name == "MMITBoost CV":
        spread = bounds_spread(y_train[:, 0], y_train[:, 1])
        grid = {**BOOST_GRID, "margin": [scale * spread for scale in BOOST_MARGIN_SCALES]}
        return GridSearchCV(MMITBoost(random_state=random_state), grid, cv=inner,
                            n_jobs=n_jobs)
    raise ValueError(f"Unknown model {name!r}.")


def cross_validate_models(data, names, *, extra_models=None, n_jobs=None, progress=False):
    """Test interval MSE and accuracy of each model on each fold of ``data``.

    Every model's fit on every fold is one task; the tasks run in ``n_jobs``
    processes (joblib's convention: None is 1, -1 every core), the searches
    first (the longest fits: the processes then finish together), each fit
    on one thread. The results do not depend on ``n_jobs``.

    Parameters
    ----------
    data : Bunch
        From :func:`mmit.datasets.load_dataset` or ``load_folder`` (with folds).
    names : list of str
        Models of :func:`make_model`.
    extra_models : dict, default=None
        More models, ``name -> factory(y_train)`` returning an unfitted model.
    n_jobs : int, default=None
        Processes fitting models at once.
    progress : bool, default=False
        Report each fitted model on stderr, with the time elapsed and left.

    Returns
    -------
    rows : list of dict
        ``fold``, ``model``, ``mse``, ``accuracy`` and ``seconds`` (fit time),
        by fold, then in the order of ``names`` (and ``extra_models``).
    """
    if data.folds is None:
        raise ValueError(f"{data.name} has no folds.csv: nothing to cross-validate.")
    factories = {name: functools.partial(make_model, name) for name in names}
    factories.update(extra_models or {})
    numeric = category_codes(data.data)
    tasks = []
    for fold in np.unique(data.folds):
        test = data.folds == fold
        train, held_out = np.flatnonzero(~test), np.flatnonzero(test)
        for name, factory in factories.items():
            X = numeric if name in BASELINES else data.data
            tasks.append((int(fold), name, factory, _safe_indexing(X, train),
                          data.target[train], _safe_indexing(X, held_out),
                          data.target[held_out]))
    # the longest fits first, so that the processes finish together
    tasks.sort(key=lambda task: SEARCHES.index(task[1]) if task[1] in SEARCHES
               else len(SEARCHES))
    order = {name: rank for rank, name in enumerate(factories)}
    start, rows = time.perf_counter(), []
    for row in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_fit_and_score)(*task) for task in tasks):
        rows.append(row)
        if progress:
            elapsed = time.perf_counter() - start
            left = elapsed / len(rows) * (len(tasks) - len(rows))
            print(f"  [{len(rows)}/{len(tasks)}] fold {row['fold']}: {row['model']} "
                  f"fitted in {row['seconds']:.1f} s ({elapsed:.0f} s elapsed, about "
                  f"{left:.0f} s left)", file=sys.stderr, flush=True)
    return sorted(rows, key=lambda row: (row["fold"], order[row["model"]]))


def _fit_and_score(fold, name, factory, X_train, y_train, X_test, y_test):
    """One task of :func:`cross_validate_models`: a model fitted on a fold's
    training rows and scored on its test rows."""
    start = time.perf_counter()
    model = factory(y_train).fit(X_train, y_train)
    seconds = time.perf_counter() - start
    predictions = model.predict(X_test)
    return {"fold": fold, "model": name, "seconds": seconds,
            "mse": interval_mse(y_test, predictions),
            "accuracy": interval_accuracy(y_test, predictions)}


def category_codes(X):
    """``X`` with the categorical columns of a pandas DataFrame as their codes
    (NaN for a missing value), for models that take numbers only."""
    if not hasattr(X, "select_dtypes"):
        return X
    columns = X.select_dtypes("category").columns
    return X.assign(**{name: X[name].cat.codes.replace(-1, np.nan).astype(np.float64)
                       for name in columns})


def fold_table(rows):
    """Per-fold test interval MSE and accuracy of each model, with the mean."""
    models = list(dict.fromkeys(row["model"] for row in rows))
    folds = sorted({row["fold"] for row in rows})
    width = max(len(name) for name in models) + 2
    lines = [f"{'fold':<6}" + "".join(f"{name:>{width}}" for name in models)]
    for metric, label in (("mse", "test interval MSE"), ("accuracy", "test accuracy")):
        lines.append(label)
        values = {(row["fold"], row["model"]): row[metric] for row in rows}
        for fold in folds + ["mean"]:
            cells = []
            for name in models:
                value = (np.mean([values[f, name] for f in folds]) if fold == "mean"
                         else values[fold, name])
                cells.append(f"{value:>{width}.4f}")
            lines.append(f"{fold!s:<6}" + "".join(cells))
    return "\n".join(lines)
