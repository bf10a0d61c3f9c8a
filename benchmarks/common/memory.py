"""The resident memory of this process, as Linux reports it
(``/proc/self/status``): what every peak-memory probe of the benchmarks
reads (not ``ru_maxrss``, which a child inherits from its parent)."""

GB = 2**30


def resident_bytes(field="VmRSS"):
    """``VmRSS`` (the resident memory now) or ``VmHWM`` (its peak since the
    process started or the last :func:`reset_peak`), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def peak_bytes():
    """The peak resident memory since the process started or the last
    :func:`reset_peak`, in bytes."""
    return resident_bytes("VmHWM")


def reset_peak():
    """Make the peak resident memory the current one (``clear_refs`` 5)."""
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
