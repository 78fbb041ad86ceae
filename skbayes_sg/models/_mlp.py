"""Multi-layer perceptron classifier likelihood (softmax output)."""

from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
from scipy.special import expit, logsumexp, softmax

from ..utils import row_chunks
from ._arrays import as_compute
from ._base import Likelihood
from ._predictive import DEFAULT_CHUNKS, network_mean
from ._softmax import softmax_inplace

__all__ = ["ACTIVATIONS", "MLPModel"]

_MAX_PREDICT_ELEMENTS = 10_000_000  # values of predict_output's temporaries per draw chunk
_FISHER_CHUNK = 2048  # rows per chunk of the Fisher diagonal's backward passes


def _swap_last(a):
    """``a (..., b, m)`` as ``(..., m, b)`` (a view)."""
    return a.T if a.ndim == 2 else a.transpose(0, 2, 1)


def _relu(z):
    return np.maximum(z, 0.0, out=z)


def _tanh(z):
    return np.tanh(z, out=z)


def _logistic(z):
    return expit(z, out=z)


def _relu_derivative(a):
    return a > 0.0


def _tanh_derivative(a):
    return 1.0 - a * a


def _logistic_derivative(a):
    return a * (1.0 - a)


#: name -> (in-place activation ``f(z)``, derivative ``f'`` from the output ``a = f(z)``).
ACTIVATIONS = MappingProxyType({
    "relu": (_relu, _relu_derivative),
    "tanh": (_tanh, _tanh_derivative),
    "logistic": (_logistic, _logistic_derivative),
})


