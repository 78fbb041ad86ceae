"""Multi-layer perceptron regression likelihood (one identity output, Gaussian noise)."""

from dataclasses import dataclass

import numpy as np

from ..utils import row_chunks
from ._mlp import _FISHER_CHUNK, _MAX_PREDICT_ELEMENTS, ACTIVATIONS, MLPModel

__all__ = ["MLPRegressionModel"]


@dataclass(frozen=True)
class MLPRegressionModel(MLPModel):
    """Feed-forward network with one identity output and inferred Gaussian noise.

    Parameters
    ----------
    layer_units : tuple of int
        ``(d, h_1, ..., h_L, 1)``: input width, hidden widths, one output.
    activation : {"relu", "tanh", "logistic"}, default="relu"
        Hidden-layer activation (a key of :data:`~._mlp.ACTIVATIONS`).
    fit_intercept : bool, default=True
        When False no layer has a bias in ``theta``.

    Attributes
    ----------
    n_params : int
        The network's parameters, packed as :class:`MLPModel` packs them, then ``log sigma``.

    Notes
    -----
    ``f_i = (y_i - z_i)^2 / (2 sigma^2) + log sigma`` (constant dropped), ``z_i`` the network's
    output.  Backpropagation starts from ``d f_i / d z_i = (z_i - y_i) / sigma^2``;
    ``d f_i / d log sigma = 1 - (y_i - z_i)^2 / sigma^2``.  :meth:`hessian_diag` is the
    Gauss-Newton (Fisher) diagonal: ``sum_i w_i (d z_i / d theta)^2 / sigma^2`` on the network
    and ``2 sum_i w_i`` on ``log sigma``.
    """

    is_regression = True

    def __post_init__(self):
        if int(self.layer_units[-1]) != 1:
            raise ValueError(f"A regression network has one output unit, got layer_units="
                             f"{tuple(self.layer_units)!r}.")
        super().__post_init__()
        object.__setattr__(self, "n_params", self.n_params + 1)

    def param_shapes(self):
        """Names and shapes of the blocks of ``theta``, in pack order."""
        return {**super().param_shapes(), "log_noise_std": ()}

    def unpack(self, theta):
        """The network's blocks (:meth:`MLPModel.unpack`) and ``noise_std (...)``."""
        theta = np.asarray(theta)
        return {**super().unpack(theta), "noise_std": np.exp(theta[..., -1])}

    def prior_precision(self, prior_scale, intercept_scale=None, fan_in=False):
        """The network's diagonal prior precision and 0 on ``log sigma`` (a ``NoisePrior``'s)."""
        prec = super().prior_precision(prior_scale, intercept_scale, fan_in)
        prec[-1] = 0.0
        return prec

    def init_position(self, rng):
        """Glorot-uniform network weights and ``log sigma = 0`` (targets of unit scale)."""
        theta = super().init_position(rng)
        theta[-1] = 0.0
        return theta

    def _residual(self, theta, X, y):
        """Hidden activations, residuals ``y - z`` ``(C, b)`` and ``1 / sigma^2`` ``(C, 1)``."""
        acts, z = self._forward(theta, X)
        return acts, np.subtract(y, z[..., 0], dtype=z.dtype), np.exp(-2.0 * theta[:, -1:])

    def nll(self, theta, X, y):
        """Per-example negative log-likelihood ``(C, b)``."""
        _, e, iv = self._residual(theta, X, y)
        return 0.5 * iv * e * e + theta[:, -1:]

    def grad_sum(self, theta, X, y, weight=None):
        """``sum_i w_i grad f_i`` as ``(C, p)``, one batched backward pass."""
        acts, e, iv = self._residual(theta, X, y)
        delta = (-iv * e).astype(e.dtype, copy=False)
        q = 1.0 - iv * e * e
        if weight is not None:
            delta *= weight
            q *= weight
        out = np.empty((theta.shape[0], self.n_params), dtype=e.dtype)
        self._backward(theta, acts, delta[..., None], out)
        out[:, -1] = q.sum(axis=-1)
        return out

    def per_example_grad(self, theta1, X, y):
        """Per-example gradients ``(b, p)`` at one position ``theta1 (p,)``."""
        acts, e, iv = self._residual(theta1[None], X, y)
        out = np.empty((X.shape[0], self.n_params))
        self._per_example_backward(theta1, acts, (-iv * e)[0][:, None], out)
        out[:, -1] = 1.0 - iv[0, 0] * e[0] * e[0]
        return out

    def hessian_diag(self, theta1, X, y=None, weight=None, *, chunk_rows=_FISHER_CHUNK):
        """Gauss-Newton (Fisher) diagonal ``(p,)`` (rows ``chunk_rows`` at a time); ``y`` is
        unused."""
        out = super().hessian_diag(theta1, X, y, weight, chunk_rows=chunk_rows)
        out[-1] = 2.0 * (X.shape[0] if weight is None else float(np.sum(weight)))
        return out

    def _fisher_chunk(self, theta1, X, weight, out):
        deriv = ACTIVATIONS[self.activation][1]
        X = np.asarray(X, dtype=np.float32 if theta1.dtype == np.float32 else np.float64)
        acts = self._forward(theta1[None], X)[0]
        acts = [X] + [a[0] for a in acts[1:]]
        c = np.full(X.shape[0], np.exp(-2.0 * theta1[-1]))
        if weight is not None:
            c = c * weight
        delta = np.ones((X.shape[0], 1), dtype=X.dtype)  # d z_i / d (output pre-activation)
        return self._fisher_layers(theta1, acts, delta, deriv, out,
                                   lambda d: d * d * c[:, None])

    def predict_mean(self, draws, X):
        """Predictive mean ``(n,)`` of the network's output over draws ``(S, p)``."""
        return self.predict_output(draws, X).mean(axis=0)

    def predict_output(self, draws, X, *, max_elements=_MAX_PREDICT_ELEMENTS):
        """Network outputs ``(S, n)`` (the predictive means) for draws ``(S, p)``, in chunks of
        draws (about ``max_elements`` values)."""
        draws = np.atleast_2d(draws)
        S, n = draws.shape[0], X.shape[0]
        out = np.empty((S, n))
        for sl in row_chunks(S, n * max(self.layer_units[1:]), elements=max_elements):
            out[sl] = self._forward(draws[sl], X)[1][..., 0]
        return out
