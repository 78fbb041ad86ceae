"""Sampler protocol: hyperparameter objects that build pure kernels.

A sampler object (``SGLD()``, ``SGHMC(friction=1.0)``, ...) only stores its
hyperparameters (``get_params``/``set_params`` for GridSearchCV).  In ``fit``
it builds a :class:`Kernel` -- a NamedTuple of functions, as in BlackJAX --
bound to one gradient estimator, one step size and one preconditioner.  The
kernel never sees data: it calls ``estimate(theta, est_state)``, which returns
``(grad, est_state, n_grad_evals)`` for all chains at once (rows of theta).

Kernel functions
----------------
``init(theta0, rngs) -> state``
    ``theta0`` is ``(C, p)``; ``rngs`` are the chains' noise streams (e.g. for
    initial momenta).  ``state.position`` is always the ``(C, p)`` position.
``draw_block(rngs, n_steps) -> randoms``
    Pre-draws the random inputs of ``n_steps`` steps (noise in blocks, never
    per step); ``randoms[t]`` is what step ``t`` of the block consumes.
``step(state, est_state, randoms_t) -> (state, est_state, n_grad_evals)``
``end_warmup(state) -> state``
    Called once when warm-up ends (HMC freezes its adapted step size there).
``step_size(state) -> ndarray (C,)``
    The step size in use per chain.
``info(state) -> dict``
    Sampler-specific figures for ``diagnostics_`` (e.g. HMC acceptance rate);
    empty by default.
"""

from typing import Callable, NamedTuple

import numpy as np

from ..utils import ParamsMixin

__all__ = ["BaseSampler", "Kernel", "standard_normal_block"]


class Kernel(NamedTuple):
    """Pure functions of one sampler bound to one fit (see module docstring)."""

    init: Callable
    draw_block: Callable
    step: Callable
    end_warmup: Callable
    step_size: Callable
    info: Callable = lambda state: {}


class BaseSampler(ParamsMixin):
    """Base class of the samplers.

    Subclasses define ``name``, ``needs_exact_gradient`` (True for HMC, which
    needs the full-data potential) and ``build_kernel``.  ``auto_step_size``
    returns the step size used for ``step_size="auto"``; see
    :func:`skbayes_sg.samplers.auto_step_size`.
    """

    name = None
    needs_exact_gradient = False

    def build_kernel(self, estimate, step_size, precond, n_params, *, potential=None, n_data=1):
        """Return a :class:`Kernel` (implemented by every sampler)."""
        raise NotImplementedError

    def stationary_variance(self, h, lam, nu):
        """Stationary variance of the scheme on ``U = lam u^2 / 2``.

        ``nu`` is the variance of the gradient noise (whitened units).  Used by
        :func:`~skbayes_sg.samplers.auto_step_size`; SG samplers implement it.
        """
        raise NotImplementedError


def standard_normal_block(rngs, n_steps, p):
    """``(n_steps, C, p)`` standard normals, chain ``c`` from ``rngs[c]`` only."""
    out = np.empty((n_steps, len(rngs), p))
    for c, rng in enumerate(rngs):
        out[:, c, :] = rng.standard_normal((n_steps, p))
    return out
