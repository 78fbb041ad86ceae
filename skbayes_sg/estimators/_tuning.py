"""Tuning in ``fit``: curvature, gradient noise, ``step_size="auto"`` and ``batch_size="auto"``.

The step-size rule
------------------
After preconditioning, the posterior near the mode is approximately ``N(0, diag(1/lam_j))`` with
curvatures ``lam_j`` in ``[lam_min, lam_max]`` (all 1 for an exact Laplace preconditioner), and the
gradient estimate has noise of variance ``nu`` per whitened coordinate (measured on a pilot of a
few estimates at Laplace draws -- the 95% quantile over coordinates, so the noisiest directions
stay accurate; 0 for the exact gradient).  Each SG sampler's recursion on ``U = lam u^2/2`` is
linear-Gaussian, so its stationary variance ``v(h)`` is known in closed form
(``sampler.stationary_variance``).  :func:`auto_step_size` returns the largest ``h`` on a geometric
grid such that ``lam v(h')`` is within ``tol`` (default 5%) of 1 at ``lam_max`` and ``lam_min`` for
every grid step ``h' <= h`` (errors of opposite sign must not cancel by luck at one large step) --
so the step shrinks automatically as the gradient noise grows (``N/b`` large without control
variates), and stays large when control variates make the noise small.  The result is capped at
``max_step`` (default 0.5: beyond it the mixing gain is small and the Gaussian approximation of the
posterior matters more).  HMC adapts its own step (``sampler.adapts_step_size``) and starts from
``1 / sqrt(lam_max)``.
"""

from dataclasses import dataclass

import numpy as np

from ..preprocessing import (gradient_noise, power_curvature, subsample_hessian,
                             whitened_curvature)

__all__ = ["AUTO_BATCH", "AUTO_BATCH_MAX", "Tuning", "auto_batch_size", "auto_step_size", "tune",
           "variance_error"]

# Gradient-noise pilot: the CV noise grows like ||theta - mode||^2, so its mean over
# the Laplace draws needs many positions (4 gave a 6x spread of the auto step).
_PILOT_POSITIONS, _PILOT_ESTIMATES = 16, 8
# batch_size="auto": start here, double while the gradient noise binds the auto step, stop here
AUTO_BATCH, AUTO_BATCH_MAX = 100, 1600


@dataclass(frozen=True)
class Tuning:
    """What tuning decided: step and batch sizes, and the measurements behind them."""

    step_size: float
    batch_size: int
    gradient_noise: float
    curvature: float
    curvature_min: float
    n_grad_evals: int
    variance_error: float = 0.0
    auto_step_size: float = None


def variance_error(sampler, h, lam_max, nu, *, lam_min=None, n_data=1):
    """Predicted relative error of the stationary variance at the step ``h`` (sampler's units).

    ``max |lam v(h) - 1|`` over the whitened curvatures ``lam_max`` and ``lam_min``, with ``v``
    the sampler's closed-form stationary variance (:mod:`skbayes_sg.samplers`) and ``nu`` the
    measured gradient noise; ``inf`` where the scheme is unstable.  0 for samplers without one
    (HMC's Metropolis step removes the bias).
    """
    if sampler.adapts_step_size:
        return 0.0
    whitened = h / sampler.step_scale(lam_max, nu, n_data)
    lams = {lam_max, lam_max if lam_min is None else lam_min}
    return max(abs(lam * sampler.stationary_variance(whitened, lam, nu) - 1.0) for lam in lams)


def auto_step_size(sampler, lam_max, nu, *, lam_min=None, n_data=1, tol=0.05, max_step=0.5):
    """Largest accurate step on the whitened Gaussian (see module docstring).

    ``n_data`` only matters for pSGLD, whose step is rescaled by its typical
    ``1/G`` (``sampler.step_scale``).
    """
    lam_min = lam_max if lam_min is None else lam_min
    grid = np.geomspace(1e-7, max_step / np.sqrt(lam_max * max(lam_max, 1.0)), 400)
    bad = np.zeros(grid.size, dtype=bool)
    for lam in {lam_max, lam_min}:  # the whole grid at once: the closed forms take arrays
        with np.errstate(invalid="ignore"):
            bad |= ~(np.abs(lam * sampler.stationary_variance(grid, lam, nu) - 1.0) <= tol)
    first_bad = int(np.argmax(bad)) if bad.any() else grid.size
    best = float(grid[first_bad - 1]) if first_bad > 0 else 1e-7
    return best * sampler.step_scale(lam_max, nu, n_data)


