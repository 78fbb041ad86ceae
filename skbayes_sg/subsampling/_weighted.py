"""Weighted draws with replacement: the inverse-CDF index sampler of preferential subsampling.

:func:`weight_tables` builds, once per weights, what :class:`WeightedIndex` draws from; the
in-memory row source (:class:`~skbayes_sg.subsampling.InMemoryRows`) keeps them for a fit.
"""

from typing import NamedTuple

import numpy as np

from ._index import AllRows, BlockIndex

__all__ = ["WeightTables", "WeightedIndex", "weight_tables", "weighted_index"]


def weighted_index(p, batch_size, tables=None):
    """:class:`WeightedIndex`, or :class:`AllRows` once ``batch_size >= len(p)``.

    With replacement, ``b >= N`` importance draws cost as much as the exact sum over the rows and
    stay noisy (no finite-population correction); on a small, nearly separable set this held
    ``batch_size="auto"``'s step at a tenth of the exact-sum step.
    """
    return AllRows(len(p)) if batch_size >= len(p) else WeightedIndex(p, batch_size, tables)


class WeightedIndex(BlockIndex):
    """``b`` rows drawn with replacement from ``p``, in pre-drawn blocks.

    Draws use the inverse CDF with a guide table (Chen and Asau's indexed search: the uniform's
    bucket ``floor(u N)`` gives a first candidate, then a few vectorised forward steps; identical
    to ``searchsorted`` and several times faster).  ``weight_i = 1 / (b p_i)`` and ``scale = 1``,
    so ``sum_B weight_i ∇f_i`` is unbiased for ``sum_i ∇f_i``.
    """

    def __init__(self, probabilities, batch_size, tables=None):
        p = np.asarray(probabilities, dtype=np.float64)
        super().__init__(p.size, batch_size)
        self.cdf, self.total, self.p, self.guide = tables or weight_tables(p)

    def sample(self, rng, size):
        """Row indices of shape ``size`` drawn i.i.d. from ``p``."""
        u = rng.random(size).ravel()
        idx = self.guide[(u * self.n_rows).astype(np.intp)].astype(np.intp)
        u *= self.total
        move = np.flatnonzero(self.cdf[idx] <= u)
        while move.size:
            idx[move] += 1
            move = move[self.cdf[idx[move]] <= u[move]]
        return np.minimum(idx, self.n_rows - 1, out=idx).reshape(size)

    def chain_block(self, rng, n_steps):
        return self.sample(rng, (n_steps, self.b))

    def inverse(self, idx):
        """``1 / P(row i)`` of the rows ``idx`` (a fresh array)."""
        return np.divide(self.total, self.p[idx])

    def block_weights(self, idx):
        w = self.inverse(idx)
        w /= self.b
        return w


class WeightTables(NamedTuple):
    """What :class:`WeightedIndex` draws from: ``cdf`` (with an ``inf`` sentinel), ``total``,
    the weights ``p`` themselves and the guide table; built once per weights, whatever the
    batch."""

    cdf: np.ndarray
    total: float
    p: np.ndarray
    guide: np.ndarray


def weight_tables(p):
    """:class:`WeightTables` of the (unnormalised) weights ``p``, in ``O(n)``.

    Two new arrays, ``cdf`` (float64) and the guide (int32 below 2^31 rows), and chunk-sized
    temporaries: fresh memory costs its page faults (on large data ``N``-sized temporaries cost
    more than the search itself, so ``1 / P(row)`` is computed for the drawn rows only).
    """
    p = np.asarray(p, dtype=np.float64)
    n = p.size
    cdf = np.empty(n + 1)
    np.cumsum(p, out=cdf[:n])
    cdf[n] = np.inf  # sentinel: the forward search stops
    total = float(cdf[n - 1])
    guide = _guide(cdf[:n], (total / n) * (1.0 - 1e-12))
    return WeightTables(cdf, total, p, guide)


def _guide(cdf, step, chunk=1 << 20):
    """A guide table: ``guide[j] <= #{k : cdf[k] <= j step}`` (``searchsorted(cdf, j step,
    "right")``), at most one bucket below it, in ``O(n)`` (the search is ``n log n``, a large
    share of the build on large data).

    Each ``cdf[k]`` goes to bucket ``ceil(cdf[k] / step)``, raised by one where the product
    ``j step`` is still below ``cdf[k]``: at least the first ``j`` with ``j step >= cdf[k]`` and
    nearly always that one (the division's rounding is far below one bucket), so the counts are
    lower bounds and :meth:`WeightedIndex.sample`'s forward search ends where the search would.
    (Buckets raised by one everywhere, without the test, would add a forward step to most draws.)
    The buckets are non-decreasing, so the last ``k`` of each run sets its bucket to ``k + 1`` and
    a running maximum fills the buckets no ``cdf[k]`` fell in.
    """
    n = cdf.size
    guide = np.zeros(n, dtype=np.int32 if n < np.iinfo(np.int32).max else np.intp)
    b = np.empty(min(chunk, n))
    for k0 in range(0, n, chunk):
        c = cdf[k0:k0 + chunk]
        bk = b[:c.size]
        np.divide(c, step, out=bk)
        np.ceil(bk, out=bk)
        bk[bk * step < c] += 1.0
        last = np.append(np.flatnonzero(bk[1:] != bk[:-1]), c.size - 1)
        last = last[bk[last] < n]
        guide[bk[last].astype(np.intp)] = k0 + last + 1
    return np.maximum.accumulate(guide, out=guide)
