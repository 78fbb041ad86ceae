"""Where the chains start (``init=``), and the MLP's extra optimiser runs behind the scenes.

``init="laplace"`` (the default) draws the starts from the Laplace approximation around the mode.
For a multimodal model (``model.multimodal``: the MLP) chains ``1..`` start around their own
Adam optima instead, so they begin in different modes and R-hat can see whether they agree.
Those runs need only the data, not the mode, so :class:`ChainStarts` begins them as soon as it
is made, in a worker thread when BLAS may use two or more threads: they then overlap the mode
search and the tuning instead of following them.  The result does not depend on the thread: each
run has its own generator, spawned from the ``init`` stream.
"""

from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType

import numpy as np

from ..preprocessing._mode import adam_starts

__all__ = ["STARTS", "ChainStarts"]


def _prior_draws(posterior, laplace, rng, n, scale):
    """Draws of the Gaussian prior (coordinates with a flat prior stay at 0)."""
    prec = posterior.prior.precision
    sd = np.where(prec > 0, 1.0 / np.sqrt(np.where(prec > 0, prec, 1.0)), 0.0)
    return rng.standard_normal((n, sd.size)) * sd


# init= of the estimators: (posterior, laplace, rng, n_chains, dispersion) -> (n_chains, p)
STARTS = MappingProxyType({
    "laplace": lambda pst, lap, rng, n, scale: lap.draws(rng, n, scale=scale),
    "mode": lambda pst, lap, rng, n, scale: np.tile(lap.mode, (n, 1)),
    "zeros": lambda pst, lap, rng, n, scale: np.zeros((n, lap.mode.size)),
    "prior": _prior_draws,
})


class ChainStarts:
    """The start points of ``n_chains`` chains; :meth:`result` once the Laplace fit is known.

    A context manager: leaving it waits for the background runs even when the fit failed.

    Parameters
    ----------
    posterior : Posterior
    init : str
        A key of :data:`STARTS`.
    rng : numpy.random.Generator
        The ``init`` stream.
    n_chains : int
    dispersion : float
        Scale of the Laplace draws.
    background : bool
        Run the MLP's extra Adam runs in a worker thread (when BLAS may use two threads).
    """

    def __init__(self, posterior, init, rng, n_chains, dispersion, *, background):
        self.posterior, self.init, self.rng = posterior, init, rng
        self.n, self.dispersion = int(n_chains), dispersion
        self._pool = self._future = self._rngs = None
        if init == "laplace" and posterior.model.multimodal and self.n > 1:
            rngs = rng.spawn(self.n - 1)  # spawning does not move the stream of the draws
            if background:
                self._pool = ThreadPoolExecutor(1)
                self._future = self._pool.submit(adam_starts, posterior, rngs)
            else:
                self._rngs = rngs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        """Wait for the background runs, if any (a fit that failed before :meth:`result`)."""
        self.close()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()

    def result(self, laplace):
        """``(theta0 (n_chains, p), gradient evaluations spent on the starts)``."""
        theta0 = STARTS[self.init](self.posterior, laplace, self.rng, self.n, self.dispersion)
        if self._future is not None:
            modes, evals = self._future.result()
            self.close()
        elif self._rngs is not None:
            modes, evals = adam_starts(self.posterior, self._rngs)
        else:
            return theta0, 0
        theta0[1:] += modes - laplace.mode
        return theta0, evals
