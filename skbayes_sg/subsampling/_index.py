"""Index samplers: which rows each chain looks at in a step.

Protocol (every sampler): attributes ``b`` (nominal minibatch size), ``scale`` (constant factor of
the summed gradient) and ``ragged``; ``init(rngs, n_chains) -> state`` and
``draw(rngs, theta, state) -> (idx, weight, state)`` with ``idx (C, b)`` (a tuple of per-chain 1-D
arrays when ``ragged``; one 1-D ``(b,)`` minibatch every chain uses when ``shared``) and
``weight`` None or shaped like ``idx``, such that ``scale * sum_i weight_i ∇f_i`` is unbiased for
``sum_i ∇f_i``.
"""

import numpy as np

__all__ = ["AllRows", "BlockIndex", "UniformIndex", "block_size_for", "uniform_subsets"]

FIRST_BLOCK = 8  # steps in a chain's first block (the step-size pilot takes 8 estimates)


def block_size_for(n_rows, batch_size, target=200_000):
    """Steps per pre-drawn block: about ``target`` indices per chain."""
    return int(max(1, min(4096, target // max(batch_size, 1))))


def uniform_subsets(rng, n, b, n_sets):
    """``(n_sets, b)`` independent uniform ``b``-subsets of ``range(n)``.

    Each row is drawn without replacement, rows independently.  When repeats are rare
    (``b^2 <= 2n``) rows are drawn with replacement and the few with a repeat are redrawn; up to
    ``b = n/2`` repeated entries alone are redrawn (:func:`_redraw_repeats`, ``O(b log b)`` per
    row); above that a vectorised partial Fisher-Yates shuffle of ``b`` positions per row (``O(n)``
    per row, and ``n < 2b``).  The first path is as fast as the second where it applies, and
    keeping it leaves the draws (and committed results) there unchanged.
    """
    if b * b <= 2 * n:
        idx = rng.integers(0, n, size=(n_sets, b))
        bad = np.flatnonzero(_has_repeat(idx))  # whole block first: no gather of all rows
        while bad.size:
            idx[bad] = rng.integers(0, n, size=(bad.size, b))
            bad = bad[_has_repeat(idx[bad])]
        return idx
    if 2 * b <= n:
        return _redraw_repeats(rng, n, b, n_sets)
    out = np.empty((n_sets, b), dtype=np.intp)
    chunk = max(1, (1 << 21) // n)
    for start in range(0, n_sets, chunk):
        out[start:start + chunk] = _fisher_yates(rng, n, b, min(chunk, n_sets - start))
    return out


def _has_repeat(idx):
    """Rows of ``idx`` with a repeated entry ``(rows,)`` bool."""
    s = np.sort(idx, axis=1)
    return (s[:, 1:] == s[:, :-1]).any(axis=1)


def _redraw_repeats(rng, n, b, n_sets):
    """Rows of ``b`` i.i.d. draws whose repeated entries are redrawn until distinct.

    Every step depends on a row only through its multiset of values, and relabelling ``range(n)``
    commutes with it, so the final set is uniform over ``b``-subsets (rows come out sorted, which
    also makes the gathers of ``X`` rows cache-friendly).  With ``b <= n/2`` a redraw repeats with
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


class BlockIndex:
    """Base of the random index samplers: blocks of steps drawn ahead per chain.

    Each chain's blocks come from that chain's own Generator (:meth:`chain_block`), so a
    chain's minibatches do not depend on how many chains run; all chains refill together when
    the block is used up.  Blocks grow: ``8, 16, 32, ...`` steps up to ``n_block``
    (:meth:`block_steps`), so a short run -- a pilot of 8 estimates -- draws 8 steps of indices,
    not ``n_block`` (the pilots would otherwise draw far more indices than they use), while
    long runs refill a handful of times more.  Subclasses give
    :meth:`chain_block` and, for weighted draws, :meth:`block_weights`.
    """

    scale = 1.0
    ragged = False
    # one minibatch (b,) for every chain, from the first chain's Generator: set by the strategies
    # (``shared_minibatch``, IndexedStrategy._estimator); each chain's estimate is distributed as
    # before, but the chains' gradient noises are dependent
    shared = False

    def __init__(self, n_rows, batch_size):
        self.n_rows, self.b = int(n_rows), int(batch_size)
        self.n_block = block_size_for(self.n_rows, self.b)

    def block_steps(self, k):
        """Steps of a chain's ``k``-th block (from 0): ``min(n_block, 8 * 2**k)``."""
        return int(min(self.n_block, FIRST_BLOCK << min(int(k), 40)))

    def chain_block(self, rng, n_steps):
        """Rows ``(n_steps, b)`` of one chain's next block."""
        raise NotImplementedError

    def block_weights(self, idx):
        """Weights shaped like the block ``idx (T, C, b)``, or None (all 1)."""
        return None

    def refill(self, rngs, k=0):
        """The ``k``-th block ``(idx (T, C, b), weight or None)`` for all chains; ``(T, b)``
        from the first chain's Generator when ``shared``."""
        n_steps = self.block_steps(k)
        if self.shared:
            idx = self.chain_block(rngs[0], n_steps)
        else:
            idx = np.stack([self.chain_block(rng, n_steps) for rng in rngs], axis=1)
        return idx, self.block_weights(idx)

    def init(self, rngs, n_chains):
        """State: ``(idx block, weight block or None, position, blocks drawn)``."""
        return (*self.refill(rngs, 0), 0, 1)

    def draw(self, rngs, theta, state):
        """``(idx (C, b), weight (C, b) or None, state)`` (``(b,)`` each when ``shared``);
        ``theta`` is unused."""
        idx, w, t, k = state
        if t == idx.shape[0]:
            (idx, w), t, k = self.refill(rngs, k), 0, k + 1
        return idx[t], None if w is None else w[t], (idx, w, t + 1, k)


class UniformIndex(BlockIndex):
    """Independent uniform minibatches without replacement.

    Every step and chain gets a fresh uniform ``b``-subset, independent of
    the other steps (as SG-MCMC theory and ``step_size="auto"`` assume;
    epoch-wise reshuffling would make consecutive minibatches disjoint and
    bias thermostat samplers).  ``scale = n_rows / b`` and ``weight = None``.
    """

    def __init__(self, n_rows, batch_size):
        super().__init__(n_rows, batch_size)
        self.scale = self.n_rows / self.b

    def chain_block(self, rng, n_steps):
        return uniform_subsets(rng, self.n_rows, self.b, n_steps)


class AllRows:
    """Every row once per step (the exact sum): ``scale = 1``, ``weight = None``.

    What a with-replacement sampler switches to when ``b >= n_rows``: ``b``
    importance draws would cost as much as the exact sum and add noise.
    """

    scale = 1.0
    ragged = False

    def __init__(self, n_rows):
        self.n_rows = self.b = int(n_rows)

    def init(self, rngs, n_chains):
        """State: the ``(C, n_rows)`` index array every step returns."""
        return np.broadcast_to(np.arange(self.n_rows), (n_chains, self.n_rows))

    def draw(self, rngs, theta, state):
        """``(idx (C, n_rows), None, state)``."""
        return state, None, state
