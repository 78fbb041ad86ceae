"""The softmax Kronecker Laplace with exact intercepts (:class:`~skbayes_sg.models.
CoupledInterceptCovariance`): one pass for ``H_bb`` and the coupling ``C``, then the weights'
regression on the intercepts by conjugate gradients.

K-FAC alone gets the intercepts wrong: it leaves ``K - 1`` intercept-heavy eigenvalues of the
whitened Hessian ``L^T H L`` well above its bulk and ``K - 1`` well below it: the first set the
step, the second are the slowest quantities of the chains (the centred intercepts).  A
Rayleigh-Ritz correction along the intercept contrasts, from exact Hessian products, only
rescales the narrow ones.  With the intercept rows exact the spectrum is the bulk plus one
eigenvalue a little below it, and the centred intercepts mix faster per step.

The weights are factored in centred coordinates (``b' = b + E W x_bar``, so the Kronecker factor
sees the centred Gram matrix): on uncentred features (pixels) an uncentred factor leaves a whitened
curvature several times that of K-FAC with the intercept column; centred, the two agree.  The Schur
complement must not be formed from the K-FAC weight block: where K-FAC underestimates ``H_ww``
(whitened spectrum up to 1.7-2), ``H_bb - C^T K_w^{-1} C`` is indefinite.  With ``M`` the
weights' regression on the intercepts, ``S = [-M^T, I] H [-M; I]`` is positive definite for any
``M``, and the exact Schur complement when ``M = H_ww^{-1} C``, which conjugate gradients
preconditioned by ``K_w`` approach in a few iterations (``K`` exact Hessian products over the
rows each).  Cost: ``n K^2 d`` multiply-adds for ``C`` and about twice that per iteration (at most
``_CG_MAX_ITER``), on a fixed uniform subsample when ``n K^2 d`` exceeds
:attr:`ModeConfig.coupling_flops <skbayes_sg.preprocessing.ModeConfig>`.
"""

import numpy as np
from scipy.linalg import eigh
from scipy.special import softmax

from ..models import CoupledInterceptCovariance
from ..models._coupled import _contrast
from ._config import DEFAULT_MODE_CONFIG
from ._lowrank import hessian_rows
from ._kronecker import (feature_factor, feature_gram, kronecker_covariance, kronecker_factor,
                         softmax_layout)

__all__ = ["coupled_covariance"]

# the weights' regression on the intercepts: preconditioned by K_w, a few iterations leave the
# whitened extremes where many more would
_CG_TOL, _CG_MAX_ITER = 1e-2, 5


def _coupling(posterior, coef, intercept):
    """``(H_bb, C)``: ``sum_i m_i S_i`` ``(K, K)`` and ``C`` as rows ``(K, K d)``,
    ``C[l, k d + j] = sum_i m_i S_i[k, l] x_ij`` (``S_i = diag(s_i) - s_i s_i^T``), in one pass."""
    K, d = coef.shape

    def sums(_, X, y, w):
        s = softmax(X @ coef.T + intercept, axis=1)
        ms = s if w is None else s * w[:, None]
        pairs = (ms[:, :, None] * s[:, None, :]).reshape(-1, K * K)  # m_i s_il s_ik
        C = -(pairs.T @ X).reshape(K, K, d)
        C[np.arange(K), np.arange(K)] += ms.T @ X
        H = np.diag(ms.sum(axis=0)) - s.T @ ms
        return np.concatenate([H.ravel(), C.ravel()])

    flat = posterior.row_sum(sums, None, width=2 * K * K + d)
    return flat[:K * K].reshape(K, K), flat[K * K:].reshape(K, K * d)


def _rows(posterior, K, d, config):
    """``posterior``, or a deterministic uniform subsample of it when ``C`` costs more than
    ``config.coupling_flops`` (:meth:`~skbayes_sg.models.Posterior.subset` scales it to the
    data)."""
    m = max(config.coupling_min_rows, int(config.coupling_flops / (K * K * max(d, 1))))
    if posterior.n_rows <= m:
        return posterior
    rows = np.random.default_rng(0).choice(posterior.n_rows, m, replace=False)
    return posterior.subset(np.sort(rows))


def _centred_products(hessian, weight_index, intercept_index, shift, p):
    """Rows ``V' -> V' H'_ww`` for weight directions in the centred coordinates ``(w, b' = b +
    E W x_bar)`` (``H' = T^T H T``), through the exact Hessian's rows."""
    K = intercept_index.size

    def products(V):
        full = np.zeros((V.shape[0], p))
        full[:, weight_index] = V
        full[:, intercept_index] = -_contrast(V.reshape(-1, K, shift.size) @ shift)
        g = hessian(full)
        return g[:, weight_index] - (_contrast(g[:, intercept_index])[:, :, None]
                                     * shift).reshape(V.shape)

    return products


