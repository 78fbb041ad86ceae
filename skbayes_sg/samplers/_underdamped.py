"""Underdamped Langevin samplers: the shared momentum kernel and SGHMC."""

from typing import NamedTuple

import numpy as np

from sklearn.utils._param_validation import StrOptions

from ._base import POSITIVE, BaseSampler, Kernel, chain_block, chain_normals, fixed_step
from ._aboba import aboba_cap, aboba_kernel, aboba_noise_room, aboba_variance
from ._ewsg import coupled_gradient, index_uniforms
from ._lyapunov import position_variance

__all__ = ["MomentumState", "SGHMC", "underdamped_variance"]


class MomentumState(NamedTuple):
    """Positions, whitened momenta ``(C, p)``; friction ``gamma`` (SGHMC) or ``z`` ``(C, 1)``."""

    position: np.ndarray
    momentum: np.ndarray
    friction: object


class Underdamped(BaseSampler):
    """Shared kernel of the momentum samplers (SGHMC, SGNHT).

    Subclasses name the hyperparameter (``coefficient``) that is both the diffusion ``D`` and the
    starting friction ``c``, and, for an adaptive friction, give ``thermostat(c, r, h) -> c``.

    Notes
    -----
    Whitened momentum ``r`` (mass matrix ``M^{-1}``, ``M = L L^T``),
    ``r_0 ~ N(0, I)`` from the chain's own noise stream::

        r     <- (1 - h c) r - h L^T g + sqrt(2 D h) xi
        theta <- theta + h L r
        c     <- thermostat(c, r, h)          (SGNHT only)

    With ``estimator.n_candidates = M > 1``, ``g`` is EWSG's pick among
    ``M`` candidates (:func:`~skbayes_sg.samplers._ewsg.coupled_gradient`)
    with ``x = h c r`` and energies ``||x + h L^T g_m||^2 / (4 D h)``; its
    ``M - 1`` uniforms per step are drawn after each block's normals.

    References
    ----------
    Chen, T., Fox, E. and Guestrin, C. (2014). Stochastic gradient Hamiltonian Monte Carlo. ICML.

    Li, R., Wang, X., Zha, H. and Tao, M. (2020). Improving sampling accuracy of stochastic
    gradient MCMC methods via non-uniform subsampling of gradients. arXiv:2002.08949.
    """

    couples_index = True
    coefficient = None
    thermostat = None


    def _build(self, estimator, h, precond, keep=1.0):
        c0 = D = float(getattr(self, self.coefficient))
        scale = np.sqrt(2.0 * D * h) * keep  # keep < 1: room for the gradient noise
        M, thermostat = estimator.n_candidates, self.thermostat
        estimate, to_u, from_u = estimator.estimate, precond.to_u, precond.from_u
        coupled = coupled_gradient(estimator, h, precond, D) if M > 1 else None
        dtype = getattr(estimator, "compute_dtype", None)  # float32 noise for float32 data

        def init(theta0, rngs):
            r = chain_block(rngs, 1, theta0.shape[1])[0]
            c = c0 if thermostat is None else np.full((r.shape[0], 1), c0)
            return MomentumState(np.array(theta0, dtype=float), r, c)

        def draw_block(rngs, n_steps, p):
            noise = chain_normals(rngs, n_steps, p, dtype, scale)
            return list(zip(noise, index_uniforms(rngs, n_steps, M)))

        def step(index_rngs, state, est_state, randoms):
            theta, r, c = state
            noise, u = randoms
            if u is None:
                g, est_state, n = estimate(index_rngs, theta, est_state)
            else:
                g, est_state, n = coupled(index_rngs, theta, h * c * r, est_state, u)
            kick = to_u(g)  # fresh (the estimator's or the product's): updated in place
            kick *= -h
            kick += noise
            r = (1.0 - h * c) * r
            r += kick
            if thermostat is not None:
                c = thermostat(c, r, h)
            move = h * from_u(r)
            move += theta
            return MomentumState(move, r, c), est_state, n

        return Kernel(init, draw_block, step, fixed_step(h))


