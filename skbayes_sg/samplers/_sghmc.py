"""Stochastic-gradient Hamiltonian Monte Carlo (underdamped Langevin)."""

from typing import NamedTuple

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from ._base import BaseSampler, Kernel, standard_normal_block

__all__ = ["SGHMC", "SGHMCState", "underdamped_variance"]


class SGHMCState(NamedTuple):
    """Positions ``(C, p)`` and whitened momenta ``(C, p)``."""

    position: np.ndarray
    momentum: np.ndarray


class SGHMC(BaseSampler):
    """Stochastic-gradient HMC / underdamped Langevin with friction.

    Parameters
    ----------
    friction : float, default=1.0
        Friction ``gamma`` in whitened units (the Laplace-whitened posterior
        has unit curvature, so ``gamma`` near 1 is close to critical damping
        and mixes fastest).

    Notes
    -----
    Momentum ``r`` lives in whitened coordinates (mass matrix ``M^{-1}``)::

        r     <- r - h gamma r - h L^T g + sqrt(2 gamma h) xi
        theta <- theta + h L r

    Temperature one, so the injected noise variance is ``2 gamma h``.  The
    initial momenta are drawn from ``N(0, I)`` (chain's own noise stream).

    References
    ----------
    Chen, T., Fox, E. and Guestrin, C. (2014). Stochastic gradient Hamiltonian
    Monte Carlo. ICML.
    """

    name = "sghmc"

    def __init__(self, friction=1.0):
        self.friction = friction

    def build_kernel(self, estimate, step_size, precond, n_params, *, potential=None, n_data=1):
        h, gamma = float(step_size), float(self.friction)
        keep, scale = 1.0 - h * gamma, np.sqrt(2.0 * gamma * h)
        to_u, from_u = precond.to_u, precond.from_u

        def init(theta0, rngs):
            r = standard_normal_block(rngs, 1, n_params)[0]
            return SGHMCState(np.array(theta0, dtype=float), r)

        def draw_block(rngs, n_steps):
            return scale * standard_normal_block(rngs, n_steps, n_params)

        def step(state, est_state, noise):
            theta, r = state
            g, est_state, n = estimate(theta, est_state)
            r = keep * r - h * to_u(g) + noise
            return SGHMCState(theta + h * from_u(r), r), est_state, n

        sizes = lambda state: np.full(state.position.shape[0], h)  # noqa: E731
        return Kernel(init, draw_block, step, lambda s: s, sizes)

    def stationary_variance(self, h, lam, nu):
        return underdamped_variance(h, lam, nu, self.friction, self.friction)


def underdamped_variance(h, lam, nu, friction, diffusion):
    """Stationary variance of theta for the scheme above on ``U = lam u^2/2``.

    Solves the discrete Lyapunov equation of the linear recursion in
    ``(theta, r)`` with noise variance ``2 diffusion h + h^2 nu`` on ``r``.
    """
    keep = 1.0 - h * friction
    A = np.array([[1.0 - h * h * lam, h * keep], [-h * lam, keep]])
    if np.max(np.abs(np.linalg.eigvals(A))) >= 1.0:
        return np.inf
    q = 2.0 * diffusion * h + h * h * nu
    Q = q * np.array([[h * h, h], [h, 1.0]])
    return float(solve_discrete_lyapunov(A, Q)[0, 0])
