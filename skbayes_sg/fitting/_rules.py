"""The rules of ``step_size="auto"`` and ``batch_size="auto"``: closed forms, no data.

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
variates), and stays large when control variates make the noise small. The result is capped at
``max_step`` (the sampler's: 0.5, beyond which the mixing gain is small and the Gaussian
approximation of the posterior matters more; 0.75 for SGHMC's second-order ABOBA splitting). HMC
adapts its own step (``sampler.adapts_step_size``) and starts from ``1 / sqrt(lam_max)``.

Subtracting the measured noise
------------------------------
SGLD and SGHMC inject Gaussian noise of known variance each step; the minibatch gradient adds
its own, measured per whitened coordinate by the pilot.  With ``step_size="auto"`` on at least
``_SUBTRACT_MIN_ROWS`` rows of :mod:`._tuning` (below, the posterior can be far from Gaussian,
and the large steps this allows make tail excursions without a Metropolis test) of a posterior
whose chains run where the pilot measured (every model but the MLP, whose chains start at other
modes) the sampler injects that much less (``noise_correction``, Chen et al.'s ``B-hat``), so
the step's total variance is the exact dynamics' one and the step-size rule sees
only what the correction gets wrong: the estimation error of the measured variance, of either
sign (half the difference of the two halves of the pilot positions), which is several times
smaller than the noise itself.  The correction is at most a fifth of the injected variance
(``SUBTRACTED_SHARE``: a direction where the noise is smaller than measured loses at most that
share of its variance), which caps the step.  It is used where it allows the larger step
(:func:`best_step`); a given step runs the textbook scheme.
"""

import numpy as np

from ..preprocessing import GradientNoise

__all__ = ["auto_batch_size", "auto_friction", "auto_step_size", "best_step", "step_rule",
           "variance_error"]


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


def auto_step_size(sampler, lam_max, nu, *, lam_min=None, n_data=1, tol=0.05, max_step=None,
                   nu_low=None, h_cap=np.inf):
    """Largest accurate step on the whitened Gaussian (see module docstring).

    ``nu_low`` is a second noise level the error must also hold at (:func:`variance_error`);
    ``h_cap`` bounds the whitened step (where a noise correction stays feasible).  ``n_data``
    only matters for pSGLD, whose step is rescaled by its typical ``1/G``
    (``sampler.step_scale``).
    """
    lam_min = lam_max if lam_min is None else lam_min
    max_step = sampler.max_step if max_step is None else max_step
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
    (``noise_correction``), up to ``SUBTRACTED_SHARE`` of that at any coordinate; the rule caps
    the step where that share reaches the ``quantile`` of the coordinates' noise (``h_cap``), and
    what is left is the estimation error of the variance, of either sign, plus the excess of the
    few noisier coordinates.
    """
    if not isinstance(noise, GradientNoise):
        return {"nu": float(noise), "nu_low": None, "h_cap": np.inf}
    if not subtract:
        return {"nu": noise.level(), "nu_low": None, "h_cap": np.inf}
    top = float(np.quantile(noise.variance, quantile))
    high, low = noise.bounds(np.minimum(noise.variance, top))
    return {"nu": high, "nu_low": low, "h_cap": sampler.subtraction_cap(top)}


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