class SGHMC(Underdamped):
    """Stochastic-gradient HMC / underdamped Langevin with friction.

    Parameters
    ----------
    friction : float, default=1.0
        Friction ``gamma`` in whitened units (finite, > 0; the Laplace-whitened posterior has unit
        curvature, so ``gamma`` near 1 is close to critical damping and mixes fastest).
    integrator : {"euler", "aboba"}, default="euler"
        ``"euler"``: Chen et al.'s discretisation (below).  ``"aboba"``: the symmetric splitting
        of :mod:`~skbayes_sg.samplers._aboba` -- one gradient per step too, no discretisation
        error of the position on a Gaussian target, second order elsewhere, so the automatic
        step grows to its cap and each step mixes further (``sampler="auto"`` runs it on the
        Laplace-whitened models).  EWSG needs ``"euler"``.

    Notes
    -----
    Momentum ``r`` lives in whitened coordinates (mass matrix ``M^{-1}``); ``"euler"``::

        r     <- r - h gamma r - h L^T g + sqrt(2 gamma h) xi
        theta <- theta + h L r

    Temperature one, so the injected noise variance is ``2 gamma h``.  With a
    ``noise_correction`` ``B`` (:meth:`~skbayes_sg.samplers.BaseSampler.build_kernel`, the
    measured variance of ``L^T g`` per whitened coordinate; ``step_size="auto"`` passes it) it is
    ``2 gamma h - h^2 B``: the gradient's noise enters ``r`` as ``h^2 B``, and the two together
    have the exact dynamics' variance (Chen et al.'s ``B-hat``, at most half of ``2 gamma h``).
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
                              "integrator": [StrOptions({"euler", "aboba"})]}

    def __init__(self, friction=1.0, integrator="euler"):
        self.friction = friction
        self.integrator = integrator

    @property
    def max_step(self):
        """Cap of the automatic whitened step: 0.5 (Euler), 0.75 (ABOBA, whose second-order
        bias is small there: on the skewed ``U = u^2/2 + e^u - u`` it moves the mean by 0.03 sd
        and leaves the sd exact to 0.1%, where Euler at the same step inflates the sd by 12%;
        ``tests/test_samplers.py::test_aboba_second_order_bias_at_its_step_cap``)."""
        return 0.5 if self.integrator == "euler" else 0.75

    @property
    def couples_index(self):
        """EWSG's energies are those of the Euler kernel."""
        return self.integrator == "euler"

    def _build(self, estimator, h, precond, keep=1.0):
        if self.integrator == "euler":
            return super()._build(estimator, h, precond, keep)
        return aboba_kernel(estimator, h, precond, float(self.friction), keep)

    def subtractable_noise(self, h):
        """Euler: the gradient's noise enters ``r`` as ``h^2 nu``, the injected as
        ``2 gamma h``; ABOBA: ``4 tanh(gamma h / 2) / h^2``."""
        if self.integrator == "euler":
            return 2.0 * self.friction / h
        return aboba_noise_room(h, self.friction)

    def subtraction_cap(self, top):
        if self.integrator == "euler":
            return super().subtraction_cap(top)
        return aboba_cap(top, self.friction)

    def stationary_variance(self, h, lam, nu):
        if self.integrator == "euler":
            return underdamped_variance(h, lam, nu, self.friction, self.friction)
        return aboba_variance(h, lam, nu, self.friction)


def underdamped_variance(h, lam, nu, friction, diffusion):
    """Stationary variance of theta for the scheme above on ``U = lam u^2/2``.

    The step is ``(theta, r) <- A (theta, r) + n e`` with ``A = [[1 - h^2 lam, h k], [-h lam,
    k]]``, ``k = 1 - h friction``, ``n = (h, 1)`` and ``Var e = 2 diffusion h + h^2 nu``
    (:func:`~._lyapunov.position_variance`; ``h`` may be an array, a float gives a float).
    """
    h = np.asarray(h, dtype=float)
    keep = 1.0 - h * friction
    A = np.stack([np.stack([1.0 - h * h * lam, h * keep], -1),
                  np.stack([-h * lam * np.ones_like(h), keep], -1)], -2)
    return position_variance(A, 2.0 * diffusion * h + h * h * nu, h, np.ones_like(h))
