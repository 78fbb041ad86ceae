"""Overdamped Langevin samplers: SGLD and pSGLD (SGLD with an RMSprop diagonal)."""

from typing import NamedTuple

import numpy as np

from numbers import Real

from sklearn.utils._param_validation import Interval

from ._base import POSITIVE, BaseSampler, Kernel, chain_block, chain_normals, fixed_step
from ._ewsg import ewsg_energy, select_gradient

__all__ = ["PSGLD", "PSGLDState", "SGLD", "SGLDState"]


class SGLDState(NamedTuple):
    """Positions ``(C, p)``; with EWSG also each chain's last whitened move ``(C, p)``."""

    position: np.ndarray
    increment: object = None


class PSGLDState(NamedTuple):
    """Positions ``(C, p)`` and running mean squared gradients ``(C, p)``."""

    position: np.ndarray
    square_avg: np.ndarray


class _Overdamped(BaseSampler):
    """Position-only dynamics; the stationary variance is SGLD's closed form."""

    def stationary_variance(self, h, lam, nu):
        """``(h + h^2 nu / 4) / (1 - (1 - h lam / 2)^2)``, inf when unstable (``h`` may be an
        array)."""
        h = np.asarray(h, dtype=float)
        contraction = 1.0 - 0.5 * h * lam
        stable = np.abs(contraction) < 1.0
        with np.errstate(divide="ignore"):
            v = np.where(stable, (h + 0.25 * h * h * nu) / (1.0 - contraction**2), np.inf)
        return float(v) if v.ndim == 0 else v


class SGLD(_Overdamped):
    """Preconditioned stochastic-gradient Langevin dynamics.

    Notes
    -----
    With step size ``h``, gradient estimate ``g ≈ ∇U(theta)``, constant
    preconditioner ``M = L L^T`` and ``xi ~ N(0, I)``::

        theta <- theta - (h / 2) M g + sqrt(h) L xi

    ``h`` is in preconditioned units: with the Laplace preconditioner the whitened posterior has
    unit curvature and ``h`` of a few tenths is accurate when the gradient noise is small.  The
    Gaussian noise is drawn in blocks and pre-multiplied by ``L`` (float32 normals for float32
    data, :func:`~skbayes_sg.samplers._base.chain_normals`); the update runs in place on the
    estimator's fresh gradient array.

    With a ``noise_correction`` ``B`` (:meth:`~BaseSampler.build_kernel`: the measured variance
    of ``L^T g`` per whitened coordinate) the injected noise is ``sqrt(h - h^2 B / 4) L xi``, so
    that with the gradient's own noise, of variance ``h^2 B / 4``, the step has the variance of
    the exact-gradient scheme (at most ``SUBTRACTED_SHARE`` of the injected variance is removed).

    With ``estimator.n_candidates > 1`` (EWSG, overdamped variant of seed
    002 appendix F) ``g`` is the candidate that the index chain of
    :mod:`~skbayes_sg.samplers._ewsg` keeps, with energies
    ``E_m = ||x + (h/2) L^T g_m||^2 / (2 h)``.  *Deviation:* the appendix's equations are lost in
    our copy of the paper; the unknown increment ``x = u' - u`` is the chain's previous whitened
    increment (0 at the first step), the analogue of the underdamped ``r' ≈ r`` (``x = 0`` is worse
    than uniform subsampling on the seed-002 §5.1 toy).  Only then does the state carry that
    increment; the plain path is unchanged.

    References
    ----------
    Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic
    gradient Langevin dynamics. ICML.

    Li, R., Wang, X., Zha, H. and Tao, M. (2020). Improving sampling accuracy of stochastic
    gradient MCMC methods via non-uniform subsampling of gradients. arXiv:2002.08949.
    """

    name = "sgld"
    couples_index = subtracts_noise = True
    #: EWSG's energies of the candidates (:class:`~.Underdamped`'s ``index_energy``)
    index_energy = staticmethod(ewsg_energy)

    def __init__(self):
        pass

    def subtractable_noise(self, h):
        """The gradient's noise enters as ``(h/2)^2 nu``, the injected as ``h``: ``4 / h``."""
        return 4.0 / h

    def _build(self, estimator, h, precond, keep=1.0):
        if estimator.n_candidates > 1:
            return _coupled_sgld(estimator, h, precond, self.index_energy)
        half, estimate, apply = 0.5 * h, estimator.estimate, precond.apply

        def init(theta0, rngs):
            return SGLDState(np.array(theta0, dtype=float))

        def step(index_rngs, state, est_state, noise):
            g, est_state, n = estimate(index_rngs, state.position, est_state)
            g = apply(g)  # fresh (the estimator's or the product's): updated in place
            g *= -half
            g += state.position
            g += noise
            return SGLDState(g), est_state, n

        return Kernel(init, _sgld_noise(h, precond, estimator, keep), step, fixed_step(h))


