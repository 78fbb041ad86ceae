"""Fused full-data terms of a scalar GLM chunk: value, gradient and Hessian from one read.

The mode search and the Laplace approximation take whole passes over the data, so their cost is
the number of passes times the time to stream ``X`` (memory bandwidth) plus, for the Hessian, the
``n d^2`` products of the chunk's Gram matrix.  Here a chunk of rows is read once for all three
terms, in ``X``'s own precision: a float32 ``X`` is never cast (casting a chunk to float64 costs
more than the products: it writes twice the bytes the pass reads).

Precision with float32 ``X``.  Rounding the weights to float32 moves every ``z_i`` by
``x_i . dw`` (``dw`` about ``1e-7 |w|``): a gradient error ``X'X dw`` that grows like ``N`` -- in
posterior-sd units ``dw' H dw``, which on large data exceeds Newton's tolerance ``1e-10 p`` --
whereas the float32 rounding of the products is random across rows and grows like ``sqrt(N)``.
Two ways out:

* :func:`fused_predictor` (linear regression, whose residuals ``y - z`` need float64 for targets
  with a large offset): ``X @ [hi, lo]`` with ``hi`` the float32 rounding of the weights and
  ``lo`` its remainder, summed in float64.
* :func:`native_predictor` (binary logistic): the predictor of the position rounded to float32,
  which is then exact but for the random rounding, and the per-row terms in float32 too, which
  shortens the pass further.  The model says so (``evaluation_dtype``) and the mode search iterates
  on float32 points.

The chunk sums accumulate in float64.
"""

import numpy as np

__all__ = ["binary_logistic_terms", "fused_predictor", "native_predictor", "scalar_glm_terms"]


def fused_predictor(X, w, b=0.0):
    """``z = X w + b`` as float64 ``(n,)`` for one weight vector ``w (d,)`` and a dense ``X``.

    float64 ``X``: one product.  float32 ``X``: ``X @ [hi, lo]`` (split weights, see the module
    docstring), still one read of the chunk.
    """
    if X.dtype == np.float64:
        z = X @ np.asarray(w, dtype=np.float64)
    else:
        hi = np.asarray(w, dtype=X.dtype)
        lo = (w - hi).astype(X.dtype)
        Z = X @ np.stack([hi, lo], axis=1)
        z = Z[:, 0].astype(np.float64)
        z += Z[:, 1]
    z += b
    return z


def native_predictor(X, w, b=0.0):
    """``z = X w + b`` in ``X``'s precision for dense ``X``: exact (float64 ``X``) or the predictor
    of ``(w, b)`` rounded to float32 (see the module docstring)."""
    z = X @ np.asarray(w, dtype=X.dtype)
    z += X.dtype.type(b)
    return z


def binary_logistic_terms(tz, y, value=True, hessian=True):
    """``(f or None, r, c or None)`` of binary logistic rows from ``tz = t_i z_i`` (overwritten).

    ``E = e^{tz}``, ``s = sigmoid(-tz) = 1 / (1 + E)``, ``r = -t s``, ``c = s (1 - s)`` and
    ``f = log(1 + e^{-tz}) = log1p(e^{-|tz|}) + max(-tz, 0)`` with ``e^{-|tz|} = min(E, 1/E)``:
    one exponential per row, in place (``np.logaddexp`` alone cost three times the rest, and
    scipy's ``expit`` / ``log_expit`` made the elementwise work cost more than the products),
    in ``tz``'s precision (``y`` is cast to it).
    ``E`` overflows to ``inf`` for ``tz > 709`` (88 in float32), where ``s = 0`` and
    ``f = log1p(0)`` are the right limits, and underflows to 0 below -745 (-104 in float32),
    where ``min(0, inf) = 0``.
    """
    f = None
    with np.errstate(over="ignore", divide="ignore"):
        s = np.exp(tz)
        if value:
            f = np.reciprocal(s)
            np.minimum(f, s, out=f)
            np.log1p(f, out=f)
            f -= np.minimum(tz, 0.0, out=tz)
    s += 1.0
    np.reciprocal(s, out=s)
    c = s - s * s if hessian else None
    r = np.multiply(s, y, out=s, casting="same_kind")
    np.negative(r, out=r)
    return f, r, c


def _weighted(v, weight):
    return v if weight is None else v * weight


def scalar_glm_terms(X, f, r, c, weight, fit_intercept):
    """``(sum w_i f_i, sum w_i r_i x~_i, sum w_i c_i x~_i x~_i^T or None)``, ``x~_i = [x_i, 1]``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Dense rows, float32 or float64 (products in that precision, sums returned in float64).
    f : ndarray of shape (n,) or None
        Per-row values ``f_i`` (float64, or float32 with float32 ``X``); None: ``value = None``.
    r : ndarray of shape (n,)
        Responses ``r_i = d f_i / d z_i`` (the same precision).
    c : ndarray of shape (n,) or None
        Curvatures ``d^2 f_i / d z_i^2``; None skips the Hessian.
    weight : ndarray of shape (n,) or None
    fit_intercept : bool

    Returns
    -------
    value : float or None
    grad : ndarray of shape (d1,)
    hessian : ndarray of shape (d1, d1) or None
        Not symmetrised (the caller symmetrises the total once).
    """
    d = X.shape[1]
    d1 = d + bool(fit_intercept)
    value = None if f is None else float(np.sum(_weighted(f, weight), dtype=np.float64))
    rw = _weighted(r, weight)
    grad = np.empty(d1)
    grad[:d] = rw.astype(X.dtype, copy=False) @ X
    if fit_intercept:
        grad[d] = rw.sum(dtype=np.float64)
    if c is None:
        return value, grad, None
    cw = _weighted(c, weight).astype(X.dtype, copy=False)
    H = np.empty((d1, d1))
    A = X * cw[:, None]
    H[:d, :d] = A.T @ X
    if fit_intercept:
        H[d, :d] = H[:d, d] = cw @ X
        H[d, d] = cw.sum(dtype=np.float64)
    return value, grad, H
