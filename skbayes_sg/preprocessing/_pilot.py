"""Pilot measurements for ``step_size="auto"``: curvature and gradient noise."""

from typing import NamedTuple

import numpy as np

__all__ = ["GradientNoise", "gradient_noise", "power_curvature"]


class GradientNoise(NamedTuple):
    """Variance of the gradient estimate per whitened coordinate, and its estimation error.

    ``variance`` averages the per-position variances over all pilot positions; ``error`` is half
    the difference of the averages over the first and the second half of the positions, the
    size of the error of ``variance`` (the difference of two half-sample means has twice the sd
    of the whole mean).
    """

    variance: np.ndarray
    error: np.ndarray

    def level(self, quantile=0.95):
        """``nu`` of the step-size rule: a high quantile over coordinates (0 when exact)."""
        return float(np.quantile(self.variance, quantile)) if self.variance.any() else 0.0

    def scaled(self, factor):
        """The noise at a batch ``1 / factor`` times as large (minibatch noise ~ ``1/b``)."""
        return GradientNoise(self.variance * factor, self.error * factor)

    def bounds(self, correction=None, quantile=0.95):
        """``(high, low)`` noise left after subtracting ``correction`` per coordinate.

        Without a correction both are :meth:`level`.  With one, what is left is
        ``variance - correction`` up to the estimation ``error``: ``high`` is the quantile of
        its upper end and ``low`` minus that of its overshoot below zero (negative: the
        sampler then injects too little noise there).
        """
        if correction is None:
            return (self.level(quantile),) * 2
        left = self.variance - correction
        return (float(np.quantile(left + self.error, quantile)),
                -float(np.quantile(np.maximum(self.error - left, 0.0), quantile)))


def gradient_noise(estimator, rngs, positions, precond, n_estimates=16):
    """Per-coordinate variance of the gradient estimate (whitened), with its error.

    At each of the ``positions`` (rows, e.g. Laplace draws) the estimator is called ``n_estimates``
    times with the pilot streams ``rngs`` (one per position); the variance of ``L^T g`` over
    repeats, averaged over positions, gives one noise level per coordinate.  The noise is far
    from uniform across coordinates (a heavy-tailed feature carries most of it), and the step must
    keep the *worst* directions accurate: with the mean over coordinates, the directions of a
    heavy-tailed feature would come out too wide with no warning; :meth:`GradientNoise.level` takes
    a high quantile rather than the maximum, so a few noisy estimates among thousands of MLP
    weights do not set the step.

    Returns
    -------
    noise : GradientNoise
    n_grad_evals : int
    """
    if estimator.exact:
        zero = np.zeros(positions.shape[1])
        return GradientNoise(zero, zero), 0
    state = estimator.init(rngs, positions)
    mean, m2, evals = 0.0, 0.0, 0
    for t in range(n_estimates):  # Welford: memory of two estimates, not n_estimates
        g, state, k = estimator.estimate(rngs, positions, state)
        u = precond.to_u(g)
        delta = u - mean
        mean = mean + delta / (t + 1)
        m2 = m2 + delta * (u - mean)
        evals += k
    per_position = m2 / (n_estimates - 1)
    half = per_position.shape[0] // 2
    first, second = per_position[:half].mean(axis=0), per_position[half:].mean(axis=0)
    return GradientNoise(per_position.mean(axis=0), 0.5 * np.abs(first - second)), evals


_PILOT_ROWS, _PILOT_MAX_ROWS = 2048, 65_536


