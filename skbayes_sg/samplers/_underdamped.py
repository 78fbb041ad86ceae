"""Underdamped Langevin samplers: the shared momentum kernel and SGHMC."""

from typing import NamedTuple

import numpy as np

from ._base import POSITIVE, BaseSampler, Kernel, chain_block, chain_normals, fixed_step
from ._ewsg import coupled_gradient, index_uniforms

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

    Notes
    -----
    Momentum ``r`` lives in whitened coordinates (mass matrix ``M^{-1}``)::

        r     <- r - h gamma r - h L^T g + sqrt(2 gamma h) xi
        theta <- theta + h L r

    Temperature one, so the injected noise variance is ``2 gamma h``.  With a
    ``noise_correction`` ``B`` (:meth:`~skbayes_sg.samplers.BaseSampler.build_kernel`, the
    measured variance of ``L^T g`` per whitened coordinate; ``step_size="auto"`` passes it) it is
    ``2 gamma h - h^2 B``: the gradient's noise enters ``r`` as ``h^2 B``, and the two together
    have the exact dynamics' variance (Chen et al.'s ``B-hat``, at most half of ``2 gamma h``).
    Runs EWSG (``subsampling="ewsg"``) with ``c = D = gamma``, without a correction.

    References
    ----------
    Chen, T., Fox, E. and Guestrin, C. (2014). Stochastic gradient Hamiltonian Monte Carlo. ICML.
    """

    name, coefficient = "sghmc", "friction"
    subtracts_noise = True
    _parameter_constraints = {"friction": POSITIVE}

    def __init__(self, friction=1.0):
        self.friction = friction

    def subtractable_noise(self, h):
        """The gradient's noise enters ``r`` as ``h^2 nu``, the injected as ``2 gamma h``."""
        return 2.0 * self.friction / h

    def stationary_variance(self, h, lam, nu):
        return underdamped_variance(h, lam, nu, self.friction, self.friction)


def underdamped_variance(h, lam, nu, friction, diffusion):
    """Stationary variance of theta for the scheme above on ``U = lam u^2/2``.

    The linear recursion ``(theta, r) <- A (theta, r) + noise`` with noise variance
    ``q = 2 diffusion h + h^2 nu`` on ``r`` has the stationary covariance ``X = A X A' + Q``
    (discrete Lyapunov); for 2 x 2 matrices its three unknowns solve one 3 x 3 system, batched
    here over an array of steps ``h`` (a scalar ``h`` gives a float).  ``inf`` where ``A`` has
    an eigenvalue on or outside the unit circle (Jury: ``|det A| < 1`` and
    ``|tr A| < 1 + det A`` is stability).
    """
    h = np.asarray(h, dtype=float)
    keep = 1.0 - h * friction
    a11, a12, a21, a22 = 1.0 - h * h * lam, h * keep, -h * lam, keep
    det, trace = a11 * a22 - a12 * a21, a11 + a22
    M = np.stack([np.stack([1.0 - a11 * a11, -2.0 * a11 * a12, -a12 * a12], -1),
                  np.stack([-a11 * a21, 1.0 - a11 * a22 - a12 * a21, -a12 * a22], -1),
                  np.stack([-a21 * a21, -2.0 * a21 * a22, 1.0 - a22 * a22], -1)], -2)
    q = 2.0 * diffusion * h + h * h * nu
    rhs = (q[..., None] * np.stack([h * h, h, np.ones_like(h)], -1))[..., None]
    stable = (np.abs(det) < 1.0) & (np.abs(trace) < 1.0 + det)
    M[~stable] = np.eye(3)  # any invertible matrix: the answer there is inf
    variance = np.where(stable, np.linalg.solve(M, rhs)[..., 0, 0], np.inf)
    return float(variance) if variance.ndim == 0 else variance
