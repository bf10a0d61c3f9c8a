# When per-row work is shared between threads (OpenMP ``prange``): from
# about a millisecond of it. Below, a parallel region saves little, and on an
# oversubscribed machine a region can wait a scheduler quantum for its other
# thread, which costs a small booster many times its work.

from ._typedefs cimport intp_t

cdef enum:
    PARALLEL_MIN_ROWS = 1 << 15     # rows of simple per-row work
    PARALLEL_MIN_WORK = 1 << 18     # rows times features of histogram sums


cdef inline int threads_for(intp_t work, intp_t minimum, int n_threads) noexcept nogil:
    """The threads for ``work`` units: ``n_threads`` (at least 1) from
    ``minimum`` units, else 1."""
    return n_threads if n_threads > 1 and work >= minimum else 1
