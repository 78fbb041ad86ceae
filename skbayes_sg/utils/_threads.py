"""The threads BLAS may use now, for numpy work split over Python threads.

Small products and sorts gain nothing from BLAS's own threads, but independent pieces of work
(row blocks of a prediction, column blocks of a diagnostic) run well in parallel Python threads
(numpy releases the GIL in its loops).  How many: as many as BLAS was allowed here -- its own
limit, so ``threadpool_limits`` and joblib's per-worker limits hold.
"""

from functools import cache

from threadpoolctl import ThreadpoolController

__all__ = ["blas_controller", "blas_threads", "one_blas_thread"]


@cache
def blas_controller():
    """The controller of the loaded libraries, made on first use (finding the libraries has a
    cost; it is a handle on the process's libraries, the same for every fit)."""
    return ThreadpoolController()


def blas_threads():
    """Threads BLAS may use now (the smallest limit over the loaded BLAS libraries; 1 if none)."""
    info = blas_controller().select(user_api="blas").info()
    return int(min([lib["num_threads"] for lib in info] or [1]))


def one_blas_thread():
    """Context limiting BLAS to one thread (for work split over Python threads)."""
    return blas_controller().limit(limits=1, user_api="blas")
