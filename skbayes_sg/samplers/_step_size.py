"""``step_size="auto"``: the largest accurate step on the whitened Gaussian.

The rule
--------
After preconditioning, the posterior near the mode is approximately
``N(0, diag(1/lam_j))`` with curvatures ``lam_j`` in ``[lam_min, lam_max]``
(all 1 for an exact Laplace preconditioner), and the gradient estimate has
noise of variance ``nu`` per whitened coordinate (measured on a pilot of a
few estimates at Laplace draws -- the 95% quantile over coordinates, so the
noisiest directions stay accurate; 0 for the full gradient).  Each SG sampler's
recursion on ``U = lam u^2/2`` is linear-Gaussian, so its stationary variance
``v(h)`` is known in closed form (:meth:`BaseSampler.stationary_variance`).
``auto_step_size`` returns the largest ``h`` on a geometric grid such that
``lam v(h')`` is within ``tol`` (default 5%) of 1 at ``lam_max`` and
``lam_min`` for every grid step ``h' <= h`` (errors of opposite sign must not
cancel by luck at one large step) -- so the step shrinks automatically as the gradient noise
``nu`` grows (``N/b`` large without control variates), and stays large when
control variates make the noise small.  The result is capped at
``max_step`` (default 0.5: beyond it the mixing gain is small and the
Gaussian approximation of the posterior matters more).
"""

import numpy as np

__all__ = ["auto_batch_size", "auto_step_size"]


def auto_step_size(sampler, lam_max, nu, *, lam_min=None, n_data=1, tol=0.05, max_step=0.5):
    """Step size for ``step_size="auto"`` (see module docstring).

    Parameters
    ----------
    sampler : BaseSampler
    lam_max : float
        Largest curvature of the preconditioned potential at the mode.
    nu : float
        Gradient-noise variance per whitened coordinate.
    lam_min : float, optional
        Smallest curvature (defaults to ``lam_max``).
    n_data : int
        Data size (pSGLD's step is rescaled by its typical ``1/G``).
    tol : float
        Allowed relative error of the stationary variance.
    max_step : float
        Upper cap on the returned step (in whitened units).

    Returns
    -------
    float
    """
    lam_min = lam_max if lam_min is None else lam_min
    best = 1e-7
    for h in np.geomspace(1e-7, max_step / np.sqrt(lam_max * max(lam_max, 1.0)), 400):
        if any(abs(lam * sampler.stationary_variance(h, lam, nu) - 1.0) > tol
               for lam in {lam_max, lam_min}):
            break
        best = float(h)
    if hasattr(sampler, "step_scale"):
        best *= sampler.step_scale(lam_max, nu, n_data)
    return best


def auto_batch_size(sampler, lam_max, nu, batch_size, max_batch, *, lam_min=None, n_data=1,
                    tol=0.05, max_step=0.5, min_fraction=0.5):
    """Smallest ``b = batch_size * 2^k <= max_batch`` whose auto step is not noise-bound.

    ``nu`` is the gradient noise measured at ``batch_size``; at ``b`` it is
    taken as ``nu * batch_size / b`` (minibatch noise falls like ``1/b``).
    Returns the first ``b`` whose :func:`auto_step_size` is at least
    ``min_fraction`` of the noise-free step (``nu = 0``), else ``max_batch``
    (``batch_size`` when it is already there).  Where the gradient noise
    dominates, the step, hence the mixing per step, grows like ``b``, so a
    fixed number of steps buys more effective draws for proportionally more
    gradient evaluations; once the step nears its noise-free value extra rows
    are wasted, which is where this stops.
    """
    def step(noise):  # in whitened units (without pSGLD's 1/G rescaling)
        h = auto_step_size(sampler, lam_max, noise, lam_min=lam_min, n_data=n_data, tol=tol,
                           max_step=max_step)
        scale = getattr(sampler, "step_scale", None)
        return h if scale is None else h / scale(lam_max, noise, n_data)

    target, b = min_fraction * step(0.0), int(batch_size)
    while b < max_batch and step(nu * batch_size / b) < target:
        b = min(2 * b, int(max_batch))
    return b