@dataclass(frozen=True)
class MLPModel(Likelihood):
    """Feed-forward network with a softmax output over ``K >= 2`` classes.

    Parameters
    ----------
    layer_units : tuple of int
        ``(d, h_1, ..., h_L, K)``: input width, hidden widths, classes.
    activation : {"relu", "tanh", "logistic"}, default="relu"
        Hidden-layer activation (a key of :data:`ACTIVATIONS`).
    fit_intercept : bool, default=True
        When False no layer has a bias in ``theta``; :meth:`unpack` still returns zero intercepts.

    Attributes
    ----------
    n_params : int
        Length ``p`` of ``theta``: for each layer ``l``, ``coef_l`` of shape ``(n_in, n_out)``
        (sklearn ``coefs_[l]``) row-major, then ``intercept_l (n_out,)``.

    Notes
    -----
    ``a_0 = x``, ``a_{l+1} = act(a_l W_l + b_l)``, logits ``z = a_L W_L + b_L``,
    ``f_i = logsumexp(z_i) - z_i[y_i]``.  Gradients by backpropagation from
    ``delta_L = softmax(z) - onehot(y)``, all chains in one batched pass.
    """

    layer_units: tuple
    activation: str = "relu"
    fit_intercept: bool = True
    n_params: int = field(init=False, repr=False, compare=False)
    random_init = True
    multimodal = True
    indefinite_hessian = True
    feature_axes = {"coef_0": 0}

    def __post_init__(self):
        units = tuple(int(u) for u in self.layer_units)
        object.__setattr__(self, "layer_units", units)
        coef_indptr, intercept_indptr, start = [], [], 0
        for n_in, n_out in zip(units[:-1], units[1:]):
            coef_indptr.append((start, start + n_in * n_out, (n_in, n_out)))
            start += n_in * n_out
            stop = start + n_out if self.fit_intercept else start
            intercept_indptr.append((start, stop))
            start = stop
        object.__setattr__(self, "_coef_indptr", tuple(coef_indptr))
        object.__setattr__(self, "_intercept_indptr", tuple(intercept_indptr))
        object.__setattr__(self, "_classes", np.arange(units[-1]))
        object.__setattr__(self, "n_params", start)
        object.__setattr__(self, "n_outputs", units[-1])

    @property
    def n_layers(self):
        """Number of weight layers ``L + 1``."""
        return len(self._coef_indptr)

    def param_shapes(self):
        """Names and shapes of the blocks of ``theta``, in pack order."""
        shapes = {}
        for l, (_, _, shape) in enumerate(self._coef_indptr):
            shapes[f"coef_{l}"] = shape
            if self.fit_intercept:
                shapes[f"intercept_{l}"] = (shape[1],)
        return shapes

    def unpack(self, theta):
        """``theta (..., p)`` -> ``coef_l (..., n_in, n_out)``, ``intercept_l (..., n_out)``."""
        theta = np.asarray(theta)
        lead, out = theta.shape[:-1], {}
        for l, ((s, e, shape), (bs, be)) in enumerate(zip(self._coef_indptr,
                                                          self._intercept_indptr)):
            out[f"coef_{l}"] = theta[..., s:e].reshape(*lead, *shape)
            out[f"intercept_{l}"] = (theta[..., bs:be] if self.fit_intercept
                                     else np.zeros((*lead, shape[1]), dtype=theta.dtype))
        return out

    def prior_precision(self, prior_scale, intercept_scale=None, fan_in=False):
        """Diagonal prior precision ``(p,)``: ``1/prior_scale^2`` on weights (``fan_in``:
        ``n_in_l / prior_scale^2`` on layer ``l``'s, so every pre-activation has prior sd
        ``prior_scale`` times its inputs' root mean square), ``1/intercept_scale^2`` on biases
        (default ``10 * prior_scale``)."""
        intercept_scale = 10.0 * prior_scale if intercept_scale is None else intercept_scale
        prec = np.full(self.n_params, 1.0 / prior_scale**2)
        for s, e, (n_in, _) in self._coef_indptr if fan_in else ():
            prec[s:e] *= n_in
        for bs, be in self._intercept_indptr:
            prec[bs:be] = 1.0 / intercept_scale**2
        return prec

    def init_position(self, rng):
        """Glorot-uniform initial ``theta (p,)``, as scikit-learn's MLP does."""
        factor = 2.0 if self.activation == "logistic" else 6.0
        theta = np.empty(self.n_params)
        for (s, e, (n_in, n_out)), (bs, be) in zip(self._coef_indptr, self._intercept_indptr):
            bound = np.sqrt(factor / (n_in + n_out))
            theta[s:e] = rng.uniform(-bound, bound, e - s)
            theta[bs:be] = rng.uniform(-bound, bound, be - bs)
        return theta

    def _forward(self, theta, X):
        """Hidden activations ``[X, a_1, ..., a_L]`` and logits ``(C, b, K)``: a view of
        class-major ``(C, K, b)`` logits, whose softmax then reduces over contiguous rows."""
        act = ACTIVATIONS[self.activation][0]
        X = as_compute(X, theta.dtype)
        C, acts, a = theta.shape[0], [X], X
        last = self.n_layers - 1
        for l, ((s, e, shape), (bs, be)) in enumerate(zip(self._coef_indptr,
                                                          self._intercept_indptr)):
            W = theta[:, s:e].reshape(C, *shape)
            if l == last:
                z = np.matmul(W.transpose(0, 2, 1), _swap_last(a))
                if bs != be:
                    z += theta[:, bs:be, None]
                return acts, z.transpose(0, 2, 1)
            z = np.matmul(a, W)
            if bs != be:
                z += theta[:, None, bs:be]
            a = act(z)
            acts.append(a)

    def nll(self, theta, X, y):
        """Per-example negative log-likelihood ``(C, b)``."""
        z = self._forward(theta, X)[1]
        idx = np.asarray(y).astype(np.intp, copy=False)[..., None]
        zy = np.take_along_axis(z, idx if idx.ndim == 3 else idx[None], axis=-1)[..., 0]
        return logsumexp(z, axis=-1) - zy

    def _backward(self, theta, acts, delta, out):
        """Backpropagate ``delta (C, b, K)`` and write ``sum_i`` gradients into ``out``."""
        deriv = ACTIVATIONS[self.activation][1]
        C = theta.shape[0]
        for l in range(self.n_layers - 1, -1, -1):
            (s, e, shape), (bs, be) = self._coef_indptr[l], self._intercept_indptr[l]
            np.matmul(_swap_last(acts[l]), delta, out=out[:, s:e].reshape(C, *shape))
            if bs != be:
                delta.sum(axis=1, out=out[:, bs:be])
            if l:
                delta = np.matmul(delta, theta[:, s:e].reshape(C, *shape).transpose(0, 2, 1))
                delta *= deriv(acts[l])
        return out

    def grad_sum(self, theta, X, y, weight=None):
        """``sum_i w_i grad f_i`` as ``(C, p)``, one batched backward pass."""
        acts, z = self._forward(theta, X)
        delta = softmax_inplace(z.transpose(0, 2, 1))  # class-major (C, K, b)
        delta -= self._classes[:, None] == np.asarray(y)[..., None, :]
        if weight is not None:
            delta *= weight[..., None, :]
        return self._backward(theta, acts, z,
                              np.empty((theta.shape[0], self.n_params), dtype=z.dtype))

    def per_example_grad(self, theta1, X, y):
        """Per-example gradients ``(b, p)`` at one position ``theta1 (p,)``."""
        acts, z = self._forward(theta1[None], X)
        delta = softmax(z[0], axis=-1)
        delta -= y[:, None] == self._classes
        return self._per_example_backward(theta1, acts, delta,
                                          np.empty((X.shape[0], self.n_params)))

    def _per_example_backward(self, theta1, acts, delta, out):
        """Backpropagate ``delta (b, K)`` at ``theta1 (p,)``; per-example gradients into ``out``."""
        deriv = ACTIVATIONS[self.activation][1]
        n = out.shape[0]
        for l in range(self.n_layers - 1, -1, -1):
            (s, e, shape), (bs, be) = self._coef_indptr[l], self._intercept_indptr[l]
            a = acts[l] if l == 0 else acts[l][0]
            np.multiply(a[:, :, None], delta[:, None, :], out=out[:, s:e].reshape(n, *shape))
            out[:, bs:be] = delta[:, :be - bs]
            if l:
                delta = (delta @ theta1[s:e].reshape(shape).T) * deriv(a)
        return out

    def hessian(self, theta1, X, y, weight=None):
        """Not available: the MLP has no cheap exact Hessian."""
        raise NotImplementedError("MLPModel has no exact Hessian (p x p, indefinite); use "
                                  "hessian_diag, the Gauss-Newton (Fisher) diagonal.")

    def hessian_diag(self, theta1, X, y=None, weight=None, *, chunk_rows=_FISHER_CHUNK):
        """Diagonal of the Gauss-Newton (= Fisher) matrix ``(p,)``.

        ``sum_i w_i sum_k p_ik (grad log p(k | x_i))^2``: the ``K`` backward
        passes from ``delta = e_k - p_i`` run together, chunked over rows (``chunk_rows`` at a
        time), and each layer uses ``sum_i (a_i^2) (x) (sum_k p_ik delta_ik^2)``, so
        no ``(b, p)`` array is formed.  ``y`` is unused.
        """
        out, X = np.zeros(self.n_params), np.asarray(X)
        for sl in row_chunks(X.shape[0], rows=chunk_rows):
            self._fisher_chunk(theta1, X[sl], None if weight is None else weight[sl], out)
        return out

    def _fisher_chunk(self, theta1, X, weight, out):
        deriv = ACTIVATIONS[self.activation][1]
        X = np.asarray(X, dtype=np.float32 if theta1.dtype == np.float32 else np.float64)
        acts, z = self._forward(theta1[None], X)
        acts = [X] + [a[0] for a in acts[1:]]
        p = softmax(z[0], axis=-1)  # (b, K)
        c = p if weight is None else p * weight[:, None]
        delta = np.eye(p.shape[1], dtype=p.dtype)[:, None, :] - p  # (K, b, K): e_k - p_i
        # per layer sum_k c_ik delta_ik^2
        return self._fisher_layers(theta1, acts, delta, deriv, out,
                                   lambda d: np.einsum("kbj,bk->bj", d * d, c))

    def _fisher_layers(self, theta1, acts, delta, deriv, out, weigh):
        """Add each layer's Fisher diagonal to ``out``, from the output layer down: ``weigh
        (delta)`` gives the rows' weights ``q (b, units)`` of that layer's pre-activations, and
        ``delta`` is carried one layer down through the weights and the activation's slope."""
        for l in range(self.n_layers - 1, -1, -1):
            (s, e, shape), (bs, be) = self._coef_indptr[l], self._intercept_indptr[l]
            q, a = weigh(delta), acts[l]
            out[s:e] += ((a * a).T @ q).ravel()
            out[bs:be] += q.sum(axis=0)[:be - bs]
            if l:
                delta = (delta @ theta1[s:e].reshape(shape).T) * deriv(a)
        return out

    def predict_mean(self, draws, X, *, chunks=DEFAULT_CHUNKS):
        """Class probabilities ``(n, K)`` averaged over draws ``(S, p)`` (:func:`network_mean`).

        Groups of draws share one matrix product per layer (``chunks``: the budgets); float32
        for float32 ``X``.
        """
        named = self.unpack(np.atleast_2d(draws))
        layers = [(named[f"coef_{l}"], named[f"intercept_{l}"]) for l in range(self.n_layers)]
        return network_mean(layers, ACTIVATIONS[self.activation][0], X, chunks)

    def predict_output(self, draws, X, *, max_elements=_MAX_PREDICT_ELEMENTS):
        """Class probabilities ``(S, n, K)`` for draws ``(S, p)``, in chunks of draws (their
        widest layer at most about ``max_elements`` values)."""
        draws = np.atleast_2d(draws)
        S, n = draws.shape[0], X.shape[0]
        out = np.empty((S, n, self.layer_units[-1]))
        for sl in row_chunks(S, n * max(self.layer_units[1:]), elements=max_elements):
            out[sl] = softmax(self._forward(draws[sl], X)[1], axis=-1)
        return out
