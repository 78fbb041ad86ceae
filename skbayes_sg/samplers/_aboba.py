"""SGHMC's symmetric splitting (ABOBA): one gradient per step, second order.

Per step of size ``h`` with friction ``gamma``, ``a = e^{-gamma h}``, whitened momentum ``r`` and
``M = L L^T``::

    A  theta <- theta + (h/2) L r
    B  r     <- r - (h/2) L^T g(theta)
    O  r     <- a r + sqrt(1 - a^2) xi
    B  r     <- r - (h/2) L^T g(theta)          (the same g: theta has not moved)
    A  theta <- theta + (h/2) L r

The two half kicks share one gradient, so a step costs one estimate, as Euler's does.  On a
Gaussian target with the exact gradient the stationary law of ``theta`` is exact at every stable
step (``h^2 lam < 4``): the discretisation error of the position is zero there, and on smooth
targets it is second order in ``h`` (Euler's is first order).  The gradient noise ``eta`` enters
as ``-(h/2)(1 + a) eta``, right beside the ``O`` noise, so subtracting its measured variance
from the injected noise (``noise_correction``) leaves exactly the noise-free scheme, as for
Euler SGHMC.

The kernel keeps ``u = (h/2) L r`` beside the position: a step evaluates the gradient at the
midpoint ``theta + u``, updates ``r``, and stores ``theta' = theta + u + u'``.
"""

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from scipy.optimize import brentq

from ._base import SUBTRACTED_SHARE, Kernel, chain_block, chain_normals, fixed_step
from ._ewsg import GradientSource, plain_gradient
from ._lyapunov import position_variance

__all__ = ["ABOBAIntegrator", "ABOBAState", "aboba_cap", "aboba_noise_room", "aboba_variance"]


class ABOBAState(NamedTuple):
    """Positions ``(C, p)`` (where draws are taken), whitened momenta ``(C, p)`` and the half
    move ``u = (h/2) L r`` ``(C, p)``."""

    position: np.ndarray
    momentum: np.ndarray
    half_move: np.ndarray


@dataclass(frozen=True)
class ABOBAIntegrator:
    """The splitting above; ``SGHMC(integrator="aboba")``.

    ``max_step`` caps the automatic whitened step: 0.75, where the second-order bias is small (on
    the skewed ``U = u^2/2 + e^u - u`` it moves the mean by 0.03 sd and leaves the sd exact to
    0.1%, where Euler at the same step inflates the sd by 12%;
    ``tests/test_samplers.py::test_aboba_second_order_bias_at_its_step_cap``).  It does not
    couple EWSG's candidates (``couples_index``): their energies are the Euler kernel's.
    """

    name: ClassVar[str] = "aboba"
    max_step: ClassVar[float] = 0.75
    couples_index: ClassVar[bool] = False

    def gradient(self, estimator, h, precond, diffusion, energy=None):
        """The kernel's :class:`~._ewsg.GradientSource`: the plain estimate (no uniforms; no
        index chain, so no ``energy``)."""
        return GradientSource(plain_gradient(estimator), None)

    def kernel(self, source, h, precond, friction, diffusion, *, keep=1.0, thermostat=None,
               dtype=None):
        """The :class:`Kernel` of the splitting (``keep`` scales the ``O`` noise's sd, ``dtype``
        is that of the noise).  The noise is ``1 - a^2`` whatever ``diffusion`` (SGHMC's equals
        its friction); no thermostat."""
        if thermostat is not None:
            raise ValueError("the ABOBA integrator has no thermostat: SGNHT runs the Euler one.")
        return _aboba_kernel(source.gradient, h, precond, friction, keep, dtype)

    def stationary_variance(self, h, lam, nu, friction):
        """:func:`aboba_variance`."""
        return aboba_variance(h, lam, nu, friction)

    def subtractable_noise(self, h, friction):
        """:func:`aboba_noise_room`: ``4 tanh(gamma h / 2) / h^2``."""
        return aboba_noise_room(h, friction)

    def subtraction_cap(self, top, friction):
        """:func:`aboba_cap`."""
        return aboba_cap(top, friction)


def _aboba_kernel(gradient, h, precond, friction, keep, dtype):
    """The :class:`Kernel` of the splitting above."""
    a = float(np.exp(-friction * h))
    half, kick = 0.5 * h, -0.5 * h * (1.0 + a)
    scale = np.sqrt(1.0 - a * a) * keep
    to_u, from_u = precond.to_u, precond.from_u

    def init(theta0, rngs):
        r = chain_block(rngs, 1, theta0.shape[1])[0]
        u = half * from_u(r)  # a new array: from_u may return r itself (identity)
        return ABOBAState(np.array(theta0, dtype=float), r, u)

    def draw_block(rngs, n_steps, p):
        return chain_normals(rngs, n_steps, p, dtype, scale)

    def step(index_rngs, state, est_state, noise):
        theta, r, u = state
        mid = theta + u
        g, est_state, n = gradient(index_rngs, mid, est_state, state, None)
        g = to_u(g)  # fresh: updated in place
        g *= kick
        g += noise
        r = a * r
        r += g
        u = half * from_u(r)
        mid += u
        return ABOBAState(mid, r, u), est_state, n

    return Kernel(init, draw_block, step, fixed_step(h))


def aboba_noise_room(h, friction):
    """Gradient-noise variance whose contribution ``(h/2)^2 (1 + a)^2 nu`` equals the injected
    ``1 - a^2``: ``4 tanh(gamma h / 2) / h^2``."""
    return 4.0 * np.tanh(0.5 * friction * h) / (h * h)


def aboba_cap(top, friction):
    """Largest step at which ``top`` is at most ``SUBTRACTED_SHARE`` of
    :func:`aboba_noise_room` (it falls with ``h``); ``inf`` for ``top <= 0``."""
    if top <= 0:
        return np.inf
    f = lambda h: SUBTRACTED_SHARE * aboba_noise_room(h, friction) - top  # noqa: E731
    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
    lo = hi / 2.0
    while f(lo) < 0:
        lo /= 2.0
    return float(brentq(f, lo, hi, xtol=1e-12, rtol=1e-12))


def aboba_variance(h, lam, nu, friction):
    """Stationary variance of ``theta`` on ``U = lam u^2 / 2`` with gradient noise ``nu``.

    The step is linear, ``(theta, r) <- A (theta, r) + n e``, with ``A = A_h B_h O B_h A_h``
    (``A_h = [[1, h/2], [0, 1]]``, ``B_h = [[1, 0], [-h lam / 2, 1]]``, ``O = diag(1, a)``), the
    noise direction ``n = A_h (0, 1) = (h/2, 1)`` and ``Var e = 1 - a^2 + (h/2)^2 (1 + a)^2 nu``
    (:func:`~._lyapunov.position_variance`).  At ``nu = 0`` this is ``1 / lam`` at every stable
    step.  ``h`` may be an array (a float gives a float).
    """
    h = np.asarray(h, dtype=float)
    a = np.exp(-friction * h)
    one = np.ones_like(h)
    A_h = np.stack([np.stack([one, 0.5 * h], -1), np.stack([0 * h, one], -1)], -2)
    B_h = np.stack([np.stack([one, 0 * h], -1), np.stack([-0.5 * h * lam, one], -1)], -2)
    O = np.stack([np.stack([one, 0 * h], -1), np.stack([0 * h, a], -1)], -2)
    A = A_h @ B_h @ O @ B_h @ A_h
    q = 1.0 - a * a + (0.25 * h * h) * (1.0 + a) ** 2 * nu
    return position_variance(A, q, 0.5 * h, one)
