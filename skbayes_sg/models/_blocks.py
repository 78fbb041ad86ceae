"""A class-block Laplace covariance for softmax regression with many parameters.

The softmax likelihood Hessian over the ``(K, d + 1)`` weight matrix is
``H = sum_i (diag(s_i) - s_i s_i^T) (x) x~_i x~_i^T``: its diagonal blocks
``D_k = sum_i s_ik (1 - s_ik) x~_i x~_i^T`` are cheap (``K`` weighted Gram matrices) and its
off-diagonal blocks ``-sum_i s_ik s_il x~_i x~_i^T`` are many but each small, and they sum to
``-D_k`` over ``l != k`` (adding a constant to every class changes nothing).  The preconditioner
keeps the classes' exact blocks in ``G`` and couples them through the classes' sum::

    H ≈ G - U S^{-1} U^T,   G = blockdiag(D_k + P),   U = [D_1; ...; D_K],   S = sum_k D_k + P,

with ``P`` the prior precision of a column: block ``(k, l)`` of the subtracted term,
``D_k S^{-1} D_l``, stands in for ``sum_i s_ik s_il x~_i x~_i^T``, so that each block row sums over
``l`` to ``P + D_k S^{-1} P``, close to the exact ``P`` (the likelihood's rows sum to zero).  It is
positive definite (``U S^{-1} U^T <= U (sum_k D_k)^+ U^T``, and
``v^T G v - (sum_k D_k v_k)^T (sum_k D_k)^+ (sum_k D_k v_k) >= sum_k v_k^T P v_k`` by
Cauchy-Schwarz), and along the constant direction ``v_k = u``, which only the prior identifies,
its curvature is at most ``(K + 1) / K`` times the exact ``K u^T P u`` (``S`` holds ``P`` so that
it is invertible whatever the data).  With ``G_k = C_k C_k^T`` (Cholesky), ``S = E E^T`` and
``W = C^{-1} U E^{-T}``::

    H ≈ C (I - W W^T) C^T,   I - W^T W = E^{-1} (P + sum_k D_k G_k^{-1} P) E^{-T} = V diag(mu) V^T,
    Sigma = L L^T,   L = C^{-T} (I + W F W^T),   F = V diag(1 / (sqrt(mu) (1 + sqrt(mu)))) V^T,

since ``(I + W F W^T)^2 = (I - W W^T)^{-1}``; the middle form of ``I - W^T W`` has no cancellation
(its terms are positive), which matters where the prior is weak (``mu`` small).  Every product
costs ``O(K d^2)`` per row; nothing ``p x p`` is formed.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.linalg import solve_triangular

__all__ = ["BlockCovariance"]


def _rows(method):
    """``method`` on rows ``(C, p)``, and on any ``(..., p)`` as its rows (SGLD's noise blocks are
    ``(steps, C, p)``)."""
    def on_rows(self, x):
        x = np.asarray(x)
        return method(self, x.reshape(-1, x.shape[-1])).reshape(x.shape)
    on_rows.__name__, on_rows.__doc__ = method.__name__, method.__doc__
    return on_rows


@dataclass(frozen=True, eq=False)
class BlockCovariance:
    """``Sigma = L L^T`` of the module docstring, on the flat parameters of a softmax model.

    Parameters
    ----------
    order : ndarray of shape (p,)
        Flat indices such that ``theta[..., order]`` reshaped ``(K, d1)`` is the weight matrix.
    c_inv : ndarray of shape (K, d1, d1)
        ``C_k^{-1}`` (lower triangular).
    W : ndarray of shape (K * d1, d1)
        ``C^{-1} U E^{-T}``, class blocks stacked.
    V : ndarray of shape (d1, d1)
        Eigenvectors of ``I - W^T W``.
    mu : ndarray of shape (d1,)
        Its eigenvalues, in ``(0, 1]``.
    """

    order: np.ndarray
    c_inv: np.ndarray
    W: np.ndarray
    V: np.ndarray
    mu: np.ndarray

    ndim = 0  # neither dense (2) nor diagonal (1)
    kind = "block"

    def _blocks(self, rows):
        """Rows ``(C, p)`` as the class blocks ``(K, d1, C)``."""
        K, d1 = self.c_inv.shape[:2]
        return rows[:, self.order].reshape(-1, K, d1).transpose(1, 2, 0)

    def _flat(self, blocks):
        """Class blocks ``(K, d1, C)`` back to rows ``(C, p)``."""
        out = np.empty((blocks.shape[2], self.order.size), dtype=blocks.dtype)
        out[:, self.order] = blocks.transpose(2, 0, 1).reshape(blocks.shape[2], -1)
        return out

    def _middle(self, scale):
        """``V diag(scale) V^T`` ``(d1, d1)``."""
        return (self.V * scale) @ self.V.T

    @cached_property
    def _F(self):
        """``F`` of the module docstring: built once, used by every step's two products."""
        root = np.sqrt(self.mu)
        return self._middle(1.0 / (root * (1.0 + root)))

    def _core(self, blocks, F):
        """Blocks ``(K, d1, C)`` times ``I + W F W^T`` (rows ``a`` become ``a + ((a W) F) W^T``)."""
        K, d1, C = blocks.shape
        flat = blocks.transpose(2, 0, 1).reshape(C, K * d1)
        flat = flat + ((flat @ self.W) @ F) @ self.W.T
        return flat.reshape(C, K, d1).transpose(1, 2, 0)

    @property
    def variances(self):
        """``diag(Sigma)`` ``(p,)``: ``diag(G^{-1})`` plus the low-rank term's."""
        K, d1 = self.c_inv.shape[:2]
        base = np.einsum("kij,kij->kj", self.c_inv, self.c_inv)  # diag(C^-T C^-1)
        Z = np.matmul(self.c_inv.transpose(0, 2, 1), self.W.reshape(K, d1, d1))
        Z = Z @ (self.V / np.sqrt(self.mu))
        total = base + np.einsum("kij,kij->ki", Z, Z)
        return self._flat(total.reshape(K, d1, 1))[0]

    @_rows
    def factor_rows(self, z):
        """Rows ``z L^T``: standard normal rows become draws of ``N(0, Sigma)``."""
        b = self._core(self._blocks(z), self._F)
        return self._flat(np.matmul(self.c_inv.transpose(0, 2, 1), b))

    @_rows
    def factor_t_rows(self, g):
        """Rows ``g L``: a gradient in whitened coordinates."""
        a = np.matmul(self.c_inv, self._blocks(g))
        return self._flat(self._core(a, self._F))

    @_rows
    def inverse_rows(self, d):
        """Rows ``d L^{-T}``: a displacement whitened (``L^{-1} = (I - W W^T)^{1/2} C^T``)."""
        blocks = self._blocks(d)
        ct = np.stack([solve_triangular(c, b, lower=True, trans="T")
                       for c, b in zip(self.c_inv, blocks)])
        return self._flat(self._core(ct, self._middle(-1.0 / (1.0 + np.sqrt(self.mu)))))

    @_rows
    def apply(self, g):
        """Rows ``g Sigma``."""
        return self.factor_rows(self.factor_t_rows(g))
