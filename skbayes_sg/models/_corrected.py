"""A structured covariance corrected along a few whitened directions.

A structured Laplace factor ``L`` (Kronecker, low rank) leaves the whitened Hessian
``G = L^T H L`` near ``I`` except along some directions it gets wrong.  Given orthonormal columns
``W (p, k)`` and Rayleigh quotients ``theta_j = w_j^T G w_j`` of eigenvectors of ``W^T G W``, the
corrected factor is ``L T`` with::

    T = I + W diag(c) W^T,   c_j = theta_j^{-1/2} - 1,   T^{-1} = I + W diag(1/(1+c) - 1) W^T,

so ``(L T)^T H (L T)`` has ``w_j^T (.) w_j = 1``: the directions are rescaled to the posterior's
own width, and everything orthogonal to ``W`` is untouched.  Each product costs the base factor's
plus ``O(k p)`` per row; ``Sigma = L T^2 L^T`` stays positive definite for any ``c > -1``.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["CorrectedCovariance"]


@dataclass(frozen=True, eq=False)
class CorrectedCovariance:
    """``Sigma = (L T)(L T)^T`` of the module docstring.

    Parameters
    ----------
    base : structured covariance
        Applies ``L`` (``factor_rows``, ``factor_t_rows``, ``inverse_rows``, ``variances``).
    W : ndarray of shape (p, k)
        Orthonormal whitened directions.
    c : ndarray of shape (k,)
        ``theta^{-1/2} - 1`` per direction (> -1).
    """

    base: object
    W: np.ndarray
    c: np.ndarray

    ndim = 0  # a structured covariance: it applies its own factor

    @property
    def kind(self):
        return self.base.kind

    def _t(self, rows, c):
        """Rows ``u (I + W diag(c) W^T)``."""
        return rows + ((rows @ self.W) * c) @ self.W.T

    @property
    def variances(self):
        """``diag(Sigma)`` ``(p,)``: the base's plus ``sum_j ((1 + c_j)^2 - 1) (L w_j)^2``."""
        LW = self.base.factor_rows(self.W.T)  # rows (L w_j)^T
        return self.base.variances + ((1.0 + self.c) ** 2 - 1.0) @ LW**2

    def factor_rows(self, z):
        """Rows ``z (L T)^T``: standard normal rows become draws of ``N(0, Sigma)``."""
        return self.base.factor_rows(self._t(z, self.c))

    def factor_t_rows(self, g):
        """Rows ``g L T``: a gradient in whitened coordinates."""
        return self._t(self.base.factor_t_rows(g), self.c)

    def inverse_rows(self, d):
        """Rows ``d (L T)^{-T}``: a displacement whitened."""
        return self._t(self.base.inverse_rows(d), 1.0 / (1.0 + self.c) - 1.0)

    def apply(self, g):
        """Rows ``g Sigma``."""
        return self.factor_rows(self.factor_t_rows(g))
