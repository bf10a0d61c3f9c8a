"""MMITForest versus scikit-learn's RandomForestRegressor: time and memory.

scikit-learn's forest is fitted on the Interval-CART transform of the same
data (one row per finite bound, see bench_tree.py), with the same
n_estimators, max_features and n_jobs. For n = 1e3 ... 1e5 samples and
p = 20 features it prints:

- fit and predict time with n_jobs=2 (median of repeats, the two forests
  timed in turn) and their ratio;
- the speed-up of fitting with n_jobs=2 over n_jobs=1, for both;
- the peak memory of each fit: peak resident memory (VmHWM) over the
  resident memory before the fit, each measured in a fresh process (not
  ru_maxrss, which a child inherits from its parent's image).

Usage: python benchmarks/bench_forest.py [--max-n 1e5] [--trees 100] [--repeats 3]
"""

import argparse
import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tree import MARGIN, interval_cart_data, interval_data  # noqa: E402
from timing import interleaved_medians  # noqa: E402

from mmit import MMITForest  # noqa: E402

MEMORY_PROBE = """
import json, sys
sys.path.insert(0, {bench_dir!r})
import numpy as np
from bench_tree import MARGIN, interval_cart_data, interval_data
from sklearn.ensemble import RandomForestRegressor
from mmit import MMITForest

def status_kib(field):  # VmRSS: resident now; VmHWM: peak since exec
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))

X, y = interval_data({n}, np.random.default_rng(0))
if {which!r} == "mmit":
    model, args = MMITForest({trees}, margin=MARGIN, n_jobs=2, random_state=0), (X, y)
else:
    model = RandomForestRegressor({trees}, max_features="sqrt", n_jobs=2, random_state=0)
    args = interval_cart_data(X, y, MARGIN)
before = status_kib("VmRSS")
model.fit(*args)
print(json.dumps((status_kib("VmHWM") - before) / 1024))
"""


def peak_fit_memory_mb(which, n, trees):
    script = MEMORY_PROBE.format(bench_dir=str(Path(__file__).resolve().parent), n=n,
                                 trees=trees, which=which)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, check=True)
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e5)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    sizes = [int(10**k) for k in range(3, 6) if 10**k <= args.max_n]

    print(f"{'n':>7} {'mmit fit s':>10} {'sk fit s':>8} {'ratio':>5} {'mmit pred ms':>12} "
          f"{'sk pred ms':>10} {'ratio':>5} {'mmit 2j/1j':>10} {'sk 2j/1j':>8} "
          f"{'mmit MB':>8} {'sk MB':>7} {'ratio':>5}")
    for n in sizes:
        X, y = interval_data(n, rng)
        X_rows, targets = interval_cart_data(X, y, MARGIN)
        repeats = args.repeats if n < 10**5 else 1
        forests = {}
        for n_jobs in (1, 2):
            forests[n_jobs] = (
                MMITForest(args.trees, margin=MARGIN, n_jobs=n_jobs, random_state=0),
                RandomForestRegressor(args.trees, max_features="sqrt", n_jobs=n_jobs,
                                      random_state=0),
            )
        fit_times = {}
        for n_jobs, (mmit, cart) in forests.items():
            fit_times[n_jobs] = interleaved_medians(
                [partial(mmit.fit, X, y), partial(cart.fit, X_rows, targets)], repeats)
        mmit, cart = forests[2]
        predict_mmit, predict_cart = interleaved_medians(
            [partial(mmit.predict, X), partial(cart.predict, X)], max(3, repeats))
        memory_mmit = peak_fit_memory_mb("mmit", n, args.trees)
        memory_cart = peak_fit_memory_mb("sklearn", n, args.trees)
        (fit_mmit_1, fit_cart_1), (fit_mmit, fit_cart) = fit_times[1], fit_times[2]
        print(f"{n:>7.0e} {fit_mmit:>10.2f} {fit_cart:>8.2f} {fit_mmit / fit_cart:>5.2f} "
              f"{1e3 * predict_mmit:>12.1f} {1e3 * predict_cart:>10.1f} "
              f"{predict_mmit / predict_cart:>5.2f} {fit_mmit_1 / fit_mmit:>10.2f} "
              f"{fit_cart_1 / fit_cart:>8.2f} {memory_mmit:>8.1f} {memory_cart:>7.1f} "
              f"{memory_mmit / memory_cart:>5.2f}", flush=True)


if __name__ == "__main__":
    main()
