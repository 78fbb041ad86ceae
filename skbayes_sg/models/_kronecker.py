"""A Kronecker-factored Laplace covariance, for softmax regression with many parameters.

The softmax likelihood Hessian is ``sum_i S_i (x) x~_i x~_i^T`` with ``S_i = diag(p_i) - p_i p_i^T``
and ``x~_i = (x_i, 1)``: over the ``(K, d + 1)`` weight matrix ``Theta = [coef, intercept]`` it
is approximated by one Kronecker product ``A (x) B``, ``A = mean_i S_i`` (``K x K``) and
``B = sum_i x~_i x~_i^T`` (``(d+1) x (d+1)``) -- the K-FAC approximation.  The prior precision is
``I (x) P`` with ``P = diag(pi)`` (one precision per feature column, the same for every class),
so, with ``B~ = P^{-1/2} B P^{-1/2} = R M R^T`` and ``A = Q Lambda Q^T``::

    H = (I (x) P^{1/2}) (A (x) B~ + I) (I (x) P^{1/2}),
    Sigma = L L^T,   L = (I (x) P^{-1/2}) (Q (x) R) D^{-1/2},   D = Lambda (x) M + 1,

exactly (no further approximation beyond ``A (x) B``).  On a ``(K, d+1)`` matrix ``U``,
``(Q (x) R) vec(U) = vec(Q U R^T)``, so every product costs ``O(K^2 d + K d^2)`` per row and
nothing ``p x p`` is formed.  ``A`` has the null vector ``1`` (adding a constant to every class
changes nothing): ``D = 1`` there, the prior alone identifies that direction, as it should.

References
----------
Martens, J. and Grosse, R. (2015). Optimizing neural networks with Kronecker-factored approximate
curvature. ICML.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["KroneckerCovariance"]


@dataclass(frozen=True, eq=False)
class KroneckerCovariance:
    """``Sigma = L L^T`` of the module docstring, on the flat parameters of a softmax model.

    Parameters
    ----------
    order : ndarray of shape (p,)
        Flat indices such that ``theta[..., order]`` reshaped ``(K, d1)`` is ``Theta``.
    prior_sd : ndarray of shape (d1,)
        ``P^{-1/2}``: the prior sd of each column (features, then the intercept).
    Q, R : ndarray of shape (K, K) and (d1, d1)
        Orthonormal eigenvectors of ``A`` and of ``B~``.
    d_inv_sqrt : ndarray of shape (K, d1)
        ``D^{-1/2}``.
    """

    order: np.ndarray
    prior_sd: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    d_inv_sqrt: np.ndarray

    ndim = 0  # neither dense (2) nor diagonal (1)
    kind = "kronecker"

    def _mat(self, rows):
        K, d1 = self.d_inv_sqrt.shape
        return rows[..., self.order].reshape(*rows.shape[:-1], K, d1)

    def _flat(self, mats):
        out = np.empty((*mats.shape[:-2], self.order.size), dtype=mats.dtype)
        out[..., self.order] = mats.reshape(*mats.shape[:-2], -1)
        return out

    def _rotate(self, U, transpose=False):
        """``Q U R^T`` (or ``Q^T U R``) for each ``(K, d1)`` matrix of ``U``.

        The ``R`` side is one product over all the stacked rows: a stack of ``(K, d1)`` products
        runs one small-``K`` product per matrix, which is slower.
        """
        Q, R = (self.Q.T, self.R.T) if transpose else (self.Q, self.R)
        QU = np.matmul(Q, U)  # a fresh contiguous stack
        return (QU.reshape(-1, QU.shape[-1]) @ R.T).reshape(QU.shape)

    @property
    def variances(self):
        """``diag(Sigma)`` ``(p,)``."""
        core = (self.Q**2) @ self.d_inv_sqrt**2 @ (self.R**2).T
        return self._flat(core * self.prior_sd**2)

    def factor_rows(self, z):
        """Rows ``z L^T``: standard normal rows become draws of ``N(0, Sigma)``."""
        return self._flat(self._rotate(self._mat(z) * self.d_inv_sqrt) * self.prior_sd)

    def factor_t_rows(self, g):
        """Rows ``g L``: a gradient in whitened coordinates."""
        return self._flat(self._rotate(self._mat(g) * self.prior_sd, True) * self.d_inv_sqrt)

    def inverse_rows(self, d):
        """Rows ``d L^{-T}``: a displacement whitened."""
        return self._flat(self._rotate(self._mat(d) / self.prior_sd, True) / self.d_inv_sqrt)

    def apply(self, g):
        """Rows ``g Sigma``."""
        return self.factor_rows(self.factor_t_rows(g))
