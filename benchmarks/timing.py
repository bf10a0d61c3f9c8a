"""Timing helper shared by the benchmark scripts."""

import time

import numpy as np


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
