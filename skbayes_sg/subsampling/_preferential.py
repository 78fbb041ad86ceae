"""Preferential subsampling: SGLD-PS and SGLD-CV-PS (seed 004 §3.1-3.2)."""

import numpy as np

from ..preprocessing import curvature_weights, gradient_norm_weights
from ._base import BaseStrategy
from ._control_variates import CVEstimator
from ._index import AllRows, block_size_for
from ._plain import PlainEstimator

__all__ = ["Preferential", "PreferentialCV", "PreferentialIndex", "check_uniform_mix",
           "preferential_index", "weights_info"]


def check_uniform_mix(value):
    """Validate ``uniform_mix`` in ``(0, 1]`` (a zero floor would bias)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not (
            0.0 < float(value) <= 1.0):
        raise ValueError(f"uniform_mix must be a number in (0, 1], got {value!r}: every "
                         "row needs a positive probability for the estimate to be unbiased.")
    return float(value)


def weights_info(kind, uniform_mix, p):
    """Scalars describing the weights, for ``preprocessing_``."""
    return {"preferential_weights": kind, "preferential_uniform_mix": uniform_mix,
            "preferential_max_weight_ratio": float(p.max() * p.size)}


def preferential_index(p, batch_size):
    """:class:`PreferentialIndex`, or :class:`AllRows` once ``batch_size >= len(p)``.

    With replacement, ``b >= N`` importance draws cost as much as the exact
    sum over the rows and stay noisy (no finite-population correction); on a
    small, nearly separable set this held ``batch_size="auto"``'s step at a
    tenth of the exact-sum step.
    """
    return AllRows(len(p)) if batch_size >= len(p) else PreferentialIndex(p, batch_size)


class PreferentialIndex:
    """``b`` rows drawn with replacement from ``p``, in pre-drawn blocks.

    Draws use the inverse CDF with a guide table (Chen and Asau's indexed
    search: the uniform's bucket ``floor(u N)`` gives the first candidate,
    then a few vectorised forward steps; identical to ``searchsorted`` and
    several times faster), one block of steps per chain from that chain's
    own Generator.  ``weight_i = 1 / (b p_i)`` and ``scale = 1``, so
    ``sum_B weight_i ∇f_i`` is unbiased for ``sum_i ∇f_i``.
    """

    def __init__(self, probabilities, batch_size):
        p = np.asarray(probabilities, dtype=np.float64)
        self.n_rows, self.b, self.scale = p.size, int(batch_size), 1.0
        cdf = np.cumsum(p)
        self.total = cdf[-1]
        self.inv_p = self.total / p  # 1 / P(row i) with the exact normaliser
        self.cdf = np.append(cdf, np.inf)  # sentinel: the forward search stops
        edges = np.arange(self.n_rows) * (self.total / self.n_rows) * (1.0 - 1e-12)
        self.guide = np.searchsorted(cdf, edges, side="right")
        self.n_block = block_size_for(self.n_rows, self.b)

    def sample(self, rng, size):
        """Row indices of shape ``size`` drawn i.i.d. from ``p``."""
        u = rng.random(size).ravel()
        idx = self.guide[(u * self.n_rows).astype(np.intp)]
        u *= self.total
        move = np.flatnonzero(self.cdf[idx] <= u)
        while move.size:
            idx[move] += 1
            move = move[self.cdf[idx[move]] <= u[move]]
        return np.minimum(idx, self.n_rows - 1, out=idx).reshape(size)

    def _refill(self, rngs):
        idx = np.stack([self.sample(rng, (self.n_block, self.b)) for rng in rngs], axis=1)
        w = self.inv_p[idx]
        w /= self.b
        return idx, w

    def init(self, rngs, n_chains):
        """State: ``(indices (T, C, b), weights (T, C, b), position)``."""
        return (*self._refill(rngs), 0)

    def draw(self, rngs, state):
        """``(idx (C, b), weight (C, b), 1.0, state)``."""
        idx, w, t = state
        if t == idx.shape[0]:
            (idx, w), t = self._refill(rngs), 0
        return idx[t], w[t], self.scale, (idx, w, t + 1)


class Preferential(BaseStrategy):
    """SGLD-PS: rows drawn with probability ∝ their gradient norm at the mode.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the weights, so that
        every row keeps probability at least ``uniform_mix / N`` (a zero
        probability would bias the estimate).

    Notes
    -----
    Weights ``p_i ∝ ||∇f_i(theta_hat)||`` (seed 004 eq. 11) mixed with uniform,
    ``B`` of size ``b`` drawn with replacement from ``p``, and (eq. 8)::

        g = ∇f_0(theta) + (1/b) sum_{i in B} ∇f_i(theta) / p_i

    Unbiased.  Preprocessing: the mode and one pass of gradients (closed
    form for GLMs).  ``b`` gradient evaluations per step.  At ``b >= N``
    every row is used once instead (the exact sum, same cost, no noise).
    Fitted estimators get ``subsampling_weights_`` ``(n_samples,)``.

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "preferential"
    needs_mode = True

    def __init__(self, uniform_mix=0.1):
        self.uniform_mix = uniform_mix

    def build(self, problem, *, batch_size, rng):
        a = check_uniform_mix(self.uniform_mix)
        p, evals = gradient_norm_weights(problem, uniform_mix=a)
        return PlainEstimator(problem, preferential_index(p, batch_size),
                              info=weights_info("gradient_norm", a, p),
                              attributes={"subsampling_weights": p}, preprocessing_evals=evals)


class PreferentialCV(BaseStrategy):
    """SGLD-CV-PS: control variates at the mode with curvature-based weights.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the weights (floor).

    Notes
    -----
    Weights ``p_i ∝ sqrt(tr(H_i Σ H_i))`` (seed 004 eq. 16; ``H_i`` the
    Hessian of ``f_i`` at the mode, ``Σ`` the Laplace covariance; GLMs in
    closed form, other models by Monte Carlo over Laplace draws, see
    :func:`skbayes_sg.preprocessing.curvature_weights`), mixed with uniform;
    ``B`` drawn with replacement from ``p``, and (eq. 12)::

        g = ∇f_0(theta) + G + (1/b) sum_{i in B} [∇f_i(theta) - ∇f_i(theta_hat)] / p_i

    with ``G = sum_i ∇f_i(theta_hat)``.  Unbiased.  Cost per step as
    ``control_variates``: ``b`` evaluations for GLMs (anchor responses
    stored as scalars), ``2 b`` otherwise.  At ``b >= N`` every row is used
    once instead (the exact gradient at the same cost).

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "preferential_cv"
    needs_mode = True

    def __init__(self, uniform_mix=0.1):
        self.uniform_mix = uniform_mix

    def build(self, problem, *, batch_size, rng):
        a = check_uniform_mix(self.uniform_mix)
        p, evals = curvature_weights(problem, uniform_mix=a, rng=rng)
        return CVEstimator(problem, preferential_index(p, batch_size),
                           info=weights_info("curvature", a, p),
                           attributes={"subsampling_weights": p}, preprocessing_evals=evals)
