"""MMITCV: its scores against GridSearchCV with refits, its results and best tree."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold

from mmit import MMIT, MMITCV
from mmit.metrics import interval_accuracy_scorer, neg_interval_mse_scorer


def problem(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    center = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    lower = center - rng.exponential(0.3, n)
    upper = center + rng.exponential(0.3, n)
    lower[rng.random(n) < 0.2] = -np.inf
    upper[rng.random(n) < 0.2] = np.inf
    return X, np.column_stack([lower, upper])


def grid_of(search):
    """The candidate grid of a fitted MMITCV, as GridSearchCV parameter grids."""
    results = search.cv_results_
    grids = []
    for loss in np.unique(results["param_loss"]):
        for margin in np.unique(results["param_margin"]):
            rows = (results["param_loss"] == loss) & (results["param_margin"] == margin)
            grids.append({"loss": [loss], "margin": [margin],
                          "ccp_alpha": list(results["param_ccp_alpha"][rows])})
    return grids


@pytest.mark.parametrize("scoring", [None, interval_accuracy_scorer])
def test_scores_equal_grid_search_with_refits(scoring):
    X, y = problem()
    cv = KFold(4, shuffle=True, random_state=0)
    search = MMITCV(margins=[0.0, 0.1], losses=["linear_hinge", "squared_hinge"], cv=cv,
                    scoring=scoring, random_state=0).fit(X, y)
    grid = GridSearchCV(MMIT(random_state=0), grid_of(search), cv=cv,
                        scoring=scoring).fit(X, y)
    # GridSearchCV orders candidates by sorted parameter names
    order = np.lexsort((grid.cv_results_["param_ccp_alpha"].astype(float),
                        grid.cv_results_["param_margin"].astype(float),
                        grid.cv_results_["param_loss"].astype(str)))
    for key in ["mean_test_score"] + [f"split{k}_test_score" for k in range(4)]:
        np.testing.assert_array_equal(search.cv_results_[key], grid.cv_results_[key][order])
    assert search.best_score_ == grid.best_score_


@pytest.mark.parametrize(("name", "scorer"),
                         [("neg_interval_mse", neg_interval_mse_scorer),
                          ("interval_accuracy", interval_accuracy_scorer)])
def test_named_scorers_score_all_subtrees_at_once_as_their_scorer_does(name, scorer):
    """A named scoring is computed for all pruned subtrees in one pass; the
    scores equal those of its scorer called on each subtree."""
    X, y = problem(seed=4)
    kwargs = dict(margins=[0.0, 0.1], leaf_models=("constant", "linear"), cv=3,
                  random_state=0)
    by_name = MMITCV(scoring=name, **kwargs).fit(X, y)
    by_scorer = MMITCV(scoring=scorer, **kwargs).fit(X, y)
    for key in ["mean_test_score"] + [f"split{k}_test_score" for k in range(3)]:
        np.testing.assert_array_equal(by_name.cv_results_[key], by_scorer.cv_results_[key])


def test_best_estimator_is_the_refit_tree():
    X, y = problem(seed=1)
    search = MMITCV(margins=[0.0, 0.05, 0.2], cv=3, random_state=0).fit(X, y)
    refit = MMIT(random_state=0, **search.best_params_).fit(X, y)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    np.testing.assert_array_equal(search.best_estimator_.predict(X), refit.predict(X))
    assert search.score(X, y) == refit.score(X, y)


def test_cv_results_layout_and_best_choice():
    X, y = problem(seed=2)
    search = MMITCV(margins=[0.0, 0.3], cv=3, random_state=0).fit(X, y)
    results = search.cv_results_
    n = len(results["params"])
    for key in ("param_loss", "param_margin", "param_ccp_alpha", "mean_test_score",
                "std_test_score", "rank_test_score", "split2_test_score",
                "mean_fit_time"):
        assert len(results[key]) == n, key
    assert results["rank_test_score"][search.best_index_] == 1
    assert search.best_score_ == results["mean_test_score"].max()
    # every margin's alphas start at 0 (the full tree)
    for margin in (0.0, 0.3):
        alphas = results["param_ccp_alpha"][results["param_margin"] == margin]
        assert alphas[0] == 0.0 and np.all(np.diff(alphas) >= 0)


def test_same_results_with_two_jobs():
    X, y = problem(seed=3)
    one = MMITCV(cv=3, random_state=0).fit(X, y)
    two = MMITCV(cv=3, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"],
                                  two.cv_results_["mean_test_score"])
    assert one.best_params_ == two.best_params_


def test_bad_candidates():
    X, y = problem(n=40)
    with pytest.raises(ValueError, match="losses"):
        MMITCV(losses=["hinge"], cv=2).fit(X, y)
    with pytest.raises(ValueError, match="margin"):
        MMITCV(margins=[-1.0], cv=2).fit(X, y)
    with pytest.raises(ValueError, match="empty"):
        MMITCV(margins=[], cv=2).fit(X, y)


MONOTONIC = [1, -1, 0, 0]  # problem(): increasing in feature 0 around 0, x1 free


@pytest.mark.parametrize("scoring", [None, interval_accuracy_scorer])
def test_monotone_scores_equal_grid_search_over_leaf_counts(scoring):
    """A monotone tree's candidates are its growth's prefixes: the scores of
    GridSearchCV over ``max_leaf_nodes`` with refits."""
    X, y = problem(seed=5)
    cv = KFold(3, shuffle=True, random_state=0)
    search = MMITCV(margins=[0.0, 0.1], cv=cv, scoring=scoring, monotonic_cst=MONOTONIC,
                    random_state=0).fit(X, y)
    results = search.cv_results_
    assert "param_ccp_alpha" not in results
    grids = [{"margin": [margin], "max_leaf_nodes": [int(k) for k in
              results["param_max_leaf_nodes"][results["param_margin"] == margin]]}
             for margin in (0.0, 0.1)]
    grid = GridSearchCV(MMIT(monotonic_cst=MONOTONIC, random_state=0), grids, cv=cv,
                        scoring=scoring).fit(X, y)
    order = np.lexsort((-grid.cv_results_["param_max_leaf_nodes"].astype(int),
                        grid.cv_results_["param_margin"].astype(float)))
    for key in ["mean_test_score"] + [f"split{k}_test_score" for k in range(3)]:
        np.testing.assert_array_equal(results[key], grid.cv_results_[key][order])
    for margin in (0.0, 0.1):
        counts = results["param_max_leaf_nodes"][results["param_margin"] == margin]
        assert counts[-1] == 2 and np.all(np.diff(counts) < 0)


def test_monotone_best_estimator_is_the_refit_tree():
    X, y = problem(seed=6)
    search = MMITCV(margins=[0.0, 0.05], cv=3, monotonic_cst=MONOTONIC,
                    random_state=0).fit(X, y)
    assert set(search.best_params_) == {"loss", "margin", "leaf_model", "leaf_shrinkage",
                                        "max_leaf_nodes"}
    refit = MMIT(monotonic_cst=MONOTONIC, random_state=0, **search.best_params_).fit(X, y)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    assert search.best_estimator_.get_params()["max_leaf_nodes"] == \
        search.best_params_["max_leaf_nodes"]
