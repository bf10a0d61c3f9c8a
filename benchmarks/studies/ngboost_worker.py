"""NGBoost's predictive quantiles for ``uncertainty.py``, run in NGBoost's own
environment (see ``uncertainty.py``'s module doc): NGBoost pins an older
scikit-learn than mmit's, so the two do not share one. Imports numpy,
scipy and ngboost only, never mmit.

``python ngboost_worker.py IN.npz OUT.npz`` reads ``X``, ``y`` (exact
values), ``X_test``, ``levels`` and ``random_state`` from IN.npz, fits
``NGBRegressor(Dist=Normal, random_state=random_state)`` (default settings
otherwise; ``verbose=False`` only silences its log) and writes to OUT.npz
``quantiles`` (the predicted Normal's quantiles at ``levels`` for each row
of ``X_test``) and ``seconds`` (the fit's). ``python ngboost_worker.py
--version`` prints NGBoost's version.
"""

import sys
import time

import ngboost
import numpy as np
from ngboost.distns import Normal
from scipy import stats


def fitted_quantiles(X, y, X_test, levels, random_state):
    """The quantiles at ``levels`` of NGBoost's Normal for X_test, and the
    fit's seconds."""
    model = ngboost.NGBRegressor(Dist=Normal, random_state=random_state, verbose=False)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    params = model.pred_dist(X_test).params
    quantiles = stats.norm.ppf(levels, loc=params["loc"][:, None],
                               scale=params["scale"][:, None])
    return quantiles, seconds


def main():
    if sys.argv[1:] == ["--version"]:
        print(ngboost.__version__)
        return
    source, target = sys.argv[1:]
    with np.load(source) as data:
        quantiles, seconds = fitted_quantiles(data["X"], data["y"], data["X_test"],
                                              data["levels"], int(data["random_state"]))
    np.savez(target, quantiles=quantiles, seconds=seconds)


if __name__ == "__main__":
    main()
