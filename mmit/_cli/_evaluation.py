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

from .._registry import command_line_models
from .._utils._validation import default_margins
from ..baselines import ConstantRegressor, IntervalCART
from ..metrics import interval_accuracy, interval_mse

_DEPTHS = [1, 2, 3, 4, 6, 9, 12, 16]


def _constant(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return GridSearchCV(ConstantRegressor(), {"margin": margins}, cv=inner_cv,
                        n_jobs=n_jobs)


def _interval_cart(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return GridSearchCV(IntervalCART(random_state=random_state),
                        {"margin": margins, "max_depth": _DEPTHS}, cv=inner_cv,
                        n_jobs=n_jobs)


#: The baselines every comparison holds (they take numbers only: a categorical
#: column goes to them as its codes), then the estimators' command-line models
#: (``mmit._registry``), by name.
BASELINES = {"Constant": _constant, "Interval-CART": _interval_cart}
MODELS = {model.name: model for model in command_line_models()}
# how long each fit takes, in rank: the costliest start first (the baselines'
# grid of depths and margins between the stack's and the forest search's)
_COSTS = {"Constant": 0, "Interval-CART": 3,
          **{name: model.cost for name, model in MODELS.items()}}
#: The models of ``mmit cv --model GROUP``: the baselines, then the group's.
MODEL_GROUPS = {
    **{group: [name for name, model in MODELS.items() if model.group == group]
       for group in dict.fromkeys(model.group for model in MODELS.values()
                                  if model.group is not None)},
    "all": [*BASELINES, *MODELS],
}
#: The model ``mmit fit --model CHOICE`` fits, by choice.
FIT_CHOICES = {model.fit_choice: model for model in MODELS.values()
               if model.fit_choice is not None}


def make_model(name, y_train, *, n_jobs=None, random_state=0, verbose=0,
               monotonic_cst=None):
    """An unfitted model (of ``BASELINES`` or ``MODELS``) whose
    hyperparameters are chosen on the training rows ``y_train`` by inner
    5-fold CV, as its command-line model says (MMITForestCV: out of bag;
    MMITForest and MMITBoost: their defaults; the stack: its default
    members weighted by their 5-fold out-of-fold predictions).

    ``verbose`` reports the progress of forests and stacks (the long fits)
    on stderr; ``monotonic_cst`` constrains the model (see :class:`MMIT`).
    """
    make = BASELINES.get(name) or getattr(MODELS.get(name), "make", None)
    if make is None:
        raise ValueError(f"Unknown model {name!r}.")
    model = make(y_train, KFold(5, shuffle=True, random_state=random_state),
                 default_margins(y_train[:, 0], y_train[:, 1]), n_jobs=n_jobs,
                 random_state=random_state, verbose=verbose)
    if monotonic_cst is None:
        return model
    key = "estimator__monotonic_cst" if isinstance(model, GridSearchCV) else "monotonic_cst"
    if key not in model.get_params():
        raise ValueError(f"{name} takes no monotone constraints.")
    return model.set_params(**{key: monotonic_cst})


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
    tasks.sort(key=lambda task: -_COSTS.get(task[1], 0))
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
