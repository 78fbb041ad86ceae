"""Rows of a dask array, gathered by index: one task per chunk that holds requested rows.

A gather never builds a graph over the whole array: for each chunk it needs, one task takes the
requested rows out of the chunk where the chunk lives (``X[local]``, which reads only those rows
of a memory-mapped ``.npy`` chunk) and, for control variates, evaluates the anchor responses of
those rows at the mode there, so no per-row vector of length ``N`` is ever held on the client.
Rows come back in the requested order.  Preferential (weighted) draws are *targets* on the
cumulative weights; each chunk resolves its own targets (``searchsorted`` on its local cumulative
sum), so the weights stay on the workers too.
"""

import dask
import numpy as np

from ..models import as_float64

__all__ = ["Batch", "Gathered", "RowSource"]


class Batch(np.ndarray):
    """One step's global row indices ``(C, b)`` carrying their gathered rows.

    An integer array (what the in-memory index samplers return, so the gradient estimator can
    index, reshape and count it as usual) with attributes ``X (C, b, d)``, ``y (C, b)`` and ``r``
    (anchor responses ``(C, b[, K])`` or None); indexing its leading axes indexes them too.
    :meth:`DaskPosterior.rows` returns ``(X, y)`` and the control-variate terms read ``r``.
    """

    def __new__(cls, X, y, r, idx):
        out = np.asarray(idx).view(cls)
        out.X, out.y, out.r = X, y, r
        return out

    def __array_finalize__(self, obj):
        self.X, self.y, self.r = (getattr(obj, k, None) for k in ("X", "y", "r"))

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if isinstance(out, Batch) and self.X is not None:
            out.X, out.y = self.X[key], self.y[key]
            out.r = None if self.r is None else self.r[key]
        return out

    def __reduce__(self):  # pickled as the plain index array
        return np.asarray(self).__reduce__()


def _responses(anchor, X, y):
    """Anchor responses ``r_i(mode)`` of the rows (None without an anchor)."""
    if anchor is None:
        return None
    model, mode, dtype = anchor
    return np.ascontiguousarray(model.response(mode[None], as_float64(X), y)[0], dtype=dtype)


def _take(X, y, local, anchor):
    """Worker side: rows ``local`` of one chunk, ``(X, y, r, local, None)``."""
    Xr, yr = np.asarray(X[local]), np.asarray(y[local])
    return Xr, yr, _responses(anchor, Xr, yr), local, None


def _take_weighted(X, y, p, cdf, targets, total, anchor):
    """Worker side: the rows whose local cumulative weight first exceeds ``targets``.

    Returns ``(X, y, r, local, total / p)``: ``total / p_i`` is the in-memory sampler's
    ``1 / P(row i)`` (:class:`~skbayes_sg.subsampling.WeightedIndex`).
    """
    local = np.minimum(np.searchsorted(cdf, targets, side="right"), cdf.size - 1)
    Xr, yr = np.asarray(X[local]), np.asarray(y[local])
    return Xr, yr, _responses(anchor, Xr, yr), local, total / p[local]


