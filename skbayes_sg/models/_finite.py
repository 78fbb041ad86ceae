"""Predictions for any finite input: rows too large for the arithmetic taken along their ray.

A row with values near the float64 limit (``1e308``) makes a logit overflow to ``inf``, or to
``inf - inf = nan`` inside the dot product, and nothing computed from it afterwards is the right
answer.  Far out along the ray through ``x`` a GLM's or a ReLU network's logits grow linearly in
``|x|`` and a tanh / logistic unit saturates, so the predictive probabilities reach their limit
long before the arithmetic overflows.  :func:`overflow_free_limit` bounds, from the draws, the
largest ``max_j |x_j|`` at which no pre-activation of any draw can pass ``1e300`` (``1e30`` in
float32); :func:`shrink_rows` moves the rows beyond it back along their ray to that scale, where
the logits are still saturated.  The answer differs from the exact limit only on near-ties (two
classes whose scores along ``x`` agree to ~1e-297 of their size).  Ordinary rows are untouched
(:func:`peak_abs`, one pass over ``X``, decides; it doubles as the finiteness check).  Linear
outputs (the regressor) need no limit: :func:`ray_outputs` computes them exactly, ``+-inf``
past the float range and never NaN.
"""

from types import MappingProxyType

import numpy as np
import scipy.sparse as sp

from ._arrays import design

__all__ = ["overflow_free_limit", "peak_abs", "ray_outputs", "shrink_rows"]

#: largest pre-activation allowed (float64, float32): far inside the range, saturated softmax
_HUGE = MappingProxyType({np.dtype(np.float64): 1e300, np.dtype(np.float32): 1e30})


def _layer_bounds(named):
    """Per layer, the largest ``sum_in |W| + |b|`` over draws and output units."""
    keys = ["coef"] if "coef" in named else sorted(
        (k for k in named if k.startswith("coef_")), key=lambda k: int(k[5:]))
    for key in keys:
        axis = -1 if key == "coef" else -2  # GLM coef (S, R, d); MLP coef_l (S, n_in, n_out)
        bias = named.get(key.replace("coef", "intercept"), 0.0)
        yield float(np.max(np.abs(named[key]).sum(axis=axis) + np.abs(bias)))


def overflow_free_limit(model, draws, dtype):
    """Largest row scale ``max_j |x_j|`` at which every draw's pre-activations stay finite.

    With ``K_l`` the bound of layer ``l`` (:func:`_layer_bounds`) and ``|x_j| <= T``, every
    pre-activation is at most ``T prod_l max(K_l, 1)`` for ``T >= 1`` (ReLU; tanh and logistic
    units are smaller), so ``T = huge / prod_l max(K_l, 1)`` keeps them below ``huge``.

    Parameters
    ----------
    model : a model with ``unpack`` giving ``coef`` / ``intercept`` or ``coef_l`` / ``intercept_l``
    draws : ndarray of shape (S, p)
    dtype : numpy dtype
        ``X``'s dtype: the prediction kernels compute in float32 for float32 ``X``.
    """
    growth = 1.0
    for bound in _layer_bounds(model.unpack(np.atleast_2d(draws))):
        growth *= max(bound, 1.0)
    return max(_HUGE.get(np.dtype(dtype), _HUGE[np.dtype(np.float64)]) / growth, 1.0)


def peak_abs(X, rows=1024):
    """``max |x_ij|`` over a dense or sparse ``X`` (0 when empty; NaN when any value is NaN).

    One pass over ``X`` in cache-sized row chunks (``|x|`` into a reused buffer): cheaper than a
    max and a min pass, and non-finite exactly when ``X`` has a NaN or an infinity, so it also
    serves as the finiteness check of prediction.
    """
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size == 0:
        return 0.0
    if values.ndim == 1:
        return float(np.max(np.abs(values)))
    buf, peak = np.empty((min(rows, values.shape[0]), values.shape[1]), values.dtype), 0.0
    for start in range(0, values.shape[0], rows):
        chunk = values[start:start + rows]
        block = np.abs(chunk, out=buf[:chunk.shape[0]])
        top = float(block.max())  # NaN when the chunk has one
        if not top <= peak:  # a larger value, or NaN (which ends the search)
            peak = top
            if np.isnan(peak):
                break
    return peak


def shrink_rows(X, limit, peak=None):
    """``X`` with every row whose ``max_j |x_ij|`` passes ``limit`` scaled back to ``limit``.

    Returns ``X`` itself when no row passes (the usual case); otherwise a copy in ``X``'s dtype
    and format.  ``peak``: :func:`peak_abs` of ``X``, when the caller has it.
    """
    if (peak_abs(X) if peak is None else peak) <= limit:
        return X
    if sp.issparse(X):
        peak = abs(X).max(axis=1).toarray().ravel()
        return (sp.diags(limit / np.maximum(peak, limit)) @ X).astype(X.dtype).tocsr()
    peak = np.max(np.abs(X), axis=1)
    out = np.array(X, copy=True)
    big = peak > limit
    out[big] *= (limit / peak[big])[:, None].astype(X.dtype)
    return out


def ray_outputs(lin, X, fit_intercept):
    """``(s, Z)``: linear outputs ``s[i] * Z[:, i]`` of draws ``lin`` ``[w, b]`` at rows ``X``.

    ``s = max |[x, 1]|`` per row and ``Z = lin @ ([x, 1] / s)'`` ``(S, n)`` stay finite where
    ``[x, 1] @ lin'`` overflows (values near 1e308 give ``inf - inf = nan``); ``s * Z`` is then
    ``+-inf`` exactly where the output passes float64's range, never ``nan``.
    """
    X1 = design(X, fit_intercept)
    X1 = X1.toarray() if sp.issparse(X1) else X1
    s = np.max(np.abs(X1), axis=1)
    s = np.where(s > 0, s, 1.0)
    return s, lin @ (X1 / s[:, None]).T
