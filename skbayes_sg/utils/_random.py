"""Random streams: one ``random_state`` -> one Generator -> spawned children.

Stream order (documented contract, relied on for reproducibility):

``make_streams(random_state, n_chains)`` returns a :class:`Streams` record whose
``prep`` stream feeds preprocessing (k-means seeds, mode-finding minibatches,
pilot estimates), ``init`` feeds the chains' dispersed starting points, and for
every chain ``c`` two streams: ``noise[c]`` (the diffusion's Gaussian noise) and
``index[c]`` (the minibatch indices).  Chains never share a stream, so chain
``c`` gets identical draws whether it runs alone, with others, or in another
process (``n_jobs``).
"""

from typing import NamedTuple

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["make_rng", "make_streams", "Streams"]


def make_rng(random_state) -> np.random.Generator:
    """Turn an sklearn ``random_state`` (None, int, RandomState) into a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    return np.random.default_rng(seed)


class Streams(NamedTuple):
    """Independent random streams of one fit (see module docstring)."""

    prep: np.random.Generator
    init: np.random.Generator
    noise: tuple
    index: tuple


def make_streams(random_state, n_chains: int) -> Streams:
    """Spawn the streams of one fit in the documented order."""
    root = make_rng(random_state)
    prep, init, *chains = root.spawn(2 + n_chains)
    pairs = [c.spawn(2) for c in chains]
    return Streams(prep, init, tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
