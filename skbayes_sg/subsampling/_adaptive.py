"""Adaptive subsample size: ASGLD-CV-PS (seed 004 §3.3, Algorithm 2)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..preprocessing import lipschitz_constants
from ..utils import row_chunks
from ._base import StrategyData
from ._preferential import PreferentialCV, WeightedIndex, preference_weights

__all__ = ["Adaptive", "AdaptiveSizeIndex"]

_BUFFER = 1 << 16  # pre-drawn rows per chain (at least 4 n_max)


_SIZE = Interval(Integral, 1, None, closed="left")

class AdaptiveSizeIndex(WeightedIndex):
    """Rows drawn i.i.d. from ``p``, ``n_c`` per chain from ``||theta_c - theta_hat||^2``.

    Each chain keeps a buffer of pre-drawn rows (and their ``1 / p_i``) from its own Generator and
    takes the next ``n_c`` of them; the draws are i.i.d., so a buffer whose rest is too short is
    simply replaced.  Chains get different sizes, so ``idx`` and ``weight = 1 / (n_c p_i)`` are
    tuples of per-chain arrays (``ragged``).
    """

    ragged = True

    def __init__(self, probabilities, batch_size, mode, *, rate, n_min, n_max):
        super().__init__(probabilities, 1)
        self.b, self.n_block = int(batch_size), max(4 * int(n_max), _BUFFER)
        self.mode, self.rate, self.n_min, self.n_max = mode, float(rate), int(n_min), int(n_max)

    def sizes(self, theta):
        """``n_c = ceil(rate ||theta_c - theta_hat||^2)`` clipped to ``[n_min, n_max]``."""
        delta = theta - self.mode
        n = np.ceil(np.fmin(np.einsum("cp,cp->c", delta, delta) * self.rate, self.n_max))
        return np.maximum(n, self.n_min).astype(np.intp)

    def _buffer(self, rng):
        idx = self.sample(rng, self.n_block)
        return idx, self.inverse(idx), 0

    def init(self, rngs, n_chains):
        """State: one ``(rows, 1 / p, position)`` buffer per chain."""
        return tuple(self._buffer(rng) for rng in rngs)

    def draw(self, rngs, theta, state):
        """``(idx tuple of (n_c,), weight tuple of (n_c,), state)``."""
        idx, weight, new = [], [], []
        for rng, chain, n in zip(rngs, state, self.sizes(theta)):
            rows, inv_p, pos = chain if chain[2] + n <= chain[0].size else self._buffer(rng)
            idx.append(rows[pos:pos + n])
            weight.append(inv_p[pos:pos + n] / n)
            new.append((rows, inv_p, pos + n))
        return tuple(idx), tuple(weight), tuple(new)


def _sq_distance_quantile(laplace, rng, n_draws, q=0.95):
    """``q``-quantile of ``||theta - theta_hat||^2`` under ``N(theta_hat, Σ)``, and the draws.

    A low-rank-plus-diagonal ``Σ`` enters by its variances (the mean ``tr Σ`` is exact).
    """
    cov = laplace.covariance
    lam = np.maximum(np.linalg.eigvalsh(cov) if laplace.dense else laplace.variances, 0.0)
    d2 = np.concatenate([rng.standard_normal((sl.stop - sl.start, lam.size)) ** 2 @ lam
                         for sl in row_chunks(n_draws, lam.size)])
    return float(np.quantile(d2, q)), d2


class Adaptive(PreferentialCV):
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
        Pseudo-variance threshold of eq. 19.  None sets it as seed 004 §5.3.3 does, from the 95th
        percentile ``r95`` of ``||theta - theta_hat||^2``, with ``n = batch_size`` in eq. 18:
        ``V0 = r95 sum_i(L_i^2 / p_i) / batch_size``.  The pilot positions are Laplace draws
        ``N(theta_hat, Σ)`` (what a pilot SGLD-CV chain samples, without running one).  Giving
        ``V0`` needs Lipschitz constants (GLMs and linear regression; not the MLP).
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
    ``V0`` the rule is ``n_c = ceil(batch_size ||theta_c - theta_hat||^2 / r95)`` for every
    model (the Lipschitz sum cancels), so it also runs on the MLP.  Unbiased.  The mean
    subsample size is ``diagnostics_["grad_evals_per_step"]`` (halved for non-GLMs, which pay
    two evaluations per row).  ``preprocessing_`` holds ``adaptive_V0``,
    ``adaptive_lipschitz_sum`` (None without constants), ``adaptive_r95``, ``adaptive_rate``
    (size per unit squared distance), the limits and ``adaptive_pilot_mean_size`` (mean ``n_c``
    over the pilot draws), and the weights as :class:`PreferentialCV` does.

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "adaptive"
    needs_rows = frozenset({"per_step"})  # each chain's size from its position

    def __init__(self, uniform_mix=0.1, n_min=1, n_max=None, V0=None, n_pilot=1000):
        self.uniform_mix = uniform_mix
        self.n_min = n_min
        self.n_max = n_max
        self.V0 = V0
        self.n_pilot = n_pilot

    _parameter_constraints = {
        **PreferentialCV._parameter_constraints, "n_min": [_SIZE], "n_max": [_SIZE, None],
        "n_pilot": [Interval(Integral, 20, None, closed="left")],
        "V0": [Interval(Real, 0, np.inf, closed="neither"), None]}

    def validate(self):
        super().validate()
        if self.n_max is not None and self.n_max < self.n_min:
            raise ValueError(f"Adaptive: n_max={self.n_max} is smaller than n_min={self.n_min}.")

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """The weights, the Lipschitz sum, the pilot distances and the control variates'
        anchor."""
        correction = self._correction()
        p, evals, anchor, outputs = preference_weights(posterior, laplace, correction,
                                                       float(self.uniform_mix), rng, anchor)
        lip_sum = self._lipschitz_sum(posterior, laplace, p)
        r95, d2 = _sq_distance_quantile(laplace, rng, int(self.n_pilot))
        terms, more = correction.preprocess(posterior, laplace, anchor)
        return StrategyData(posterior, laplace, terms=terms, index=(p, lip_sum, r95, d2),
                            n_grad_evals=evals + more, outputs=outputs)

    def estimator(self, data, *, batch_size):
        N = data.posterior.n_rows
        n_max = min(10 * batch_size, N) if self.n_max is None else int(self.n_max)
        if n_max < self.n_min:
            raise ValueError(f"Adaptive: n_max=None gives min(10 * batch_size, n_samples) = "
                             f"{n_max}, below n_min={self.n_min}; give n_max.")
        p, lip_sum, r95, d2 = data.index
        if self.V0 is None:  # eq. 18 at r95 with n = batch_size: the Lipschitz sum cancels
            rate, V0 = batch_size / r95, None if lip_sum is None else r95 * lip_sum / batch_size
        else:
            rate, V0 = lip_sum / float(self.V0), self.V0
        pilot = float(np.maximum(np.ceil(np.fmin(d2 * rate, n_max)), self.n_min).mean())
        outputs = {**data.outputs, "adaptive_V0": V0, "adaptive_lipschitz_sum": lip_sum,
                   "adaptive_r95": r95, "adaptive_rate": rate, "adaptive_n_min": self.n_min,
                   "adaptive_n_max": n_max, "adaptive_pilot_mean_size": pilot}
        index = AdaptiveSizeIndex(p, batch_size, data.laplace.mode, rate=rate, n_min=self.n_min,
                                  n_max=n_max)
        return self._estimator(data, index, outputs=outputs, rows_per_step=pilot)

    def _lipschitz_sum(self, posterior, laplace, p):
        """``sum_i L_i^2 / p_i``, or None when the model has no constants."""
        try:
            L = lipschitz_constants(posterior, laplace)
        except ValueError:
            if self.V0 is not None:
                raise ValueError(
                    f"Adaptive: V0={self.V0!r} needs Lipschitz constants, which "
                    f"{type(posterior.model).__name__} does not have; use V0=None.") from None
            return None
        return float(np.sum(L * L / p))
