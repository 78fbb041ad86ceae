"""Adaptive subsample size: ASGLD-CV-PS (seed 004 §3.3, Algorithm 2)."""

from dataclasses import replace
from numbers import Integral, Real

import numpy as np

from ..preprocessing import curvature_weights, laplace_covariance, lipschitz_constants
from ._base import BaseStrategy
from ._control_variates import CVEstimator
from ._preferential import PreferentialIndex, check_uniform_mix, weights_info

__all__ = ["Adaptive", "AdaptiveEstimator", "AdaptiveIndex"]

_BUFFER = 1 << 16  # pre-drawn rows per chain (at least 4 n_max)


class AdaptiveIndex:
    """Per-chain streams of rows drawn i.i.d. from ``p``, consumed ``n`` at a time.

    Each chain keeps a buffer of pre-drawn rows (and their ``1 / p_i``) from
    its own Generator; a step takes the next ``n_c`` of them.  The draws are
    i.i.d., so a buffer whose rest is too short is simply replaced.
    """

    def __init__(self, probabilities, batch_size, n_max):
        self.rows = PreferentialIndex(probabilities, 1)
        self.b, self.size = int(batch_size), max(4 * int(n_max), _BUFFER)

    def _refill(self, rng):
        idx = self.rows.sample(rng, self.size)
        return idx, self.rows.inv_p[idx], 0

    def init(self, rngs, n_chains):
        """State: one ``(indices, 1 / p, position)`` per chain."""
        return tuple(self._refill(rng) for rng in rngs)

    def take(self, rng, chain_state, n):
        """``(idx (n,), weight (n,) = 1 / (n p_i), chain_state)``."""
        idx, inv_p, pos = chain_state
        if pos + n > idx.size:
            idx, inv_p, pos = self._refill(rng)
        return idx[pos:pos + n], inv_p[pos:pos + n] / n, (idx, inv_p, pos + n)


class AdaptiveEstimator(CVEstimator):
    """SGLD-CV-PS whose subsample size follows ``||theta - theta_hat||^2`` per chain.

    Chains have different sizes ``n_c``, so each chain's correction is one
    call on exactly its ``n_c`` rows (no padding): the returned
    ``n_grad_evals`` is ``sum_c n_c`` (GLMs, anchor responses stored) or
    twice that, and it is what was evaluated.
    """

    def __init__(self, problem, index, *, rate, n_min, n_max, **kwargs):
        super().__init__(problem, index, **kwargs)
        self.rate, self.n_min, self.n_max = float(rate), int(n_min), int(n_max)

    def subsample_sizes(self, theta):
        """``n_c = ceil(rate ||theta_c - theta_hat||^2)`` clipped to ``[n_min, n_max]``."""
        delta = theta - self.problem.mode
        n = np.ceil(np.fmin(np.einsum("cp,cp->c", delta, delta) * self.rate, self.n_max))
        return np.maximum(n, self.n_min).astype(np.intp)

    def estimate(self, rngs, theta, state):
        sizes = self.subsample_sizes(theta)
        g, new, total = np.empty_like(theta), [], 0
        for c, rng in enumerate(rngs):
            idx, w, chain_state = self.index.take(rng, state[c], sizes[c])
            gc, n = self.correction(theta[c:c + 1], idx, w)
            g[c] = gc[0]
            new.append(chain_state)
            total += n
        g += self.anchor_grad
        g += self.problem.prior.grad(theta)
        return g, tuple(new), total


