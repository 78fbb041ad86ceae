"""Binary and multinomial (softmax) logistic regression likelihoods."""

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit, softmax

from ._arrays import (as_compute, as_float64, class_predictor, class_response_grad, design,
                      linear_predictor, scalar_response_grad)
from ._base import Likelihood
from ._predictive import DEFAULT_CHUNKS, glm_mean
from ._fused import fused_predictor
from ._logistic_passes import FusedBinaryPasses
from ._softmax import log_normaliser, softmax_inplace
from ._sparse import draw_chunks, is_sparse, outer_rows, squared, weighted_gram

__all__ = ["LogisticModel"]

_MAX_PREDICT_ELEMENTS = 10_000_000  # values of predict_output's temporaries per draw chunk


@dataclass(frozen=True)
class LogisticModel(FusedBinaryPasses, Likelihood):
    """Logistic regression likelihood, binary or multinomial.

    Parameters
    ----------
    n_features : int
        Number of input features ``d``.
    n_classes : int
        Number of classes ``K >= 2``.  ``K == 2`` uses one weight row and targets ``t`` in
        {-1., +1.}; ``K > 2`` a full softmax with ``K`` rows and integer targets 0..K-1.
    fit_intercept : bool, default=True
        When False the intercept is not part of ``theta``; :meth:`unpack`
        still returns zero intercepts so that shapes stay constant.

    Attributes
    ----------
    n_params : int
        Length ``p`` of ``theta = [coef (R, d) row-major, intercept (R,)]``
        with ``R = 1`` (binary) or ``K``.

    Notes
    -----
    Binary: ``f_i = log(1 + exp(-t_i z_i))``, ``z_i = x_i . w + b``, response
    ``d f_i / d z_i = -t_i sigmoid(-t_i z_i)``.  Multiclass:
    ``f_i = logsumexp(z_i) - z_i[y_i]`` with ``z_i = W x_i + b``, response
    ``softmax(z_i) - onehot(y_i)``.  Gradients are ``r_i (x) [x_i, 1]``.
    """

    n_features: int
    n_classes: int
    fit_intercept: bool = True
    n_params: int = field(init=False, repr=False, compare=False)
    is_glm = exact_hessian = log_concave = True
    feature_axes = {"coef": 1}

    def __post_init__(self):
        rows = 1 if self.n_classes == 2 else self.n_classes
        object.__setattr__(self, "_rows", rows)
        object.__setattr__(self, "linear_predictors", rows)
        object.__setattr__(self, "n_outputs", self.n_classes)
        object.__setattr__(self, "softmax", self.n_classes > 2)
        object.__setattr__(self, "_nw", rows * self.n_features)
        object.__setattr__(self, "_classes", np.arange(rows)[:, None])
        object.__setattr__(self, "n_params", rows * (self.n_features + bool(self.fit_intercept)))

    def param_shapes(self):
        """Names and shapes of the blocks of ``theta``, in pack order."""
        shapes = {"coef": (self._rows, self.n_features)}
        if self.fit_intercept:
            shapes["intercept"] = (self._rows,)
        return shapes

    def unpack(self, theta):
        """Split ``theta (..., p)`` into ``coef (..., R, d)`` and ``intercept (..., R)``."""
        theta = np.asarray(theta)
        lead, nw = theta.shape[:-1], self._nw
        coef = theta[..., :nw].reshape(*lead, self._rows, self.n_features)
        if self.fit_intercept:
            intercept = theta[..., nw:]
        else:
            intercept = np.zeros((*lead, self._rows), dtype=theta.dtype)
        return {"coef": coef, "intercept": intercept}

    def prior_precision(self, prior_scale, intercept_scale=None):
        """Diagonal prior precision ``(p,)``.

        ``1 / prior_scale^2`` on the weights, ``1 / intercept_scale^2`` on the
        intercepts (default ``intercept_scale = 10 * prior_scale``).
        """
        intercept_scale = 10.0 * prior_scale if intercept_scale is None else intercept_scale
        prec = np.full(self.n_params, 1.0 / prior_scale**2)
        prec[self._nw:] = 1.0 / intercept_scale**2
        return prec

    def _z(self, theta, X):
        """Linear predictor: ``(C, b)`` (binary) or class-major ``(C, K, b)`` (softmax).

        The softmax logits are kept class-major so that reductions over the classes run over a
        middle axis (contiguous rows), which is markedly faster than reducing a short last axis.
        """
        nw = self._nw
        if self._rows == 1:
            return linear_predictor(X, theta[:, :nw], theta[:, nw] if self.fit_intercept else None)
        z = class_predictor(X, theta[:, :nw].reshape(theta.shape[0], self._rows, -1))
        if self.fit_intercept:
            z += theta[:, nw:, None]
        return z

    def _observed(self, z, y):
        """The logits of the observed classes ``(C, b)`` (softmax)."""
        idx = np.asarray(y).astype(np.intp, copy=False)[..., None, :]
        return np.take_along_axis(z, idx if idx.ndim == 3 else idx[None], axis=1)[:, 0]

    def nll(self, theta, X, y):
        """Per-example negative log-likelihood ``(C, b)``."""
        z = self._z(theta, X)
        if self._rows == 1:
            return -log_expit(y * z)
        zy = self._observed(z, y)
        return log_normaliser(z)[0] - zy

    def response(self, theta, X, y):
        """``d f_i / d z_i``: ``(C, b)`` (binary) or ``(C, b, K)`` (softmax).

        The softmax response is a transposed view of a class-major array;
        :meth:`grad_from_response` accepts any memory layout.
        """
        z = self._z(theta, X)
        if self._rows == 1:  # -t sigmoid(-t z), accurate for tiny values
            neg_t = np.negative(y, dtype=z.dtype)
            z *= neg_t
            expit(z, out=z)
            z *= neg_t
            return z
        return self._softmax_response(softmax_inplace(z), y)

    def _softmax_response(self, proba, y):
        proba -= y[..., None, :] == self._classes
        return proba.transpose(0, 2, 1)

    def value_and_grad_sum(self, theta, X, y, weight=None):
        """``(sum_i w_i f_i (C,), sum_i w_i ∇f_i (C, p))`` from one linear predictor (softmax:
        the logits' normaliser gives both the values and the probabilities)."""
        if self._rows == 1:
            return super().value_and_grad_sum(theta, X, y, weight)
        z = self._z(theta, X)
        f = -self._observed(z, y)
        lse, sums = log_normaliser(z)
        f += lse
        z /= sums[:, None, :]
        total = f.sum(axis=1) if weight is None else f @ weight
        return total, self.grad_from_response(self._softmax_response(z, y), X, weight)

    def grad_from_response(self, r, X, weight=None):
        """``sum_i w_i r_i (x) [x_i, 1]`` as ``(C, p)`` from responses ``r``."""
        if weight is not None:
            r = np.multiply(r, weight if self._rows == 1 else weight[..., None], dtype=r.dtype)
        if X.dtype is not r.dtype:
            X = as_compute(X, r.dtype)
        C, nw = r.shape[0], self._nw
        out = np.empty((C, self.n_params), dtype=X.dtype)
        if self._rows == 1:
            return scalar_response_grad(r, X, self.fit_intercept, out)
        rt = r.transpose(0, 2, 1)
        class_response_grad(rt, X, out[:, :nw].reshape(C, self._rows, self.n_features))
        if self.fit_intercept:
            rt.sum(axis=2, out=out[:, nw:])
        return out

    def grad_sum(self, theta, X, y, weight=None):
        """``sum_i w_i grad f_i`` as ``(C, p)``, never forming ``(C, b, p)``."""
        return self.grad_from_response(self.response(theta, X, y), X, weight)

    def per_example_grad(self, theta1, X, y):
        """Per-example gradients ``(b, p)`` at one position ``theta1 (p,)`` (CSR for sparse X)."""
        r = self.response(theta1[None], X, y)[0]
        r = r if self._rows > 1 else r[:, None]
        return outer_rows(r, X, r if self.fit_intercept else np.empty((r.shape[0], 0)))

    def curvature(self, theta1, X, y=None):
        """GLM curvature terms at one position ``theta1 (p,)``.

        Returns ``s_i (1 - s_i)`` ``(n,)`` (binary, ``= d^2 f_i / d z_i^2``)
        or the softmax probabilities ``(n, K)`` (multiclass; the Hessian of
        ``f_i`` in ``z_i`` is ``diag(p_i) - p_i p_i^T``).  ``y`` is unused.
        Binary dense rows read ``X`` in its own precision (:func:`fused_predictor`: float32
        ``X`` gives float32-accurate curvatures, enough for sampling weights; the Hessians cast).
        """
        if self._rows == 1:
            if is_sparse(X):
                z = self._z(theta1[None], X)[0]
            else:
                b = theta1[-1] if self.fit_intercept else 0.0
                z = fused_predictor(X, theta1[:self._nw], b)
            e = np.exp(-np.abs(z))
            return e / (1.0 + e) ** 2  # s (1 - s), s = sigmoid(z)
        return softmax(self._z(theta1[None], X)[0].T, axis=-1)

    @staticmethod
    def _curvature_times(c, zv):
        """``(diag(s_i) - s_i s_i^T) zv_i`` (softmax, ``c`` the probabilities) or ``c_i zv_i``."""
        if c.ndim == 1:
            return zv * c
        sz = zv * c.T  # (l, K, n)
        sz -= c.T * sz.sum(axis=1, keepdims=True)
        return sz.transpose(0, 2, 1)

    def hessian(self, theta1, X, y, weight=None):
        """Exact likelihood Hessian ``sum_i w_i grad^2 f_i`` ``(p, p)`` (no prior).

        Softmax blocks ``H_kl = X~^T diag(w (delta_kl s_k - s_k s_l)) X~``, one weighted Gram
        matrix per pair ``k <= l`` (dense or sparse ``X`` alike).
        """
        c = self.curvature(theta1, as_float64(X), y)
        X1 = design(X, self.fit_intercept)
        w = np.ones(X1.shape[0]) if weight is None else np.asarray(weight, dtype=np.float64)
        if self._rows == 1:
            return weighted_gram(X1, w * c)
        K, d1 = self._rows, X1.shape[1]
        H = np.empty((K * d1, K * d1))
        for k in range(K):
            for m in range(k, K):
                B = weighted_gram(X1, w * c[:, k] * ((k == m) - c[:, m]))
                H[k * d1:(k + 1) * d1, m * d1:(m + 1) * d1] = B
                H[m * d1:(m + 1) * d1, k * d1:(k + 1) * d1] = B.T
        out, order = np.empty_like(H), self.class_major_order()
        out[np.ix_(order, order)] = H
        return out

    def start(self, X, y, weight=None):
        """Zero weights and the intercepts of the class frequencies (log-odds, smoothed by 1/2)."""
        theta = np.zeros(self.n_params)
        if self.fit_intercept:
            w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=np.float64)
            if self._rows == 1:
                counts = np.array([w @ (np.asarray(y) < 0), w @ (np.asarray(y) > 0)])
            else:
                counts = np.bincount(np.asarray(y, dtype=np.intp), w, minlength=self._rows)
            logf = np.log(counts + 0.5)
            theta[self._nw:] = logf[1] - logf[0] if self._rows == 1 else logf - logf.mean()
        return theta

    def class_major_order(self):
        """Position in ``theta`` of coefficient ``(k, j)``, class-major (``j = d``: intercept)."""
        K, d = self._rows, self.n_features
        grid = np.empty((K, d + int(self.fit_intercept)), dtype=np.intp)
        grid[:, :d] = np.arange(K * d).reshape(K, d)
        if self.fit_intercept:
            grid[:, d] = K * d + np.arange(K)
        return grid.ravel()

    def hessian_diag(self, theta1, X, y, weight=None):
        """Diagonal of the exact likelihood Hessian ``(p,)``."""
        X = as_float64(X)
        c = self.curvature(theta1, X, y)
        if self._rows > 1:
            c = c * (1.0 - c)
        if weight is not None:
            c = c * (weight if c.ndim == 1 else weight[:, None])
        X = as_float64(X)
        out = np.empty(self.n_params)
        out[:self._nw] = np.asarray(squared(X).T @ c).T.ravel()
        if self.fit_intercept:
            out[self._nw:] = c.sum(axis=0)
        return out

    def predict_mean(self, draws, X, *, chunks=DEFAULT_CHUNKS):
        """Class probabilities ``(n, K)`` averaged over draws ``(S, p)`` (:func:`glm_mean`).

        Fused row chunks (``chunks``: their budgets), float32 for float32 ``X``; binary: one
        exponential per draw and row.
        """
        named = self.unpack(np.atleast_2d(draws))
        return glm_mean(named["coef"], named["intercept"], X, chunks)

    def predict_output(self, draws, X, *, max_elements=_MAX_PREDICT_ELEMENTS):
        """Class probabilities ``(S, n, K)`` for draws ``(S, p)``.

        Binary columns are ``[P(class 0), P(class 1)] = [1 - s, s]`` with
        ``s = sigmoid(z)``.  Draws are processed in chunks to bound temporaries (about
        ``max_elements`` values, at least one draw).
        """
        draws = np.atleast_2d(draws)
        S, n, K = draws.shape[0], X.shape[0], max(self.n_classes, 2)
        out = np.empty((S, n, K))
        for sl in draw_chunks(draws.shape, n, K, max_elements):
            z = self._z(draws[sl], X)
            if self._rows == 1:
                expit(-z, out=out[sl, :, 0])
                expit(z, out=out[sl, :, 1])
            else:
                out[sl] = softmax_inplace(z).transpose(0, 2, 1)
        return out