def pilot_rows(posterior):
    """Rows of the curvature pilot: ``2048``; for a GLM ``2 p`` up to ``65,536`` if more (all rows
    if fewer).

    A subsample's Hessian, scaled to the full data, has a larger top eigenvalue than the full one
    (random-matrix spread, about ``(1 + sqrt(p / m))^2`` in whitened units), so too few rows for
    many parameters inflate it -- and the step-size rule caps the step at ``0.5 / lam_max``.  The
    20 products cost ``40 m`` row evaluations: at most 2.6 million (a few passes over large
    hashed-text data with ``p = 2^18``, where ``2 p`` rows would cost about ten times more); the
    MLP's gradient costs far more per row, and keeps 2048.
    """
    m = _PILOT_ROWS
    if posterior.model.is_glm:
        m = max(m, min(2 * posterior.model.n_params, _PILOT_MAX_ROWS))
    return min(m, posterior.n_rows)


# central-difference step of a Hessian-vector product for a model whose Hessian jumps (ReLU):
# a unit crossing zero within the step adds about 1 / step to the product, and crossings are
# about as frequent as the step is long, so 1e-4 hit several per product (estimates 7x the
# truth, or of the wrong sign) where 1e-8 rarely hits one; float64 rounding stays near 1e-8
_KINKED_EPS = 1e-8


def power_curvature(posterior, mode, precond, rng, *, n_iter=20, n_rows=None, eps=1e-4,
                    lowest=False):
    """Largest eigenvalue of the preconditioned Hessian at ``mode`` by power iteration.

    Hessian-vector products are central differences of the exact gradient (step ``eps``;
    ``_KINKED_EPS`` for a model with ``indefinite_hessian``) on a random subsample of ``n_rows``
    rows (scaled to the full data; default :func:`pilot_rows`), so no ``p x p`` matrix is
    formed.  Where a negative eigenvalue is about as large as the top one (a network away from
    a mode: the Rayleigh quotient falls short of ``|L^T H L v|``), ``n_iter`` more products on
    ``L^T H L + s I`` give the largest positive one, which limits the step.  With ``lowest``,
    ``n_iter`` more products on ``s I - L^T H L`` (``s`` just above the largest) give the
    smallest too; a few iterations overestimate it.

    Returns
    -------
    lam_max : float
    lam_min : float or None
        Only with ``lowest``.
    n_grad_evals : int
    """
    N = posterior.n_rows
    n_rows = pilot_rows(posterior) if n_rows is None else min(n_rows, N)
    sub = posterior.subset(np.sort(rng.choice(N, size=n_rows, replace=False)))
    hvp_u = _product(sub, mode, precond, _KINKED_EPS if sub.model.indefinite_hessian else eps)
    (lam, size), products = _power(hvp_u, rng.standard_normal(mode.shape[0]), n_iter), n_iter
    if lam < 0.9 * size:  # a negative eigenvalue of about the top's size: shift above 0
        shift = 1.05 * size
        lam = _power(lambda v: hvp_u(v) + shift * v, rng.standard_normal(mode.shape[0]),
                     n_iter)[0] - shift
        products += n_iter
    lam = max(lam, 1e-12)
    if not lowest:
        return lam, None, 2 * products * sub.n_rows
    shift = 1.05 * lam
    top = _power(lambda v: shift * v - hvp_u(v), rng.standard_normal(mode.shape[0]), n_iter)[0]
    return lam, float(np.clip(shift - top, 1e-12, lam)), 2 * (products + n_iter) * sub.n_rows


def _product(sub, mode, precond, eps):
    """``v -> L^T H L v`` at ``mode`` on the rows of ``sub``: central differences of the exact
    gradient with step ``eps`` (in ``u``)."""
    def hvp_u(v):
        step = eps * precond.from_u(v)
        g = sub.full_grad(np.stack([mode + step, mode - step]))
        return precond.to_u((g[0] - g[1])[None, :] / (2 * eps))[0]
    return hvp_u


def _power(operator, v, n_iter):
    """Rayleigh quotient and ``|A v|`` (the largest eigenvalue's modulus, to which it
    converges) after ``n_iter`` power iterations of a symmetric ``operator``."""
    value = size = 1.0
    for _ in range(n_iter):
        v /= np.linalg.norm(v)
        w = operator(v)
        value, size = float(v @ w), float(np.linalg.norm(w))
        v = w
    return value, size