def _regression(products, C, weights, tol=_CG_TOL, max_iter=_CG_MAX_ITER):
    """``(X, R, n_products)``: rows ``X = M^T`` solving ``X H_ww = C`` by conjugate gradients per
    row, preconditioned by ``K_w^{-1}`` and started from its solution, and their residuals
    ``R = C - X H_ww`` (stopped when every row's is below ``tol`` of ``C``'s)."""
    X = weights.apply(C)
    R, n = C - products(X), 1
    Z = weights.apply(R)
    P, rz, goal = Z.copy(), np.einsum("ij,ij->i", R, Z), tol * np.linalg.norm(C, axis=1)
    while n < max_iter and np.any(np.linalg.norm(R, axis=1) > goal):
        HP = products(P)
        alpha = rz / np.einsum("ij,ij->i", P, HP)
        X += alpha[:, None] * P
        R -= alpha[:, None] * HP
        Z = weights.apply(R)
        rz, before = np.einsum("ij,ij->i", R, Z), rz
        P = Z + (rz / before)[:, None] * P
        n += 1
    return X, R, n


def _schur_factor(S, null):
    """``(L_S, L_S^{-1})`` with ``L_S L_S^T = S^{-1}``.

    Adding a constant to every intercept changes no probability, so the prior alone sets that
    direction (precision ``null``) and the rounding of the products is removed from it;
    eigenvalues are floored at ``null`` (``S`` is positive definite up to rounding).
    """
    K = S.shape[0]
    E = np.eye(K) - 1.0 / K
    s, V = eigh(E @ (0.5 * (S + S.T)) @ E + null / K)
    s = np.maximum(s, null)
    return V / np.sqrt(s), (V * np.sqrt(s)).T


def coupled_covariance(posterior, mode, gram=None, *, config=DEFAULT_MODE_CONFIG):
    """``Sigma ≈ H^{-1}``, Kronecker on the centred weights and exact on the intercept rows.

    Parameters
    ----------
    posterior : Posterior
        A softmax posterior on dense rows (see
        :func:`~skbayes_sg.preprocessing.kronecker_covariance`).
    mode : ndarray of shape (p,)
    gram : FeatureGram, optional
        The feature Gram matrix if already made (the mode search's).
    config : ModeConfig, optional
        Its ``coupling_flops`` and ``coupling_min_rows`` bound the rows of the coupling pass.

    Returns
    -------
    covariance : CoupledInterceptCovariance, or a KroneckerCovariance without intercepts
    n_grad_evals : int
        The coupling pass and ``K`` Hessian-vector products per conjugate-gradient iteration over
        the rows used, and the Gram pass unless ``gram`` was given.
    """
    _, prior_sd, ones = softmax_layout(posterior)
    if not ones:
        return kronecker_covariance(posterior, mode, gram)[:2]
    model = posterior.model
    index, parts = model.unpack(np.arange(model.n_params)), model.unpack(mode)
    wi, bi = index["coef"].ravel(), index["intercept"]
    K, d = parts["coef"].shape
    gram, evals = feature_gram(posterior, ones, gram)
    B = gram.matrix
    shift = B[:d, d] / B[d, d]  # the weighted feature means x_bar
    rows = _rows(posterior, K, d, config)
    H_bb, C = _coupling(rows, parts["coef"], parts["intercept"])
    A = H_bb / rows.n_data
    H_bb = H_bb + prior_sd[d] ** -2.0 * np.eye(K)  # prior included
    C = C - (_contrast(H_bb)[:, :, None] * shift).reshape(C.shape)  # centred coordinates
    weights = kronecker_factor(A,
                               *feature_factor(B[:d, :d] - np.outer(B[:d, d], shift), prior_sd[:d]),
                               np.arange(K * d), prior_sd[:d])
    products = _centred_products(hessian_rows(rows, mode), wi, bi, shift, mode.size)
    X, R, n = _regression(products, C, weights)
    # exactly, M 1 = 0 (the intercepts' class mean is the prior's alone and moves no weight); each
    # row's iterations stop on their own, and their sum, scaled by that direction's prior sd of
    # 10, would leave a large whitened curvature along it
    X -= X.mean(axis=0)
    # S = [-M^T, I] H' [-M; I] (the exact Schur complement when R = 0, positive definite for any M)
    S = H_bb - C @ X.T - X @ R.T
    LS, LS_inv = _schur_factor(S, prior_sd[d] ** -2.0)
    cov = CoupledInterceptCovariance(weights, wi, bi, np.ascontiguousarray(X.T), LS, LS_inv,
                                     shift)
    return cov, evals + rows.n_rows * (1 + K * n)
