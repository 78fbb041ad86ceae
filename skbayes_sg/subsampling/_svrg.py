"""vrSG-MCMC: SVRG control variates at a minibatch anchor refreshed every tau steps."""

from numbers import Integral
from typing import NamedTuple

import numpy as np

from ._base import BaseStrategy, GradientEstimator
from ._index import UniformIndex

__all__ = ["SVRG", "SVRGEstimator", "SVRGState"]

_CHUNK = 2048  # rows per chain per gradient call in the anchor pass


class SVRGState(NamedTuple):
    """Index-sampler state, steps until the next refresh, anchors ``(C, p)``."""

    index: object
    countdown: int
    anchor: np.ndarray
    anchor_grad: np.ndarray


def subset_grad_sum(problem, theta, idx):
    """``sum_{i in idx[c]} w_i ∇f_i(theta[c])`` per chain, in row chunks.

    ``idx`` is ``(C, m)`` (one index set per chain); at most ``_CHUNK`` rows
    per chain are gathered at a time, so memory stays bounded for any ``m``.
    """
    pb, g = problem, np.zeros(theta.shape)
    for start in range(0, idx.shape[1], _CHUNK):
        rows = idx[:, start:start + _CHUNK]
        g += pb.model.grad_sum(theta, pb.X[rows], pb.y[rows], pb.rows_weight(rows))
    return g


class SVRGEstimator(GradientEstimator):
    """``g = ∇f_0 + g_a + (N/b) sum_B w_i [∇f_i(theta) - ∇f_i(theta_a)]``.

    Each chain has its own anchor ``theta_a`` and anchor gradient
    ``g_a = (N/n1) sum_{B1} w_i ∇f_i(theta_a)`` on its own uniform
    ``n1``-subset ``B1`` (the exact ``sum_i ∇f_i(theta_a)`` when ``n1 = N``);
    all chains refresh together every ``tau`` steps, starting at the first
    step.  A refresh step returns ``∇f_0 + g_a`` (the correction vanishes at
    ``theta = theta_a``) and costs ``n1`` evaluations per chain; the other
    steps cost ``2b`` (current and anchor gradients of the minibatch).

    Until :meth:`bind` is called (during the step-size pilot) ``estimate``
    anchors at the mode and redraws the anchor on ``m_eff`` rows at every
    call, so the pilot sees the anchor error's white-noise equivalent (see
    :class:`SVRG`, Notes).
    """

    def __init__(self, problem, index, n1, tau, **kwargs):
        super().__init__(problem, **kwargs)
        self.index, self.n1, self.tau = index, int(n1), int(tau)
        N, b = problem.n_rows, index.b
        self.glm = getattr(problem.model, "is_glm", False)
        self.evals_per_step = (self.n1 + 2.0 * b * (self.tau - 1)) / self.tau
        inv = self.tau * (1.0 / self.n1 - 1.0 / N) + 1.0 / N
        self.pilot_batch = int(np.clip(round(1.0 / inv), 1, N))
        self.bound, self._mode_grad = False, None

    def bind(self, step_size, sampler, precond):
        """Leave pilot mode: from now on ``estimate`` is the SVRG estimate."""
        self.bound = True

    def init(self, rngs, theta):
        state = self.index.init(rngs, theta.shape[0])
        return state if not self.bound else SVRGState(state, 0, None, None)

    def anchor_gradient(self, rngs, theta_a, n1=None):
        """``(g_a (C, p), n_grad_evals)`` at the anchors ``theta_a`` on ``n1`` rows."""
        pb, n1 = self.problem, self.n1 if n1 is None else n1
        if n1 >= pb.n_rows:
            return pb.full_grad(theta_a) - pb.prior.grad(theta_a), theta_a.shape[0] * pb.n_rows
        idx = np.stack([rng.choice(pb.n_rows, n1, replace=False, shuffle=False) for rng in rngs])
        g = subset_grad_sum(pb, theta_a, idx)
        g *= pb.n_rows / n1
        return g, idx.size

    def estimate(self, rngs, theta, state):
        if not self.bound:
            return self._pilot_estimate(rngs, theta, state)
        pb = self.problem
        index_state, countdown, anchor, anchor_grad = state
        if countdown == 0:
            anchor = theta.copy()
            anchor_grad, n = self.anchor_gradient(rngs, anchor)
            g = pb.prior.grad(theta)
            g += anchor_grad
            return g, SVRGState(index_state, self.tau - 1, anchor, anchor_grad), n
        idx, w, scale, index_state = self.index.draw(rngs, index_state)
        if pb.weight is not None:
            w = pb.weight[idx] if w is None else w * pb.weight[idx]
        Xb, yb = pb.X[idx], pb.y[idx]
        if self.glm:
            r = pb.model.response(theta, Xb, yb)
            r -= pb.model.response(anchor, Xb, yb)
            g = pb.model.grad_from_response(r, Xb, w)
        else:
            g = pb.model.grad_sum(theta, Xb, yb, w)
            g -= pb.model.grad_sum(anchor, Xb, yb, w)
        g *= scale
        g += anchor_grad
        g += pb.prior.grad(theta)
        return g, SVRGState(index_state, countdown - 1, anchor, anchor_grad), 2 * idx.size

    def _pilot_estimate(self, rngs, theta, state):
        """SVRG anchored at the mode, anchor redrawn on ``m_eff`` rows every call.

        Its variance is the anchor error's white-noise equivalent plus the
        correction's at a posterior-typical distance from the anchor.
        """
        pb = self.problem
        if pb.mode is None:  # anchor at theta: the correction vanishes
            g, n = self.anchor_gradient(rngs, theta, self.pilot_batch)
            return g + pb.prior.grad(theta), state, n
        anchor = np.broadcast_to(pb.mode, theta.shape)
        if self.pilot_batch < pb.n_rows:
            g, n = self.anchor_gradient(rngs, anchor, self.pilot_batch)
        else:
            if self._mode_grad is None:
                self._mode_grad = pb.full_grad(pb.mode[None])[0] - pb.prior.grad(pb.mode[None])[0]
                n = pb.n_rows  # once; the exact anchor is shared by all positions
            else:
                n = 0
            g = np.broadcast_to(self._mode_grad, theta.shape).copy()
        idx, _, scale, state = self.index.draw(rngs, state)
        w = pb.rows_weight(idx)
        Xb, yb = pb.X[idx], pb.y[idx]
        g += scale * (pb.model.grad_sum(theta, Xb, yb, w) - pb.model.grad_sum(anchor, Xb, yb, w))
        g += pb.prior.grad(theta)
        return g, state, n + 2 * idx.size


