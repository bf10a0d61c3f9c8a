"""The public estimators of mmit: one entry each, which the rest reads.

An :class:`Estimator` entry names the class, its API reference section,
the public objects that come with it, its command-line models and its
examples. From the entries (``ESTIMATORS``):

- ``mmit`` exports the classes, their aliases and companions (``__all__``);
- model files take every estimator (``save_model``, ``load_model``: the
  estimator exports and imports its own state);
- ``mmit cv`` and ``mmit fit`` offer the command-line models
  (``mmit._cli``);
- the API reference lists them by section (``docs/conf.py``);
- the tests check every estimator against scikit-learn's estimator checks,
  and the model-file fixtures and the output hashes of the benchmarks fit
  the examples.

Adding a model family is one entry here, plus its module (the development
guide shows it).
"""

from collections.abc import Callable
from dataclasses import dataclass

from sklearn.model_selection import GridSearchCV

from .._utils._validation import bounds_spread
from ..additive._gam import IntervalGAM, IntervalGAMCV
from ..additive._mars import IntervalMARS
from ..ensemble._boosting import MMITBoost
from ..ensemble._distribution_strategies import LocationDistribution, SpreadDistribution
from ..ensemble._forest import MMITForest
from ..ensemble._forest_cv import MMITForestCV
from ..ensemble._stacking import IntervalStackingRegressor
from ..ensemble._trees_of_predictors import TreeOfPredictors
from ..linear_model._imputation import MeanImputer
from ..linear_model._linear import IntervalLinearRegression, IntervalLinearRegressionCV
from ..survival._survival import StepFunction, SurvivalRegressor, intervals_from_survival
from ..tree._classes import MMIT
from ..tree._mmit_cv import MMITCV


@dataclass(frozen=True)
class CommandLineModel:
    """A model of ``mmit cv``'s comparison (and of ``mmit fit``).

    Parameters
    ----------
    name : str
        Its column in ``mmit cv``'s table (and its name in
        ``mmit._cli._evaluation.make_model``).
    make : callable
        ``make(y_train, inner_cv, margins, *, n_jobs, random_state,
        verbose)``: the unfitted model, its hyperparameters chosen on the
        training folds (``inner_cv``: the inner folds; ``margins``: the
        candidate margins of ``y_train``).
    group : str or None
        ``mmit cv --model GROUP`` compares it (None: only ``--model all``).
    fit_choice : str or None, default=None
        ``mmit fit --model FIT_CHOICE`` fits it (None: ``mmit fit`` does
        not).
    fit_summary : str, default=""
        What it is, as ``mmit fit``'s description says it.
    cost : int, default=0
        How long its fit takes, in rank: ``mmit cv`` starts the costliest
        first, so that its processes finish together.
    """

    name: str
    make: Callable
    group: str | None
    fit_choice: str | None = None
    fit_summary: str = ""
    cost: int = 0


@dataclass(frozen=True)
class Example:
    """An example of an estimator with its settings, fitted by the model-file
    fixtures and the output hashes (``label``: its name there; ``make()``:
    the unfitted model)."""

    label: str
    make: Callable


@dataclass(frozen=True)
class Estimator:
    """A public estimator of mmit (module doc).

    Parameters
    ----------
    cls : type
        The estimator class.
    section : str
        Its section of the API reference (one of ``SECTIONS``).
    aliases : tuple of str, default=()
        Other public names of the class.
    companions : tuple, default=()
        The public classes and functions that come with it (exported by
        ``mmit`` and listed in its section).
    cli : tuple of CommandLineModel, default=()
        Its models in ``mmit cv`` and ``mmit fit``.
    examples : tuple of Example, default=()
        Its examples (none: the estimator with its defaults).
    """

    cls: type
    section: str
    aliases: tuple = ()
    companions: tuple = ()
    cli: tuple = ()
    examples: tuple = ()

    @property
    def name(self):
        return self.cls.__name__

    def all_examples(self):
        """Its examples, or the estimator with its defaults."""
        return self.examples or (Example(self.name, self.cls),)


#: The sections of the API reference's estimators, in order.
SECTIONS = ("Trees", "Ensembles of trees", "Linear models", "Additive models",
            "Stacking and preprocessing", "Survival analysis")


