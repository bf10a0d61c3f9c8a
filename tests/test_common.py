"""The scikit-learn estimator contract, for every mmit estimator."""

import pytest
from sklearn.datasets import make_regression
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from mmit import MeanImputer
from mmit.baselines import ConstantRegressor, IntervalCART
from mmit.ensemble import IntervalStackingRegressor, MMITBoost, MMITForest, MMITForestCV
from mmit.linear_model import IntervalLinearRegression, IntervalLinearRegressionCV
from mmit.tree import MMIT, MMITCV

# the linear models solved tightly: the checks compare weighted and repeated
# rows' predictions to 1e-7, the default tolerance is 1e-4 of the bounds' spread
TIGHT = 1e-10
ESTIMATORS = [MMIT(), MMIT(max_depth=3, leaf_model="linear"), MMITForest(n_estimators=10),
              MMITCV(cv=3),
              MMITCV(cv=3, margins=[0.0], leaf_models=("linear",), leaf_shrinkages=[1.0]),
              MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=30),
              MMITBoost(n_estimators=10, min_samples_leaf=1),
              MMITBoost(n_estimators=10, splitter="hist"),
              IntervalLinearRegression(tol=TIGHT),
              IntervalLinearRegressionCV(n_alphas=5, cv=3, tol=TIGHT), ConstantRegressor(),
              IntervalCART(),
              IntervalStackingRegressor([("tree", MMIT(max_depth=3)),
                                         ("linear", IntervalLinearRegression(tol=TIGHT))],
                                        cv=3, random_state=0)]


def expected_failed_checks(estimator):
    if isinstance(estimator, (MMITForest, MMITForestCV)):
        return {
            f"check_sample_weight_equivalence_on_{layout}_data": (
                "bagging draws its bootstrap samples over rows: an integer weight "
                "and the same row repeated are equivalent in distribution, not "
                "draw for draw (as for scikit-learn's forests)"
            )
            for layout in ("dense", "sparse")
        }
    return {}


@parametrize_with_checks([*ESTIMATORS, MeanImputer()],
                         expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_poor_score_tag_reflects_the_score_scale_not_the_fit():
    # The estimators set the poor_score tag because score() is the negative
    # interval MSE; on the data of scikit-learn's check their R^2 is good.
    X, y = make_regression(n_samples=200, n_features=10, n_informative=1, bias=5.0,
                           noise=20, random_state=42)
    for estimator in ESTIMATORS:
        if isinstance(estimator, ConstantRegressor):
            continue  # a constant cannot explain the signal
        if "random_state" in estimator.get_params():
            estimator = estimator.set_params(random_state=0)
        assert r2_score(y, estimator.fit(X, y).predict(X)) > 0.5
        assert estimator.score(X, y) == pytest.approx(
            -mean_squared_error(y, estimator.predict(X)), rel=1e-12)
