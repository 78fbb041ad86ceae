"""The control-variate anchor at the mode: the full gradient and every row's response.

Control variates at the mode (``subsampling="control_variates"``, ``"preferential_cv"``) store, for
a GLM, the scalar responses ``r_i(theta_hat)`` of every row and ``G = sum_i m_i ∇f_i(theta_hat)``.
They are computed once per posterior and mode (:func:`mode_anchor`); the curvature weights of
``preferential_cv`` read the same rows at the same mode, so their pass computes the anchor too and
hands it over (:func:`share_anchor`): one pass over ``X`` instead of two.  Earlier still, Newton's
last pass is at (for rounded float32 positions: within its tolerance of) the mode, and computes
both on the way when asked (:func:`~skbayes_sg.preprocessing.find_mode`): no pass of their own.
"""

import numpy as np

from ._memo import computed, once_per

__all__ = ["anchor_known", "anchor_terms", "mode_anchor", "share_anchor", "store_responses"]


def _key(mode):
    return ("anchor", mode.tobytes())


def mode_anchor(posterior, mode):
    """``((G, responses, point), n_grad_evals)``: :func:`anchor_terms` at ``point = mode``, once
    per posterior and mode (0 evaluations when already computed or shared; a shared anchor's
    ``point`` may be an iterate within Newton's tolerance of ``mode``: the anchor is there)."""
    return once_per((posterior,), _key(mode),
                    lambda: ((*anchor_terms(posterior, mode), mode), posterior.n_rows))


def anchor_known(posterior, mode):
    """Whether the anchor at ``mode`` is already computed or shared (the mode search's last
    pass computes it when control variates will follow)."""
    return computed((posterior,), _key(mode))


def share_anchor(posterior, mode, G, responses, point=None):
    """Record ``(G, responses)`` computed by another pass at ``point`` (default ``mode``) for
    :func:`mode_anchor` at ``mode``.

    ``responses`` (None for models that are not GLMs, or rows not in memory) filled chunk by
    chunk with :func:`store_responses` or by Newton's passes.
    """
    point = mode if point is None else point
    once_per((posterior,), _key(mode), lambda: ((G, responses, point), 0))


def store_responses(posterior, sl, r, out=None):
    """Write a chunk's responses ``r`` into ``out[sl]`` (allocated at the first chunk); ``out``.

    Stored row-contiguous in the precision of the minibatch arithmetic: a softmax's ``(n, K)``
    responses come column-major from the chunks, and every step gathers ``b`` rows of them (6,400
    rows of a 100-class model: 3.3 ms strided, 0.5 ms not).  Written in place, not concatenated
    and cast: the copies took 0.28 s of a 10^7-row fit.
    """
    if out is None:
        out = posterior.response_buffer()
    out[sl] = r
    return out


def anchor_terms(posterior, mode):
    """``G = sum_i m_i ∇f_i(mode)`` ``(p,)`` and, for GLMs, every row's response ``r_i(mode)``.

    One pass in row chunks (``model.anchor_terms``: the binary logistic and fixed-noise linear
    models read a float32 chunk in float32, fused like the mode search's passes -- casting the
    chunks to float64 made this pass 2.5 times a gradient pass -- and the others cast a chunk at a
    time).  The responses are None for other models, and stored in the precision of the
    minibatch arithmetic (float32 for float32 ``X``).
    """
    model = posterior.model
    if not model.is_glm:
        return posterior.row_sum(model.grad_sum, mode[None, :])[0], None
    G, responses = np.zeros(model.n_params), None
    for sl in posterior.chunks():
        g, r = model.anchor_terms(mode, posterior.X[sl], posterior.y[sl],
                                  posterior.rows_weight(sl))
        G += g
        responses = store_responses(posterior, sl, r, responses)
    return G, responses
