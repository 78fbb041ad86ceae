"""Corrections: how a minibatch sum becomes a gradient estimate (plain, control variates).

A correction object (``PlainCorrection()``, ``ControlVariate()``, and
:class:`~skbayes_sg.subsampling.SVRGAnchor`) only holds hyperparameters.  Its
``build(posterior, laplace, *, batch_size)`` returns the *terms* used per
step, for any index sampler::

    g = ∇f_0(theta) + g_a + scale * sum_{i in B} w_i m_i [∇f_i(theta) - ∇f_i(theta_a)]

(plain: no anchor, ``g_a = 0`` and no subtracted term).  Terms protocol: ``per_row`` (evaluations
per minibatch row), ``outputs``, ``preprocessing_evals``, ``init(rngs, theta) -> state``,
``begin(rngs, theta, state) -> (g_a or None, state, n_evals, at_anchor)`` (``at_anchor``: theta is
the anchor, so the minibatch sum vanishes and is skipped),
``difference(theta, X_B, y_B, w, idx, state, chains) -> (C, p)``, ``evals_per_step(b)`` and
``pilot()``.
"""

import numpy as np

from ..preprocessing import anchor_at
from ..utils import ParamsMixin
from ._rows import rows_of

__all__ = ["BaseCorrection", "ControlVariate", "MinibatchSum", "ModeAnchor", "PlainCorrection",
           "grad_difference"]


def grad_difference(model, theta, anchor, Xb, yb, w, anchor_response=None):
    """``sum_B w_i [∇f_i(theta) - ∇f_i(anchor)]`` per chain ``(C, p)``.

    GLMs subtract the responses ``r_i`` (the stored ``anchor_response`` when
    given, else recomputed) and form one gradient; other models take the
    difference of two ``grad_sum``.  ``anchor`` is ``(p,)`` or ``(C, p)``.
    """
    if model.is_glm:
        r = model.response(theta, Xb, yb)
        r -= (model.response(_per_chain(anchor, theta), Xb, yb) if anchor_response is None
              else anchor_response)
        return model.grad_from_response(r, Xb, w)
    g = model.grad_sum(theta, Xb, yb, w)
    g -= model.grad_sum(_per_chain(anchor, theta), Xb, yb, w)
    return g


def _per_chain(anchor, theta):
    """``anchor`` as ``theta``'s shape and precision (only when the step needs it: with stored
    responses the cast and broadcast are a noticeable share of a cheap step)."""
    return np.broadcast_to(np.asarray(anchor, dtype=theta.dtype), theta.shape)


class MinibatchSum:
    """Plain terms: ``scale * sum_B w_i m_i ∇f_i(theta)``, no anchor (base of all terms)."""

    per_row = 1
    offset = None
    responses_at = None  # where the row source evaluates gathered rows' anchor responses

    def __init__(self, model):
        self.model, self.outputs, self.preprocessing_evals = model, {}, 0

    def init(self, rngs, theta):
        """Anchor state for chains ``theta (C, p)`` (None: nothing changes)."""
        return None

    def begin(self, rngs, theta, state):
        """``(g_a or None, state, n_grad_evals, at_anchor)`` before the minibatch."""
        return self.offset, state, 0, False

    def difference(self, theta, Xb, yb, w, idx, state, chains):
        """The minibatch sum for chains ``theta`` (rows ``chains`` of the state)."""
        return self.model.grad_sum(theta, Xb, yb, w)

    def evals_per_step(self, b):
        """Nominal per-example evaluations per step and chain."""
        return float(self.per_row * b)

    def pilot(self):
        """Terms whose noise the step-size pilot measures (these)."""
        return self


class ModeAnchor(MinibatchSum):
    """Control variates at a fixed anchor ``theta_hat``: ``g_a = G = sum_i m_i ∇f_i(theta_hat)``.

    For GLMs the anchor terms ``∇f_i(theta_hat) = r_i(theta_hat) x~_i`` are
    stored as the scalars ``r_i`` (one gradient evaluation per row per
    step); other models recompute the minibatch's anchor gradients (two).
    ``theta_hat`` is where the :class:`~skbayes_sg.preprocessing.Anchor` was computed: the mode,
    or the mode search's last iterate (within its tolerance of the mode) when that pass computed
    it.  Its cost was counted by whoever computed it.  The row source says how the responses
    come (:meth:`~skbayes_sg.subsampling.InMemoryRows.responses`): stored, or evaluated with
    the gathered rows at ``responses_at`` (dask).
    """

    def __init__(self, posterior, anchor):
        super().__init__(posterior.model)
        self.offset, _, self.mode = anchor
        self.responses, self.responses_at = rows_of(posterior).responses(anchor)
        self.per_row = 1 if self.responses is not None else 2

    def difference(self, theta, Xb, yb, w, idx, state, chains):
        r = None if self.responses is None else self.responses[idx]
        return grad_difference(self.model, theta, self.mode, Xb, yb, w, r)


class BaseCorrection(ParamsMixin):
    """Base of the corrections (hyperparameter holders).

    ``uses_anchor`` says whether the minibatch sums gradient *differences*
    (then preference weights follow the curvature, not the gradient norm);
    ``at_mode`` whether the anchor is the mode's (the mode search can then compute it);
    ``needs_rows`` what it needs of the row source (:mod:`~skbayes_sg.subsampling._rows`).
    """

    name = None
    uses_anchor = True
    at_mode = False
    needs_rows = frozenset()

    def max_batch_size(self, n_rows):
        """Largest minibatch this correction allows (default ``n_rows``)."""
        return n_rows

    def preprocess(self, posterior, laplace, anchor=None):
        """``(data, n_grad_evals)``: what the terms need whatever the batch (default: nothing;
        control variates: their anchor at the mode, ``anchor`` if given)."""
        return None, 0

    def build(self, posterior, laplace, *, batch_size, data=None):
        """The per-step terms for minibatches of ``batch_size`` rows (``data`` from
        :meth:`preprocess`)."""
        raise NotImplementedError


class PlainCorrection(BaseCorrection):
    """No correction: ``g = ∇f_0 + scale * sum_B w_i ∇f_i`` (methods.md §1, §3, §5)."""

    name = "plain"
    uses_anchor = False

    def __init__(self):
        pass

    def build(self, posterior, laplace, *, batch_size, data=None):
        return MinibatchSum(posterior.model)


class ControlVariate(BaseCorrection):
    """Control variates at the mode (SGLD-CV, methods.md §4).

    Notes
    -----
    ``g = ∇f_0(theta) + G + scale * sum_B w_i [∇f_i(theta) - ∇f_i(theta_hat)]``
    with ``theta_hat`` the Laplace mode and ``G = sum_i ∇f_i(theta_hat)`` (one
    pass in ``build``).  Unbiased with any unbiased index sampler.

    References
    ----------
    Baker, J., Fearnhead, P., Fox, E. B. and Nemeth, C. (2019). Control
    variates for stochastic gradient MCMC. Statistics and Computing 29.
    """

    name = "cv"
    at_mode = True

    def __init__(self):
        pass

    def preprocess(self, posterior, laplace, anchor=None):
        """The anchor at ``laplace.mode``: ``anchor`` itself, or one pass."""
        return (anchor, 0) if anchor is not None else anchor_at(posterior, laplace.mode)

    def build(self, posterior, laplace, *, batch_size, data=None):
        if data is None:
            data = self.preprocess(posterior, laplace)[0]
        return ModeAnchor(posterior, data)