def _sgld_noise(h, precond, estimator, keep=1.0):
    """``draw_block`` of SGLD: ``(n_steps, C, p)`` normals times ``sqrt(h) keep L``.

    float32 normals when the estimator computes in float32 (:func:`chain_normals`); ``keep``
    (a float or one per whitened coordinate) leaves room for the gradient noise.
    """
    scale, from_u = np.sqrt(h) * keep, precond.from_u
    dtype = getattr(estimator, "compute_dtype", None)

    return lambda rngs, n_steps, p: from_u(chain_normals(rngs, n_steps, p, dtype, scale))


def _coupled_sgld(estimator, h, precond, energy):
    """SGLD's kernel with EWSG's index chain (see :class:`SGLD`; its energies ``energy``); state
    keeps ``x``."""
    half, apply, inv = 0.5 * h, precond.apply, precond.inv
    gradient, uniforms = select_gradient(estimator, half, precond, 1.0,
                                         lambda state: state.increment, energy)
    noise_block = _sgld_noise(h, precond, estimator)

    def init(theta0, rngs):
        theta = np.array(theta0, dtype=float)
        return SGLDState(theta, np.zeros_like(theta))

    def draw_block(rngs, n_steps, p):
        return list(zip(noise_block(rngs, n_steps, p), uniforms(rngs, n_steps)))

    def step(index_rngs, state, est_state, randoms):
        theta = state.position
        noise, u = randoms
        g, est_state, n = gradient(index_rngs, theta, est_state, state, u)
        new = theta - half * apply(g) + noise
        return SGLDState(new, inv(new - theta)), est_state, n

    return Kernel(init, draw_block, step, fixed_step(h))


class PSGLD(_Overdamped):
    """Preconditioned SGLD (RMSprop-style adaptive diagonal).

    Parameters
    ----------
    decay : float, default=0.999
        Decay ``a`` of the running average of squared gradients, in [0, 1).  Li et al. use 0.99;
        without the Gamma term the diagonal then tracks the position and inflates the variance,
        more at small steps.  Averaging over ~1000 steps keeps it near-constant: no bias.
    eps : float, default=1e-5
        Damping ``lam`` added to ``sqrt(V)`` (finite, > 0).

    Notes
    -----
    In whitened coordinates (on top of the constant preconditioner), with ``gbar = L^T g / N``::

        V     <- a V + (1 - a) gbar * gbar
        G     <- 1 / (lam + sqrt(V))
        theta <- theta + L (-(h/2) G * L^T g + sqrt(h G) * xi)

    The Gamma correction term is dropped, as is usual.  ``V`` starts at the first step's
    ``gbar^2``.  Because ``G ~ N / |L^T g|``, pSGLD's ``h`` is about ``N`` times smaller than
    SGLD's for the same move; ``"auto"`` accounts for it (:meth:`step_scale`).  The stationary
    variance used by ``"auto"`` is SGLD's at the typical ``G``.

    References
    ----------
    Li, C., Chen, C., Carlson, D. and Carin, L. (2016). Preconditioned
    stochastic gradient Langevin dynamics for deep neural networks. AAAI.
    """

    name = "psgld"

    def __init__(self, decay=0.999, eps=1e-5):
        self.decay = decay
        self.eps = eps

    _parameter_constraints = {"decay": [Interval(Real, 0, 1, closed="left")], "eps": POSITIVE}

    def _build(self, estimator, h, precond):
        a, lam, inv_n = float(self.decay), float(self.eps), 1.0 / estimator.n_data
        estimate, to_u, from_u = estimator.estimate, precond.to_u, precond.from_u

        def init(theta0, rngs):
            return PSGLDState(np.array(theta0, dtype=float), None)

        def step(index_rngs, state, est_state, xi):
            theta, V = state
            g, est_state, n = estimate(index_rngs, theta, est_state)
            gu = to_u(g)
            sq = (inv_n * gu) ** 2
            V = sq if V is None else a * V + (1.0 - a) * sq
            G = 1.0 / (lam + np.sqrt(V))
            du = -0.5 * h * G * gu + np.sqrt(h * G) * xi
            return PSGLDState(theta + from_u(du), V), est_state, n

        return Kernel(init, chain_block, step, fixed_step(h))

    def step_scale(self, lam, nu, n_data):
        """Typical ``1/G`` at stationarity: pSGLD's ``h`` = SGLD's ``h`` times this."""
        return self.eps + np.sqrt(lam + nu) / n_data
