"""Underdamped Langevin samplers: the shared momentum kernel and SGHMC."""

from numbers import Real

from sklearn.utils._param_validation import Interval, StrOptions

from ._base import POSITIVE, BaseSampler
from ._ewsg import ewsg_energy
from ._integrators import INTEGRATORS

__all__ = ["SGHMC", "Underdamped"]


class Underdamped(BaseSampler):
    """Shared kernel of the momentum samplers (SGHMC, SGNHT): an integrator's
    (:mod:`~skbayes_sg.samplers._integrators`; SGNHT's is Euler's,
    :mod:`~skbayes_sg.samplers._euler`).

    Subclasses name the hyperparameter (``coefficient``) that is both the diffusion ``D`` and the
    starting friction ``c``, and, for an adaptive friction, give ``thermostat(c, r, h) -> c``.
    With ``estimator.n_candidates = M > 1`` (EWSG) the integrator hands its kernel EWSG's pick
    among the ``M`` candidates instead of the plain estimate.

    References
    ----------
    Chen, T., Fox, E. and Guestrin, C. (2014). Stochastic gradient Hamiltonian Monte Carlo. ICML.

    Li, R., Wang, X., Zha, H. and Tao, M. (2020). Improving sampling accuracy of stochastic
    gradient MCMC methods via non-uniform subsampling of gradients. arXiv:2002.08949.
    """

    coefficient = None
    thermostat = None
    #: EWSG's energies of the candidates, ``(G, x, h, D, to_u) -> (M, C)`` (a subclass may
    #: study another rule; the benchmark of the sign does)
    index_energy = staticmethod(ewsg_energy)

    def _integrator(self):
        """The integrator object (Euler's; SGHMC looks its ``integrator`` up)."""
        return INTEGRATORS["euler"]

    @property
    def couples_index(self):
        """Whether the integrator's kernel can pick among EWSG's candidates."""
        return self._integrator().couples_index

    @property
    def max_step(self):
        """Cap of the automatic whitened step: the integrator's."""
        return self._integrator().max_step

    def _build(self, estimator, h, precond, keep=1.0):
        coefficient = float(getattr(self, self.coefficient))
        integrator = self._integrator()
        source = integrator.gradient(estimator, h, precond, coefficient, self.index_energy)
        return integrator.kernel(source, h, precond, coefficient, coefficient, keep=keep,
                                 thermostat=self.thermostat,
                                 dtype=getattr(estimator, "compute_dtype", None))


class SGHMC(Underdamped):
    """Stochastic-gradient HMC / underdamped Langevin with friction.

    Parameters
    ----------
    friction : float, default=1.0
        Friction ``gamma`` in whitened units (finite, > 0; the Laplace-whitened posterior has unit
        curvature, so ``gamma`` near 1 is close to critical damping and mixes fastest).
    integrator : {"euler", "aboba"}, default="euler"
        A key of :data:`~skbayes_sg.samplers.INTEGRATORS`.  ``"euler"``: Chen et al.'s
        discretisation (below, :mod:`~skbayes_sg.samplers._euler`).  ``"aboba"``: the symmetric
        splitting of :mod:`~skbayes_sg.samplers._aboba` -- one gradient per step too, no
        discretisation error of the position on a Gaussian target, second order elsewhere, so the
        automatic step grows to its cap and each step mixes further (``sampler="auto"`` runs it
        on the Laplace-whitened models).  EWSG needs ``"euler"``.
    step_cap : float or None, default=None
        Cap (> 0) of the automatic whitened step; None: the integrator's (Euler 0.5, ABOBA
        0.75).  ``sampler="auto"`` lowers it where the posterior is measurably non-Gaussian at
        the mode (``skbayes_sg.fitting._plan.aboba_step_cap``).  A given ``step_size`` ignores
        it.

    Notes
    -----
    Momentum ``r`` lives in whitened coordinates (mass matrix ``M^{-1}``); ``"euler"``::

        r     <- r - h gamma r - h L^T g + sqrt(2 gamma h) xi
        theta <- theta + h L r

    Temperature one, so the injected noise variance is ``2 gamma h``.  With a
    ``noise_correction`` ``B`` (:meth:`~skbayes_sg.samplers.BaseSampler.build_kernel`, the
    measured variance of ``L^T g`` per whitened coordinate; ``step_size="auto"`` passes it) it is
    ``2 gamma h - h^2 B``: the gradient's noise enters ``r`` as ``h^2 B``, and the two together
    have the exact dynamics' variance (Chen et al.'s ``B-hat``, at most ``SUBTRACTED_SHARE`` of
    ``2 gamma h``).
    ``"aboba"`` injects ``1 - a^2`` (``a = e^{-gamma h}``) and the gradient noise enters as
    ``(h/2)^2 (1 + a)^2 B``; the correction works the same way.
    Runs EWSG (``subsampling="ewsg"``) with ``c = D = gamma``, without a correction.

    References
    ----------
    Chen, T., Fox, E. and Guestrin, C. (2014). Stochastic gradient Hamiltonian Monte Carlo. ICML.

    Leimkuhler, B. and Matthews, C. (2013). Rational construction of stochastic numerical
    methods for molecular sampling. Applied Mathematics Research eXpress 2013(1), 34-56.

    Chen, C., Ding, N. and Carin, L. (2015). On the convergence of stochastic gradient MCMC
    algorithms with high-order integrators. NeurIPS.
    """

    name, coefficient = "sghmc", "friction"
    subtracts_noise = True
    _parameter_constraints = {"friction": POSITIVE,
                              "integrator": [StrOptions(set(INTEGRATORS))],
                              "step_cap": [Interval(Real, 0, None, closed="neither"), None]}

    def __init__(self, friction=1.0, integrator="euler", step_cap=None):
        self.friction = friction
        self.integrator = integrator
        self.step_cap = step_cap

    def _integrator(self):
        return INTEGRATORS[self.integrator]

    @property
    def max_step(self):
        """Cap of the automatic whitened step: the integrator's, or ``step_cap`` where smaller."""
        top = self._integrator().max_step
        return top if self.step_cap is None else min(top, float(self.step_cap))

    def subtractable_noise(self, h):
        """The integrator's: Euler ``2 gamma / h`` (the gradient's noise enters ``r`` as
        ``h^2 nu``, the injected as ``2 gamma h``), ABOBA ``4 tanh(gamma h / 2) / h^2``."""
        return self._integrator().subtractable_noise(h, self.friction)

    def subtraction_cap(self, top):
        return self._integrator().subtraction_cap(top, self.friction)

    def stationary_variance(self, h, lam, nu):
        return self._integrator().stationary_variance(h, lam, nu, self.friction)
