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

Subtracting the measured noise
------------------------------
SGLD and SGHMC inject Gaussian noise of known variance each step; the minibatch gradient adds
its own, measured per whitened coordinate by the pilot.  With ``step_size="auto"`` on at least
``_SUBTRACT_MIN_ROWS`` rows (below, the posterior can be far from Gaussian, and the large steps
this allows make tail excursions without a Metropolis test) of a posterior whose chains run
where the pilot measured (every model but the MLP, whose chains start at other modes) the
sampler injects that much less (``noise_correction``, Chen et al.'s
``B-hat``), so the step's total variance is the exact dynamics' one and the step-size rule sees
only what the correction gets wrong: the estimation error of the measured variance, of either
sign (half the difference of the two halves of the pilot positions), which is several times
smaller than the noise itself.  The correction is at most half the injected variance, which
caps the step.  It is used where it allows the larger step (:func:`best_step`); a given step
runs the textbook scheme.
"""

from dataclasses import dataclass

import numpy as np

from ..preprocessing import (GradientNoise, gradient_noise, once_per, power_curvature,
                             subsample_hessian,
                             whitened_curvature)

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


def variance_error(sampler, h, lam_max, nu, *, lam_min=None, n_data=1, nu_low=None):
    """Predicted relative error of the stationary variance at the step ``h`` (sampler's units).

    ``max |lam v(h) - 1|`` over the whitened curvatures ``lam_max`` and ``lam_min`` and the noise
    levels ``nu`` and ``nu_low`` (default ``nu``; negative where a noise correction may subtract
    more than there is), with ``v`` the sampler's closed-form stationary variance
    (:mod:`skbayes_sg.samplers`); ``inf`` where the scheme is unstable.  0 for samplers without
    one (HMC's Metropolis step removes the bias).
    """
    if sampler.adapts_step_size:
        return 0.0
    whitened = h / sampler.step_scale(lam_max, nu, n_data)
    lams = {lam_max, lam_max if lam_min is None else lam_min}
    nus = {nu, nu if nu_low is None else nu_low}
    return max(abs(lam * sampler.stationary_variance(whitened, lam, n) - 1.0)
               for lam in lams for n in nus)


def auto_step_size(sampler, lam_max, nu, *, lam_min=None, n_data=1, tol=0.05, max_step=0.5,
                   nu_low=None, h_cap=np.inf):
    """Largest accurate step on the whitened Gaussian (see module docstring).

    ``nu_low`` is a second noise level the error must also hold at (:func:`variance_error`);
    ``h_cap`` bounds the whitened step (where a noise correction stays feasible).  ``n_data``
    only matters for pSGLD, whose step is rescaled by its typical ``1/G``
    (``sampler.step_scale``).
    """
    lam_min = lam_max if lam_min is None else lam_min
    top = min(max_step / np.sqrt(lam_max * max(lam_max, 1.0)), h_cap)
    grid = np.geomspace(min(1e-7, top), top, 400)
    bad = np.zeros(grid.size, dtype=bool)
    for lam in {lam_max, lam_min}:  # the whole grid at once: the closed forms take arrays
        for noise in {nu, nu if nu_low is None else nu_low}:
            with np.errstate(invalid="ignore"):
                variance = sampler.stationary_variance(grid, lam, noise)
                bad |= ~(np.abs(lam * variance - 1.0) <= tol)
    first_bad = int(np.argmax(bad)) if bad.any() else grid.size
    best = float(grid[first_bad - 1] if first_bad > 0 else grid[0])
    return best * sampler.step_scale(lam_max, nu, n_data)


def step_rule(sampler, noise, subtract=False, quantile=0.99):
    """Keywords ``nu``, ``nu_low``, ``h_cap`` of :func:`auto_step_size` for measured ``noise``.

    ``noise`` is a float (its level) or a :class:`~skbayes_sg.preprocessing.GradientNoise`.  With
    ``subtract`` the sampler removes the measured variance from its injected noise
    (``noise_correction``), up to half of that at any coordinate; the rule caps the step where
    this half reaches the ``quantile`` of the coordinates' noise (``h_cap``), and what is left is
    the estimation error of the variance, of either sign, plus the excess of the few noisier
    coordinates.
    """
    if not isinstance(noise, GradientNoise):
        return {"nu": float(noise), "nu_low": None, "h_cap": np.inf}
    if not subtract:
        return {"nu": noise.level(), "nu_low": None, "h_cap": np.inf}
    top = float(np.quantile(noise.variance, quantile))
    high, low = noise.bounds(np.minimum(noise.variance, top))
    cap = 0.5 * sampler.subtractable_noise(1.0) / top if top > 0 else np.inf
    return {"nu": high, "nu_low": low, "h_cap": cap}


def best_step(sampler, lam_max, noise, *, lam_min=None, n_data=1, subtract=False):
    """``(h, rule)``: :func:`auto_step_size` under :func:`step_rule`, subtracting the noise when
    ``subtract`` and that allows the larger step."""
    options = [step_rule(sampler, noise)] + ([step_rule(sampler, noise, True)] if subtract else [])
    steps = [auto_step_size(sampler, lam_max, lam_min=lam_min, n_data=n_data, **rule)
             for rule in options]
    best = int(np.argmax(steps))
    return steps[best], options[best]


def auto_batch_size(sampler, lam_max, noise, batch_size, max_batch, *, lam_min=None,
                    min_fraction=0.5, subtract=False):
    """Smallest ``b = batch_size * 2^k <= max_batch`` whose auto step is not noise-bound.

    ``noise`` (a level, or a :class:`~skbayes_sg.preprocessing.GradientNoise` with ``subtract``
    as in :func:`step_rule`) is the gradient noise measured at ``batch_size``; at ``b`` it is
    taken as ``batch_size / b`` times that (minibatch noise falls like ``1/b``).  Returns the
    first ``b`` whose whitened :func:`auto_step_size` is at least ``min_fraction`` of the
    noise-free step, else ``max_batch``.  Where the gradient noise dominates, the step, hence the
    mixing per step, grows like ``b``, so a fixed number of steps buys more effective draws for
    proportionally more gradient evaluations; once the step nears its noise-free value extra
    rows are wasted, which is where this stops.
    """
    def step(factor):  # whitened units, without pSGLD's rescaling
        scaled = noise.scaled(factor) if isinstance(noise, GradientNoise) else noise * factor
        h, rule = best_step(sampler, lam_max, scaled, lam_min=lam_min, subtract=subtract)
        return h / sampler.step_scale(lam_max, rule["nu"], 1)

    target, b = min_fraction * step(0.0), int(batch_size)
    while b < max_batch and step(batch_size / b) < target:
        b = min(2 * b, int(max_batch))
    return b


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


def auto_friction(lam_min):
    """SGHMC's friction for ``sampler="auto"``: ``sqrt(lam_min)`` within ``[0.5, 1]``.

    With whitened curvatures in ``[lam_min, lam_max]`` the integrated autocorrelation time of a
    position along ``lam`` is ``gamma / lam`` and that of its square (the folded R-hat, the tail
    ESS) about ``1 / (2 gamma)``: friction 1 suits an exact Laplace (``lam`` near 1), and a
    structured one that leaves ``lam_min`` well below 1 (Kronecker softmax 10 x 1,000:
    ``lam_min`` 0.22) mixes its slowest directions about twice as fast at 0.5 (the worst bulk
    ESS 1,007 -> 1,745 after three doublings).
    """
    return float(np.clip(np.sqrt(lam_min), 0.5, 1.0)) if lam_min is not None else 1.0


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
    :func:`auto_friction` of the measured curvature.

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
        sampler.set_params(friction=auto_friction(lam_min))  # this fit's own copy
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
