"""Sampler protocol: hyperparameter objects that build pure kernels.

A sampler object (``SGLD()``, ``SGHMC(friction=1.0)``, ...) only stores its hyperparameters
(``get_params``/``set_params`` for GridSearchCV).  In ``fit`` it builds a :class:`Kernel` -- a
NamedTuple of functions, as in BlackJAX -- bound to one gradient estimator, one step size and one
preconditioner.  The kernel never sees data: it calls
``estimator.estimate(index_rngs, theta, est_state)``, which returns
``(grad, est_state, n_grad_evals)`` for all chains at once (rows of theta).

Kernel functions
----------------
``init(theta0, rngs) -> state``
    ``theta0`` is ``(C, p)``; ``rngs`` are the chains' noise streams (e.g. for
    initial momenta).  ``state.position`` is always the ``(C, p)`` position.
``draw_block(rngs, n_steps, p) -> randoms``
    Pre-draws the random inputs of ``n_steps`` steps (noise in blocks, never
    per step); ``randoms[t]`` is what step ``t`` of the block consumes.
``step(index_rngs, state, est_state, randoms_t) -> (state, est_state, n_grad_evals)``
    ``index_rngs`` (the chains' minibatch streams) go to the estimator.
``end_warmup(state) -> state``
    Called once when warm-up ends (HMC freezes its adapted step size there).
``step_size(state) -> ndarray (C,)``
    The step size in use per chain.
``info(state) -> dict``
    Sampler-specific figures for ``diagnostics_`` (e.g. HMC acceptance rate).
"""

from numbers import Real
from typing import Callable, NamedTuple

import numpy as np

from sklearn.utils._param_validation import Interval

from ..utils import ParamsMixin

__all__ = ["POSITIVE", "BaseSampler", "Kernel", "chain_block", "chain_normals", "fixed_step"]

POSITIVE = (Interval(Real, 0, np.inf, closed="neither"),)  # finite and > 0
# Largest share of the injected noise variance a measured gradient-noise variance may replace
# (``noise_correction``).  The correction is exact only where the noise is as measured: it is
# diagonal in whitened coordinates while the noise is correlated (a softmax's gradient has none
# along its class-sum directions), and it is the pilot positions' average while control
# variates' noise grows with the distance from the mode (per-position variances 0.2-3.6 times
# the average).  A direction can therefore lose up to this share of its noise, narrowing its sd
# to sqrt(1 - share): at 0.5 the rarest class's intercept of softmax_unequal (10 classes of 35 to
# 3,510 rows) came out 0.5 sd off with sd ratios near 0.75, silently, in 6 of 10 fits; at 0.2
# all 10 were within tolerance (benchmarks/results/calibration_multiclass.md).
SUBTRACTED_SHARE = 0.2


class Kernel(NamedTuple):
    """Pure functions of one sampler bound to one fit (see module docstring)."""

    init: Callable
    draw_block: Callable
    step: Callable
    step_size: Callable
    end_warmup: Callable = lambda state: state
    info: Callable = lambda state: {}


