"""MMITForestCV: out-of-bag choice of a forest."""

import numpy as np
import pytest
from scipy.stats import rankdata

from mmit import MMITForest, MMITForestCV
from mmit.datasets import make_interval_regression
from mmit.metrics import interval_mse

GRID = {"loss": ["linear_hinge", "squared_hinge"], "min_samples_leaf": [1, 5]}


def problem(n=120, seed=0):
    return make_interval_regression(n, 4, "sin", censoring=0.3, random_state=seed)


def test_results_layout_and_the_chosen_forest():
    X, y = problem()
    search = MMITForestCV(GRID, n_estimators=20, random_state=0).fit(X, y)
    results = search.cv_results_
    # the most preferred candidates first: fewest changes from the first values
    assert results["params"] == [
        {"loss": "linear_hinge", "min_samples_leaf": 1},
        {"loss": "linear_hinge", "min_samples_leaf": 5},
        {"loss": "squared_hinge", "min_samples_leaf": 1},
        {"loss": "squared_hinge", "min_samples_leaf": 5},
    ]
    assert list(results["param_loss"]) == [p["loss"] for p in results["params"]]
    assert results["mean_test_score"].shape == (4,)
    np.testing.assert_array_equal(results["rank_test_score"],
                                  rankdata(-results["mean_test_score"], method="min"))
    assert results["std_test_score"][np.argmin(results["rank_test_score"])] == 0.0
    forest = search.best_estimator_
    assert isinstance(forest, MMITForest)
    assert search.best_params_ == results["params"][search.best_index_]
    assert forest.get_params()["loss"] == search.best_params_["loss"]
    # the chosen forest is the candidate's forest: its out-of-bag score is the score
    assert forest.oob_score_ == pytest.approx(search.best_score_)
    np.testing.assert_array_equal(search.predict(X), forest.predict(X))
    assert search.score(X, y) == pytest.approx(-interval_mse(y, forest.predict(X)))


def test_one_informative_feature_among_many_chooses_all_features():
    X, y = make_interval_regression(300, 30, "abs", random_state=1)
    X_test, y_test = make_interval_regression(1000, 30, "abs", random_state=2)
    grid = {"max_features": ["sqrt", 1.0]}
    search = MMITForestCV(grid, n_estimators=30, random_state=0).fit(X, y)
    assert search.best_params_ == {"max_features": 1.0}
    sampled = MMITForest(30, max_features="sqrt", random_state=0).fit(X, y)
    assert search.score(X_test, y_test) > 2 * sampled.score(X_test, y_test)


def test_the_preferred_candidate_wins_within_one_standard_error():
    search = MMITForestCV()
    candidates = [{"margin": 0.0}, {"margin": 0.1}, {"margin": 1.0}]
    rng = np.random.default_rng(0)
    noise = rng.exponential(1.0, 400)
    jitter = rng.normal(0.0, 0.3, 400)
    errors = np.array([noise, noise - 0.01 + jitter - jitter.mean(), noise + 1.0])
    search._choose(candidates, errors, np.ones(400), [0.0] * 3)
    # the second is better on average, but by far less than a standard error
    assert search.cv_results_["rank_test_score"].tolist() == [2, 1, 3]
    assert search.best_params_ == {"margin": 0.0}
    # a clear improvement is taken
    errors[1] = noise - 0.5
    search._choose(candidates, errors, np.ones(400), [0.0] * 3)
    assert search.best_params_ == {"margin": 0.1}
    # zero-weight rows do not count
    weight = np.r_[np.zeros(200), np.ones(200)]
    errors[1, 200:] = noise[200:] + 0.5
    search._choose(candidates, errors, weight, [0.0] * 3)
    assert search.best_params_ == {"margin": 0.0}


def test_default_grid_and_reproducibility_with_jobs_and_missing_values():
    X, y = problem(n=80)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    one = MMITForestCV(n_estimators=30, random_state=0).fit(X, y)
    two = MMITForestCV(n_estimators=30, random_state=0, n_jobs=2).fit(X, y)
    assert len(one.cv_results_["params"]) == 24
    defaults = MMITForest().get_params()
    assert one.cv_results_["params"][0] == {
        name: defaults[name] for name in ("margin", "loss", "max_features",
                                          "min_samples_leaf")}
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"],
                                  two.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_progress_is_reported_on_stderr(capsys):
    X, y = problem(n=60)
    MMITForestCV({"min_samples_leaf": [1, 5]}, n_estimators=30, random_state=0,
                 verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "[MMITForestCV] 2/2" in err and "out-of-bag MSE" in err


@pytest.mark.parametrize("grid, message", [
    ({"n_estimators": [10]}, "param_grid may set"),
    ({"loss": []}, "non-empty list"),
    ({"loss": "squared_hinge"}, "non-empty list"),
    ({"loss": ["cubic"]}, "loss"),
    ({"min_samples_leaf": [0]}, "min_samples_leaf"),
])
def test_bad_grids(grid, message):
    X, y = problem(n=40)
    with pytest.raises(ValueError, match=message):
        MMITForestCV(grid, n_estimators=30).fit(X, y)