class SVRG(BaseStrategy):
    """vrSG-MCMC: SVRG control variates at a minibatch anchor (``svrg``).

    Parameters
    ----------
    n1 : int, default=None
        Anchor minibatch size ``|B1|``; must exceed ``batch_size`` (seed 001,
        Theorem 6) unless it covers the data.  None means
        ``min(N, 10 * batch_size)``; values ``>= N`` use the exact full-data
        anchor gradient (SVRG-LD).
    update_every : int, default=None
        Anchor refresh interval ``tau`` in steps.  None means
        ``max(1, n1 // batch_size)``: one epoch (``N / b`` steps) when the
        anchor is exact, otherwise short enough that the anchor error,
        frozen for ``tau`` steps, adds no more noise than a plain minibatch
        of ``batch_size`` (see Notes).

    Notes
    -----
    Every ``tau`` steps (from the first step on) each chain sets its anchor
    ``theta_a <- theta`` and ``g_a = (N/n1) sum_{i in B1} ∇f_i(theta_a)`` on
    its own uniform ``n1``-subset ``B1``; each step (methods.md §8)::

        g = ∇f_0(theta) + g_a + (N/b) sum_{i in B} [∇f_i(theta) - ∇f_i(theta_a)]

    ``E[g] = ∇U(theta)`` only on average over ``B1`` as well as ``B``:
    given the anchor, ``g`` is off by the anchor error ``e_a = g_a - sum_i
    ∇f_i(theta_a)`` for ``tau`` steps.  Cost per chain: ``n1`` per refresh
    (the correction is zero at the anchor, so refresh steps draw no ``B``)
    and ``2b`` on the other steps, ``(n1 + 2b (tau - 1)) / tau`` per step on
    average.  The correction's variance is ``O(||theta - theta_a||^2 / b)``,
    but ``e_a`` (variance ``N^2 (1/n1 - 1/N) s^2``, with ``s^2`` the
    per-example gradient variance) is *coloured* noise: held for ``tau``
    steps it perturbs the chain like white noise of ``tau`` times its
    variance (for ``tau h`` short of the mixing time; less beyond).  So
    during the step-size pilot (before ``bind``) the estimator anchors at
    the mode and redraws the anchor on ``m_eff = 1 / (tau (1/n1 - 1/N) +
    1/N)`` rows at every call -- exactly that white-noise variance, plus the
    correction's at the pilot's Laplace draws -- and ``step_size="auto"``
    stays accurate (without this the pilot saw no noise and the
    well-conditioned test posterior came out 40-60% too wide).  Unless
    ``n1 = N`` the anchor error does not average out within an epoch, and at
    equal cost a minibatch anchor is no better than ``uniform`` for the
    stationary accuracy; ``n1 = N`` (SVRG-LD) is much better.  Fitted
    estimators get ``anchor_batch_size_`` and ``anchor_update_every_`` (the
    resolved ``n1`` and ``tau``) and ``preprocessing_`` keys ``svrg_n1``,
    ``svrg_update_every``, ``svrg_evals_per_step``, ``svrg_pilot_batch``.

    References
    ----------
    Chen, C., Wang, W., Zhang, Y., Su, Q. and Carin, L. (2017). A convergence
    analysis for a class of practical variance-reduction stochastic gradient
    MCMC. arXiv:1709.01180 (Algorithm 1).
    Dubey, K. A., Reddi, S. J., Williamson, S. A., Poczos, B., Smola, A. J.
    and Xing, E. P. (2016). Variance reduction in stochastic gradient
    Langevin dynamics. NeurIPS.
    """

    name = "svrg"

    def __init__(self, n1=None, update_every=None):
        self.n1 = n1
        self.update_every = update_every

    def max_batch_size(self, n_rows):
        """A given ``n1 < N`` must stay above the minibatch (Theorem 6)."""
        n1 = self.n1
        if n1 is None or not isinstance(n1, Integral) or n1 >= n_rows:
            return n_rows
        return max(1, int(n1) - 1)

    def resolve(self, n_rows, batch_size):
        """Validated ``(n1, tau)`` for ``n_rows`` rows and minibatches of ``batch_size``."""
        N, b = int(n_rows), int(batch_size)
        n1 = min(N, 10 * b) if self.n1 is None else _positive_int(self.n1, "n1")
        n1 = min(n1, N)
        if n1 <= b and n1 < N:
            raise ValueError(
                f"svrg needs an anchor minibatch larger than the step's: n1={n1} <= "
                f"batch_size={b} (seed 001, Theorem 6). Use n1 > {b}, n1 >= n_samples "
                "for the exact anchor, or n1=None (min(N, 10 * batch_size)).")
        tau = (max(1, n1 // b) if self.update_every is None
               else _positive_int(self.update_every, "update_every"))
        return n1, tau

    def build(self, problem, *, batch_size, rng):
        n1, tau = self.resolve(problem.n_rows, batch_size)
        est = SVRGEstimator(problem, UniformIndex(problem.n_rows, batch_size), n1, tau)
        est.info.update({"svrg_n1": n1, "svrg_update_every": tau,
                         "svrg_evals_per_step": est.evals_per_step,
                         "svrg_pilot_batch": est.pilot_batch})
        est.attributes.update({"anchor_batch_size": n1, "anchor_update_every": tau})
        return est


def _positive_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 1:
        raise ValueError(f"{name} must be a positive integer or None, got {value!r}.")
    return int(value)
