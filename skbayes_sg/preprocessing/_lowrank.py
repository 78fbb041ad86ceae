"""Low-rank-plus-diagonal Laplace covariance by a randomized eigen-decomposition.

For GLMs with many parameters (sparse text features: ``p = 2^18``) the dense ``p x p`` Hessian is
out of reach, and the diagonal approximation ignores the correlations that limit the step size.
Whitened by its diagonal, the precision ``A = S H S`` (``S = diag(H)^{-1/2}``) has a unit
diagonal; its top eigenvalues are the directions the diagonal preconditioner gets most wrong (the
step size is set by the largest whitened curvature).  They are found by the randomized range
finder with power iterations, from Hessian-vector products over the data (``O(l nnz)`` per pass,
``l = k + 10`` vectors), and kept in a :class:`~skbayes_sg.models.LowRankCovariance`.
"""

import numpy as np
from scipy.linalg import eigh

from ..models import LowRankCovariance

__all__ = ["LOWRANK_RANK", "hessian_rows", "lowrank_covariance"]

LOWRANK_RANK = 20  # eigenpairs kept by preconditioner="laplace" when p > DENSE_MAX_PARAMS
_OVERSAMPLE, _POWER_ITERATIONS = 10, 1


def hessian_rows(posterior, mode):
    """``V -> V H`` for rows ``V (l, p)``: the exact Hessian of ``U`` at ``mode`` (a GLM's
    ``hessian_vector`` over the rows in chunks, plus the prior's diagonal), ``O(l nnz)``."""
    model, prior_diag = posterior.model, posterior.prior.hessian_diag(mode)

    def hvp(V, X, y, w):
        return model.hessian_vector(mode, X, y, V, w)

    # a chunk's temporaries hold the l x K directional linear predictors of every row, so the
    # chunk is sized by l K, not by l alone (which would let a softmax's temporaries grow K-fold)
    per_row = model.linear_predictors
    return lambda V: posterior.row_sum(hvp, V, width=V.shape[0] * per_row) + V * prior_diag


def _whitened_products(posterior, mode, scale):
    """``Q -> S H S Q`` for columns ``Q (p, l)``."""
    products = hessian_rows(posterior, mode)
    return lambda Q: (products((Q * scale[:, None]).T) * scale).T


def lowrank_covariance(posterior, mode, diagonal, rank=LOWRANK_RANK, rng=None, scale=None):
    """``Sigma ≈ H^{-1}`` as low rank plus diagonal, and its cost.

    Parameters
    ----------
    posterior : Posterior
        A GLM posterior (``model.hessian_vector``).
    mode : ndarray of shape (p,)
    diagonal : ndarray of shape (p,)
        ``diag(H)`` at ``mode`` (prior included), > 0.
    rank : int, default=LOWRANK_RANK
        Eigenpairs ``k`` kept (at most ``p``).
    rng : Generator, optional
        Test vectors of the range finder (default ``default_rng(0)``: deterministic).
    scale : ndarray of shape (p,), optional
        The whitening ``S`` (default ``diagonal^{-1/2}``).  Given (the prior sds, for wide data),
        the whitened precision is exactly ``I`` plus a matrix of rank ``<= rank``, whose range
        the finder then seeks (products with ``A - I``; eigenvalues shifted back by one): the
        result is the exact inverse Hessian (the Woodbury identity, at ``O(rank^2 p)``).

    Returns
    -------
    covariance : LowRankCovariance
    n_grad_evals : int
        ``(q + 2) l`` passes of Hessian-vector products, ``q`` power iterations.

    Notes
    -----
    Randomized range finder (Halko et al. 2011, Alg. 4.3 with ``q`` power iterations):
    ``Y = A Omega``, ``Y <- A orth(Y)`` ``q`` times, ``Q = orth(Y)``; then the eigenpairs of
    ``B = Q^T A Q = U Lambda U^T`` give ``V = Q U``, of which the ``k`` largest are kept.  Exact
    when ``k = p``.

    References
    ----------
    Halko, N., Martinsson, P. G. and Tropp, J. A. (2011). Finding structure with randomness:
    probabilistic algorithms for constructing approximate matrix decompositions. SIAM Review 53.
    """
    p = mode.size
    rng = np.random.default_rng(0) if rng is None else rng
    shift = scale is not None  # wide data: find the range of A - I, exactly low rank
    scale = 1.0 / np.sqrt(diagonal) if scale is None else scale
    whitened = _whitened_products(posterior, mode, scale)
    apply = (lambda Q: whitened(Q) - Q) if shift else whitened
    n_vec = min(p, int(rank) + _OVERSAMPLE)
    Y = apply(rng.standard_normal((p, n_vec)))
    for _ in range(_POWER_ITERATIONS):
        Y = apply(np.linalg.qr(Y)[0])
    Q = np.linalg.qr(Y)[0]
    B = Q.T @ apply(Q)
    lam, U = eigh(0.5 * (B + B.T))
    top = np.argsort(np.abs(lam) if shift else lam)[::-1][:min(int(rank), p)]
    lam = lam[top] + 1.0 if shift else lam[top]
    cov = LowRankCovariance(scale, Q @ U[:, top], np.maximum(lam, 1e-12))
    return cov, (_POWER_ITERATIONS + 2) * n_vec * posterior.n_rows
