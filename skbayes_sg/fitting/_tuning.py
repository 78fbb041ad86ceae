"""Tuning in ``fit``: curvature, gradient noise, ``step_size="auto"`` and ``batch_size="auto"``.

:func:`measure_curvature` measures the whitened curvature at the mode once per fit; :func:`tune`
builds the strategy's gradient estimator from its preprocessed data, measures the gradient noise
on a pilot at Laplace draws, and applies the rules of :mod:`._rules` (the step-size rule on the
whitened Gaussian, the noise subtraction, the batch rule) to pick the batch and the step.  The
thresholds are those of :class:`~skbayes_sg.fitting.FitConfig`.
"""

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..preprocessing import gradient_noise, power_curvature, subsample_hessian, whitened_curvature
from ._config import DEFAULT_CONFIG
from ._rules import auto_batch_size, best_step, step_rule, variance_error

__all__ = ["Curvature", "Tuning", "measure_curvature", "tune"]


@dataclass(frozen=True, kw_only=True)
class Tuning:
    """What tuning decided: step and batch sizes, and the measurements behind them.

    ``n_grad_evals`` are the pilots' and the builds' own (batch-dependent) evaluations;
    ``pilot_seconds`` the pilots' wall time.
    """

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
    pilot_seconds: float = 0.0
    pilot_chain_estimates: int = 0  # single-chain estimates the pilots made


class Curvature(NamedTuple):
    """Extremes of the whitened Hessian at the mode (``lam_min`` None where not measured)."""

    lam_max: float
    lam_min: float
    n_grad_evals: int


def measure_curvature(posterior, laplace, precond, rng):
    """The :class:`Curvature` of the whitened Hessian at the mode, measured once per fit.

    Without a Hessian, power iterations give the largest and, but for multimodal models (the
    MLP), the smallest.

    A Laplace whose Hessian came from a subsample whitens that Hessian exactly, so its spectrum
    says nothing: the extremes are those of a second, independent subsample Hessian of the same
    size, whose error adds to the first's (about sqrt(2) times the true spread around 1: the
    step errs small).
    """
    if laplace.hessian is not None and laplace.hessian_rows is not None:
        H, evals = subsample_hessian(posterior, laplace.mode, rng, laplace.hessian_rows)
        return Curvature(*whitened_curvature(H, precond), evals)
    if laplace.hessian is not None:
        return Curvature(*whitened_curvature(laplace.hessian, precond), 0)
    lam_max, lam_min, evals = power_curvature(posterior, laplace.mode, precond, rng,
                                              lowest=not posterior.model.multimodal)
    return Curvature(lam_max, lam_min, evals)


def _build(strategy, data, batch_size):
    """``(estimator, its build's own evaluations)``: the preprocessing was counted once."""
    estimator = strategy.estimator(data, batch_size=batch_size)
    return estimator, estimator.preprocessing_evals - data.n_grad_evals


