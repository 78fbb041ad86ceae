"""SVRG anchors refreshed every tau steps (vrSG-MCMC, seed 001 Algorithm 1)."""

from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import Interval

from ..preprocessing import anchor_at
from ..utils import row_chunks
from ._corrections import BaseCorrection, MinibatchSum, ModeAnchor, grad_difference

__all__ = ["RefreshedAnchor", "SVRGAnchor", "SVRGState", "subset_gradient"]

_CHUNK = 2048  # rows per chain per gradient call in an anchor pass


class SVRGState(NamedTuple):
    """Steps until the next refresh, anchors ``(C, p)`` and their gradients ``(C, p)``."""

    countdown: int
    anchor: np.ndarray
    grad: np.ndarray


def subset_gradient(posterior, rngs, theta, m):
    """``((N/m) sum_{i in B1_c} m_i ∇f_i(theta_c) (C, p), n_grad_evals)``.

    ``B1_c`` is a uniform ``m``-subset of the rows drawn from chain ``c``'s
    Generator; ``m >= N`` gives the exact sum.  At most ``_CHUNK`` rows per
    chain are gathered at a time, so memory stays bounded for any ``m``.
    """
    model, N = posterior.model, posterior.n_rows
    if m >= N:
        return posterior.row_sum(model.grad_sum, theta), theta.shape[0] * N
    idx = np.stack([rng.choice(N, m, replace=False, shuffle=False) for rng in rngs])
    g = np.zeros(theta.shape)
    for sl in row_chunks(m, rows=_CHUNK):
        rows = idx[:, sl]
        g += model.grad_sum(theta, *posterior.rows(rows), posterior.rows_weight(rows))
    g *= N / m
    return g, idx.size


class RefreshedAnchor(MinibatchSum):
    """SVRG terms: per-chain anchors ``theta_a`` refreshed every ``tau`` steps.

    At the first step and every ``tau`` steps after it, each chain sets ``theta_a <- theta`` and
    ``g_a = (N/n1) sum_{B1} m_i ∇f_i(theta_a)`` on its own uniform ``n1``-subset (exact when
    ``n1 = N``); that step costs ``n1`` and its minibatch sum vanishes.  The other steps cost
    ``2 b`` (current and anchor gradients of the minibatch, GLMs included).
    """

    per_row = 2

    def __init__(self, posterior, mode, n1, tau, anchor=None):
        super().__init__(posterior.model)
        self.posterior, self.n1, self.tau = posterior, int(n1), int(tau)
        N = posterior.n_rows
        inv = self.tau * (1.0 / self.n1 - 1.0 / N) + 1.0 / N
        self.pilot_batch = int(np.clip(round(1.0 / inv), 1, N))
        if self.pilot_batch >= N:  # the exact anchor at the mode (one pass unless given)
            if anchor is None:
                anchor, self.preprocessing_evals = anchor_at(posterior, mode)
            self._pilot = ModeAnchor(posterior, anchor)
        else:
            self._pilot = ResampledAnchor(posterior, mode, self.pilot_batch)

    def init(self, rngs, theta):
        return SVRGState(0, None, None)

    def begin(self, rngs, theta, state):
        if state.countdown:
            return state.grad, state._replace(countdown=state.countdown - 1), 0, False
        anchor = theta.copy()
        g_a, n = subset_gradient(self.posterior, rngs, anchor, self.n1)
        return g_a, SVRGState(self.tau - 1, anchor, g_a), n, True

    def difference(self, theta, Xb, yb, w, idx, state, chains):
        return grad_difference(self.model, theta, state.anchor[chains], Xb, yb, w)

    def evals_per_step(self, b):
        return (self.n1 + 2.0 * b * (self.tau - 1)) / self.tau

    def pilot(self):
        """The anchor error's white-noise equivalent (see :class:`SVRG`, Notes).

        Anchored at the mode, with the anchor gradient redrawn on
        ``m_eff = 1 / (tau (1/n1 - 1/N) + 1/N)`` rows at every call (the exact
        control variates at the mode when ``m_eff = N``).
        """
        return self._pilot


class ResampledAnchor(MinibatchSum):
    """Pilot terms: anchor at the mode, its gradient redrawn on ``m`` rows per call."""

    per_row = 2

    def __init__(self, posterior, mode, m):
        super().__init__(posterior.model)
        self.posterior, self.mode, self.m = posterior, mode, int(m)

    def begin(self, rngs, theta, state):
        anchor = np.broadcast_to(self.mode, theta.shape)
        g_a, n = subset_gradient(self.posterior, rngs, anchor, self.m)
        return g_a, state, n, False

    def difference(self, theta, Xb, yb, w, idx, state, chains):
        return grad_difference(self.model, theta, self.mode, Xb, yb, w)


class SVRGAnchor(BaseCorrection):
    """SVRG control variates at minibatch anchors refreshed every ``tau`` steps.

    Parameters
    ----------
    n1, update_every : int or None, default=None
        Anchor minibatch size and refresh interval, as in
        :class:`~skbayes_sg.subsampling.SVRG`.

    Notes
    -----
    ``g = ∇f_0(theta) + g_a + scale * sum_B w_i [∇f_i(theta) - ∇f_i(theta_a)]``
    with any index sampler; see :class:`~skbayes_sg.subsampling.SVRG`.
    """

    name = "svrg"
    needs_rows = frozenset({"per_step"})  # anchors refreshed on each chain's own rows

    def __init__(self, n1=None, update_every=None):
        self.n1 = n1
        self.update_every = update_every

    _parameter_constraints = dict.fromkeys(("n1", "update_every"),
                                           [Interval(Integral, 1, None, closed="left"), None])

    def max_batch_size(self, n_rows):
        """A given ``n1 < N`` must stay above the minibatch (Theorem 6)."""
        return n_rows if self.n1 is None or self.n1 >= n_rows else max(1, int(self.n1) - 1)

    def resolve(self, n_rows, batch_size):
        """``(n1, tau)`` for ``n_rows`` rows and minibatches of ``batch_size``."""
        N, b = int(n_rows), int(batch_size)
        n1 = min(N, 100 * b if self.n1 is None else int(self.n1))
        if n1 <= b and n1 < N:
            raise ValueError(
                f"svrg needs an anchor minibatch larger than the step's: n1={n1} <= "
                f"batch_size={b} (seed 001, Theorem 6). Use n1 > {b}, n1 >= n_samples "
                "for the exact anchor, or n1=None (min(N, 100 * batch_size)).")
        tau = max(1, n1 // (10 * b)) if self.update_every is None else int(self.update_every)
        return n1, tau

    def preprocess(self, posterior, laplace, anchor=None):
        """The anchor at the mode if already computed (the pilot of ``n1 = N`` uses it)."""
        return anchor, 0

    def build(self, posterior, laplace, *, batch_size, data=None):
        n1, tau = self.resolve(posterior.n_rows, batch_size)
        terms = RefreshedAnchor(posterior, laplace.mode, n1, tau, data)
        terms.outputs = {"svrg_n1": n1, "svrg_update_every": tau,
                         "svrg_evals_per_step": terms.evals_per_step(batch_size),
                         "svrg_pilot_batch": terms.pilot_batch,
                         "anchor_batch_size": n1, "anchor_update_every": tau}
        return terms
