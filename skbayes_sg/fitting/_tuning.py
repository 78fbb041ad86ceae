"""Tuning in ``fit``: curvature, gradient noise, ``step_size="auto"`` and ``batch_size="auto"``.

:func:`tune` builds the strategy's gradient estimator, measures the whitened curvature and the
gradient noise on a pilot at Laplace draws, and applies the rules of :mod:`._rules` (the
step-size rule on the whitened Gaussian, the noise subtraction, the batch rule) to pick the
batch and the step.
"""

from dataclasses import dataclass

import numpy as np

from ..preprocessing import (gradient_noise, once_per, power_curvature,
                             subsample_hessian, whitened_curvature)
from ._rules import (auto_batch_size, auto_friction, auto_step_size, best_step, step_rule,
                     variance_error)

__all__ = ["AUTO_BATCH", "AUTO_BATCH_MAX", "Tuning", "auto_batch_size", "auto_friction",
           "auto_step_size", "best_step", "step_rule", "tune", "variance_error"]

# Gradient-noise pilot: the CV noise grows like ||theta - mode||^2, so its mean over
# the Laplace draws needs many positions (4 gave a 6x spread of the auto step).
_PILOT_POSITIONS, _PILOT_ESTIMATES = 16, 8
# Where the sampler subtracts the measured noise, the rule sees the error of the measurement:
# 4x the estimates halve it (softmax 10 x 1,000: 22% -> 11% of the noise; batch 1,600 -> 800).
_SUBTRACT_ESTIMATES = 32
# the measured noise is subtracted from this many rows on (small data: the textbook scheme)
_SUBTRACT_MIN_ROWS = 10_000
# batch_size="auto": start here, double while the gradient noise binds the auto step, stop here
AUTO_BATCH, AUTO_BATCH_MAX = 100, 1600
# sampler="auto" runs SGHMC with this integrator on the Laplace-whitened models from
# _SUBTRACT_MIN_ROWS rows on: no position error on a Gaussian, so the automatic step reaches its
# cap (10^6 x 50 logistic: 0.69 where Euler's 5% error stopped at 0.32) and each step mixes
# further.  Smaller data keep Euler: their posteriors can be far from Gaussian, and at the steps
# the splitting allows there chains make tail excursions (breast cancer, 569 rows: an sd ratio of
# 1.72 in 1 of 20 seeds at step 0.50, where Euler's rule gives about 0.3)
AUTO_INTEGRATOR = "aboba"


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
    noise_correction: np.ndarray = None  # subtracted by the sampler (step_size="auto")
    noise_left: float = None  # the level that remains after it


def _curvature(posterior, laplace, precond, rng):
    """``(lam_max, lam_min or None, n_grad_evals)`` of the whitened Hessian at the mode, measured
    once per fit (``subsampling="auto"`` tunes two strategies with the same ``rng`` stream; the
    power iterations of a structured Laplace cost dozens of passes: 0 evaluations the second
    time).

    Without a Hessian, power iterations give the largest and, but for the MLP, the smallest.

    A Laplace whose Hessian came from a subsample whitens that Hessian exactly, so its spectrum
    says nothing: the extremes are those of a second, independent subsample Hessian of the same
    size, whose error adds to the first's (about sqrt(2) times the true spread around 1: the
    step errs small).
    """
    key = ("curvature", repr(rng.bit_generator.state))
    (lam_max, lam_min), evals = once_per((posterior, laplace, precond), key,
                                         lambda: _measure_curvature(posterior, laplace, precond,
                                                                    rng))
    return lam_max, lam_min, evals


def _measure_curvature(posterior, laplace, precond, rng):
    """``((lam_max, lam_min or None), n_grad_evals)``: see :func:`_curvature`."""
    if laplace.hessian is not None and laplace.hessian_rows is not None:
        H, evals = subsample_hessian(posterior, laplace.mode, rng)
        return whitened_curvature(H, precond), evals
    if laplace.hessian is not None:
        return whitened_curvature(laplace.hessian, precond), 0
    lam_max, lam_min, evals = power_curvature(posterior, laplace.mode, precond, rng,
                                              lowest=not posterior.model.random_init)
    return (lam_max, lam_min), evals


