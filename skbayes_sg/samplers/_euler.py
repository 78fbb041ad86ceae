"""The Euler momentum integrator: Chen et al.'s SGHMC discretisation, shared by SGNHT.

Whitened momentum ``r`` (mass matrix ``M^{-1}``, ``M = L L^T``), friction ``c`` and diffusion
``D``::

    r     <- (1 - h c) r - h L^T g + sqrt(2 D h) xi
    theta <- theta + h L r
    c     <- thermostat(c, r, h)          (SGNHT only)

The momentum update is a Gaussian kernel of fixed metric, so EWSG can match it
(:mod:`~skbayes_sg.samplers._ewsg`): ``g`` is then the pick among ``M`` candidates with
``x = h c r`` and energies ``||x + h L^T g_m||^2 / (4 D h)``; its ``M - 1`` uniforms per step are
drawn after each block's normals.
"""

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ._base import SUBTRACTED_SHARE, Kernel, chain_block, chain_normals, fixed_step
from ._ewsg import ewsg_energy, select_gradient
from ._lyapunov import position_variance

__all__ = ["EulerIntegrator", "MomentumState", "underdamped_variance"]


class MomentumState(NamedTuple):
    """Positions, whitened momenta ``(C, p)``; friction ``gamma`` (SGHMC) or ``z`` ``(C, 1)``."""

    position: np.ndarray
    momentum: np.ndarray
    friction: object


@dataclass(frozen=True)
class EulerIntegrator:
    """Euler-Maruyama momentum step (module docstring); ``SGHMC(integrator="euler")``, SGNHT.

    ``max_step`` caps the automatic whitened step; ``couples_index``: EWSG's energies are this
    kernel's.
    """

    name: ClassVar[str] = "euler"
    max_step: ClassVar[float] = 0.5
    couples_index: ClassVar[bool] = True

    def gradient(self, estimator, h, precond, diffusion, energy=ewsg_energy):
        """The kernel's :class:`~._ewsg.GradientSource`: plain, or EWSG's pick at ``x = h c r``
        with the energies ``energy``."""
        return select_gradient(estimator, h, precond, diffusion,
                               lambda state: h * state.friction * state.momentum, energy)

    def kernel(self, source, h, precond, friction, diffusion, *, keep=1.0, thermostat=None,
               dtype=None):
        """The :class:`Kernel` (``friction`` is the starting ``c``; ``keep`` scales the noise's
        sd, leaving room for the gradient noise; ``dtype`` that of the noise)."""
        scale = np.sqrt(2.0 * diffusion * h) * keep
        gradient, uniforms, to_u, from_u = *source, precond.to_u, precond.from_u

        def init(theta0, rngs):
            r = chain_block(rngs, 1, theta0.shape[1])[0]
            c = friction if thermostat is None else np.full((r.shape[0], 1), friction)
            return MomentumState(np.array(theta0, dtype=float), r, c)

        def draw_block(rngs, n_steps, p):
            noise = chain_normals(rngs, n_steps, p, dtype, scale)
            return list(zip(noise, uniforms(rngs, n_steps)))

        def step(index_rngs, state, est_state, randoms):
            theta, r, c = state
            noise, u = randoms
            g, est_state, n = gradient(index_rngs, theta, est_state, state, u)
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

    def stationary_variance(self, h, lam, nu, friction):
        """:func:`underdamped_variance` with the diffusion equal to the friction (SGHMC)."""
        return underdamped_variance(h, lam, nu, friction, friction)

    def subtractable_noise(self, h, friction):
        """The gradient's noise enters ``r`` as ``h^2 nu``, the injected as ``2 gamma h``."""
        return 2.0 * friction / h

    def subtraction_cap(self, top, friction):
        """Largest step at which ``top`` is at most ``SUBTRACTED_SHARE`` of
        :meth:`subtractable_noise` (which falls like ``1 / h``); ``inf`` for ``top <= 0``."""
        return (SUBTRACTED_SHARE * self.subtractable_noise(1.0, friction) / top if top > 0
                else np.inf)


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
