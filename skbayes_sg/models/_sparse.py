"""Sparse designs: CSR rows shared by every chain, or minibatches gathered per chain.

A sparse ``X`` is one CSR matrix ``(n, d)`` (converted once by the estimator) shared by all rows
of ``theta``.  Per-chain minibatches ``idx (C, b)`` cannot be gathered as a ``(C, b, d)`` array;
they are gathered as one CSR matrix of the ``C b`` rows, chain ``c`` owning rows ``c b .. c b + b
- 1`` (:class:`ChainRows`, built by :func:`gather_rows`).  Its linear predictors read only the
coefficients of the stored entries, ``W[c(k), j(k)] x_k`` summed per row (``O(nnz)``, never
``O(C d)``); its gradients scatter ``r_i x_ij`` into ``(C, R, d)`` with one ``bincount``.  Shared
CSR rows use scipy's sparse-dense products (faster on the large chunks of full passes).  Reading
only the stored entries is much cheaper than a product with the block structure; the gradient's
cost is mostly zeroing the ``(C, R, d)`` output.

The other helpers here take a dense or a sparse matrix alike, so the models have one code path.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms

__all__ = ["ChainRows", "draw_chunks", "gather_rows", "is_sparse", "outer_rows", "row_block",
           "row_dot", "row_sq_norms", "scale_rows", "sparse_predictor", "sparse_response_grad",
           "squared", "weighted_gram"]


class ChainRows:
    """Per-chain sparse minibatches: one CSR matrix of ``C b`` rows, ``shape = (C, b, d)``.

    Attributes ``csr`` (float64), ``row`` and ``chain`` (the row and the chain of every stored
    entry), ``shape`` and ``ndim = 3`` (so code that asks for a gathered batch finds one).
    """

    ndim = 3
    dtype = np.dtype(np.float64)

    def __init__(self, csr, n_chains):
        n, d = csr.shape
        self.csr, self.shape = csr, (int(n_chains), n // int(n_chains), d)
        self.row = np.repeat(np.arange(n), np.diff(csr.indptr))
        self.chain = self.row // self.shape[1]


def is_sparse(X):
    """True for a scipy sparse matrix or :class:`ChainRows`."""
    return isinstance(X, ChainRows) or sp.issparse(X)


def gather_rows(X, idx):
    """Rows ``idx`` of a CSR ``X``: CSR for 1-D ``idx``, :class:`ChainRows` for ``(C, b)``."""
    if idx.ndim == 1:
        return X[idx]
    return ChainRows(X[idx.ravel()].astype(np.float64, copy=False), idx.shape[0])


def row_block(X, sl):
    """Rows ``sl`` (a slice) of ``X``; for CSR a view sharing the stored entries (no copy)."""
    if not sp.issparse(X):
        return X[sl]
    a, b = X.indptr[sl.start], X.indptr[sl.stop]
    return sp.csr_matrix((X.data[a:b], X.indices[a:b], X.indptr[sl.start:sl.stop + 1] - a),
                         shape=(sl.stop - sl.start, X.shape[1]), copy=False)


def _row_sums(vals, indptr):
    """Sums of ``vals[indptr[i]:indptr[i + 1]]`` along axis 0, one per row (empty rows 0)."""
    out = np.zeros((indptr.size - 1, *vals.shape[1:]))
    filled = np.flatnonzero(np.diff(indptr))
    if filled.size:
        out[filled] = np.add.reduceat(vals, indptr[filled], axis=0)
    return out


def sparse_predictor(X, W):
    """``z[c, k, i] = x_i . W[c, k]`` as ``(C, R, n)``, for ``W (C, R, d)``.

    ``X`` is a CSR ``(n, d)`` shared by the chains or :class:`ChainRows` (``n = b``).
    """
    C, R, d = W.shape
    if isinstance(X, ChainRows):
        vals = W[X.chain, :, X.csr.indices]  # (nnz, R)
        vals *= X.csr.data[:, None]
        return _row_sums(vals, X.csr.indptr).reshape(C, -1, R).transpose(0, 2, 1)
    z = X @ W.reshape(C * R, d).T
    return np.asarray(z).T.reshape(C, R, -1)


def sparse_response_grad(X, r):
    """``g[c, k] = sum_i r[c, k, i] x_i`` as ``(C, R, d)``, for responses ``r (C, R, n)``."""
    C, R, n = r.shape
    if isinstance(X, ChainRows):
        d = X.shape[2]
        vals = r.transpose(0, 2, 1).reshape(C * n, R)[X.row] * X.csr.data[:, None]
        at = (X.chain[:, None] * R + np.arange(R)) * d + X.csr.indices[:, None]
        return np.bincount(at.ravel(), vals.ravel(), minlength=C * R * d).reshape(C, R, d)
    g = X.T @ r.reshape(C * R, n).T
    return np.asarray(g).T.reshape(C, R, -1)


def squared(X):
    """Elementwise ``X * X`` (sparse stays sparse)."""
    return X.multiply(X).tocsr() if sp.issparse(X) else X * X


def row_sq_norms(X):
    """``||x_i||^2`` of every row ``(n,)`` (float64; CSR or dense)."""
    X = X.astype(np.float64, copy=False)
    return row_norms(X.tocsr() if sp.issparse(X) else X, squared=True)


def row_dot(X, T):
    """``sum_j X_ij T_ij`` per row ``(n,)``, ``X`` dense or sparse, ``T`` dense."""
    if sp.issparse(X):
        return np.asarray(X.multiply(T).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, T)


def scale_rows(X, v):
    """``diag(v) X`` (sparse stays CSR)."""
    return X.multiply(v[:, None]).tocsr() if sp.issparse(X) else X * v[:, None]


def weighted_gram(X, v):
    """Dense ``X^T diag(v) X`` ``(d, d)``; a sparse product for sparse ``X`` (small ``d``)."""
    G = scale_rows(X, v).T @ X
    return G.toarray() if sp.issparse(G) else G


def outer_rows(r, X, tail):
    """Rows ``[r_i (x) x_i, tail_i]`` ``(n, R d + t)`` for ``r (n, R)``, ``tail (n, t)``.

    Per-example gradients of a GLM; CSR when ``X`` is sparse.
    """
    n, R = r.shape
    if sp.issparse(X):
        return sp.hstack([X.multiply(r[:, k:k + 1]) for k in range(R)] + [tail], format="csr")
    d = X.shape[1]
    out = np.empty((n, R * d + tail.shape[1]))
    np.multiply(r[:, :, None], X[:, None, :], out=out[:, :R * d].reshape(n, R, d))
    out[:, R * d:] = tail
    return out


def draw_chunks(shape, n_rows, n_outputs=1, elements=10_000_000):
    """Slices of the draws ``(S, p)`` for predictions on ``n_rows`` rows.

    A chunk's ``(s, n_rows, n_outputs)`` output and its copy of the coefficients ``(s, p)`` (a
    sparse product transposes them) both stay below ``elements`` floats.
    """
    S, p = shape
    step = max(1, elements // max(1, n_rows * n_outputs, p))
    return [slice(s0, s0 + step) for s0 in range(0, S, step)]
