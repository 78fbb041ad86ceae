"""Index samplers: which rows each chain looks at in a step."""

import numpy as np

__all__ = ["AllRows", "UniformIndex", "block_size_for", "uniform_subsets"]


def block_size_for(n_rows, batch_size, target=200_000):
    """Steps per pre-drawn block: about ``target`` indices per chain."""
    return int(max(1, min(4096, target // max(batch_size, 1))))


def uniform_subsets(rng, n, b, n_sets):
    """``(n_sets, b)`` independent uniform ``b``-subsets of ``range(n)``.

    Each row is drawn without replacement, rows independently.  When repeats
    are rare (``b^2 <= 2n``) rows are drawn with replacement and the few with
    a repeat are redrawn; up to ``b = n/2`` repeated entries alone are redrawn
    (:func:`_redraw_repeats`, ``O(b log b)`` per row); above that a vectorised
    partial Fisher-Yates shuffle of ``b`` positions per row (``O(n)`` per row,
    and ``n < 2b``).  The first path is as fast as the second where it applies,
    and keeping it leaves the draws (and committed results) there unchanged.
    """
    if b * b <= 2 * n:
        idx = rng.integers(0, n, size=(n_sets, b))
        bad = np.arange(n_sets)
        while bad.size:
            bad = bad[(np.diff(np.sort(idx[bad], axis=1), axis=1) == 0).any(axis=1)]
            idx[bad] = rng.integers(0, n, size=(bad.size, b))
        return idx
    if 2 * b <= n:
        return _redraw_repeats(rng, n, b, n_sets)
    out = np.empty((n_sets, b), dtype=np.intp)
    chunk = max(1, (1 << 21) // n)
    for start in range(0, n_sets, chunk):
        out[start:start + chunk] = _fisher_yates(rng, n, b, min(chunk, n_sets - start))
    return out


def _redraw_repeats(rng, n, b, n_sets):
    """Rows of ``b`` i.i.d. draws whose repeated entries are redrawn until distinct.

    Every step depends on a row only through its multiset of values, and
    relabelling ``range(n)`` commutes with it, so the final set is uniform
    over ``b``-subsets (rows come out sorted, which also makes the gathers
    of ``X`` rows cache-friendly).  With ``b <= n/2`` a redraw repeats with
    probability below 1/2, so the rounds are few.
    """
    idx = rng.integers(0, n, size=(n_sets, b))
    idx.sort(axis=1)
    rows = np.flatnonzero((idx[:, 1:] == idx[:, :-1]).any(axis=1))
    while rows.size:
        sub = idx[rows]
        repeat = np.zeros(sub.shape, dtype=bool)
        repeat[:, 1:] = sub[:, 1:] == sub[:, :-1]
        sub[repeat] = rng.integers(0, n, size=int(repeat.sum()))
        sub.sort(axis=1)
        idx[rows] = sub
        rows = rows[(sub[:, 1:] == sub[:, :-1]).any(axis=1)]
    return idx


def _fisher_yates(rng, n, b, rows):
    perm = np.tile(np.arange(n, dtype=np.intp), (rows, 1))
    r, at = rng.random((rows, b)), np.arange(rows)
    for j in range(b):
        k = j + (r[:, j] * (n - j)).astype(np.intp)
        head = perm[at, j]
        perm[at, j] = perm[at, k]
        perm[at, k] = head
    return perm[:, :b]


class UniformIndex:
    """Independent uniform minibatches without replacement, drawn in blocks.

    Every step and chain gets a fresh uniform ``b``-subset, independent of
    the other steps (as SG-MCMC theory and ``step_size="auto"`` assume;
    epoch-wise reshuffling would make consecutive minibatches disjoint and
    bias thermostat samplers).  ``scale = n_rows / b`` and ``weight = None``.
    """

    def __init__(self, n_rows, batch_size):
        self.n_rows, self.b = int(n_rows), int(batch_size)
        self.scale = self.n_rows / self.b
        self.n_block = block_size_for(n_rows, batch_size)

    def _refill(self, rngs):
        return np.stack([uniform_subsets(rng, self.n_rows, self.b, self.n_block)
                         for rng in rngs], axis=1)

    def init(self, rngs, n_chains):
        """State: ``(block (T, C, b), position)``."""
        return (self._refill(rngs), 0)

    def draw(self, rngs, state):
        """``(idx (C, b), None, scale, state)``."""
        block, t = state
        if t == block.shape[0]:
            block, t = self._refill(rngs), 0
        return block[t], None, self.scale, (block, t + 1)


class AllRows:
    """Every row once per step (the exact sum): ``scale = 1``, ``weight = None``.

    What a with-replacement sampler switches to when ``b >= n_rows``: ``b``
    importance draws would cost as much as the exact sum and add noise.
    """

    def __init__(self, n_rows):
        self.n_rows = self.b = int(n_rows)
        self.scale = 1.0
        self._rows = np.arange(self.n_rows)

    def init(self, rngs, n_chains):
        """State: the ``(C, n_rows)`` index array every step returns."""
        return np.broadcast_to(self._rows, (n_chains, self.n_rows))

    def draw(self, rngs, state):
        """``(idx (C, n_rows), None, 1.0, state)``."""
        return state, None, self.scale, state
