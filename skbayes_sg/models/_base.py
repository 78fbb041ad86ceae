"""The model protocol shared by every likelihood, and the Gaussian prior.

Conventions (every model follows them; the layers above rely on them):

* ``theta`` is 2-D ``(C, p)``: one row per chain (or per position).  A single
  position is passed as ``theta[None]``.
* Data ``X`` is either shared by all rows of ``theta`` -- shape ``(b, d)`` --
  or gathered per chain -- shape ``(C, b, d)`` (independent minibatches of
  several chains).  ``y`` is ``(b,)`` or ``(C, b)`` to match; ``weight``
  (optional) has the shape of ``y``.  ``X`` may be float32 or float64.  The GLMs
  (linear, logistic) also take a CSR matrix ``(b, d)`` as shared ``X`` and
  :class:`~skbayes_sg.models._sparse.ChainRows` as gathered ``X``
  (``Posterior.rows`` gathers either kind); ``per_example_grad`` then returns CSR.
* Precision: models compute in float64, except when both ``theta`` and a dense ``X`` are float32
  (the sampler's minibatch path on float32 data, :func:`as_compute`); results then come out in
  float32.  Full-data passes give float64 ``theta`` and so stay in float64.
* Targets are pre-encoded by the estimator: binary logistic ``y`` in
  {-1., +1.}; softmax ``y`` integer class codes 0..K-1; regression ``y`` float.
* ``f_i(theta) = -log p(y_i | x_i, theta)``; everything returned is about the
  negative log-likelihood (the potential), never the log-density.

Methods of a model (all pure, no RNG, no state):

``n_params``                          int attribute, length p of theta.
``param_shapes()``                    dict name -> shape, in pack order.
``unpack(theta)``                     ``(..., p)`` -> dict name -> ``(..., *shape)``.
``prior_precision(prior_scale)``      ``(p,)`` diagonal Gaussian prior precision.
``nll(theta, X, y)``                  ``(C, b)`` per-example f_i.
``grad_sum(theta, X, y, weight)``     ``(C, p)``: sum_i w_i grad f_i, never ``(C, b, p)``.
``per_example_grad(theta1, X, y)``    ``(b, p)`` for one position ``theta1 (p,)``.
``hessian(theta1, X, y, weight)``     ``(p, p)`` sum_i w_i grad^2 f_i (GLMs; the MLP raises).
``hessian_diag(theta1, X, y, weight)`` ``(p,)`` exact for GLMs, Gauss-Newton for the MLP.
``hessian_vector(theta1, X, y, V, weight)`` ``(l, p)``: rows ``sum_i w_i grad^2 f_i v`` (GLMs).
``newton_terms(theta1, X, y, weight, hessian, value)`` ``(value, grad, Hessian)`` (or None)
                                      of a chunk in one read (mode search, Laplace).
``start(X, y, weight)``               ``(p,)`` where the mode search starts.
``predict_output(draws, X)``          ``(S, n, K)`` probabilities (classifiers) or
                                      ``(S, n)`` means (regression), for draws ``(S, p)``.

Capabilities are declared, never probed: ``is_glm`` (the linear-predictor
form below), ``exact_hessian`` (``hessian`` is implemented) and
``random_init`` (the mode search starts from ``init_position(rng)``: the MLP),
``multimodal`` (the posterior has many modes, so chains start in different ones and no measure
taken at one mode stands for the others: the MLP), ``softmax`` (a GLM with one linear predictor
per class), ``is_regression`` and ``n_outputs`` (classes, or 1 for regression).

GLMs (``is_glm = True``) also expose the linear-predictor form used by control variates to store
the anchor as scalars (one gradient evaluation per example per step instead of two):

``response(theta, X, y)``             ``(C, b)`` or ``(C, b, K)``: d f_i / d z_i.
``grad_from_response(r, X, weight)``  ``(C, p)``: sum_i w_i r_i (x) [x_i, 1].
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._sparse import sparse_predictor, sparse_response_grad

__all__ = ["GaussianPrior", "Likelihood", "NoisePrior", "as_compute", "as_float64",
           "class_predictor", "class_response_grad", "design", "linear_predictor",
           "minibatch_dtype"]


class Likelihood:
    """Declared capabilities of a model (defaults; each model overrides what it has).

    ``is_glm``: the linear-predictor form (``response``, ``grad_from_response``);
    ``exact_hessian``: ``hessian`` is implemented; ``random_init``: the mode
    search starts from ``init_position(rng)``; ``multimodal``: chains start in different modes
    and the noise and curvature measured at one mode do not stand for the others;
    ``is_regression``: real targets;
    ``linear_predictors``: linear predictors per row of a GLM (the rank of one row's Hessian).
    """

    is_glm = False
    linear_predictors = 1
    exact_hessian = False
    random_init = False
    multimodal = False
    softmax = False
    is_regression = False
    feature_axes = {}  # parameter group -> axis of its shape that runs over the features

    def hessian_vector(self, theta1, X, y, V, weight=None):
        """Likelihood Hessian times vectors: ``sum_i w_i ∇²f_i v`` for the rows ``v`` of ``V``.

        GLMs only: ``∇²f_i = x~_i x~_i^T c_i`` (``c_i = d^2 f_i / d z_i^2``), so the product is
        ``sum_i w_i c_i (x~_i . v) x~_i``: the directional linear predictors ``x~_i . v`` (those of
        ``theta = v``), times the curvature, summed as a gradient.  ``O(l nnz)``, no ``p x p``.

        Parameters
        ----------
        theta1 : ndarray of shape (p,)
        X, y, weight
            Rows (dense or sparse), targets and optional weights.
        V : ndarray of shape (l, p)

        Returns
        -------
        HV : ndarray of shape (l, p)
        """
        c = self.curvature(theta1, X, y)
        return self.grad_from_response(self._curvature_times(c, self._z(V, X)), X, weight)

    @staticmethod
    def _curvature_times(c, zv):
        """``d^2 f_i / d z_i^2`` applied to directions ``zv`` (scalar curvature)."""
        return zv * c

    def start(self, X, y, weight=None):
        """Where the mode search starts ``(p,)``: zeros, unless the model knows better.

        Models whose targets have a location or scale of their own start there (the offsets and
        scales of ``y``), so that Newton's first Hessian is not far from positive definite.
        """
        return np.zeros(self.n_params)

    def evaluation_dtype(self, X):
        """The precision :meth:`newton_terms` rounds its position to on rows like ``X``, or None.

        None (this version): the position is used as given.  A model whose fused passes compute
        the linear predictor in ``X``'s precision returns that dtype: its passes evaluate the
        position rounded to it (the mode search iterates on those points, see
        :func:`~skbayes_sg.preprocessing._newton.newton_mode`).
        """
        return None

    def newton_terms(self, theta1, X, y, weight=None, hessian=True, value=True,
                     response_out=None):
        """``(sum_i w_i f_i or None, sum_i w_i ∇f_i (p,), sum_i w_i ∇²f_i (p, p) or None)``.

        One chunk of a full-data pass of the mode search at one position ``theta1``: the value
        (if ``value``), the gradient and (if ``hessian``) the exact Hessian, without the prior.
        A GLM given ``response_out`` (``(n,)`` or ``(n, K)``) also writes the rows' responses
        ``r_i`` there: what control variates store at their anchor (:meth:`anchor_terms`).
        This generic version calls ``nll``, ``grad_sum`` and ``hessian`` in float64; the scalar
        GLMs fuse them in ``X``'s precision (:mod:`skbayes_sg.models._fused`).
        """
        X, theta = as_float64(X), np.asarray(theta1, dtype=np.float64)[None]
        f = self.nll(theta, X, y)[0] if value else None
        total = None if f is None else float(f.sum() if weight is None else f @ weight)
        if response_out is None:
            grad = self.grad_sum(theta, X, y, weight)[0]
        else:
            response_out[...] = r = self.response(theta, X, y)[0]
            grad = self.grad_from_response(r[None], X, weight)[0]
        return total, grad, (self.hessian(theta1, X, y, weight) if hessian else None)

    def anchor_terms(self, theta1, X, y, weight=None, curvature=False):
        """``(sum_i w_i ∇f_i (p,), r_i[, c_i])`` of a chunk at one position ``theta1 (p,)`` (GLMs).

        The gradient of the rows and their responses ``r_i = d f_i / d z_i`` (``(n,)``, or
        ``(n, K)`` for softmax): what control variates store at their anchor; with
        ``curvature`` also :meth:`curvature` (what the curvature weights need at the same
        point).  This generic version runs in float64; the scalar GLMs fuse it in ``X``'s
        precision like :meth:`newton_terms`.
        """
        X, theta = as_float64(X), np.asarray(theta1, dtype=np.float64)[None]
        r = self.response(theta, X, y)
        g = self.grad_from_response(r, X, weight)[0]
        return (g, r[0], self.curvature(theta1, X, y)) if curvature else (g, r[0])

    def value_and_grad_sum(self, theta, X, y, weight=None):
        """``(sum_i w_i f_i (C,), sum_i w_i ∇f_i (C, p))`` of float64 rows (a model that can
        share work between the two overrides this)."""
        f = self.nll(theta, X, y)
        return (f.sum(axis=1) if weight is None else f @ weight), self.grad_sum(theta, X, y, weight)

    def predict_mean(self, draws, X):
        """The mean of ``predict_output(draws, X)`` over the draws: ``(n, K)`` or ``(n,)``."""
        return self.predict_output(draws, X).mean(axis=0)


@dataclass(frozen=True, eq=False)
class GaussianPrior:
    """Zero-mean Gaussian prior with diagonal precision.

    ``f_0(theta) = sum_j precision_j theta_j^2 / 2``.
    """

    precision: np.ndarray

    def value(self, theta):
        """Prior potential ``f_0`` per row of ``theta`` ``(C, p)`` -> ``(C,)``."""
        return 0.5 * np.einsum("cp,cp,p->c", theta, theta, self.precision)

    def grad(self, theta):
        """Gradient of ``f_0``: ``precision * theta``."""
        return theta * self.precision

    def hessian_diag(self, theta1):
        """Diagonal of ``∇²f_0`` at one position ``(p,)``."""
        return self.precision


@dataclass(frozen=True, eq=False)
class NoisePrior(GaussianPrior):
    """Gaussian prior on the weights, ``sigma^2 ~ InvGamma(a, b)`` on the noise.

    The noise enters theta as ``theta_k = log sigma`` (``precision_k`` should be 0).  In that
    coordinate, with the Jacobian, ``f_0 += 2 a theta_k + b exp(-2 theta_k)``: like ``2a``
    pseudo-observations with residual variance ``b / a``.  It keeps sigma away from 0, so a target
    that X fits exactly still has a proper posterior without a funnel.
    """

    index: int = -1
    a: float = 1.0
    b: float = 1.0

    def value(self, theta):
        t = theta[:, self.index]
        return super().value(theta) + 2.0 * self.a * t + self.b * np.exp(-2.0 * t)

    def grad(self, theta):
        g = super().grad(theta)
        g[:, self.index] += 2.0 * self.a - 2.0 * self.b * np.exp(-2.0 * theta[:, self.index])
        return g

    def hessian_diag(self, theta1):
        h = np.array(self.precision, dtype=float)
        h[self.index] += 4.0 * self.b * np.exp(-2.0 * theta1[self.index])
        return h


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
    return np.matmul(W, X.T if X.ndim == 2 else X.transpose(0, 2, 1))
