"""The records that flow through ``fit``: the posterior and its Laplace approximation.

Both are small frozen dataclasses, built once per fit and never mutated: ``Posterior`` is what is
sampled (model, prior, data, row multiplicities), ``Laplace`` the Gaussian approximation at its
mode.  Every layer above the models takes them as arguments instead of loose tuples.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..utils import row_chunks
from ._base import as_float64

__all__ = ["Laplace", "Posterior"]


@dataclass(frozen=True, eq=False)
class Posterior:
    """``U(theta) = f_0(theta) + sum_i m_i f_i(theta)`` on the data ``(X, y)``.

    Parameters
    ----------
    model, prior
        A likelihood of :mod:`skbayes_sg.models` and its prior.
    X : ndarray of shape (n_rows, d)
    y : ndarray of shape (n_rows,)
        Encoded targets (see :mod:`skbayes_sg.models._base`).
    weight : ndarray of shape (n_rows,), optional
        Row multiplicities ``m_i`` (compression); None means all ones.
    """

    model: object
    prior: object
    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray = None

    @property
    def n_rows(self):
        """Number of stored rows."""
        return self.X.shape[0]

    @property
    def n_data(self):
        """``N = sum_i m_i`` (the data size of the papers)."""
        return float(self.n_rows if self.weight is None else self.weight.sum())

    def rows_weight(self, idx):
        """Multiplicities of the rows ``idx`` (None when unweighted)."""
        return None if self.weight is None else self.weight[idx]

    def merge_weight(self, idx, w):
        """Per-row weights ``w_i m_i`` of a minibatch (None when both are one)."""
        if self.weight is None:
            return w
        return self.weight[idx] if w is None else w * self.weight[idx]

    def row_sum(self, fn, theta, width=1):
        """``sum over chunks of fn(theta, X_chunk (float64), y_chunk, m_chunk)``."""
        total = None
        for sl in row_chunks(self.n_rows, width):
            part = fn(theta, as_float64(self.X[sl]), self.y[sl], self.rows_weight(sl))
            total = part if total is None else total + part
        return total

    def full_grad(self, theta):
        """Exact ``∇U`` for the rows of ``theta`` ``(C, p)``."""
        return self.prior.grad(theta) + self.row_sum(self.model.grad_sum, theta)

    def potential(self, theta):
        """Exact ``U`` for the rows of ``theta`` ``(C, p)`` -> ``(C,)``."""
        def nll(t, X, y, w):
            f = self.model.nll(t, X, y)
            return f.sum(axis=1) if w is None else f @ w

        return self.prior.value(theta) + self.row_sum(nll, theta)

    def subset(self, idx):
        """The rows ``idx`` with multiplicities scaled so ``n_data`` is kept."""
        w = self.rows_weight(idx)
        scale = self.n_data / (idx.size if w is None else w.sum())
        w = np.full(idx.size, scale) if w is None else w * scale
        return replace(self, X=self.X[idx], y=self.y[idx], weight=w)


@dataclass(frozen=True, eq=False)
class Laplace:
    """``N(mode, covariance)``: the Laplace approximation at the posterior mode.

    Parameters
    ----------
    mode : ndarray of shape (p,)
    covariance : ndarray of shape (p, p) or (p,)
        Dense, or the variances of a diagonal approximation.
    hessian : ndarray of shape (p, p), optional
        The dense Hessian of ``U`` at the mode when it was computed.
    """

    mode: np.ndarray
    covariance: np.ndarray
    hessian: np.ndarray = None

    @property
    def dense(self):
        """True for a dense covariance."""
        return self.covariance.ndim == 2

    @property
    def variances(self):
        """Marginal variances ``(p,)``."""
        return np.diag(self.covariance) if self.dense else self.covariance

    @property
    def factor(self):
        """``L`` with ``L L^T = covariance``: lower Cholesky ``(p, p)`` or sds ``(p,)``."""
        cov = self.covariance
        return np.linalg.cholesky(0.5 * (cov + cov.T)) if self.dense else np.sqrt(cov)

    def draws(self, rng, n, scale=1.0):
        """``n`` draws ``mode + scale L z`` ``(n, p)``."""
        z = rng.standard_normal((n, self.mode.shape[0]))
        L = self.factor
        return self.mode + scale * (z @ L.T if self.dense else z * L)