def auto_batch_size(sampler, lam_max, nu, batch_size, max_batch, *, lam_min=None,
                    min_fraction=0.5):
    """Smallest ``b = batch_size * 2^k <= max_batch`` whose auto step is not noise-bound.

    ``nu`` is the gradient noise measured at ``batch_size``; at ``b`` it is taken as
    ``nu * batch_size / b`` (minibatch noise falls like ``1/b``).  Returns the first ``b`` whose
    whitened :func:`auto_step_size` is at least ``min_fraction`` of the noise-free step, else
    ``max_batch``.  Where the gradient noise dominates, the step, hence the mixing per step, grows
    like ``b``, so a fixed number of steps buys more effective draws for proportionally more
    gradient evaluations; once the step nears its noise-free value extra rows are wasted, which is
    where this stops.
    """
    def step(noise):  # whitened units, without pSGLD's rescaling
        h = auto_step_size(sampler, lam_max, noise, lam_min=lam_min)
        return h / sampler.step_scale(lam_max, noise, 1)

    target, b = min_fraction * step(0.0), int(batch_size)
    while b < max_batch and step(nu * batch_size / b) < target:
        b = min(2 * b, int(max_batch))
    return b


def _curvature(posterior, laplace, precond, rng):
    """``(lam_max, lam_min or None, n_grad_evals)`` of the whitened Hessian at the mode.

    A Laplace whose Hessian came from a subsample whitens that Hessian exactly, so its spectrum
    says nothing: the extremes are those of a second, independent subsample Hessian of the same
    size, whose error adds to the first's (about sqrt(2) times the true spread around 1: the
    step errs small).
    """
    if laplace.hessian is not None and laplace.hessian_rows is not None:
        H, evals = subsample_hessian(posterior, laplace.mode, rng)
        return (*whitened_curvature(H, precond), evals)
    if laplace.hessian is not None:
        return (*whitened_curvature(laplace.hessian, precond), 0)
    lam, evals = power_curvature(posterior, laplace.mode, precond, rng)
    return lam, None, evals


def tune(sampler, strategy, posterior, laplace, precond, *, batch_size, step_size, streams):
    """Build the gradient estimator, measure, pick the batch and the step.

    The estimator is built at ``batch_size`` (``AUTO_BATCH`` for ``"auto"``, at most ``N``); with
    ``batch_size="auto"`` (and the automatic step of an SG sampler) it is rebuilt once at the
    batch :func:`auto_batch_size` picks -- all the rows when that batch is at least half of them
    (the gradient is then exact for twice the cost) -- the cost of both builds and pilots counted.

    Returns
    -------
    estimator : GradientEstimator
    tuning : Tuning
    """
    b = min(AUTO_BATCH if batch_size == "auto" else int(batch_size), posterior.n_rows)
    estimator = strategy.build(posterior, laplace, batch_size=b, rng=streams.child("strategy"))
    lam_max, lam_min, evals = _curvature(posterior, laplace, precond, streams.child("curvature"))
    pilot_rng = streams.child("pilot")
    positions = laplace.draws(pilot_rng, _PILOT_POSITIONS)

    def noise(est):
        return gradient_noise(est.pilot(), pilot_rng.spawn(_PILOT_POSITIONS), positions, precond,
                              n_estimates=_PILOT_ESTIMATES)

    nu, more = noise(estimator)
    evals += more
    if batch_size == "auto" and step_size == "auto" and not (
            estimator.exact or sampler.adapts_step_size):
        cap = min(AUTO_BATCH_MAX, posterior.n_rows, strategy.max_batch_size(posterior.n_rows))
        b_auto = auto_batch_size(sampler, lam_max, nu, b, max(b, cap), lam_min=lam_min)
        if b_auto > b and 2 * b_auto >= posterior.n_rows:  # within 2x of every row: take them all
            b_auto = min(posterior.n_rows, strategy.max_batch_size(posterior.n_rows))
        if b_auto != b:
            evals += estimator.preprocessing_evals
            estimator = strategy.build(posterior, laplace, batch_size=b_auto,
                                       rng=streams.child("strategy"))
            (nu, more), b = noise(estimator), b_auto
            evals += more
    if sampler.adapts_step_size:
        auto = sampler.initial_step_size(lam_max)
    else:
        auto = auto_step_size(sampler, lam_max, nu, lam_min=lam_min, n_data=estimator.n_data)
    h = auto if step_size == "auto" else float(step_size)
    if estimator.exact:  # every row each step, whatever batch the strategy was built at
        b = posterior.n_rows
    error = variance_error(sampler, h, lam_max, nu, lam_min=lam_min, n_data=estimator.n_data)
    return estimator, Tuning(h, int(b), nu, lam_max, lam_min, int(evals), error, auto)
