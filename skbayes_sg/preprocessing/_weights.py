"""Preferential subsampling weights and Lipschitz constants (seed 004 §3).

Every function works in row chunks (:meth:`~skbayes_sg.models.Posterior.chunks`), so it scales to
millions of rows in bounded memory and never forms the ``N x p`` per-example gradients; sparse rows
stay sparse (a low-rank-plus-diagonal covariance enters the softmax weights by its diagonal).
"""

from types import MappingProxyType

import numpy as np
import scipy.sparse as sp
from scipy.linalg import get_blas_funcs

from ..models import design
from ..models._sparse import row_dot, row_sq_norms, squared
from ._anchor import Anchor, store_responses
from ._mix import scores_to_weights

__all__ = ["curvature_weights", "curvature_weights_and_anchor", "gradient_norm_weights",
           "per_row", "row_scores", "row_sq_norms_glm", "score_evals_per_row"]

_MC_DRAWS = 4  # Laplace draws for the Monte-Carlo curvature weights


def row_sq_norms_glm(model, X):
    """``||x~_i||^2`` of the rows of ``X`` (a GLM's design rows)."""
    return row_sq_norms(X) + float(model.fit_intercept)


def per_row(posterior, fn, width):
    """``fn(X_chunk, y_chunk) -> (chunk,)`` on all rows, in chunks of ``width`` floats per row."""
    out = np.empty(posterior.n_rows)
    for sl in posterior.chunks(width):
        out[sl] = fn(posterior.X[sl], posterior.y[sl])
    return out


def gradient_norm_weights(posterior, laplace, uniform_mix=0.1):
    """``p_i ∝ m_i ||∇f_i(theta_hat)||`` mixed with uniform (seed 004 eq. 11).

    GLMs in closed form ``|r_i| ||x~_i||`` (softmax ``||r_i|| ||x~_i||``) from the responses at
    ``theta_hat = laplace.mode``, O(N d); other models by chunked ``per_example_grad``.

    Returns
    -------
    p : ndarray of shape (n_rows,)
        Sums to 1, every entry > 0.
    n_grad_evals : int
        One pass over the rows.
    """
    scores, evals, _ = row_scores(posterior, laplace, "gradient_norm")
    return scores_to_weights(posterior, scores, uniform_mix), evals


def curvature_weights(posterior, laplace, uniform_mix=0.1, rng=None):
    """``p_i ∝ m_i sqrt(tr(H_i Σ H_i))`` mixed with uniform (seed 004 eq. 16).

    ``Σ = laplace.covariance`` and ``H_i`` at ``laplace.mode``.  Binary logistic and fixed-noise
    linear: ``H_i = w_i x~_i x~_i'``, so ``tr(H_i Σ H_i) = w_i^2 (x~_i'Σx~_i)(x~_i'x~_i)``.
    Softmax: ``H_i = A_i ⊗ x~_i x~_i'`` with ``A_i = diag(s_i) - s_i s_i'``, so
    ``tr(H_i Σ H_i) = ||x~_i||^2 tr(A_i^2 Q_i)``, ``Q_i[k, l] = x~_i'Σ_kl x~_i`` (``Σ_kl`` the
    class blocks).  Other models (inferred noise, MLP) use the quantity eq. 16 linearises (seed 004
    App. A.4), ``E ||∇f_i(theta) - ∇f_i(theta_hat)||^2`` under ``theta ~ N(theta_hat, Σ)``, by
    Monte Carlo over 4 Laplace draws shared by all rows (from ``rng``).

    Returns
    -------
    p : ndarray of shape (n_rows,)
    n_grad_evals : int
        Per-example (first- or second-order) evaluations spent.
    """
    return curvature_weights_and_anchor(posterior, laplace, uniform_mix, rng)[:2]


def curvature_weights_and_anchor(posterior, laplace, uniform_mix=0.1, rng=None, anchor=False):
    """``(p, n_grad_evals, anchor)``: :func:`curvature_weights`, and with ``anchor`` the
    control-variate :class:`~skbayes_sg.preprocessing.Anchor` at ``laplace.mode`` from the same
    pass where the model allows it (binary logistic, fixed-noise linear; else None)."""
    scores, evals, found = row_scores(posterior, laplace, "curvature", rng, anchor=anchor)
    return scores_to_weights(posterior, scores, uniform_mix), evals, found


