"""Index samplers: which rows each chain looks at in a step."""

import numpy as np

__all__ = ["UniformIndex", "block_size_for"]


def block_size_for(n_rows, batch_size, target=200_000):
    """Steps per pre-drawn block: about ``target`` indices per chain."""
    return int(max(1, min(4096, target // max(batch_size, 1))))


class UniformIndex:
    """Uniform minibatches without replacement, drawn in blocks.

    Each chain walks through random permutations of the rows; step ``t``
    takes the next ``b`` entries (a new permutation starts when fewer than
    ``b`` remain), so every minibatch is a uniform ``b``-subset without
    replacement.  ``scale = n_rows / b`` and ``weight = None``.
    """

    def __init__(self, n_rows, batch_size):
        self.n_rows, self.b = int(n_rows), int(batch_size)
        self.scale = self.n_rows / self.b
        self.per_perm = self.n_rows // self.b
        self.n_block = block_size_for(n_rows, batch_size)

    def _chain_block(self, rng):
        n_perm = -(-self.n_block // self.per_perm)
        rows = [rng.permutation(self.n_rows)[: self.per_perm * self.b] for _ in range(n_perm)]
        return np.concatenate(rows).reshape(-1, self.b)[: self.n_block]

    def _refill(self, rngs):
        return np.stack([self._chain_block(rng) for rng in rngs], axis=1)

    def init(self, rngs, n_chains):
        """State: ``(block (T, C, b), position)``."""
        return (self._refill(rngs), 0)

    def draw(self, rngs, state):
        """``(idx (C, b), None, scale, state)``."""
        block, t = state
        if t == block.shape[0]:
            block, t = self._refill(rngs), 0
        return block[t], None, self.scale, (block, t + 1)
