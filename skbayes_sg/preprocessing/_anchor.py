"""The control-variate anchor at the mode: the full gradient and every row's response.

Control variates at the mode (``subsampling="control_variates"``, ``"preferential_cv"``) need, for
a GLM, the scalar responses ``r_i(theta_hat)`` of every row and ``G = sum_i m_i ∇f_i(theta_hat)``:
an :class:`Anchor` record.  It is made by one pass of its own (:func:`anchor_at`), or on the way
by a pass that reads the same rows at the same point: Newton's last pass
(``ModeResult.anchor``, :func:`~skbayes_sg.preprocessing.find_mode`) or the curvature weights of
``preferential_cv``.  The fit engine hands whichever exists to the strategy's preprocessing.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["Anchor", "anchor_at", "anchor_terms", "store_responses"]


class Anchor(NamedTuple):
    """``G`` ``(p,)``, the rows' responses (GLMs in memory, else None) and the ``point`` where
    both were evaluated (the mode, or an iterate within the mode search's tolerance of it)."""

    G: np.ndarray
    responses: np.ndarray
    point: np.ndarray


def anchor_at(posterior, mode):
    """``(Anchor, n_grad_evals)``: :func:`anchor_terms` at ``mode``, one pass."""
    G, responses = anchor_terms(posterior, mode)
    return Anchor(G, responses, mode), posterior.n_rows


def store_responses(posterior, sl, r, out=None):
    """Write a chunk's responses ``r`` into ``out[sl]`` (allocated at the first chunk); ``out``.

    Stored row-contiguous in the precision of the minibatch arithmetic: a softmax's ``(n, K)``
    responses come column-major from the chunks, and every step gathers ``b`` rows of them.
    Written in place, not concatenated and cast.
    """
    if out is None:
        out = posterior.response_buffer()
    out[sl] = r
    return out


def anchor_terms(posterior, mode):
    """``G = sum_i m_i ∇f_i(mode)`` ``(p,)`` and, for GLMs, every row's response ``r_i(mode)``.

    One pass in row chunks (``model.anchor_terms``: the binary logistic and fixed-noise linear
    models read a float32 chunk in float32, fused like the mode search's passes, and the others
    cast a chunk at a time).  The responses are stored in the precision of the minibatch
    arithmetic (float32 for float32 ``X``), in the posterior's :meth:`response_buffer`; where it
    has none (a model other than a GLM, or rows whose responses stay where they live: dask), they
    are None and ``G`` is a :meth:`row_sum`.
    """
    model, responses = posterior.model, posterior.response_buffer()
    if responses is None:
        return posterior.row_sum(model.grad_sum, mode[None, :])[0], None
    G = np.zeros(model.n_params)
    for sl in posterior.chunks():
        g, r = model.anchor_terms(mode, posterior.X[sl], posterior.y[sl],
                                  posterior.rows_weight(sl))
        G += g
        store_responses(posterior, sl, r, responses)
    return G, responses