def row_scores(posterior, laplace, kind, rng=None, anchor=False):
    """``(scores (n_rows,), n_grad_evals, anchor or None)``: the unnormalised preference scores
    of ``posterior``'s rows, before the multiplicities and the uniform mix.

    ``kind`` is ``"gradient_norm"`` (:func:`gradient_norm_weights`) or ``"curvature"``
    (:func:`curvature_weights`); ``anchor`` as in :func:`curvature_weights_and_anchor`.  Rows
    elsewhere (dask) call it on each in-memory block of rows, with the same ``rng``.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    return _SCORES[kind](posterior, laplace, rng, anchor)


def score_evals_per_row(model, kind):
    """Per-example evaluations :func:`row_scores` spends on a row of ``model``: one, or for the
    Monte-Carlo curvature of models other than GLMs one per Laplace draw and one at the mode."""
    return _MC_DRAWS + 1 if kind == "curvature" and not model.is_glm else 1


def _gradient_norm_scores(posterior, laplace, rng, anchor):
    model, theta = posterior.model, laplace.mode

    def norms(X, y):
        if not model.is_glm:
            return np.sqrt(row_sq_norms(model.per_example_grad(theta, X, y)))
        r = model.response(theta[None], X, y)[0]
        r = np.abs(r) if r.ndim == 1 else np.linalg.norm(r, axis=1)
        return r * np.sqrt(row_sq_norms_glm(model, X))

    return per_row(posterior, norms, 2 * posterior.model.n_params), posterior.n_rows, None


def _curvature_scores(posterior, laplace, rng, anchor):
    model, n = posterior.model, posterior.n_rows
    if model.softmax:
        return _softmax_scores(posterior, laplace), n, None
    if model.is_glm:
        scores, found = _glm_scores(posterior, laplace, anchor=anchor)
        return scores, n, found
    return (_monte_carlo_scores(posterior, laplace, rng),
            score_evals_per_row(model, "curvature") * n, None)


_SCORES = MappingProxyType({"gradient_norm": _gradient_norm_scores,
                            "curvature": _curvature_scores})


def _glm_scores(posterior, laplace, anchor=False):
    """``(scores, anchor)``: ``c_i sqrt(x~_i'Σx~_i ||x~_i||^2)`` of the binary logistic and
    fixed-noise linear rows.

    With ``anchor`` the pass also computes the control-variate :class:`Anchor` at
    ``laplace.mode`` (the responses come with the curvatures, from the same linear predictor):
    ``preferential_cv`` then reads ``X`` once for both; else the anchor is None.
    """
    model, mode = posterior.model, laplace.mode
    dense = laplace.dense and not sp.issparse(posterior.X)
    if dense:
        tri = _triangular_factor(laplace.factor, posterior.X.shape[1], posterior.X.dtype)
    out, G, responses = np.empty(posterior.n_rows), np.zeros(model.n_params), None
    for sl in posterior.chunks(2 * model.n_params):
        X, y = posterior.X[sl], posterior.y[sl]
        if anchor:
            g, r, c = model.anchor_terms(mode, X, y, posterior.rows_weight(sl), curvature=True)
            G += g
            responses = store_responses(posterior, sl, r, responses)
        else:
            c = model.curvature(mode, X, y)
        if dense:
            q, sq = _dense_quadratic_rows(X, *tri)
        else:
            X1 = design(X, model.fit_intercept)
            q, sq = laplace.quadratic_rows(X1), row_sq_norms(X1)
        np.maximum(q, 0.0, out=q)
        q *= sq
        np.sqrt(q, out=q)
        q *= c
        out[sl] = q
    return out, (Anchor(G, responses, mode) if anchor else None)


def _triangular_factor(L, d, dtype):
    """``(A, shift, const)`` of the lower Cholesky factor ``L`` of a GLM's dense covariance:
    ``x~' Σ x~ = ||A' x + shift||^2 + const`` for ``x~ = [x, 1]`` (``shift = L[d, :d]``,
    ``const = L[d, d]^2``; without intercept ``A = L``, ``shift`` None, ``const`` 0)."""
    A = np.asfortranarray(L[:d, :d], dtype=dtype)
    if L.shape[0] == d:
        return A, None, 0.0
    return A, L[d, :d].astype(dtype), float(L[d, d]) ** 2


def _dense_quadratic_rows(X, A, shift, const):
    """``(x~_i' Σ x~_i, ||x~_i||^2)`` for dense rows ``X``, computed and returned in ``X``'s
    precision.

    ``A' x_i`` is one triangular product (BLAS ``trmm``: half the multiplies of a full ``X Σ``,
    which dominate the pass), on a copy of the chunk that it overwrites; ``x~_i = [x_i, 1]`` is
    never formed.  The results only set sampling probabilities, so float32 rounding is harmless.
    """
    trmm = get_blas_funcs("trmm", (A,))
    B = np.array(X, dtype=A.dtype, order="C")  # (n, d) C-ordered: B.T is A's Fortran layout
    T = trmm(1.0, A, B.T, side=0, lower=1, trans_a=1, overwrite_b=1).T  # rows A' x_i
    if shift is not None:
        T += shift
    q = np.einsum("ij,ij->i", T, T)  # sums of d terms in X's precision (einsum with
    sq = np.einsum("ij,ij->i", X, X)  # dtype=float64 casts both operands)
    q += q.dtype.type(const)
    if shift is not None:
        sq += 1.0
    return q, sq


def _softmax_scores(posterior, laplace):
    model = posterior.model
    K, order = model.n_classes, model.class_major_order()
    d1 = order.size // K
    if laplace.dense:
        S = laplace.covariance[np.ix_(order, order)].reshape(K, d1, K, d1)
        S = S.transpose(1, 0, 2, 3).reshape(d1, K * K * d1)
    else:
        S = laplace.variances[order].reshape(K, d1)

    def score(X, y):
        X1 = design(X, model.fit_intercept)
        s = model.curvature(laplace.mode, X)  # (n, K) probabilities
        if laplace.dense:
            A = -s[:, :, None] * s[:, None, :]
            A[:, np.arange(K), np.arange(K)] += s
            T = np.asarray(X1 @ S).reshape(-1, K, K, d1)
            Q = np.array([[row_dot(X1, T[:, k, m]) for m in range(K)] for k in range(K)])
            tr = np.einsum("nkl,kln->n", A @ A, Q)
        else:  # Q_i diagonal: only diag(A_i^2)_k = s_k^2 (1 - 2 s_k + ||s||^2) is needed, O(K)
            a2 = s * s
            a2 *= 1.0 - 2.0 * s + a2.sum(axis=1, keepdims=True)
            tr = np.einsum("nk,nk->n", a2, np.asarray(squared(X1) @ S.T))
        return np.sqrt(np.maximum(tr, 0.0) * row_sq_norms(X1))

    # floats per row of the widest temporaries: T (K K d1) when dense, else a few (n, K) and X~
    return per_row(posterior, score, K * K * d1 + K * d1 if laplace.dense else 4 * K + 2 * d1)


def _monte_carlo_scores(posterior, laplace, rng):
    """``sqrt(mean_k ||∇f_i(theta_hat + δ_k) - ∇f_i(theta_hat)||^2)``, δ_k ~ N(0, Σ)."""
    model, mode, cov = posterior.model, laplace.mode, laplace.covariance
    if not laplace.dense:
        points = laplace.draws(rng, _MC_DRAWS)
    else:  # eigen factor: tolerates a covariance that is only semi-definite numerically
        lam, V = np.linalg.eigh(0.5 * (cov + cov.T))
        points = mode + rng.standard_normal((_MC_DRAWS, mode.size)) @ (V * np.sqrt(
            np.maximum(lam, 0.0))).T

    def score(X, y):
        g0, acc = model.per_example_grad(mode, X, y), 0.0
        for theta in points:
            acc = acc + row_sq_norms(model.per_example_grad(theta, X, y) - g0)
        return np.sqrt(acc / _MC_DRAWS)

    return per_row(posterior, score, 2 * model.n_params)
