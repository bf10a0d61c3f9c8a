"""The BLAS threads of the solvers that make many small BLAS calls."""

from threadpoolctl import threadpool_limits


def single_threaded_blas():
    """A context in which BLAS runs on one thread: the linear and additive
    solvers' BLAS calls are small (rank-k updates, Gram matrices of a few
    columns, vector operations), so a second BLAS thread costs more than it
    gives, and folds may already run in parallel threads. Set around a
    whole fit, not in the fold threads (the limit is the process's)."""
    return threadpool_limits(limits=1, user_api="blas")
