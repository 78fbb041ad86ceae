"""``DaskPosterior``: the posterior of a fit whose rows live on a dask cluster.

The same record as :class:`~skbayes_sg.models.Posterior`, so every preprocessing step runs
unchanged: full-data passes (:meth:`row_sum`, hence ``full_grad``, ``potential``, Newton's
Hessians, diagonal curvatures, low-rank Hessian-vector products) are blockwise map-reduce -- one
task per chunk of rows evaluates the sum over its rows where the chunk lives, and the client adds
the per-chunk results in chunk order.  Row subsets (Newton's warm start, curvature pilots) are
gathered into an in-memory :class:`~skbayes_sg.models.Posterior`; minibatches arrive as
:class:`~skbayes_sg.dask.Batch` records from :class:`~skbayes_sg.dask.DaskIndex`.
"""

import functools
from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np

from ..models import GaussianPrior, Posterior
from ._gather import Batch, RowSource
from ._rows import DaskRows
from ._runner import Runner, distributed_client

__all__ = ["DaskPosterior"]


def _add(a, b):
    """``a + b`` for arrays, floats, None and tuples of them (elementwise)."""
    if isinstance(a, tuple):
        return tuple(_add(x, z) for x, z in zip(a, b))
    return None if a is None else a + b


def _on_chunk(X, y, model, prior, name, args, kwargs):
    """Worker side: ``Posterior.<name>(*args, **kwargs)`` on one dask chunk, in memory (its own
    row chunks of bounded memory; a memory-mapped chunk is read, not copied)."""
    chunk = Posterior(model, prior, np.asarray(X), np.asarray(y))
    return getattr(Posterior, name)(chunk, *args, **kwargs)


@dataclass(frozen=True, eq=False)
class DaskPosterior(Posterior):
    """``U(theta) = f_0(theta) + sum_i f_i(theta)`` on dask arrays ``X (n, d)``, ``y (n,)``.

    ``X`` has one chunk along the features and ``y`` the row chunks of ``X``; ``weight`` must be
    None (row multiplicities are not supported on dask input).  ``address`` is the scheduler's,
    for chains that run in processes without a client.
    """

    address: str = None
    # a subsample gathered from disk-backed rows costs more than the Hessian riding on a
    # map-reduce pass the mode search makes anyway
    cheap_subsets = False

    def __post_init__(self):
        if self.model.random_init:
            raise ValueError(f"{type(self.model).__name__} cannot be fitted on dask input: "
                             "use BayesianLogisticRegression or BayesianLinearRegression, or "
                             "in-memory data.")
        if self.address is None:
            client = distributed_client()
            if client is not None:
                object.__setattr__(self, "address", client.scheduler.address)
        if self.weight is not None:
            raise ValueError("Row weights (sample_weight, class_weight) are not supported with "
                             "dask input yet; fit without them or on in-memory data.")

    @property
    def source(self):
        """The :class:`RowSource` of ``X`` and ``y`` (built on first use)."""
        if "_source" not in self.__dict__:
            object.__setattr__(self, "_source", RowSource(self.X, self.y, self.address))
        return self.__dict__["_source"]

    def row_source(self, in_memory):
        """:class:`~skbayes_sg.dask.DaskRows` (``in_memory`` is not for these rows)."""
        return DaskRows(self)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_source", None)
        return state

    def chunks(self, width=1):
        raise ValueError("A DaskPosterior has no in-memory row chunks: use row_sum (map-reduce "
                         "over the dask chunks), rows or subset.")

    def _map_reduce(self, name, *args, **kwargs):
        """``Posterior.<name>`` as map-reduce: the method runs on every dask chunk where it
        lives -- the first chunk with the prior, the others with a zero prior, so the prior
        counts once -- and the client adds the per-chunk results in chunk order.  Valid for the
        methods that are sums over rows plus a prior term."""
        source, model = self.source, self.model
        zero = GaussianPrior(np.zeros(model.n_params))
        task = dask.delayed(_on_chunk, pure=False)
        parts = Runner(self.address).compute(
            [task(Xb, yb, model, self.prior if k == 0 else zero, name, args, kwargs)
             for k, (Xb, yb) in enumerate(zip(source.X_blocks, source.y_blocks))])
        return functools.reduce(_add, parts)

    def row_sum(self, fn, theta, width=1, native=False):
        """``sum over rows of fn(theta, X_chunk, y_chunk, None)``, map-reduce (``X_chunk`` in
        float64, or in ``X``'s precision with ``native``: :meth:`Posterior.row_sum`)."""
        return self._map_reduce("row_sum", fn, theta, width, native)

    def full_grad(self, theta):
        return self._map_reduce("full_grad", theta)

    def potential(self, theta):
        return self._map_reduce("potential", theta)

    def value_and_grad(self, theta):
        return self._map_reduce("value_and_grad", theta)

    def newton_terms(self, theta1, *args, **kwargs):
        return self._map_reduce("newton_terms", theta1, *args, **kwargs)

    def response_buffer(self):
        """None: the rows' responses stay on the workers (the gathers evaluate them with the
        minibatch rows, :class:`~skbayes_sg.dask.DaskRows`)."""
        return None

    def start(self):
        """``model.start`` from what it uses of ``y``: the class counts (classifiers, exact, as
        ``weight``), or two points with ``y``'s mean and variance (regression)."""
        y = self.y
        if self.model.is_regression:
            mean, sd = dask.compute(y.mean(), y.std())
            values, counts = np.array([mean - sd, mean + sd]), np.full(2, self.n_rows / 2.0)
        else:
            values, counts = dask.compute(*da.unique(y, return_counts=True))
        return self.model.start(None, values, np.asarray(counts, dtype=np.float64))

    def rows(self, idx):
        """``(X_B, y_B)`` of a :class:`Batch`, or of an index array (gathered now)."""
        if isinstance(idx, Batch) and idx.X is not None:
            return idx.X, idx.y
        got = self.source.gather(Runner(self.address), np.asarray(idx, dtype=np.intp))
        return got.X, got.y

    def subset(self, idx):
        """The rows ``idx``, gathered into an in-memory :class:`Posterior` whose multiplicities
        keep ``n_data``."""
        X, y = self.rows(idx)
        w = np.full(idx.size, self.n_data / idx.size)
        return Posterior(self.model, self.prior, X, y, w)
