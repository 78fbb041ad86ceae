"""Gaussian linear regression likelihood, noise fixed or inferred."""

from dataclasses import dataclass, field

import numpy as np

from ._arrays import as_compute, design, linear_predictor, scalar_response_grad
from ._base import Likelihood
from ._fused import fused_predictor, scalar_glm_terms
from ._sparse import draw_chunks, is_sparse, outer_rows, squared, weighted_gram

__all__ = ["GaussianLinearModel"]

_LOG_SIGMA_PRECISION = 1.0 / 10.0**2


@dataclass(frozen=True)
class GaussianLinearModel(Likelihood):
    """Linear regression with Gaussian noise.

    Parameters
    ----------
    n_features : int
        Width ``d`` of ``x``.
    fit_intercept : bool, default=True
        Whether ``theta`` holds an intercept (:meth:`unpack` gives 0 if not).
    noise_std : float or None, default=None
        Fixed noise standard deviation ``sigma``.  ``None`` infers it: the
        last coordinate of ``theta`` is then ``log sigma``.

    Attributes
    ----------
    n_params : int
        Length ``p`` of ``theta = [coef (d,), intercept, log_noise_std]``
        (intercept and ``log_noise_std`` only when fitted / inferred).

    Notes
    -----
    ``f_i = (y_i - z_i)^2 / (2 sigma^2) + log sigma`` (constant dropped),
    ``z_i = x_i . w + b``.  Response ``d f_i / d z_i = (z_i - y_i) / sigma^2``;
    ``d f_i / d log sigma = 1 - (y_i - z_i)^2 / sigma^2``.  With ``sigma``
    fixed the model is a GLM and the posterior is Gaussian.
    """

    n_features: int
    fit_intercept: bool = True
    noise_std: float | None = None
    n_params: int = field(init=False, repr=False, compare=False)
    exact_hessian = is_regression = True
    feature_axes = {"coef": 0}
    n_outputs = 1

    def __post_init__(self):
        d, fit_b, infer = self.n_features, bool(self.fit_intercept), self.noise_std is None
        object.__setattr__(self, "n_params", d + fit_b + infer)
        object.__setattr__(self, "_nl", d + fit_b)  # number of linear coordinates

    @property
    def is_glm(self):
        """True when ``noise_std`` is fixed (then the posterior is Gaussian)."""
        return self.noise_std is not None

    log_concave = is_glm  # an inferred noise scale is not log-concave in log_noise_std

    def param_shapes(self):
        """Names and shapes of the blocks of ``theta``, in pack order."""
        shapes = {"coef": (self.n_features,)}
        if self.fit_intercept:
            shapes["intercept"] = ()
        if self.noise_std is None:
            shapes["log_noise_std"] = ()
        return shapes

    def unpack(self, theta):
        """Split ``theta (..., p)`` into ``coef``, ``intercept`` and (inferred) ``noise_std``."""
        theta = np.asarray(theta)
        d = self.n_features
        out = {"coef": theta[..., :d]}
        out["intercept"] = theta[..., d] if self.fit_intercept else np.zeros(
            theta.shape[:-1], dtype=theta.dtype)
        if self.noise_std is None:
            out["noise_std"] = np.exp(theta[..., -1])
        return out

    def prior_precision(self, prior_scale, intercept_scale=None):
        """Diagonal prior precision ``(p,)``.

        ``1 / prior_scale^2`` on the weights, ``1 / intercept_scale^2`` on the
        intercept (default ``10 * prior_scale``), ``1 / 10^2`` on ``log sigma``.
        """
        intercept_scale = 10.0 * prior_scale if intercept_scale is None else intercept_scale
        prec = np.full(self.n_params, 1.0 / prior_scale**2)
        if self.fit_intercept:
            prec[self.n_features] = 1.0 / intercept_scale**2
        if self.noise_std is None:
            prec[-1] = _LOG_SIGMA_PRECISION
        return prec

    def _z(self, theta, X):
        d = self.n_features
        return linear_predictor(X, theta[:, :d], theta[:, d] if self.fit_intercept else None)

    def _inv_var(self, theta):
        """``1 / sigma^2`` as a float or a ``(C, 1)`` column."""
        if self.noise_std is not None:
            return 1.0 / self.noise_std**2
        return np.exp(-2.0 * theta[:, -1:])

    def nll(self, theta, X, y):
        """Per-example negative log-likelihood ``(C, b)``."""
        e = y - self._z(theta, X)
        f = 0.5 * self._inv_var(theta) * e * e
        if self.noise_std is None:
            f += theta[:, -1:]
        else:
            f += np.log(self.noise_std)
        return f

    def response(self, theta, X, y):
        """``d f_i / d z_i = (z_i - y_i) / sigma^2`` as ``(C, b)``."""
        r = self._z(theta, X)
        r -= y
        r *= self._inv_var(theta)
        return r

    def grad_from_response(self, r, X, weight=None):
        """``sum_i w_i r_i (x) [x_i, 1]`` as ``(C, p)``.

        With inferred noise the ``log sigma`` entry is left at zero.
        """
        if weight is not None:
            r = np.multiply(r, weight, dtype=r.dtype)
        X = as_compute(X, r.dtype)  # float32 only on the sampler's float32 minibatches
        out = scalar_response_grad(r, X, self.fit_intercept,
                                   np.empty((r.shape[0], self.n_params), dtype=X.dtype))
        if self.noise_std is None:
            out[:, -1] = 0.0
        return out

    def grad_sum(self, theta, X, y, weight=None):
        """``sum_i w_i grad f_i`` as ``(C, p)``, never forming ``(C, b, p)``."""
        if self.noise_std is not None:
            return self.grad_from_response(self.response(theta, X, y), X, weight)
        iv, z = self._inv_var(theta), self._z(theta, X)
        e = np.subtract(y, z, dtype=z.dtype)
        out = self.grad_from_response(-iv * e, X, weight)
        q = 1.0 - iv * e * e
        out[:, -1] = (q if weight is None else q * weight).sum(axis=-1)
        return out

    def per_example_grad(self, theta1, X, y):
        """Per-example gradients ``(b, p)`` at one position ``theta1 (p,)`` (CSR for sparse X)."""
        theta = theta1[None]
        iv = self._inv_var(theta)
        e = (y - self._z(theta, X))[0]
        r = -e * iv if np.ndim(iv) == 0 else -e * iv[0, 0]
        tail = [r] if self.fit_intercept else []
        if self.noise_std is None:
            tail.append(1.0 - e * e * iv[0, 0])
        return outer_rows(r[:, None], X, np.column_stack(tail) if tail else np.empty((r.size, 0)))

    def curvature(self, theta1, X, y=None):
        """``d^2 f_i / d z_i^2 = 1 / sigma^2`` for every example ``(n,)``."""
        iv = self._inv_var(theta1[None])
        return np.full(X.shape[0], float(np.ravel(iv)[0]))

    def _blocks(self, theta1, X, y, weight):
        """Weights, design, residuals and ``1/sigma^2`` for the Hessian."""
        X1 = design(X, self.fit_intercept)
        w = np.ones(X1.shape[0]) if weight is None else np.asarray(weight, dtype=np.float64)
        e = (y - self._z(theta1[None], X))[0]
        iv = float(np.ravel(self._inv_var(theta1[None]))[0])
        return w, X1, e, iv

    def hessian(self, theta1, X, y, weight=None):
        """Exact likelihood Hessian ``(p, p)`` (no prior), ``log sigma`` included.

        ``d^2 f / d beta^2 = x1 x1^T / sigma^2``, ``d^2 f / d beta d log sigma
        = 2 e x1 / sigma^2`` and ``d^2 f / d log sigma^2 = 2 e^2 / sigma^2``.
        """
        w, X1, e, iv = self._blocks(theta1, X, y, weight)
        H = np.empty((self.n_params, self.n_params))
        nl = self._nl
        H[:nl, :nl] = iv * weighted_gram(X1, w)
        if self.noise_std is None:
            H[:nl, -1] = H[-1, :nl] = 2.0 * iv * (X1.T @ (w * e))
            H[-1, -1] = 2.0 * iv * (w @ (e * e))
        return H

    def newton_terms(self, theta1, X, y, weight=None, hessian=True, value=True,
                     response_out=None):
        """Value, gradient and Hessian of a chunk in one read (:meth:`Likelihood.newton_terms`).

        Dense ``X``: fused in ``X``'s precision (:mod:`._fused`); the ``log sigma`` terms follow
        from the residuals (``∇²_{beta, log sigma} f = -2 ∇_beta f``).  Sparse: generic path.
        """
        if is_sparse(X):
            return super().newton_terms(theta1, X, y, weight, hessian, value, response_out)
        d, nl, infer = self.n_features, self._nl, self.noise_std is None
        e = fused_predictor(X, theta1[:d], theta1[d] if self.fit_intercept else 0.0)
        np.subtract(y, e, out=e)
        iv = float(np.ravel(self._inv_var(theta1[None]))[0])
        q = iv * e * e
        f = 0.5 * q + (theta1[-1] if infer else np.log(self.noise_std)) if value else None
        c = np.full(e.size, iv) if hessian else None
        r = -iv * e
        if response_out is not None:  # a GLM (fixed noise) only: the anchor's responses
            response_out[...] = r
        value, g, H = scalar_glm_terms(X, f, r, c, weight, self.fit_intercept)
        if not infer:
            return value, g, H
        grad = np.append(g, np.sum(1.0 - q if weight is None else (1.0 - q) * weight))
        if not hessian:
            return value, grad, None
        out = np.empty((self.n_params, self.n_params))
        out[:nl, :nl] = H
        out[:nl, -1] = out[-1, :nl] = -2.0 * g
        out[-1, -1] = 2.0 * np.sum(q if weight is None else q * weight)
        return value, grad, out

    def anchor_terms(self, theta1, X, y, weight=None, curvature=False):
        """Gradient, responses (and curvatures) of a chunk (:meth:`Likelihood.anchor_terms`);
        fixed noise with dense ``X`` fused in ``X``'s precision like :meth:`newton_terms`."""
        if is_sparse(X) or self.noise_std is None:
            return super().anchor_terms(theta1, X, y, weight, curvature)
        d = self.n_features
        iv = float(np.ravel(self._inv_var(theta1[None]))[0])
        r = fused_predictor(X, theta1[:d], theta1[d] if self.fit_intercept else 0.0)
        r -= y
        r *= iv
        g = scalar_glm_terms(X, None, r, None, weight, self.fit_intercept)[1]
        return (g, r, np.full(r.size, iv)) if curvature else (g, r)

    def start(self, X, y, weight=None):
        """Zero weights, the intercept at the mean of ``y`` and ``log sigma`` at its log sd.

        From zeros, a target with a large offset (``y + 1e6``) made the inferred-noise Hessian
        indefinite by many orders of magnitude and Newton failed.
        """
        theta, y = np.zeros(self.n_params), np.asarray(y, dtype=np.float64)
        w = np.ones(y.size) if weight is None else np.asarray(weight, dtype=np.float64)
        mean = (w @ y) / w.sum() if self.fit_intercept else 0.0
        if self.fit_intercept:
            theta[self.n_features] = mean
        if self.noise_std is None:
            var = (w @ (y - mean) ** 2) / w.sum()
            theta[-1] = 0.5 * np.log(max(var, 1e-30 * max(1.0, mean * mean)))  # y constant
        return theta

    def hessian_diag(self, theta1, X, y, weight=None):
        """Diagonal of the exact likelihood Hessian ``(p,)``."""
        w, X1, e, iv = self._blocks(theta1, X, y, weight)
        out = np.empty(self.n_params)
        out[:self._nl] = iv * (squared(X1).T @ w)
        if self.noise_std is None:
            out[-1] = 2.0 * iv * (w @ (e * e))
        return out

    def predict_output(self, draws, X):
        """Predictive means ``(S, n)`` for draws ``(S, p)``, in chunks of draws."""
        draws = np.atleast_2d(draws)
        out = np.empty((draws.shape[0], X.shape[0]))
        for sl in draw_chunks(draws.shape, X.shape[0]):
            out[sl] = self._z(draws[sl], X)
        return out
