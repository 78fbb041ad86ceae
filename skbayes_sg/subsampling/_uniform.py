"""Strategies on uniform minibatches: ``uniform``, ``control_variates``, ``svrg``; and ``full``."""

from ._base import BaseStrategy, IndexedStrategy
from ._estimator import ExactGradient
from ._index import UniformIndex
from ._svrg import SVRGAnchor

__all__ = ["ControlVariates", "Full", "SVRG", "Uniform"]


class Uniform(IndexedStrategy):
    """Uniform minibatches without replacement.

    Parameters
    ----------
    shared_minibatch : bool, default=False
        Whether all chains use the same minibatch in a step (drawn from the first chain's index
        stream): one gather, and the chains' parameters stacked against the shared rows (one
        matrix product instead of one per chain).  Each chain's estimate has the same
        distribution either way, but shared minibatches make the chains' gradient noises
        dependent, so the chains are no longer independent: R-hat and the pooled ESS assume
        they are.  With plain minibatches the noise is mostly common to the chains (it is the
        same rows' gradients at nearby positions) and the chains move together; with control
        variates it is a difference at each chain's own position and the dependence is weak
        (``benchmarks/bench_shared.py`` measures both), so ``fit`` emits an
        ``ApproximationWarning`` when plain minibatch sums are shared.  Not available on dask
        input.
        ``Preferential``, ``PreferentialCV`` and ``Stratified`` take it too.

    Notes
    -----
    ``g = ∇f_0(theta) + (N / b) sum_{i in B} ∇f_i(theta)`` with ``B`` a
    uniform ``b``-subset (methods.md §1).  Unbiased; its variance grows like
    ``N^2 / b``, which is why the default strategy for the GLMs is
    :class:`PreferentialCV`.

    References
    ----------
    Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic
    gradient Langevin dynamics. ICML.
    """

    name = "uniform"

    def __init__(self, shared_minibatch=False):
        self.shared_minibatch = shared_minibatch

    _parameter_constraints = {"shared_minibatch": ["boolean"]}

    def estimator(self, data, *, batch_size):
        return self._estimator(data, UniformIndex(data.posterior.n_rows, batch_size))


class Full(BaseStrategy):
    """No subsampling: the exact full-data gradient every step.

    Notes
    -----
    ``g = ∇U(theta)`` (methods.md §2).  Costs ``N`` gradient evaluations per
    step; for small data, reference runs and ``sampler="hmc"``.
    """

    name = "full"
    exact = True

    def __init__(self):
        pass

    def estimator(self, data, *, batch_size):
        return ExactGradient(data.posterior, **data.estimator_kwargs())


class ControlVariates(Uniform):
    """Uniform minibatches with control variates at the posterior mode.

    Parameters
    ----------
    shared_minibatch : bool, default=False
        Whether all chains use the same minibatch in a step (see :class:`Uniform`).  The
        control-variate noise at each chain's own position depends on the shared rows only
        weakly, so this is where sharing costs least.

    Notes
    -----
    With ``theta_hat`` the mode found in ``fit`` and
    ``G = sum_i ∇f_i(theta_hat)`` (one full pass, done once)::

        g = ∇f_0(theta) + G + (N/b) sum_{i in B} [∇f_i(theta) - ∇f_i(theta_hat)]

    Unbiased, with variance ``O(||theta - theta_hat||^2)``: near the mode it is orders of magnitude
    below ``uniform`` (methods.md §4).  Cost per step: one per-example gradient for GLMs (anchor
    terms stored as scalars), two otherwise; plus one pass for ``G``.

    References
    ----------
    Baker, J., Fearnhead, P., Fox, E. B. and Nemeth, C. (2019). Control
    variates for stochastic gradient MCMC. Statistics and Computing 29.
    """

    name = "control_variates"
    correction = "cv"


