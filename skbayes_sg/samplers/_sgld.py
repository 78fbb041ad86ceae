"""Stochastic-gradient Langevin dynamics (SGLD)."""

from typing import NamedTuple

import numpy as np

from ._base import BaseSampler, Kernel, standard_normal_block

__all__ = ["SGLD", "SGLDState"]


class SGLDState(NamedTuple):
    """Position ``(C, p)`` of every chain."""

    position: np.ndarray


class SGLD(BaseSampler):
    """Preconditioned stochastic-gradient Langevin dynamics.

    Notes
    -----
    With step size ``h``, gradient estimate ``g ≈ ∇U(theta)``, constant
    preconditioner ``M = L L^T`` and ``xi ~ N(0, I)``::

        theta <- theta - (h / 2) M g + sqrt(h) L xi

    ``h`` is in preconditioned units: with the Laplace preconditioner the
    whitened posterior has unit curvature and ``h`` of a few tenths is
    accurate when the gradient noise is small.  The Gaussian noise is drawn
    in blocks and pre-multiplied by ``L``.

    References
    ----------
    Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic
    gradient Langevin dynamics. ICML.
    """

    name = "sgld"

    def __init__(self):
        pass

    def build_kernel(self, estimate, step_size, precond, n_params, *, potential=None, n_data=1):
        h = float(step_size)
        half, scale = 0.5 * h, np.sqrt(h)
        apply, from_u = precond.apply, precond.from_u

        def init(theta0, rngs):
            return SGLDState(np.array(theta0, dtype=float))

        def draw_block(rngs, n_steps):
            return from_u(scale * standard_normal_block(rngs, n_steps, n_params))

        def step(state, est_state, noise):
            theta = state.position
            g, est_state, n = estimate(theta, est_state)
            return SGLDState(theta - half * apply(g) + noise), est_state, n

        sizes = lambda state: np.full(state.position.shape[0], h)  # noqa: E731
        return Kernel(init, draw_block, step, lambda s: s, sizes)

    def stationary_variance(self, h, lam, nu):
        contraction = 1.0 - 0.5 * h * lam
        if abs(contraction) >= 1.0:
            return np.inf
        return (h + 0.25 * h * h * nu) / (1.0 - contraction**2)
