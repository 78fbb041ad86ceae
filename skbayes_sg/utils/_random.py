"""Random streams: one ``random_state`` -> one seed -> named child streams.

Stream layout (documented contract, relied on for reproducibility):

``make_streams(random_state, n_chains)`` turns ``random_state`` into one root
:class:`numpy.random.SeedSequence`.  Every consumer gets its own child,
keyed by its *name* rather than by its position in a spawn order, so adding
a consumer changes no other draw:

* ``streams.child(name)`` -- preprocessing consumers, one Generator each: ``"mode"`` (mode-finding
  subsamples and initialisation), ``"curvature"`` (power iteration), ``"strategy"`` (k-means seeds,
  weights' Monte Carlo), ``"pilot"`` (gradient-noise pilot positions and minibatches), ``"batch"``
  (the rebuild at an automatic batch size), ``"init"`` (chain starting points), ``"audit"``
  (the Metropolis audit's momenta, after sampling);
* ``streams.noise[c]`` and ``streams.index[c]`` -- chain ``c``'s diffusion noise and minibatch
  indices.  Chains never share a stream, so chain ``c`` gets identical draws whether it runs alone,
  with others, or in another process (``n_jobs``);
* ``streams.retry(k)`` -- fresh chain streams for the ``k``-th restart after a
  divergence in warm-up;
* ``streams.extension(k)`` -- chain streams of the ``k``-th extension of the sampling phase
  (run-until-converged, :mod:`skbayes_sg.fitting._extend`).
"""

import zlib

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["Streams", "make_rng", "make_streams"]


def make_rng(random_state) -> np.random.Generator:
    """Turn an sklearn ``random_state`` (None, int, RandomState) into a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    seed = check_random_state(random_state).randint(np.iinfo(np.int32).max)
    return np.random.default_rng(seed)


def _key(name):
    return zlib.crc32(name.encode())


class Streams:
    """Independent random streams of one fit (see module docstring)."""

    def __init__(self, seed_seq, n_chains):
        self.seed_seq, self.n_chains = seed_seq, int(n_chains)
        self.noise, self.index = self._chains("chains")

    def _seq(self, *key):
        return np.random.SeedSequence(self.seed_seq.entropy,
                                      spawn_key=tuple(self.seed_seq.spawn_key) + key)

    def child(self, name):
        """A Generator for the consumer ``name`` (the same on every call)."""
        return np.random.default_rng(self._seq(_key(name)))

    def _chains(self, name):
        seqs = [self._seq(_key(name), c) for c in range(self.n_chains)]
        pairs = [s.spawn(2) for s in seqs]
        return (tuple(np.random.default_rng(p[0]) for p in pairs),
                tuple(np.random.default_rng(p[1]) for p in pairs))

    def retry(self, k):
        """``(noise, index)`` chain streams for restart ``k >= 1``."""
        return self._chains(f"retry{int(k)}")

    def extension(self, k):
        """``(noise, index)`` chain streams for extension ``k >= 1`` of the sampling phase."""
        return self._chains(f"extension{int(k)}")

    def extension_retry(self, k, r):
        """``(noise, index)`` chain streams for retry ``r >= 1`` of extension ``k``."""
        return self._chains(f"extension{int(k)}retry{int(r)}")


def make_streams(random_state, n_chains: int) -> Streams:
    """The streams of one fit; the same ``random_state`` gives the same streams."""
    root = make_rng(random_state)
    return Streams(root.bit_generator.seed_seq, n_chains)
