"""The Kronecker-factored Laplace covariance of a softmax posterior, in one pass.

``A = sum_i m_i S_i / sum_i m_i`` and ``B = sum_i m_i x~_i x~_i^T`` at the mode (see
:class:`~skbayes_sg.models.KroneckerCovariance`), then the eigen-decompositions of ``A`` and of
the prior-whitened ``B~`` -- ``O(n d^2 + n K^2)`` for the pass, ``O(K^3 + d^3)`` after it, where a
dense Hessian would cost ``O(n K^2 d^2)`` and ``O(K^3 d^3)``.
"""

import numpy as np
from scipy.linalg import eigh
from scipy.special import softmax

from ..models import KroneckerCovariance

__all__ = ["kronecker_covariance"]


def _factors(posterior, coef, intercept, ones):
    """``(A, B)`` in one pass over the rows (:meth:`~skbayes_sg.models.Posterior.row_sum`: row
    chunks in memory, a map-reduce on dask); ``ones``: append the intercept column."""
    K, d1 = coef.shape[0], coef.shape[1] + int(ones)

    def sums(_, X, y, w):
        m = np.ones(X.shape[0]) if w is None else w
        P = softmax(X @ coef.T + intercept, axis=1)
        mP = P * m[:, None]
        Xt = np.hstack([X, np.ones((X.shape[0], 1))]) if ones else X
        B = Xt.T @ Xt if w is None else Xt.T @ (Xt * m[:, None])  # unweighted: syrk, half
        return np.concatenate([(np.diag(mP.sum(axis=0)) - P.T @ mP).ravel(), B.ravel(),
                               [m.sum()]])

    flat = posterior.row_sum(sums, None, width=K + d1)
    return flat[:K * K].reshape(K, K) / flat[-1], flat[K * K:-1].reshape(d1, d1)


def kronecker_covariance(posterior, mode):
    """``Sigma ≈ H^{-1}`` as ``(I (x) P^{-1/2}) (Q (x) R) D^{-1} (...)^T``, and its cost.

    Parameters
    ----------
    posterior : Posterior
        A softmax posterior on dense rows (``model.unpack`` gives ``coef (K, d)``,
        ``intercept (K,)``), whose prior precision is the same for every class in a column.
    mode : ndarray of shape (p,)

    Returns
    -------
    covariance : KroneckerCovariance
    n_grad_evals : int
        One pass over the rows.
    """
    model = posterior.model
    parts = model.unpack(mode)
    coef, intercept = parts["coef"], parts["intercept"]
    K, d = coef.shape
    ones = "intercept" in model.param_shapes()
    index = model.unpack(np.arange(mode.size))
    cols = [index["coef"], index["intercept"][:, None]] if ones else [index["coef"]]
    order = np.hstack(cols).ravel().astype(np.intp)
    prec = posterior.prior.precision[order].reshape(K, -1)
    if not (np.all(prec > 0) and np.allclose(prec, prec[0])):
        raise ValueError("the Kronecker Laplace needs a proper prior with one precision per "
                         "feature column, the same for every class.")
    prior_sd = 1.0 / np.sqrt(prec[0])
    A, B = _factors(posterior, coef, intercept, ones)
    lam, Q = eigh(0.5 * (A + A.T))
    mu, R = eigh(0.5 * (B + B.T) * np.outer(prior_sd, prior_sd))
    d_inv_sqrt = 1.0 / np.sqrt(1.0 + np.outer(np.maximum(lam, 0.0), np.maximum(mu, 0.0)))
    return KroneckerCovariance(order, prior_sd, Q, R, d_inv_sqrt), posterior.n_rows
