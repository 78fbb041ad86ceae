"""Where dask work runs: the distributed client when there is one, else a local thread.

Nothing here is stored on a picklable object: a :class:`Runner` is made where the work is
submitted (the client, or the worker that runs a chain group under joblib's dask backend), so
estimators, posteriors and index samplers pickle without a client.
"""

from concurrent.futures import ThreadPoolExecutor

import dask

__all__ = ["Runner", "distributed_client"]


def distributed_client(address=None):
    """The active ``distributed`` client, or None (no ``distributed``, no client).

    Inside a task on a worker (chains run by joblib's dask backend) the task first *secedes* from
    the worker's thread pool, so the gathers it waits for can run on that worker's thread.  With
    no active client but a scheduler ``address`` (chains in a joblib process of another backend),
    a client to that scheduler is opened.  Whether the thread has seceded is distributed's own
    per-thread state (``thread_state.proceed``), so nothing is kept here.
    """
    try:
        from distributed import Client, get_client, get_worker, secede
        from distributed.threadpoolexecutor import thread_state
    except ImportError:  # pragma: no cover - the dask extra installs distributed
        return None
    try:
        client = get_client()
    except ValueError:
        return Client(address, set_as_default=False) if address else None
    try:
        get_worker()
    except ValueError:
        return client
    if getattr(thread_state, "proceed", True):
        secede()
    return client


class Runner:
    """Submit dask task lists and collect their results, in order.

    ``submit(tasks)`` returns at once (futures on the cluster, or a background thread running the
    local scheduler), so a gather can run while the previous block of steps is sampled.
    """

    def __init__(self, address=None):
        self.client = distributed_client(address)
        self._pool = None

    def submit(self, tasks):
        """Start computing ``tasks`` (a list of dask.delayed objects); returns a handle."""
        if self.client is not None:
            return self.client.compute(list(tasks))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1)
        return self._pool.submit(dask.compute, *tasks)

    def result(self, handle):
        """The results of a :meth:`submit`, as a list in task order."""
        if self.client is not None:
            return self.client.gather(handle)
        return list(handle.result())

    def compute(self, tasks):
        """``result(submit(tasks))``."""
        return self.result(self.submit(tasks))
