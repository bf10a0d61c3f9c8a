"""Timing helpers shared by the benchmark scripts."""

import json
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

HELPERS_DIR = Path(__file__).resolve().parent  # the shared helpers, imported by name


# Runs in a fresh process: the setup code, then the fit code, and prints the
# peak resident memory since exec over the resident memory before the fit,
# in MB (memory.py).
MEMORY_PROBE = """
import json, sys
sys.path[0:0] = {paths!r}
from memory import peak_bytes, resident_bytes

{setup}
before = resident_bytes()
{fit}
print(json.dumps((peak_bytes() - before) / 2**20))
"""


def peak_fit_memory_mb(setup, fit):
    """Peak memory of running ``fit`` after ``setup`` (Python source, run with
    the helpers and the running script's folder on its import path), in a
    process of its own: MB above the resident memory before the fit."""
    paths = [str(HELPERS_DIR), str(Path(sys.argv[0]).resolve().parent)]
    script = MEMORY_PROBE.format(paths=paths, setup=setup, fit=fit)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, check=True)
    return json.loads(result.stdout)


def xgboost_available(left_out):
    """Whether xgboost imports; if not, says on stderr that its ``left_out``
    (e.g. "columns") are left out."""
    try:
        import xgboost  # noqa: F401
    except ImportError:
        print(f"xgboost is not installed: its {left_out} are left out", file=sys.stderr)
        return False
    return True


#: At most this many pairs of fits per case (:func:`paired_seconds`).
MAX_PAIRS = 25


def add_pair_arguments(parser, min_seconds=10.0):
    """The options of a bench that times fits in pairs (:func:`paired_seconds`):
    ``--pairs`` (at least 5) and ``--min-seconds``."""
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--min-seconds", type=float, default=min_seconds,
                        help="time pairs of fits until they took this long")


def paired_ratios(mine, theirs):
    """The median of the pairs' ratios and their range, as a table prints them."""
    ratios = mine / theirs
    return f"{np.median(ratios):.2f}", f"{ratios.min():.2f}-{ratios.max():.2f}"


def seconds_of(fit):
    """The wall seconds of calling ``fit()``."""
    start = time.perf_counter()
    fit()
    return time.perf_counter() - start


def paired_seconds(fit_a, fit_b, repeats, min_seconds):
    """The seconds of ``fit_a`` and ``fit_b`` timed in turn: at least
    ``repeats`` pairs, more until the pairs took ``min_seconds`` (at most
    MAX_PAIRS). Returns the arrays of seconds of each."""
    pairs, start = [], time.perf_counter()
    while len(pairs) < repeats or (time.perf_counter() - start < min_seconds
                                   and len(pairs) < MAX_PAIRS):
        pairs.append((seconds_of(fit_a), seconds_of(fit_b)))
    return np.array(pairs).T


def interleaved_medians(functions, repeats):
    """Median seconds of each function, timed in turn within every repeat.

    Interleaving makes ratios between the functions robust to the machine's
    speed drifting during the run.
    """
    times = [[] for _ in functions]
    for _ in range(repeats):
        for function, samples in zip(functions, times, strict=True):
            start = time.perf_counter()
            function()
            samples.append(time.perf_counter() - start)
    return [float(np.median(samples)) for samples in times]


# Runs in a process that imports mmit from another checkout. Each request is
# one JSON line: {"data": [n, p, missing]} makes speed_data.benchmark_data(n,
# p, missing) the data to fit; {"estimator": name, "params": {...}} fits on it;
# {"explain": k} computes the SHAP values of the last fit's first k rows.
# Every request is answered with the path of the mmit module, once done.
BASELINE_WORKER = """
import json, sys
import mmit
from speed_data import benchmark_data
data = model = None
print(json.dumps(mmit.__file__), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if "data" in request:
        data = benchmark_data(*request["data"])
    elif "explain" in request:
        mmit.shap_values(model, data[0][:request["explain"]])
    else:
        model = getattr(mmit, request["estimator"])(**request["params"]).fit(*data)
    print(json.dumps(mmit.__file__), flush=True)
"""


class BaselineProcess:
    """Another checkout of mmit (e.g. the previous main, built in place),
    fitting in a process of its own so that its fits can be interleaved with
    this checkout's in :func:`interleaved_medians`.

    Only the fit is timed (the process is started and the data made before);
    the pipe adds well under a millisecond.
    """

    def __init__(self, checkout):
        checkout = Path(checkout).resolve()
        if not (checkout / "mmit" / "__init__.py").is_file():
            raise SystemExit(f"--baseline {checkout}: no mmit package there")
        path = os.pathsep.join([str(checkout), str(HELPERS_DIR)])
        env = dict(os.environ, PYTHONPATH=path)
        self.process = subprocess.Popen([sys.executable, "-c", BASELINE_WORKER],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env, cwd=HELPERS_DIR)
        self.checkout = checkout
        self._answer()

    def _request(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        self._answer()

    def _answer(self):
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the baseline process of {self.checkout} died")
        module = Path(json.loads(answer))
        if self.checkout not in module.parents:
            raise RuntimeError(f"the baseline process imported {module}")

    def fitter(self, data_key, estimator, params):
        """A function fitting ``estimator(**params)`` on
        ``benchmark_data(*data_key)``, which it makes now."""
        self._request({"data": list(data_key)})
        return partial(self._request, {"estimator": estimator, "params": params})

    def explainer(self, data_key, estimator, params, n_rows):
        """A function computing the SHAP values of the first ``n_rows`` rows
        of ``benchmark_data(*data_key)`` by ``estimator(**params)``, which it
        fits now."""
        self.fitter(data_key, estimator, params)()
        return partial(self._request, {"explain": n_rows})

    def close(self):
        self.process.stdin.close()
        self.process.wait()
