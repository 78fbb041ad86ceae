"""EWSG: exponentially weighted minibatches, chosen by the sampler's kernel."""

from numbers import Integral

from sklearn.utils._param_validation import Interval

from ._index import UniformIndex
from ._uniform import Uniform

__all__ = ["EWSG"]


class EWSG(Uniform):
    """Exponentially weighted stochastic gradients (``ewsg``), for the coupling samplers.

    Parameters
    ----------
    n_index_steps : int, default=2
        Length ``M`` of the index Metropolis chain: ``M`` uniform minibatch gradients per step (the
        start and ``M - 1`` proposals).  The default is the smallest chain that reweights (one
        proposal per step); ``M = 1`` is plain ``uniform``.

    Notes
    -----
    Each step the estimator gives ``M`` plain uniform estimates per chain
    (``candidates``, one batched gradient call; ``n_candidates = M``)::

        g_m = ∇f_0(theta) + (N/b) sum_{i in B_m} ∇f_i(theta),   m = 0..M-1

    and the sampler keeps one of them, since the choice needs its momentum (samplers with
    ``couples_index``: SGHMC, SGNHT and SGLD's overdamped variant):
    ``P(B) ∝ exp(+||x + h L^T g_B||^2 / (4 D h))`` by kernel matching (seed 002, Theorem 2,
    methods.md §9), through an independence Metropolis chain over the ``M`` candidates (derivation,
    energies and the overdamped variant: :mod:`skbayes_sg.samplers._ewsg`).  The chosen estimate is
    biased (seed 002, Theorem 3) but matches the full-gradient kernel better than a uniform one.
    Cost: ``M b`` per-example gradients per step and chain.  Samplers that cannot couple the index
    (``psgld``, ``hmc``, ``SGHMC(integrator="aboba")``) raise a ValueError in ``fit``
    (``n_candidates``, :func:`skbayes_sg.fitting.check_combination`).
    ``preprocessing_`` gets ``ewsg_n_index_steps`` and ``ewsg_evals_per_step``.

    References
    ----------
    Li, R., Wang, X., Zha, H. and Tao, M. (2020). Improving sampling accuracy of stochastic
    gradient MCMC methods via non-uniform subsampling of gradients. arXiv:2002.08949 (Algorithm 1).
    """

    name = "ewsg"
    needs_rows = frozenset({"per_step"})  # candidates picked by the sampler

    def __init__(self, n_index_steps=2):
        self.n_index_steps = n_index_steps

    _parameter_constraints = {"n_index_steps": [Interval(Integral, 1, None, closed="left")]}

    @property
    def n_candidates(self):
        return int(self.n_index_steps)

    def estimator(self, data, *, batch_size):
        M = self.n_candidates
        index = UniformIndex(data.posterior.n_rows, batch_size)
        outputs = {**data.outputs, "ewsg_n_index_steps": M,
                   "ewsg_evals_per_step": float(M * index.b)}
        return self._estimator(data, index, n_candidates=M, outputs=outputs)
