"""IntervalPRIM: a planted box found, every peel the best admissible one
(against an enumeration of the peels valued by the brute-force minimum),
box values the loss's optimum, covering, low boxes, categorical levels and
bad input."""

import numpy as np
import pytest
from brute_force import conventional_minimiser, minimum, objective
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from mmit.inspection import IntervalPRIM


def planted(seed, n=3000, censored=0.2):
    """Rows on [0, 1]^3 whose values are 3 in the box x0 > 0.6, x1 < 0.3 and
    0 elsewhere; intervals of width 1, some bounds censored."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    center = np.where((X[:, 0] > 0.6) & (X[:, 1] < 0.3), 3.0, 0.0)
    center += 0.3 * rng.normal(size=n)
    y = np.column_stack([center - 0.5, center + 0.5])
    y[rng.random(n) < censored, 1] = np.inf
    y[rng.random(n) < censored / 2, 0] = -np.inf
    return X, y


def rows_of(limits, X, categories=None):
    """The rows inside a box given by its restricted limits (``boxes_`` form)."""
    inside = np.ones(X.shape[0], dtype=bool)
    for j, limit in limits.items():
        if isinstance(limit, tuple):
            inside &= (X[:, j] >= limit[0]) & (X[:, j] <= limit[1])
        else:
            inside &= np.isin(X[:, j], [categories[j].index(label) for label in limit])
    return inside


def box_value(y, weight, rows):
    """The optimal constant of the rows, by the brute-force minimum (the
    conventional point of a flat one)."""
    _, left, right = minimum(y[rows, 0], y[rows, 1], 0.0, "squared_hinge", weight[rows])
    return conventional_minimiser(left, right)


def assert_optimal(value, y, weight, rows):
    """``value`` attains the least squared hinge loss of the rows."""
    best = minimum(y[rows, 0], y[rows, 1], 0.0, "squared_hinge", weight[rows])[0]
    attained = objective(value, y[rows, 0], y[rows, 1], 0.0, "squared_hinge", weight[rows])
    assert attained == pytest.approx(best, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_planted_box_is_found_within_one_peel_step(seed):
    X, y = planted(seed)
    prim = IntervalPRIM(random_state=0).fit(X, y)
    box = prim.boxes_[0]
    # one peel removes 5% of the box's rows: at most 0.05 of a feature's range
    assert box[0][0] == pytest.approx(0.6, abs=0.05)
    assert box[1][1] == pytest.approx(0.3, abs=0.05)
    # the box's other limits (a noise feature's, the planted ones' other
    # sides) leave most of the range: peels of the noise the validation rows
    # could not tell apart
    kept = [min(high, 1.0) - max(low, 0.0) for low, high in box.values()]
    assert kept[0] > 0.3 and kept[1] > 0.2 and all(k > 0.8 for k in kept[2:])
    assert box.get(0, (0, np.inf))[1] > 0.95 and box.get(1, (-np.inf, 0))[0] < 0.05
    assert prim.box_values_[0] == pytest.approx(3.0, abs=0.2)
    assert np.array_equal(prim.apply(X) == 0, rows_of(box, X))


def admissible_peels(X, weight, inside, alpha, least_weight):
    """Every admissible peel of the box of rows ``inside``, enumerated
    directly: per feature, the rows up to the value where the weight from
    below (or above) reaches ``alpha`` of the box's go, ties together."""
    box_weight = weight[inside].sum()
    for j in range(X.shape[1]):
        values = X[inside, j]
        order = np.argsort(values, kind="stable")
        for side in (order, order[::-1]):
            cumulative = np.cumsum(weight[inside][side])
            cut = values[side][np.searchsorted(cumulative, alpha * box_weight)]
            removed = inside & ((X[:, j] <= cut) if side is order else (X[:, j] >= cut))
            kept = inside & ~removed
            if removed.any() and weight[kept].sum() >= least_weight:
                yield kept


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), low=st.booleans())
def test_each_peel_is_the_best_admissible_peel(seed, low):
    rng = np.random.default_rng(seed)
    n = 40
    X = np.round(rng.uniform(0, 1, size=(n, 2)), 1)  # ties
    center = X[:, 0] - X[:, 1] + rng.normal(size=n)
    y = np.column_stack([center - rng.uniform(0, 1, n), center + rng.uniform(0, 1, n)])
    y[rng.random(n) < 0.2, 1] = np.inf
    weight = rng.uniform(0.5, 2.0, n)
    prim = IntervalPRIM(peel_alpha=0.1, mass_min=0.2, paste_alpha=0.0,
                        validation_fraction=0.0,
                        threshold_type="low" if low else "high")
    prim.fit(X, y, sample_weight=weight)
    sign = -1.0 if low else 1.0
    trajectory = prim.peeling_trajectory_
    for i in range(trajectory.value.size - 1):
        inside = rows_of(prim.inspect(i).limits, X)
        values = [box_value(y, weight, kept) for kept in
                  admissible_peels(X, weight, inside, 0.1, 0.2 * weight.sum())]
        best = max(sign * value for value in values)
        assert sign * trajectory.value[i + 1] == pytest.approx(best, rel=1e-5, abs=1e-8)
        assert_optimal(trajectory.value[i + 1], y, weight,
                       rows_of(prim.inspect(i + 1).limits, X))
    # the last box has no admissible peel left that keeps mass_min
    inside = rows_of(prim.inspect(trajectory.value.size - 1).limits, X)
    assert not list(admissible_peels(X, weight, inside, 0.1, 0.2 * weight.sum()))