class SVRG(Uniform):
    """vrSG-MCMC: SVRG control variates at a minibatch anchor (``svrg``).

    Parameters
    ----------
    n1 : int, default=None
        Anchor minibatch size ``|B1|``; must exceed ``batch_size`` (seed 001, Theorem 6) unless it
        covers the data.  None means ``min(N, 100 * batch_size)``; values ``>= N`` use the exact
        full-data anchor gradient (SVRG-LD).
    update_every : int, default=None
        Anchor refresh interval ``tau`` in steps.  None means ``max(1, n1 // (10 * batch_size))``.
        The defaults are the paper's regime ``n1 >> tau b`` (there ``n1 = 1000`` rows for
        minibatches of 10): the anchor error, frozen for ``tau`` steps, then adds about a tenth
        of a plain minibatch's noise (see Notes), at ``(n1 + 2 b (tau - 1)) / tau ≈ 12 b``
        evaluations per step.  The previous defaults (``n1 = 10 b``, ``tau = n1 / b``) made the
        anchor error as large as a plain minibatch's at 2.8 times its cost.

    Notes
    -----
    Every ``tau`` steps (from the first step on) each chain sets its anchor
    ``theta_a <- theta`` and ``g_a = (N/n1) sum_{i in B1} ∇f_i(theta_a)`` on
    its own uniform ``n1``-subset ``B1``; each step (methods.md §8)::

        g = ∇f_0(theta) + g_a + (N/b) sum_{i in B} [∇f_i(theta) - ∇f_i(theta_a)]

    ``E[g] = ∇U(theta)`` only on average over ``B1`` as well as ``B``: given the anchor, ``g`` is
    off by the anchor error ``e_a = g_a - sum_i ∇f_i(theta_a)`` for ``tau`` steps.  Cost per chain:
    ``n1`` per refresh (the correction is zero at the anchor, so refresh steps draw no ``B``) and
    ``2b`` on the other steps, ``(n1 + 2b (tau - 1)) / tau`` per step on average.  The correction's
    variance is ``O(||theta - theta_a||^2 / b)``, but ``e_a`` (variance ``N^2 (1/n1 - 1/N) s^2``,
    with ``s^2`` the per-example gradient variance) is *coloured* noise: held for ``tau`` steps it
    perturbs the chain like white noise of ``tau`` times its variance (for ``tau h`` short of the
    mixing time; less beyond).  So the estimator's ``pilot()``, whose noise sets
    ``step_size="auto"``, anchors at the mode and redraws the anchor on
    ``m_eff = 1 / (tau (1/n1 - 1/N) + 1/N)`` rows at every call -- exactly that white-noise
    variance, plus the correction's at the pilot's Laplace draws -- and ``step_size="auto"`` stays
    accurate (without this the pilot would see no noise, the step would come out too large and
    the posterior too wide).  Unless ``n1 = N`` the anchor error does not average out within an
    epoch, and at equal cost a minibatch anchor is no better than ``uniform`` for the stationary
    accuracy; ``n1 = N`` (SVRG-LD) is much better.  The anchors work with any index:
    ``Stratified(correction="svrg")``, ``Preferential(correction=SVRGAnchor(n1=...))``.
    ``preprocessing_`` gets ``anchor_batch_size`` and ``anchor_update_every`` (the resolved ``n1``
    and ``tau``), ``svrg_n1``, ``svrg_update_every``, ``svrg_evals_per_step`` and
    ``svrg_pilot_batch``.

    References
    ----------
    Chen, C., Wang, W., Zhang, Y., Su, Q. and Carin, L. (2017). A convergence analysis for a class
    of practical variance-reduction stochastic gradient MCMC. arXiv:1709.01180 (Algorithm 1).
    Dubey, K. A., Reddi, S. J., Williamson, S. A., Poczos, B., Smola, A. J. and Xing, E. P. (2016).
    Variance reduction in stochastic gradient Langevin dynamics. NeurIPS.
    """

    name = "svrg"

    def __init__(self, n1=None, update_every=None):
        self.n1 = n1
        self.update_every = update_every

    _parameter_constraints = SVRGAnchor._parameter_constraints

    def _correction(self):
        return SVRGAnchor(self.n1, self.update_every)
