"""Preferential subsampling: SGLD-PS and SGLD-CV-PS (seed 004 §3.1-3.2)."""

from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import Interval

from ..preprocessing import curvature_weights_and_anchor, gradient_norm_weights
from ._base import CORRECTION_CONSTRAINT, IndexedStrategy, StrategyData
from ._index import AllRows, BlockIndex

__all__ = ["Preferential", "PreferentialCV", "WeightTables", "WeightedIndex",
           "preference_weights", "weight_tables", "weighted_index"]


def weighted_index(p, batch_size, tables=None):
    """:class:`WeightedIndex`, or :class:`AllRows` once ``batch_size >= len(p)``.

    With replacement, ``b >= N`` importance draws cost as much as the exact sum over the rows and
    stay noisy (no finite-population correction); on a small, nearly separable set this held
    ``batch_size="auto"``'s step at a tenth of the exact-sum step.
    """
    return AllRows(len(p)) if batch_size >= len(p) else WeightedIndex(p, batch_size, tables)


class WeightedIndex(BlockIndex):
    """``b`` rows drawn with replacement from ``p``, in pre-drawn blocks.

    Draws use the inverse CDF with a guide table (Chen and Asau's indexed search: the uniform's
    bucket ``floor(u N)`` gives a first candidate, then a few vectorised forward steps; identical
    to ``searchsorted`` and several times faster).  ``weight_i = 1 / (b p_i)`` and ``scale = 1``,
    so ``sum_B weight_i ∇f_i`` is unbiased for ``sum_i ∇f_i``.
    """

    def __init__(self, probabilities, batch_size, tables=None):
        p = np.asarray(probabilities, dtype=np.float64)
        super().__init__(p.size, batch_size)
        self.cdf, self.total, self.p, self.guide = tables or weight_tables(p)

    def sample(self, rng, size):
        """Row indices of shape ``size`` drawn i.i.d. from ``p``."""
        u = rng.random(size).ravel()
        idx = self.guide[(u * self.n_rows).astype(np.intp)].astype(np.intp)
        u *= self.total
        move = np.flatnonzero(self.cdf[idx] <= u)
        while move.size:
            idx[move] += 1
            move = move[self.cdf[idx[move]] <= u[move]]
        return np.minimum(idx, self.n_rows - 1, out=idx).reshape(size)

    def chain_block(self, rng, n_steps):
        return self.sample(rng, (n_steps, self.b))

    def inverse(self, idx):
        """``1 / P(row i)`` of the rows ``idx`` (a fresh array)."""
        return np.divide(self.total, self.p[idx])

    def block_weights(self, idx):
        w = self.inverse(idx)
        w /= self.b
        return w


class WeightTables(NamedTuple):
    """What :class:`WeightedIndex` draws from: ``cdf`` (with an ``inf`` sentinel), ``total``,
    the weights ``p`` themselves and the guide table; built once per weights, whatever the
    batch."""

    cdf: np.ndarray
    total: float
    p: np.ndarray
    guide: np.ndarray


def weight_tables(p):
    """:class:`WeightTables` of the (unnormalised) weights ``p``, in ``O(n)``.

    Two new arrays, ``cdf`` (float64) and the guide (int32 below 2^31 rows), and chunk-sized
    temporaries: fresh memory costs its page faults (on large data ``N``-sized temporaries cost
    more than the search itself, so ``1 / P(row)`` is computed for the drawn rows only).
    """
    p = np.asarray(p, dtype=np.float64)
    n = p.size
    cdf = np.empty(n + 1)
    np.cumsum(p, out=cdf[:n])
    cdf[n] = np.inf  # sentinel: the forward search stops
    total = float(cdf[n - 1])
    guide = _guide(cdf[:n], (total / n) * (1.0 - 1e-12))
    return WeightTables(cdf, total, p, guide)


def _guide(cdf, step, chunk=1 << 20):
    """A guide table: ``guide[j] <= #{k : cdf[k] <= j step}`` (``searchsorted(cdf, j step,
    "right")``), at most one bucket below it, in ``O(n)`` (the search is ``n log n``, a large
    share of the build on large data).

    Each ``cdf[k]`` goes to bucket ``ceil(cdf[k] / step)``, raised by one where the product
    ``j step`` is still below ``cdf[k]``: at least the first ``j`` with ``j step >= cdf[k]`` and
    nearly always that one (the division's rounding is far below one bucket), so the counts are
    lower bounds and :meth:`WeightedIndex.sample`'s forward search ends where the search would.
    (Buckets raised by one everywhere, without the test, would add a forward step to most draws.)
    The buckets are non-decreasing, so the last ``k`` of each run sets its bucket to ``k + 1`` and
    a running maximum fills the buckets no ``cdf[k]`` fell in.
    """
    n = cdf.size
    guide = np.zeros(n, dtype=np.int32 if n < np.iinfo(np.int32).max else np.intp)
    b = np.empty(min(chunk, n))
    for k0 in range(0, n, chunk):
        c = cdf[k0:k0 + chunk]
        bk = b[:c.size]
        np.divide(c, step, out=bk)
        np.ceil(bk, out=bk)
        bk[bk * step < c] += 1.0
        last = np.append(np.flatnonzero(bk[1:] != bk[:-1]), c.size - 1)
        last = last[bk[last] < n]
        guide[bk[last].astype(np.intp)] = k0 + last + 1
    return np.maximum.accumulate(guide, out=guide)