def _mmit_cv(loss, leaf_models=None):
    """``mmit cv``'s MMIT: margin, pruning (and leaf model) by inner CV."""
    def make(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
        extra = {} if leaf_models is None else {"leaf_models": leaf_models}
        return MMITCV(margins=margins, losses=[loss], cv=inner_cv, n_jobs=n_jobs,
                      random_state=random_state, **extra)
    return make


def _linear_cv(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return IntervalLinearRegressionCV(cv=inner_cv, n_jobs=n_jobs)


def _gam_cv(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return IntervalGAMCV(cv=inner_cv, n_jobs=n_jobs)


def _mars(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return IntervalMARS(verbose=verbose)


def _forest(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return MMITForest(n_jobs=n_jobs, random_state=random_state, verbose=verbose)


def _forest_cv(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return MMITForestCV(n_jobs=n_jobs, random_state=random_state, verbose=verbose)


def _boost(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return MMITBoost(random_state=random_state)


# MMITBoost CV's inner-CV grid around MMITBoost's defaults (100 stages, learning
# rate 0.05), margins as fractions of the spread of the training bounds
BOOST_GRID = {"loss": ["squared_hinge", "linear_hinge"], "max_depth": [2, 3]}
BOOST_MARGIN_SCALES = [0.0, 0.1, 0.3]


def _boost_cv(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    spread = bounds_spread(y_train[:, 0], y_train[:, 1])
    grid = {**BOOST_GRID, "margin": [scale * spread for scale in BOOST_MARGIN_SCALES]}
    return GridSearchCV(MMITBoost(random_state=random_state), grid, cv=inner_cv,
                        n_jobs=n_jobs)


def _tree_of_predictors(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return TreeOfPredictors(n_jobs=n_jobs, random_state=random_state, verbose=verbose)


def _stack(y_train, inner_cv, margins, *, n_jobs, random_state, verbose):
    return IntervalStackingRegressor(n_jobs=n_jobs, random_state=random_state,
                                     verbose=verbose)


# the forest search's grid of the examples
_SMALL_GRID = {"loss": ["squared_hinge", "linear_hinge"], "min_samples_leaf": [1, 5]}

ESTIMATORS = (
    Estimator(MMIT, "Trees", aliases=("MaxMarginIntervalTree",), examples=(
        Example("MMIT", lambda: MMIT(random_state=0)),
        Example("MMIT linear leaves", lambda: MMIT(max_depth=3, leaf_model="linear",
                                                   loss="squared_hinge", random_state=0)),
    )),
    Estimator(MMITCV, "Trees", cli=(
        CommandLineModel("MMIT", _mmit_cv("linear_hinge"), "tree", fit_choice="tree",
                         fit_summary="an MMIT (margin and pruning by 5-fold CV)"),
        CommandLineModel("MMIT squared", _mmit_cv("squared_hinge"), None),
        CommandLineModel("MMIT linear leaves",
                         _mmit_cv("squared_hinge", ["constant", "linear"]), "linear",
                         fit_choice="linear",
                         fit_summary="an MMIT of constant or linear leaves (also their "
                                     "shrinkage by 5-fold CV)", cost=1),
    ), examples=(Example("MMITCV", lambda: MMITCV(cv=3, random_state=0)),)),
    Estimator(MMITForest, "Ensembles of trees",
              companions=(SpreadDistribution, LocationDistribution),
              cli=(CommandLineModel("MMITForest", _forest, "forest"),), examples=(
                  Example("MMITForest", lambda: MMITForest(n_estimators=30, oob_score=True,
                                                           random_state=0)),
                  Example("MMITForest location", lambda: MMITForest(
                      n_estimators=20, distribution="location", random_state=0)),
              )),
    Estimator(MMITForestCV, "Ensembles of trees", cli=(
        CommandLineModel("MMITForestCV", _forest_cv, "forest", fit_choice="forest",
                         fit_summary="an MMITForest (margin, loss, max_features and leaf "
                                     "size by out-of-bag score)", cost=4),
    ), examples=(Example("MMITForestCV", lambda: MMITForestCV(
        _SMALL_GRID, n_estimators=20, random_state=0)),)),
    Estimator(MMITBoost, "Ensembles of trees", cli=(
        CommandLineModel("MMITBoost", _boost, "boost"),
        CommandLineModel("MMITBoost CV", _boost_cv, "boost", fit_choice="boost",
                         fit_summary="an MMITBoost (loss, depth and margin by 5-fold CV)",
                         cost=5),
    ), examples=(
        Example("MMITBoost", lambda: MMITBoost(n_estimators=40, random_state=0)),
        Example("MMITBoost hist", lambda: MMITBoost(n_estimators=40, splitter="hist",
                                                    random_state=0)),
        Example("MMITBoost linear leaves", lambda: MMITBoost(
            n_estimators=10, leaf_model="linear", random_state=0)),
    )),
    Estimator(IntervalLinearRegression, "Linear models", examples=(
        Example("IntervalLinearRegression", lambda: IntervalLinearRegression(alpha=0.01)),
    )),
    Estimator(IntervalLinearRegressionCV, "Linear models", cli=(
        CommandLineModel("L1-Linear", _linear_cv, "linear"),
    ), examples=(
        Example("IntervalLinearRegressionCV", lambda: IntervalLinearRegressionCV(
            n_alphas=20)),
    )),
    Estimator(IntervalGAM, "Additive models"),
    Estimator(IntervalGAMCV, "Additive models", cli=(
        CommandLineModel("GAM", _gam_cv, "gam", fit_choice="gam",
                         fit_summary="an IntervalGAMCV (penalized splines, their penalty "
                                     "by 5-fold CV)", cost=1),
    ), examples=(
        Example("IntervalGAMCV", lambda: IntervalGAMCV(lams=[100.0, 1.0, 0.01], cv=3,
                                                       random_state=0)),
    )),
    Estimator(IntervalMARS, "Additive models", cli=(
        CommandLineModel("MARS", _mars, "mars", fit_choice="mars",
                         fit_summary="an IntervalMARS (hinge terms by a forward pass, "
                                     "pruned by GCV)"),
    ), examples=(
        Example("IntervalMARS", lambda: IntervalMARS(max_degree=2)),
    )),
    Estimator(IntervalStackingRegressor, "Stacking and preprocessing", cli=(
        CommandLineModel("Stacking", _stack, "stack", fit_choice="stack",
                         fit_summary="an IntervalStackingRegressor (its default members "
                                     "weighted by their out-of-fold predictions)", cost=2),
    ), examples=(
        Example("Stack", lambda: IntervalStackingRegressor(random_state=0)),
        Example("Stack folds", lambda: IntervalStackingRegressor(out_of_fold="folds",
                                                                 random_state=0)),
    )),
    Estimator(TreeOfPredictors, "Stacking and preprocessing", cli=(
        CommandLineModel("ToPs", _tree_of_predictors, "tops", fit_choice="tops",
                         fit_summary="a TreeOfPredictors (its default library, each "
                                     "region's member and path weights chosen on "
                                     "out-of-fold predictions)", cost=6),
    ), examples=(
        Example("ToPs", lambda: TreeOfPredictors(max_depth=1, random_state=0)),
        Example("ToPs holdout", lambda: TreeOfPredictors(
            [("tree", MMIT(max_depth=2, random_state=0)),
             ("linear", IntervalLinearRegression(alpha=0.01))],
            max_depth=2, min_samples_leaf=10, validation="holdout", random_state=0)),
    )),
    Estimator(MeanImputer, "Stacking and preprocessing"),
    Estimator(SurvivalRegressor, "Survival analysis",
              companions=(StepFunction, intervals_from_survival), examples=(
                  Example("survival", lambda: SurvivalRegressor(
                      MMITForest(n_estimators=20, random_state=0))),
              )),
)


def exported():
    """The public names of the estimators, their aliases and companions, with
    their objects (what ``mmit`` exports of them), in the order of the
    entries."""
    names = {}
    for entry in ESTIMATORS:
        names[entry.name] = entry.cls
        names.update({alias: entry.cls for alias in entry.aliases})
        names.update({companion.__name__: companion for companion in entry.companions})
    return names


def model_kinds():
    """The estimators model files hold, by the name a file records."""
    return {entry.name: entry.cls for entry in ESTIMATORS}


def command_line_models():
    """The command-line models of every estimator, in the order of the
    entries."""
    return [model for entry in ESTIMATORS for model in entry.cli]
