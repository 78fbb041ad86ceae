"""The index sampler of a dask fit: the in-memory sampler's draws, rows gathered ahead.

Indices are drawn exactly as in memory -- the same :class:`~skbayes_sg.subsampling.BlockIndex`
blocks (``block_steps(k)`` steps) per chain from the chain's own Generator -- so a fit with the same
``random_state`` looks at the same rows.  The rows of a block are gathered in *pieces* of steps:
while the chains run on one piece, the next one is being gathered on the cluster.  Pieces start
at 8 steps (the step-size pilot uses 8) and double up to ``gather_rows`` rows, so the client holds
at most two pieces, ``O(gather_rows d)`` floats, plus the block's indices.
"""

import numpy as np

from ..subsampling import UniformIndex
from ._runner import Runner

__all__ = ["DaskIndex", "WeightTargets"]

_FIRST_PIECE = 8  # steps in the first gathered piece


class WeightTargets(UniformIndex):
    """Preferential draws as targets ``u * total`` on the cumulative weights.

    :class:`~skbayes_sg.subsampling.WeightedIndex` draws ``u`` uniform of shape ``(n_steps, b)``
    per chain and takes the first row whose cumulative weight exceeds ``u * total``; here the
    same ``u`` are drawn and the rows are resolved where the weights live (the gather).
    ``weight = inv_p / b`` and ``scale = 1``, as there.  ``source`` is the
    :class:`~skbayes_sg.dask.RowSource` that holds the weights (``RowSource.with_weights``).
    """

    def __init__(self, n_rows, batch_size, total, source=None):
        super().__init__(n_rows, batch_size)
        self.scale, self.total, self.source = 1.0, float(total), source

    def chain_block(self, rng, n_steps):
        return rng.random((n_steps, self.b)) * self.total


class DaskIndex:
    """Index-sampler protocol over a :class:`~skbayes_sg.dask.RowSource`.

    ``draw`` returns a :class:`~skbayes_sg.dask.Batch` (rows already gathered) where in-memory
    samplers return an index array; :class:`~skbayes_sg.dask.DaskPosterior` and the
    control-variate terms accept it.

    Parameters
    ----------
    source : RowSource
    inner : UniformIndex or WeightTargets
        Draws the indices (or weighted targets) in blocks, as in memory.
    anchor : tuple (model, mode) or None
        Gather the anchor responses of the rows too (GLM control variates).
    gather_rows : int
        Most rows gathered at once (all chains).
    """

    ragged = False

    def __init__(self, source, inner, anchor=None, *, gather_rows=1 << 16):
        self.source, self.inner, self.anchor = source, inner, anchor
        self.b, self.scale, self.n_block = inner.b, inner.scale, inner.n_block
        self.gather_rows = int(gather_rows)
        self.weighted = isinstance(inner, WeightTargets)

    def init(self, rngs, n_chains):
        """A :class:`_Stream` that starts gathering the first piece."""
        return _Stream(self, rngs, n_chains)

    def draw(self, rngs, theta, state):
        """``(Batch, weight (C, b) or None, state)``; ``theta`` is unused."""
        return state.next()


class _Stream:
    """Per-run state of a :class:`DaskIndex`: the current block, the piece in use, the piece
    being gathered (mutable; the sampling loop threads it through unchanged)."""

    def __init__(self, index, rngs, n_chains):
        self.index, self.rngs = index, tuple(rngs)
        self.runner = Runner(index.source.address)
        self.max_steps = max(1, index.gather_rows // max(1, n_chains * index.b))
        self.size = min(_FIRST_PIECE, self.max_steps)
        self.blocks = 0  # blocks drawn so far (they grow as in memory)
        self.block, self.start = self._refill(), 0
        self.pending, self.piece, self.t = self._request(), None, 0

    def _refill(self):
        """The next ``(T, C, b)`` block, filled chain by chain (no stacked copy)."""
        block, inner = None, self.index.inner
        n_steps, self.blocks = inner.block_steps(self.blocks), self.blocks + 1
        for c, rng in enumerate(self.rngs):
            part = inner.chain_block(rng, n_steps)
            if block is None:
                block = np.empty((part.shape[0], len(self.rngs), *part.shape[1:]), part.dtype)
            block[:, c] = part
        return block

    def _request(self):
        if self.start == self.block.shape[0]:
            self.block, self.start = self._refill(), 0
        stop = min(self.start + self.size, self.block.shape[0])
        keys, self.start = self.block[self.start:stop], stop
        self.size = min(2 * self.size, self.max_steps)
        return self.index.source.submit(self.runner, keys, self.index.anchor)

    def next(self):
        """The next step's ``(Batch, weight, self)``."""
        if self.piece is None or self.t == self.piece.idx.shape[0]:
            self.piece = self.index.source.collect(self.runner, self.pending)
            self.pending, self.t = self._request(), 0  # prefetch while this piece is used
        t, self.t = self.t, self.t + 1
        w = None
        if self.index.weighted:
            w = self.piece.inv_p[t] / self.index.b
        return self.piece.batch(t), w, self
