"""A low-rank-plus-diagonal Laplace covariance, for many parameters.

The posterior precision ``H`` (the Hessian of ``U`` at the mode) is whitened by its own diagonal,
``A = S H S`` with ``S = diag(H)^{-1/2}`` (so ``A`` has a unit diagonal), and ``A`` is replaced by
``I + V (Lambda - I) V^T``: its top-``k`` eigenpairs ``(lambda_j, v_j)`` kept, every other
eigenvalue taken as 1 (the diagonal approximation).  Then, with ``a_j = lambda_j^{-1/2} - 1``::

    Sigma = S (I + V diag(1/lambda - 1) V^T) S,      L = S (I + V diag(a) V^T),  L L^T = Sigma,

since ``(I + V diag(a) V^T)^2 = I + V diag((1 + a)^2 - 1) V^T`` for orthonormal ``V``; and
``L^{-1} = (I + V diag(lambda^{1/2} - 1) V^T) S^{-1}``.  Every product costs ``O(p k)``; nothing
``p x p`` is formed.  With ``k = p`` it is the exact inverse Hessian.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._sparse import row_sq_norms

__all__ = ["LowRankCovariance"]


@dataclass(frozen=True, eq=False)
class LowRankCovariance:
    """``Sigma = S (I + V diag(1/lambda - 1) V^T) S`` (see the module docstring).

    Parameters
    ----------
    scale : ndarray of shape (p,)
        ``S = diag(H)^{-1/2}``: the standard deviations of the diagonal approximation.
    basis : ndarray of shape (p, k)
        Orthonormal top eigenvectors ``V`` of the whitened precision ``S H S``.
    eigenvalues : ndarray of shape (k,)
        Their eigenvalues ``lambda_j > 0``.
    """

    scale: np.ndarray
    basis: np.ndarray
    eigenvalues: np.ndarray

    ndim = 0  # neither a dense (2) nor a diagonal (1) covariance array
    kind = "lowrank"

    def _mix(self, u, power):
        """Rows ``u (I + V diag(lambda^power - 1) V^T)`` (the factor's core, symmetric)."""
        V = self.basis
        return u + ((u @ V) * (self.eigenvalues ** power - 1.0)) @ V.T

    @property
    def variances(self):
        """``diag(Sigma)`` ``(p,)``."""
        V2 = self.basis * self.basis
        return self.scale**2 * (1.0 + V2 @ (1.0 / self.eigenvalues - 1.0))

    def factor_rows(self, z):
        """Rows ``z L^T`` (= ``(L z)^T``): standard normal rows become draws of ``N(0, Sigma)``."""
        return self._mix(z, -0.5) * self.scale

    def factor_t_rows(self, g):
        """Rows ``g L`` (= ``(L^T g)^T``): a gradient in whitened coordinates."""
        return self._mix(g * self.scale, -0.5)

    def inverse_rows(self, d):
        """Rows ``d L^{-T}`` (= ``(L^{-1} d)^T``): a displacement whitened."""
        return self._mix(d / self.scale, 0.5)

    def apply(self, g):
        """Rows ``g Sigma``."""
        return self._mix(g * self.scale, -1.0) * self.scale

    def quadratic_rows(self, X1):
        """``x_i^T Sigma x_i`` for the rows of ``X1`` (dense or CSR) ``(n,)``."""
        T = X1.multiply(self.scale).tocsr() if sp.issparse(X1) else X1 * self.scale  # X1 S
        P = np.asarray(T @ self.basis)
        return row_sq_norms(T) + (P * P) @ (1.0 / self.eigenvalues - 1.0)