def test_box_values_are_the_solvers_optimum_on_their_rows():
    X, y = planted(2, n=600)
    weight = np.random.default_rng(2).uniform(0.5, 2.0, 600)
    prim = IntervalPRIM(max_boxes=2, validation_fraction=0.0)
    prim.fit(X, y, sample_weight=weight)
    assert_optimal(prim.threshold_, y, weight, np.ones(600, dtype=bool))
    assert len(prim.boxes_) == 2
    for k in range(len(prim.boxes_)):
        rows = prim.apply(X) == k  # inside box k, outside the boxes before it
        assert_optimal(prim.box_values_[k], y, weight, rows)
        assert prim.inspect(int(prim.chosen_[k])).n_rows == rows.sum()
    trajectory = prim.peeling_trajectory_
    assert trajectory.mass[0] == pytest.approx(1.0)
    assert np.all(np.diff(trajectory.n_rows[trajectory.box == 0]) != 0)


def test_covering_finds_a_second_box_outside_the_first():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(4000, 2))
    center = np.where(X[:, 0] > 0.8, 4.0, np.where(X[:, 1] > 0.8, 2.0, 0.0))
    y = np.column_stack([center - 0.5, center + 0.5])
    prim = IntervalPRIM(max_boxes=3, random_state=0).fit(X, y)
    assert len(prim.boxes_) >= 2
    first, second = prim.boxes_[:2]
    assert set(first) == {0} and first[0][0] == pytest.approx(0.8, abs=0.05)
    assert 1 in second and second[1][0] == pytest.approx(0.8, abs=0.05)
    assert prim.box_values_[0] > prim.box_values_[1] > prim.threshold_
    assert np.all(np.diff(prim.box_values_) < 0)


def test_low_boxes_and_categorical_levels():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    n = 3000
    site = rng.choice(["a", "b", "c", "d"], n)
    x = rng.uniform(0, 1, n)
    center = np.where((site == "c") & (x < 0.5), -3.0, 0.0) + 0.2 * rng.normal(size=n)
    frame = pd.DataFrame({"site": pd.Categorical(site), "x": x})
    y = np.column_stack([center - 0.5, center + 0.5])
    prim = IntervalPRIM(threshold_type="low", random_state=0).fit(frame, y)
    box = prim.boxes_[0]
    assert box["site"] == ["c"]
    assert box["x"][1] == pytest.approx(0.5, abs=0.05)
    # (the rows of one peel step past x = 0.5, at 0, pull the value up)
    assert -3.1 < prim.box_values_[0] < -2.5 < prim.threshold_
    assert "site: ['c']" in prim.inspect().text


def test_the_trajectory_plot_and_the_box_plot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from mmit.plot import plot_prim_box, plot_prim_trajectory

    X, y = planted(5, n=800)
    prim = IntervalPRIM(random_state=0).fit(X, y)
    ax = plot_prim_trajectory(prim)
    assert ax.get_xlabel() == "mass" and len(ax.collections) >= 1
    ax = plot_prim_box(prim)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert labels == [str(feature) for feature in prim.boxes_[0]]


def test_bad_input_gets_a_clear_error():
    X, y = planted(6, n=200)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        IntervalPRIM().fit(X_nan, y)
    with pytest.raises(ValueError, match="peel_alpha"):
        IntervalPRIM(peel_alpha=0.7).fit(X, y)
    with pytest.raises(ValueError, match="threshold_type"):
        IntervalPRIM(threshold_type="middle").fit(X, y)
    prim = IntervalPRIM(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="index the trajectory"):
        prim.inspect(10_000)
    with pytest.raises(ValueError, match="features"):
        prim.apply(X[:, :2])
    with pytest.raises(ValueError, match="requires y"):
        IntervalPRIM().fit(X, None)


@parametrize_with_checks([IntervalPRIM(random_state=0)])
def test_scikit_learn_conventions(estimator, check):
    check(estimator)
