"""Array helpers of the models: dtypes of the minibatch arithmetic, the design matrix, linear
predictors and response gradients on dense or CSR rows."""

import numpy as np
import scipy.sparse as sp

from ._sparse import sparse_predictor, sparse_response_grad

__all__ = ["as_compute", "as_float64", "class_predictor", "class_response_grad", "design",
           "linear_predictor", "minibatch_dtype", "scalar_response_grad"]


def as_float64(X):
    """``X`` as float64 (no copy when it already is).

    Products of float64 parameters with a float32 ``X`` take numpy's mixed-type path, which is
    much slower than casting first.
    """
    return X if X.dtype == np.float64 else X.astype(np.float64)


def minibatch_dtype(X):
    """``np.float32`` when minibatch gradients run in float32 (dense float32 ``X``), else None.

    The sampler's state stays float64; only the minibatch sums (the arithmetic on gathered rows)
    drop to X's precision.  Their rounding error (relative ~1e-7 per row, summed over ``b`` rows)
    is far below the minibatch noise.
    """
    dense32 = isinstance(X, np.ndarray) and X.dtype == np.float32
    return np.float32 if dense32 else None


def as_compute(X, dtype):
    """``X`` in the precision of parameters of ``dtype``.

    float32 only when both are float32 (the sampler casts ``theta`` to float32 for a float32
    ``X``: half the memory traffic, twice the SIMD width); otherwise :func:`as_float64`.
    """
    if dtype == np.float32 and X.dtype == np.float32:
        return X
    return as_float64(X)


def scalar_response_grad(r, X, fit_intercept, out):
    """``out[:, :d+1] = sum_i r_i [x_i, 1]`` for scalar responses ``r`` ``(C, b)``; ``out``."""
    d = X.shape[-1]
    if X.ndim == 2 and isinstance(X, np.ndarray):
        np.matmul(r, X, out=out[:, :d])
    else:
        class_response_grad(r[:, None, :], X, out[:, None, :d])
    if fit_intercept:
        r.sum(axis=-1, out=out[:, d])
    return out


def class_response_grad(rt, X, out):
    """``out[c, k] = sum_i rt[c, k, i] x_i`` ``(C, R, d)`` for any ``X`` (dense or sparse)."""
    if not isinstance(X, np.ndarray):  # sparse (a plain isinstance: no ABC check per step)
        out[...] = sparse_response_grad(X, np.ascontiguousarray(rt))
    elif X.ndim == 2 and rt.flags.c_contiguous:  # one product for every chain and class
        C, R, b = rt.shape
        out[...] = (rt.reshape(C * R, b) @ X).reshape(C, R, -1)
    else:
        np.matmul(rt, X, out=out)
    return out


def design(X, fit_intercept):
    """GLM design rows ``[x_i, 1]`` (``[x_i]`` without intercept) as float64 ``(n, d1)``.

    Sparse ``X`` gives a CSR design.
    """
    if sp.issparse(X):
        X = X.astype(np.float64, copy=False)
        return sp.hstack([X, np.ones((X.shape[0], 1))], format="csr") if fit_intercept else X
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def linear_predictor(X, W, b=None):
    """``z = X W^T + b`` ``(C, n)`` for ``W (C, d)``, ``b (C,)`` and any ``X``.

    ``X`` is shared ``(n, d)`` or per-chain ``(C, n, d)``: dense, CSR or ChainRows.
    """
    if X.dtype is not W.dtype:
        X = as_compute(X, W.dtype)
    if not isinstance(X, np.ndarray):
        z = sparse_predictor(X, W[:, None, :])[:, 0]
    elif X.ndim == 3:
        z = np.matmul(X, W[:, :, None])[..., 0]
    else:
        z = W @ X.T
    if b is not None:
        z += b[:, None]
    return z


def class_predictor(X, W):
    """Class-major ``z[c, k, i] = x_i . W[c, k]`` ``(C, R, n)`` for ``W (C, R, d)``, any ``X``."""
    X = as_compute(X, W.dtype)
    if not isinstance(X, np.ndarray):
        return sparse_predictor(X, W)
    if X.ndim == 2:  # one product for every chain and class (a stack of small ones is slower)
        C, R, d = W.shape
        return (W.reshape(C * R, d) @ X.T).reshape(C, R, -1)
    return np.matmul(W, X.transpose(0, 2, 1))
