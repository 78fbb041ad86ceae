"""The class-block Laplace covariance of a softmax posterior (:class:`~skbayes_sg.models.
BlockCovariance`): one pass for the ``K`` diagonal Hessian blocks, then ``O(K d^3)``.

The class blocks keep each class's own weighting of the rows, which the Kronecker
factorisation averages over the classes, so they leave a narrower range of whitened curvatures
(the extreme eigenvalues of ``L^T H L``).  The step-size rule is set by the largest, the mixing
of the slowest direction by the smallest.
"""

import numpy as np
from scipy.linalg import eigh, solve_triangular
from scipy.special import softmax

from ..models import BlockCovariance
from ._kronecker import softmax_layout

__all__ = ["BLOCK_FLOPS", "BLOCK_FLOATS", "block_covariance", "block_fits"]

BLOCK_FLOPS = 2e11  # the pass builds K Gram matrices: n K d^2 multiply-adds at most ...
# ... and K (d + 1)^2 floats per factor at most (32 MB): every step streams the two factors three
# times for a few chains, so above that the preconditioner, not the gradient, is the cost
BLOCK_FLOATS = 4e6


def block_fits(n_rows, n_classes, n_cols, *, flops=BLOCK_FLOPS, floats=BLOCK_FLOATS):
    """Whether the class blocks of ``n_classes`` x ``n_cols`` (intercept included) are
    affordable on ``n_rows`` rows (else the Kronecker factorisation is used): their pass costs at
    most ``flops`` multiply-adds and each factor holds at most ``floats`` floats."""
    per_class = float(n_cols) ** 2
    return n_classes * per_class <= floats and n_rows * n_classes * per_class <= flops


def _class_blocks(posterior, coef, intercept, ones):
    """``D_k = sum_i m_i s_ik (1 - s_ik) x~_i x~_i^T`` ``(K, d1, d1)`` in one pass."""
    K, d = coef.shape

    def sums(_, X, y, w):
        Xt = np.hstack([X, np.ones((X.shape[0], 1))]) if ones else X
        S = softmax(X @ coef.T + intercept, axis=1)
        c = S * (1.0 - S)
        if w is not None:
            c *= w[:, None]
        return np.stack([Xt.T @ (Xt * c[:, k, None]) for k in range(K)]).ravel()

    d1 = d + bool(ones)
    return posterior.row_sum(sums, None, width=2 * d1 + 2 * K).reshape(K, d1, d1)


def _lower_inverse(L):
    return solve_triangular(L, np.eye(L.shape[0]), lower=True)


def block_covariance(posterior, mode):
    """``Sigma ≈ H^{-1}`` as a :class:`~skbayes_sg.models.BlockCovariance`, and its cost.

    Parameters
    ----------
    posterior : Posterior
        A softmax posterior (``model.unpack`` gives ``coef (K, d)`` and ``intercept (K,)``).
    mode : ndarray of shape (p,)

    Returns
    -------
    covariance : BlockCovariance
    n_grad_evals : int
        One pass (second-order evaluations of every row).
    """
    order, prior_sd, ones = softmax_layout(posterior)
    parts = posterior.model.unpack(mode)
    D = _class_blocks(posterior, parts["coef"], parts["intercept"], ones)
    D = 0.5 * (D + D.transpose(0, 2, 1))
    P = np.diag(prior_sd**-2.0)
    c_inv = np.stack([_lower_inverse(np.linalg.cholesky(Dk + P)) for Dk in D])
    e_inv = _lower_inverse(np.linalg.cholesky(D.sum(axis=0) + P))
    CD = np.matmul(c_inv, D)
    W = CD @ e_inv.T  # W_k = C_k^-1 D_k E^-T
    # sum_k D_k G_k^-1 P = sum_k (C_k^-1 D_k)^T (C_k^-1 P)
    T = np.einsum("kij,kil->jl", CD, np.matmul(c_inv, P))
    M = e_inv @ (P + 0.5 * (T + T.T)) @ e_inv.T
    mu, V = eigh(0.5 * (M + M.T))
    mu = np.clip(mu, np.finfo(float).tiny, 1.0)
    K, d1 = D.shape[:2]
    return BlockCovariance(order, c_inv, W.reshape(K * d1, d1), V, mu), posterior.n_rows