def tune(sampler, strategy, data, curvature, precond, *, batch_size, step_size, streams,
         config=DEFAULT_CONFIG, probe=False):
    """Build the gradient estimator on ``data``, measure its noise, pick the batch and the step.

    The estimator is built at ``batch_size`` (``config.auto_batch`` for ``"auto"``, at most
    ``N``); with ``batch_size="auto"`` (and the automatic step of an SG sampler) it is rebuilt
    once at the batch :func:`auto_batch_size` picks -- all the rows when that batch is at least
    half of them (the gradient is then exact for twice the cost).  The measured noise is
    subtracted (``noise_correction``) only from ``config.subtract_min_rows`` rows on, for a
    unimodal model: it allows steps as large as the exact gradient's, and on small data the
    posterior can be far enough from Gaussian that such steps without a Metropolis test make
    tail excursions.

    With ``probe`` a batch rule that picks a larger batch returns at once, without the rebuild:
    the tuning's ``batch_size`` is the batch picked, the rest is the first batch's
    (``subsampling="auto"`` only asks whether uniform rows need a larger batch).

    Returns
    -------
    estimator : GradientEstimator
    tuning : Tuning
    """
    posterior, N = data.posterior, data.posterior.n_rows
    b = min(config.auto_batch if batch_size == "auto" else int(batch_size), N)
    estimator, evals = _build(strategy, data, b)
    pilot_rng = streams.child("pilot")
    positions = data.laplace.draws(pilot_rng, config.pilot_positions)
    # the pilot's Laplace draws are where the chains run: one mode (not a multimodal model)
    subtract = (sampler.can_subtract_noise(estimator) and not posterior.model.multimodal
                and N >= config.subtract_min_rows)
    clock = [0.0, 0]

    def noise(est):
        t0 = time.perf_counter()
        n = config.subtract_estimates if subtract else config.pilot_estimates
        out = gradient_noise(est.pilot(), pilot_rng.spawn(config.pilot_positions), positions,
                             precond, n_estimates=n)
        clock[0] += time.perf_counter() - t0
        clock[1] += 0 if est.exact else n * config.pilot_positions
        return out

    nu, more = noise(estimator)
    evals += more
    if batch_size == "auto" and step_size == "auto" and not (
            estimator.exact or sampler.adapts_step_size):
        cap = min(config.auto_batch_max, N, strategy.max_batch_size(N))
        b_auto = auto_batch_size(_uncapped(sampler), curvature.lam_max, nu, b, max(b, cap),
                                 lam_min=curvature.lam_min, subtract=subtract)
        if b_auto > b and 2 * b_auto >= N:  # within 2x of every row: take them all
            b_auto = min(N, strategy.max_batch_size(N))
        if b_auto != b and probe:  # the caller asks only which batch the rule picks
            return estimator, _decide(sampler, estimator, nu, curvature, step_size, b_auto,
                                      evals, subtract, clock)
        if b_auto != b:
            estimator, more = _build(strategy, data, b_auto)
            (nu, more_noise), b = noise(estimator), b_auto
            evals += more + more_noise
    if estimator.exact:  # every row each step, whatever batch the strategy was built at
        b, subtract = N, False
    return estimator, _decide(sampler, estimator, nu, curvature, step_size, b, evals, subtract,
                              clock)


def _uncapped(sampler):
    """``sampler`` without a ``step_cap`` (:func:`~._plan.aboba_step_cap`): the batch is sized
    for the integrator's own cap, the step alone is trimmed (a smaller batch would leave more of
    the step's variance to the measured-noise correction, which is right only on average: a
    softmax's rarest class's intercept came out 0.2-0.3 sd off at half the batch)."""
    if sampler.get_params().get("step_cap") is None:  # no cap, or a sampler without one
        return sampler
    return type(sampler)(**{**sampler.get_params(deep=False), "step_cap": None})


def _decide(sampler, estimator, noise, curvature, step_size, batch_size, evals, subtract,
            clock):
    """The step (given or automatic) and its predicted variance error, as a :class:`Tuning`.

    With ``subtract``, the automatic step of SGLD and SGHMC comes with the measured noise as the
    sampler's ``noise_correction`` where that allows a larger step (:func:`best_step`), and its
    error is what the correction leaves (:func:`step_rule`); a given step runs the textbook
    scheme.
    """
    lam_max, lam_min, n_data = curvature.lam_max, curvature.lam_min, estimator.n_data
    if sampler.adapts_step_size:
        auto, rule = sampler.initial_step_size(lam_max), step_rule(sampler, noise)
    else:  # auto: what step_size="auto" runs (reported for a given step too)
        auto, rule = best_step(sampler, lam_max, noise, lam_min=lam_min, n_data=n_data,
                               subtract=subtract)
        if step_size != "auto" and subtract:  # a given step runs the textbook scheme
            rule = best_step(sampler, lam_max, noise, lam_min=lam_min, n_data=n_data)[1]
    used = rule["nu_low"] is not None  # the subtracting rule gave the larger step
    h = auto if step_size == "auto" else float(step_size)
    error = variance_error(sampler, h, lam_max, rule["nu"], lam_min=lam_min, n_data=n_data,
                           nu_low=rule["nu_low"])
    return Tuning(step_size=h, batch_size=int(batch_size), gradient_noise=noise.level(),
                  curvature=lam_max, curvature_min=lam_min, n_grad_evals=int(evals),
                  variance_error=error, auto_step_size=auto,
                  noise_correction=noise.variance if used else None,
                  noise_left=rule["nu"] if used else None, pilot_seconds=clock[0],
                  pilot_chain_estimates=clock[1])