def tune(sampler, strategy, posterior, laplace, precond, *, batch_size, step_size, streams,
         choose_friction=False, probe=False):
    """Build the gradient estimator, measure, pick the batch and the step.

    The estimator is built at ``batch_size`` (``AUTO_BATCH`` for ``"auto"``, at most ``N``); with
    ``batch_size="auto"`` (and the automatic step of an SG sampler) it is rebuilt once at the
    batch :func:`auto_batch_size` picks -- all the rows when that batch is at least half of them
    (the gradient is then exact for twice the cost) -- the cost of both builds and pilots counted.
    The measured noise is subtracted (``noise_correction``) only from ``_SUBTRACT_MIN_ROWS``
    rows on: it allows steps as large as the exact gradient's, and on small data the posterior
    can be far enough from Gaussian that such steps without a Metropolis test make tail
    excursions (breast cancer, 569 rows: sd ratios up to 1.43 in 2 of 20 seeds at batch 200).

    With ``probe`` a batch rule that picks a larger batch returns at once, without the rebuild:
    the tuning's ``batch_size`` is the batch picked, the rest is the first batch's
    (``subsampling="auto"`` only asks whether uniform rows need a larger batch).

    With ``choose_friction`` (``sampler="auto"``) the SGHMC object of this fit gets
    :func:`auto_friction` of the measured curvature and, on the Laplace-whitened models from
    ``_SUBTRACT_MIN_ROWS`` rows on without EWSG, the ABOBA splitting (``AUTO_INTEGRATOR``).

    Returns
    -------
    estimator : GradientEstimator
    tuning : Tuning
    """
    N = posterior.n_rows
    b = min(AUTO_BATCH if batch_size == "auto" else int(batch_size), N)
    estimator = strategy.build(posterior, laplace, batch_size=b, rng=streams.child("strategy"))
    lam_max, lam_min, evals = _curvature(posterior, laplace, precond, streams.child("curvature"))
    if choose_friction and sampler.name == "sghmc" and not posterior.model.random_init:
        # this fit's own copy; EWSG's energies are the Euler kernel's
        large = N >= _SUBTRACT_MIN_ROWS and estimator.n_candidates == 1
        sampler.set_params(friction=auto_friction(lam_min),
                           integrator=AUTO_INTEGRATOR if large else "euler")
    pilot_rng = streams.child("pilot")
    positions = laplace.draws(pilot_rng, _PILOT_POSITIONS)
    # the pilot's Laplace draws are where the chains run: one mode (not the MLP)
    subtract = (sampler.can_subtract_noise(estimator) and not posterior.model.random_init
                and N >= _SUBTRACT_MIN_ROWS)

    def noise(est):
        return gradient_noise(est.pilot(), pilot_rng.spawn(_PILOT_POSITIONS), positions, precond,
                              n_estimates=_SUBTRACT_ESTIMATES if subtract else _PILOT_ESTIMATES)

    nu, more = noise(estimator)
    evals += more
    if batch_size == "auto" and step_size == "auto" and not (
            estimator.exact or sampler.adapts_step_size):
        cap = min(AUTO_BATCH_MAX, N, strategy.max_batch_size(N))
        b_auto = auto_batch_size(sampler, lam_max, nu, b, max(b, cap), lam_min=lam_min,
                                 subtract=subtract)
        if b_auto > b and 2 * b_auto >= N:  # within 2x of every row: take them all
            b_auto = min(N, strategy.max_batch_size(N))
        if b_auto != b and probe:  # the caller asks only which batch the rule picks
            return estimator, _decide(sampler, estimator, nu, (lam_max, lam_min), step_size,
                                      b_auto, evals, subtract)
        if b_auto != b:
            evals += estimator.preprocessing_evals
            estimator = strategy.build(posterior, laplace, batch_size=b_auto,
                                       rng=streams.child("strategy"))
            (nu, more), b = noise(estimator), b_auto
            evals += more
    if estimator.exact:  # every row each step, whatever batch the strategy was built at
        b, subtract = N, False
    return estimator, _decide(sampler, estimator, nu, (lam_max, lam_min), step_size, b, evals,
                              subtract)


def _decide(sampler, estimator, noise, curvature, step_size, batch_size, evals, subtract):
    """The step (given or automatic) and its predicted variance error, as a :class:`Tuning`.

    With ``subtract``, the automatic step of SGLD and SGHMC comes with the measured noise as the
    sampler's ``noise_correction`` where that allows a larger step (:func:`best_step`), and its
    error is what the correction leaves (:func:`step_rule`); a given step runs the textbook
    scheme.
    """
    (lam_max, lam_min), n_data = curvature, estimator.n_data
    if sampler.adapts_step_size:
        auto, rule = sampler.initial_step_size(lam_max), step_rule(sampler, noise)
    else:
        auto, rule = best_step(sampler, lam_max, noise, lam_min=lam_min, n_data=n_data,
                               subtract=subtract and step_size == "auto")
    used = rule["nu_low"] is not None  # the subtracting rule gave the larger step
    h = auto if step_size == "auto" else float(step_size)
    error = variance_error(sampler, h, lam_max, rule["nu"], lam_min=lam_min, n_data=n_data,
                           nu_low=rule["nu_low"])
    return Tuning(h, int(batch_size), noise.level(), lam_max, lam_min, int(evals), error, auto,
                  noise.variance if used else None, rule["nu"] if used else None)