class RowSource:
    """The chunks of ``X`` and ``y`` as task handles (picklable; holds no client).

    Parameters
    ----------
    X : dask array of shape (n_rows, d), one chunk along the features
    y : dask array of shape (n_rows,), chunked like the rows of ``X``
    address : str, optional
        Scheduler address, for chains run in processes without a client.
    """

    def __init__(self, X, y, address=None):
        self.offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.intp)
        self.X_blocks = list(X.to_delayed().ravel())
        self.y_blocks = list(y.to_delayed().ravel())
        self.d, self.dtype, self.address = X.shape[1], X.dtype, address
        self.weights = None  # (p blocks, cdf blocks, chunk starts, chunk ends, total)

    @property
    def n_rows(self):
        """Rows of the array."""
        return int(self.offsets[-1])

    def with_weights(self, p, cdf):
        """A copy that draws rows by the persisted weights ``p`` (their chunks' cumulative sums
        ``cdf``, chunked like the rows)."""
        ends = np.cumsum(np.concatenate(dask.compute(*[b[-1:] for b in cdf.to_delayed()])))
        out = RowSource.__new__(RowSource)
        out.__dict__.update(self.__dict__)
        out.persisted = (p, cdf)  # keeps their futures, hence the data on the workers, alive
        out.weights = (list(p.to_delayed()), list(cdf.to_delayed()),
                       np.concatenate([[0.0], ends[:-1]]), ends, float(ends[-1]))
        return out

    def _chunks_of(self, flat):
        """The chunk of every global index (ints) or weighted target (floats)."""
        if self.weights is None:
            return np.searchsorted(self.offsets, flat, side="right") - 1
        return np.minimum(np.searchsorted(self.weights[3], flat, side="right"),
                          len(self.X_blocks) - 1)

    def submit(self, runner, keys, anchor=None):
        """Start gathering the rows of global indices (ints) or weighted targets (floats)
        ``keys``; returns a handle for :meth:`collect`.  ``anchor = (model, mode, dtype)`` adds
        the rows' anchor responses (``dtype``: that of the minibatch arithmetic)."""
        flat = keys.ravel()
        chunk = self._chunks_of(flat)
        order = np.argsort(chunk, kind="stable")
        bounds = np.searchsorted(chunk[order], np.arange(len(self.X_blocks) + 1))
        used = np.flatnonzero(bounds[1:] > bounds[:-1])
        spans = [order[bounds[k]:bounds[k + 1]] for k in used]
        tasks = [self._task(k, flat[at], anchor) for k, at in zip(used, spans)]
        return runner.submit(tasks), spans, self.offsets[used], keys.shape

    def _task(self, k, keys, anchor):
        if self.weights is None:
            return dask.delayed(_take, pure=False)(self.X_blocks[k], self.y_blocks[k],
                                                   keys - self.offsets[k], anchor)
        p, cdf, starts, _, total = self.weights
        return dask.delayed(_take_weighted, pure=False)(
            self.X_blocks[k], self.y_blocks[k], p[k], cdf[k], keys - starts[k], total, anchor)

    def collect(self, runner, handle):
        """The :class:`Gathered` rows of a :meth:`submit`, in the layout of its ``keys``."""
        futures, spans, offsets, shape = handle
        out = None
        for part, at, offset in zip(runner.result(futures), spans, offsets):
            out = Gathered.like(part, shape) if out is None else out
            out.put(at, part, offset)
        return out.reshaped()

    def gather(self, runner, keys, anchor=None):
        """:meth:`collect` of :meth:`submit` (synchronous)."""
        return self.collect(runner, self.submit(runner, keys, anchor))


class Gathered:
    """Gathered rows in the layout of the request: ``X (*shape, d)``, ``y``, ``r`` (anchor
    responses or None), ``idx`` (global rows) and ``inv_p`` (``1 / P(row)`` of weighted draws,
    or None), each shaped like the request (plus trailing axes).  Filled part by part, so the
    rows are copied once from what the workers sent."""

    fields = ("X", "y", "r", "idx", "inv_p")

    @classmethod
    def like(cls, part, shape):
        """Empty arrays for ``prod(shape)`` rows, typed like a task's ``part``."""
        out, n = cls(), int(np.prod(shape))
        out.shape = tuple(shape)
        for name, a in zip(cls.fields, part):
            setattr(out, name, None if a is None else np.empty((n, *a.shape[1:]), a.dtype))
        return out

    def put(self, at, part, offset):
        """Rows of one task at the request positions ``at`` (local indices made global)."""
        for name, a in zip(self.fields, part):
            if a is not None:
                getattr(self, name)[at] = a + offset if name == "idx" else a

    def reshaped(self):
        """The filled arrays in the request's layout (``self``)."""
        for name in self.fields:
            a = getattr(self, name)
            if a is not None:
                setattr(self, name, a.reshape(*self.shape, *a.shape[1:]))
        return self

    def batch(self, t):
        """The :class:`Batch` of step ``t`` (views)."""
        return Batch(self.X[t], self.y[t], None if self.r is None else self.r[t], self.idx[t])