def _sq_distance_quantile(cov, rng, n_draws, q=0.95):
    """``q``-quantile of ``||theta - theta_hat||^2`` under ``N(theta_hat, Σ)``."""
    lam = np.maximum(np.linalg.eigvalsh(cov) if cov.ndim == 2 else cov, 0.0)
    rows = max(1, (1 << 20) // lam.size)
    d2 = np.concatenate([rng.standard_normal((min(rows, n_draws - s), lam.size)) ** 2 @ lam
                         for s in range(0, n_draws, rows)])
    return float(np.quantile(d2, q)), d2


class Adaptive(BaseStrategy):
    """ASGLD-CV-PS: preferential control variates with an adaptive subsample size.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the curvature weights.
    n_min : int, default=1
        Smallest subsample size.
    n_max : int or None, default=None
        Largest subsample size; None uses ``min(10 * batch_size, n_samples)``
        (beyond ``N`` an exact gradient is cheaper).
    V0 : float or None, default=None
        Pseudo-variance threshold of eq. 19.  None sets it as seed 004
        §5.3.3 does, from the 95th percentile ``r95`` of
        ``||theta - theta_hat||^2``, with ``n = batch_size`` in eq. 18:
        ``V0 = r95 sum_i(L_i^2 / p_i) / batch_size``.  The pilot positions are
        Laplace draws ``N(theta_hat, Σ)`` (what a pilot SGLD-CV chain samples,
        without running one).  Giving ``V0`` needs Lipschitz constants
        (GLMs and linear regression; not the MLP).
    n_pilot : int, default=1000
        Number of Laplace draws for ``r95``.

    Notes
    -----
    Each step and each chain ``c`` uses (eq. 19, Algorithm 2)::

        n_c = ceil(||theta_c - theta_hat||^2 sum_i(L_i^2 / p_i) / V0)   in [n_min, n_max]
        g_c = ∇f_0(theta_c) + G
              + (1/n_c) sum_{i in B_c} [∇f_i(theta_c) - ∇f_i(theta_hat)] / p_i

    with ``B_c`` drawn with replacement from the curvature weights of
    ``preferential_cv`` and ``L_i`` from
    :func:`skbayes_sg.preprocessing.lipschitz_constants`.  With the default
    ``V0`` the rule is ``n_c = ceil(batch_size ||theta_c - theta_hat||^2 / r95)``
    for every model (the Lipschitz sum cancels), so it also runs on the
    MLP.  Unbiased.  The mean subsample size is
    ``diagnostics_["grad_evals_per_step"]`` (halved for non-GLMs, which pay
    two evaluations per row).  ``preprocessing_`` holds ``adaptive_V0``,
    ``adaptive_lipschitz_sum`` (None without constants), ``adaptive_r95``,
    ``adaptive_rate`` (size per unit squared distance), the limits and
    ``adaptive_pilot_mean_size`` (mean ``n_c`` over the pilot draws).

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "adaptive"
    needs_mode = True

    def __init__(self, uniform_mix=0.1, n_min=1, n_max=None, V0=None, n_pilot=1000):
        self.uniform_mix = uniform_mix
        self.n_min = n_min
        self.n_max = n_max
        self.V0 = V0
        self.n_pilot = n_pilot

    def _validated(self, batch_size, n_rows):
        def integer(value, name, low):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")
            return int(value)

        n_min = integer(self.n_min, "n_min", 1)
        n_max = (min(10 * batch_size, n_rows) if self.n_max is None
                 else integer(self.n_max, "n_max", 1))
        if n_max < n_min:
            raise ValueError(f"n_max={n_max} is smaller than n_min={n_min}.")
        if self.V0 is not None and (isinstance(self.V0, bool) or not isinstance(self.V0, Real)
                                    or not self.V0 > 0):
            raise ValueError(f"V0 must be a positive number or None, got {self.V0!r}.")
        return n_min, n_max, integer(self.n_pilot, "n_pilot", 20)

    def build(self, problem, *, batch_size, rng):
        a = check_uniform_mix(self.uniform_mix)
        n_min, n_max, n_pilot = self._validated(batch_size, problem.n_rows)
        rng, evals = np.random.default_rng(0) if rng is None else rng, 0
        if problem.covariance is None:
            cov, _, evals = laplace_covariance(problem, "auto")
            problem = replace(problem, covariance=cov)
        p, more = curvature_weights(problem, uniform_mix=a, rng=rng)
        lip_sum = self._lipschitz_sum(problem, p)
        r95, d2 = _sq_distance_quantile(problem.covariance, rng, n_pilot)
        V0 = self.V0 if self.V0 is not None else (
            None if lip_sum is None else r95 * lip_sum / batch_size)
        rate = batch_size / r95 if self.V0 is None else lip_sum / float(self.V0)
        pilot = np.maximum(np.ceil(np.fmin(d2 * rate, n_max)), n_min).mean()
        info = {**weights_info("curvature", a, p), "adaptive_V0": V0,
                "adaptive_lipschitz_sum": lip_sum, "adaptive_r95": r95, "adaptive_rate": rate,
                "adaptive_n_min": n_min, "adaptive_n_max": n_max,
                "adaptive_pilot_mean_size": float(pilot)}
        est = AdaptiveEstimator(problem, AdaptiveIndex(p, batch_size, n_max), rate=rate,
                                n_min=n_min, n_max=n_max, info=info,
                                attributes={"subsampling_weights": p},
                                preprocessing_evals=evals + more)
        est.evals_per_step = float(pilot * (1 if est.glm else 2))
        return est

    def _lipschitz_sum(self, problem, p):
        """``sum_i L_i^2 / p_i``, or None when the model has no constants."""
        try:
            L = lipschitz_constants(problem)
        except ValueError:
            if self.V0 is not None:
                raise ValueError(
                    f"V0={self.V0!r} needs Lipschitz constants, which "
                    f"{type(problem.model).__name__} does not have; use V0=None.") from None
            return None
        return float(np.sum(L * L / p))