class BaseSampler(ParamsMixin):
    """Base class of the samplers.

    Capabilities are class attributes: ``needs_exact_gradient`` (HMC: the estimator must be exact
    and provide ``potential``), ``adapts_step_size`` (HMC: dual averaging from
    ``initial_step_size(lam_max)``), ``couples_index`` (SGLD, SGNHT and SGHMC with a coupling
    integrator can pick among ``estimator.n_candidates > 1`` gradients, EWSG) and
    ``subtracts_noise`` (SGLD, SGHMC: a ``noise_correction`` for :meth:`build_kernel`, sized by
    ``subtractable_noise(h)``).  Subclasses implement ``_build(estimator, h, precond) ->
    Kernel``, which :meth:`build_kernel` calls after checking the hyperparameters and that the
    sampler :meth:`accepts` the estimator.
    """

    name = None
    needs_exact_gradient = False
    adapts_step_size = False
    couples_index = False
    subtracts_noise = False
    max_step = 0.5  # cap of the automatic whitened step (fitting._rules.auto_step_size)

    def gradients_per_step(self, step_size):
        """Gradient estimates one step costs (1; HMC: its leapfrog steps)."""
        return 1.0

    def build_kernel(self, estimator, step_size, precond, noise_correction=None):
        """Return a :class:`Kernel` for ``estimator`` at ``step_size`` with ``precond``.

        ``noise_correction`` (SGLD, SGHMC; ``(p,)``) is the measured variance of the gradient
        noise per whitened coordinate, which the kernel subtracts from the variance of the noise
        it injects -- Chen et al.'s (2014) ``B-hat`` -- up to ``SUBTRACTED_SHARE`` of it
        (:meth:`subtractable_noise`), so that the two together have the variance of the exact
        dynamics.
        """
        self.validate()
        if not self.accepts(estimator):  # fit checks the pair first, with the fix in its message
            raise ValueError(
                f"{self!r} cannot run on this gradient estimator (exact={estimator.exact}, "
                f"n_candidates={estimator.n_candidates}); "
                "skbayes_sg.fitting.check_combination(sampler, strategy) says what works.")
        h = float(step_size)
        if noise_correction is None:
            return self._build(estimator, h, precond)
        if not self.can_subtract_noise(estimator):
            raise ValueError(f"noise_correction needs sampler='sgld' or 'sghmc' on a minibatch "
                             f"gradient without EWSG (got sampler={self.name!r}).")
        room = self.subtractable_noise(h)
        keep = np.sqrt(1.0 - np.minimum(noise_correction, SUBTRACTED_SHARE * room) / room)
        return self._build(estimator, h, precond, keep=keep)

    def accepts(self, estimator):
        """Whether ``estimator`` gives what the kernel needs: the exact gradient (and potential)
        where ``needs_exact_gradient``, one estimate per step unless ``couples_index``."""
        return ((estimator.exact or not self.needs_exact_gradient)
                and (estimator.n_candidates == 1 or self.couples_index))

    def subtractable_noise(self, h):
        """Gradient-noise variance (whitened, per coordinate) equal to one step's injected noise
        (samplers with ``subtracts_noise``; not pSGLD, SGNHT, whose thermostat absorbs the
        noise, or HMC).  See :meth:`build_kernel`."""
        raise NotImplementedError(f"{type(self).__name__} does not subtract gradient noise.")

    def subtraction_cap(self, top):
        """Largest step at which a correction of ``top`` is at most ``SUBTRACTED_SHARE`` of the
        injected noise (``SUBTRACTED_SHARE subtractable_noise(h) >= top``); ``subtractable_noise``
        falling like ``1 / h`` (SGLD, Euler SGHMC) gives ``SUBTRACTED_SHARE subtractable_noise(1)
        / top``."""
        return (SUBTRACTED_SHARE * self.subtractable_noise(1.0) / top if top > 0
                else np.inf)

    def can_subtract_noise(self, estimator):
        """Whether :meth:`build_kernel` takes a ``noise_correction`` for ``estimator``."""
        return self.subtracts_noise and not estimator.exact and estimator.n_candidates == 1

    def stationary_variance(self, h, lam, nu):
        """Stationary variance of the scheme on ``U = lam u^2 / 2``.

        ``nu`` is the variance of the gradient noise (whitened units).  Used by
        ``step_size="auto"``; SG samplers implement it for a float ``h`` (returning a float) and
        for an array of steps (returning an array: the rule scans a whole grid at once).
        """
        raise NotImplementedError(f"{type(self).__name__} has no stationary variance.")

    def step_scale(self, lam, nu, n_data):
        """Factor from the step in whitened units to this sampler's ``h`` (1)."""
        return 1.0


def fixed_step(h):
    """``Kernel.step_size`` of a sampler whose step does not adapt."""
    return lambda state: np.full(state.position.shape[0], h)


def chain_block(rngs, n_steps, k, draw="standard_normal", *args):
    """``(n_steps, C, k)`` draws of ``rng.<draw>(*args)``, chain ``c`` from ``rngs[c]`` only."""
    out = np.empty((n_steps, len(rngs), k))
    for c, rng in enumerate(rngs):
        out[:, c, :] = getattr(rng, draw)(*args, size=(n_steps, k))
    return out


def chain_normals(rngs, n_steps, k, dtype=None, scale=1.0):
    """``(n_steps, C, k)`` normals of standard deviation ``scale`` (a float, or one per
    coordinate), chain ``c`` from ``rngs[c]``.

    ``dtype=np.float32`` (the noise of a fit on float32 data) uses the Box-Muller transform of
    float32 uniforms: numpy's SIMD ``log``/``sin``/``cos`` make it faster than the ziggurat (for a
    large MLP the noise costs as much as the gradient).  ``u1`` is taken in ``(0, 1]``, so the draws
    are exact normals truncated at ``sqrt(-2 log 2^-24) = 5.8`` sd (probability 8e-9).  Each step's
    normals come from its own ``2 ceil(k / 2)`` uniforms, so the numbers do not depend on how steps
    are grouped in blocks (the block size changes with the number of chains of a group:
    ``n_jobs``).  Otherwise :func:`chain_block`'s float64 ziggurat normals.
    """
    if np.ndim(scale):  # one sd per coordinate
        out = chain_normals(rngs, n_steps, k, dtype)
        out *= np.asarray(scale, dtype=out.dtype)
        return out
    if dtype != np.float32:
        out = chain_block(rngs, n_steps, k)
        if scale != 1.0:
            out *= scale
        return out
    out, half = np.empty((n_steps, len(rngs), k), dtype=np.float32), (k + 1) // 2
    z = np.empty((n_steps, 2 * half), dtype=np.float32)
    for c, rng in enumerate(rngs):  # each step pairs its own uniforms: blocks can be any size
        u = rng.random((n_steps, 2 * half), dtype=np.float32)
        radius, angle = u[:, :half], u[:, half:]
        np.subtract(np.float32(1.0), radius, out=radius)
        np.log(radius, out=radius)
        radius *= np.float32(-2.0 * scale * scale)  # the scale rides in the radius
        np.sqrt(radius, out=radius)
        angle *= np.float32(2.0 * np.pi)
        np.multiply(np.cos(angle, out=z[:, :half]), radius, out=z[:, :half])
        np.multiply(np.sin(angle, out=z[:, half:]), radius, out=z[:, half:])
        out[:, c, :] = z[:, :k]
    return out