def preference_weights(posterior, laplace, correction, uniform_mix, rng, anchor=None):
    """``(p, n_grad_evals, outputs, anchor)``: the weights that suit ``correction``, and the
    control-variate anchor: ``anchor``, or where ``correction`` needs one and the model allows
    it, from the weights' own pass (else None).

    A plain sum is best served by ``p_i ∝ ||∇f_i(theta_hat)||`` (eq. 11); a
    corrected one sums gradient differences ``≈ H_i (theta - theta_a)``, so
    by the curvature ``p_i ∝ sqrt(tr(H_i Σ H_i))`` (eq. 16).
    """
    if correction.uses_anchor:
        kind, (p, evals, found) = "curvature", curvature_weights_and_anchor(
            posterior, laplace, uniform_mix, rng, anchor=anchor is None and correction.at_mode)
    else:
        kind, found = "gradient_norm", None
        p, evals = gradient_norm_weights(posterior, laplace, uniform_mix)
    return p, evals, anchor if anchor is not None else found, {"preferential_weights": kind, "preferential_uniform_mix": uniform_mix,
                      "preferential_max_weight_ratio": float(p.max() * p.size),
                      "subsampling_weights": p}


class Preferential(IndexedStrategy):
    """SGLD-PS: rows drawn with probability ∝ their gradient norm at the mode.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the weights, so that every row keeps
        probability at least ``uniform_mix / N`` (a zero probability would bias the estimate).
    correction : {"plain", "cv", "svrg"} or correction object, default="plain"
        ``"plain"``: eq. 8 below.  ``"cv"`` (eq. 12, as
        :class:`PreferentialCV`) and ``"svrg"`` sum gradient differences,
        so their weights follow the curvature (eq. 16) instead.
    shared_minibatch : bool, default=False
        Whether all chains use the same draws in a step (see :class:`Uniform`).

    Notes
    -----
    Weights ``p_i ∝ ||∇f_i(theta_hat)||`` (seed 004 eq. 11) mixed with uniform,
    ``B`` of size ``b`` drawn with replacement from ``p``, and (eq. 8)::

        g = ∇f_0(theta) + (1/b) sum_{i in B} ∇f_i(theta) / p_i

    Unbiased.  Preprocessing: the mode and one pass of gradients (closed form for GLMs).  ``b``
    gradient evaluations per step.  At ``b >= N`` every row is used once instead (the exact sum,
    same cost, no noise).  ``preprocessing_`` gets ``subsampling_weights`` ``(n_samples,)``,
    ``preferential_weights`` (which kind), ``preferential_uniform_mix`` and
    ``preferential_max_weight_ratio`` (``N max_i p_i``).

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "preferential"

    def __init__(self, uniform_mix=0.1, correction="plain", shared_minibatch=False):
        self.uniform_mix = uniform_mix
        self.correction = correction
        self.shared_minibatch = shared_minibatch

    _parameter_constraints = {"uniform_mix": [Interval(Real, 0, 1, closed="right")],
                              "correction": CORRECTION_CONSTRAINT,
                              "shared_minibatch": ["boolean"]}

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """The weights and their sampling tables, and the correction's data (control variates:
        the anchor from the weights' pass where it computes one)."""
        correction, mix = self._correction(), float(self.uniform_mix)
        p, evals, anchor, outputs = preference_weights(posterior, laplace, correction, mix, rng,
                                                       anchor)
        terms, more = correction.preprocess(posterior, laplace, anchor)
        return StrategyData(posterior, laplace, terms=terms, index=(p, weight_tables(p)),
                            n_grad_evals=evals + more, outputs=outputs)

    def estimator(self, data, *, batch_size):
        p, tables = data.index
        return self._estimator(data, weighted_index(p, batch_size, tables))


class PreferentialCV(Preferential):
    """SGLD-CV-PS: control variates at the mode with curvature-based weights.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the weights (floor).
    shared_minibatch : bool, default=False
        Whether all chains use the same draws in a step (see :class:`Uniform`).

    Notes
    -----
    Weights ``p_i ∝ sqrt(tr(H_i Σ H_i))`` (seed 004 eq. 16; ``H_i`` the
    Hessian of ``f_i`` at the mode, ``Σ`` the Laplace covariance; GLMs in
    closed form, other models by Monte Carlo over Laplace draws, see
    :func:`skbayes_sg.preprocessing.curvature_weights`), mixed with uniform;
    ``B`` drawn with replacement from ``p``, and (eq. 12)::

        g = ∇f_0(theta) + G + (1/b) sum_{i in B} [∇f_i(theta) - ∇f_i(theta_hat)] / p_i

    with ``G = sum_i ∇f_i(theta_hat)``.  Unbiased.  Cost per step as ``control_variates``: ``b``
    evaluations for GLMs (anchor responses stored as scalars), ``2 b`` otherwise.  At ``b >= N``
    every row is used once instead (the exact gradient at the same cost).  The preset
    ``Preferential(correction="cv")``.

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "preferential_cv"
    correction = "cv"

    def __init__(self, uniform_mix=0.1, shared_minibatch=False):
        self.uniform_mix = uniform_mix
        self.shared_minibatch = shared_minibatch
