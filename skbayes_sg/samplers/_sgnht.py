"""Stochastic-gradient Nosé-Hoover thermostat (SGNHT)."""

from typing import NamedTuple

import numpy as np

from ._base import BaseSampler, Kernel, standard_normal_block

__all__ = ["SGNHT", "SGNHTState"]


class SGNHTState(NamedTuple):
    """Positions ``(C, p)``, whitened momenta ``(C, p)``, thermostats ``(C, 1)``."""

    position: np.ndarray
    momentum: np.ndarray
    thermostat: np.ndarray


class SGNHT(BaseSampler):
    """Stochastic-gradient Nosé-Hoover thermostat.

    Parameters
    ----------
    diffusion : float, default=1.0
        Injected diffusion ``A`` (whitened units); the thermostat starts at
        ``A`` and adapts the friction to absorb unknown gradient noise.

    Notes
    -----
    ::

        r     <- r - h z r - h L^T g + sqrt(2 A h) xi
        theta <- theta + h L r
        z     <- z + h (r.r / p - 1)

    References
    ----------
    Ding, N., Fang, Y., Babbush, R., Chen, C., Skeel, R. D. and Neven, H.
    (2014). Bayesian sampling using stochastic gradient thermostats. NeurIPS.
    """

    name = "sgnht"

    def __init__(self, diffusion=1.0):
        self.diffusion = diffusion

    def build_kernel(self, estimate, step_size, precond, n_params, *, potential=None, n_data=1):
        h, A = float(step_size), float(self.diffusion)
        scale, inv_p = np.sqrt(2.0 * A * h), 1.0 / n_params
        to_u, from_u = precond.to_u, precond.from_u

        def init(theta0, rngs):
            r = standard_normal_block(rngs, 1, n_params)[0]
            z = np.full((r.shape[0], 1), A)
            return SGNHTState(np.array(theta0, dtype=float), r, z)

        def draw_block(rngs, n_steps):
            return scale * standard_normal_block(rngs, n_steps, n_params)

        def step(state, est_state, noise):
            theta, r, z = state
            g, est_state, n = estimate(theta, est_state)
            r = r - h * z * r - h * to_u(g) + noise
            z = z + h * (inv_p * np.einsum("cp,cp->c", r, r)[:, None] - 1.0)
            return SGNHTState(theta + h * from_u(r), r, z), est_state, n

        sizes = lambda state: np.full(state.position.shape[0], h)  # noqa: E731
        return Kernel(init, draw_block, step, lambda s: s, sizes)

    def stationary_variance(self, h, lam, nu):
        """Variance at the thermostat's fixed point (mean field: ``z`` held at ``z*``).

        For fixed friction ``z`` the scheme's stationary moments are, with
        ``x = h z``, ``q = 2 A h + h^2 nu`` and ``B = 2 - h^2 lam / 2``::

            E[r^2] = q / (x (B - x)),    lam E[theta^2] = E[r^2] (2 - x) / 2

        The thermostat drives ``E[r^2]`` to 1, i.e. ``x* = (B - sqrt(B^2 - 4q)) / 2``
        (the stable root), so ``lam E[theta^2] = 1 - x*/2``: SGNHT absorbs the
        gradient noise but under-disperses by ``x*/2``.  Without a real root
        the thermostat cannot cool the momenta and the chain diverges (inf).
        """
        q, B = 2.0 * self.diffusion * h + h * h * nu, 2.0 - 0.5 * h * h * lam
        disc = B * B - 4.0 * q
        if B <= 0.0 or disc < 0.0:
            return np.inf
        return (1.0 - 0.25 * (B - np.sqrt(disc))) / lam
