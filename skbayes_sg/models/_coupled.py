"""A Kronecker-factored softmax Laplace whose intercepts keep their exact coupling to the weights.

K-FAC (:class:`~skbayes_sg.models.KroneckerCovariance`) replaces ``sum_i S_i (x) x~_i x~_i^T`` by
``mean_i S_i (x) sum_i x~_i x~_i^T``.  For the intercepts (``x~_ij = 1``) that drops the coupling
``C = sum_i S_i (x) x_i`` between them and the weights, which does not vanish because ``S_i``
depends on ``x_i``.  Here only the weight block ``H_ww`` is factored; with the weights ``w``
(``K d``) and intercepts ``b`` (``K``) the precision is::

    H = [[K_w, C], [C^T, H_bb]],     K_w = A (x) B_x + I (x) P_x  (Kronecker),
    H_bb = sum_i S_i + pi_b I,       C = sum_i S_i (x) x_i        (both exact),

and with ``M = K_w^{-1} C`` (``K d x K``) and the Schur complement ``S = H_bb - C^T M`` (``K x
K``, ``S^{-1} = L_S L_S^T``) a factor of ``Sigma = H^{-1}`` is::

    F = [[L_w, -M L_S], [0, L_S]],       F^{-1} = [[L_w^{-1}, L_w^{-1} M], [0, L_S^{-1}]],

each product the Kronecker one on the weights plus ``O(K^2 d)`` per row.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["CoupledInterceptCovariance"]


@dataclass(frozen=True, eq=False)
class CoupledInterceptCovariance:
    """``Sigma = F F^T`` of the module docstring, on the flat parameters of a softmax model.

    Parameters
    ----------
    weights : KroneckerCovariance
        ``L_w``, on the weights alone (flat ``(K d,)`` vectors in ``weight_index`` order).
    weight_index, intercept_index : ndarray of shape (K d,) and (K,)
        Where the weights (class-major) and the intercepts sit in ``theta``.
    M : ndarray of shape (K d, K)
        ``K_w^{-1} C``.
    LS, LS_inv : ndarray of shape (K, K)
        ``L_S`` (``L_S L_S^T = S^{-1}``) and its inverse.
    """

    weights: object
    weight_index: np.ndarray
    intercept_index: np.ndarray
    M: np.ndarray
    LS: np.ndarray
    LS_inv: np.ndarray

    ndim = 0  # a structured covariance: it applies its own factor
    kind = "kronecker"

    def _split(self, rows):
        return rows[..., self.weight_index], rows[..., self.intercept_index]

    def _join(self, w, b):
        out = np.empty((*w.shape[:-1], w.shape[-1] + b.shape[-1]), dtype=np.result_type(w, b))
        out[..., self.weight_index], out[..., self.intercept_index] = w, b
        return out

    @property
    def variances(self):
        """``diag(Sigma)`` ``(p,)``: ``diag(L_w L_w^T) + diag(M S^{-1} M^T)``, ``diag(S^{-1})``."""
        return self._join(self.weights.variances + ((self.M @ self.LS) ** 2).sum(axis=1),
                          (self.LS**2).sum(axis=1))

    def factor_rows(self, z):
        """Rows ``z F^T``: standard normal rows become draws of ``N(0, Sigma)``."""
        zw, zb = self._split(z)
        b = zb @ self.LS.T
        return self._join(self.weights.factor_rows(zw) - b @ self.M.T, b)

    def factor_t_rows(self, g):
        """Rows ``g F``: a gradient in whitened coordinates."""
        gw, gb = self._split(g)
        return self._join(self.weights.factor_t_rows(gw), (gb - gw @ self.M) @ self.LS)

    def inverse_rows(self, d):
        """Rows ``d F^{-T}``: a displacement whitened."""
        dw, db = self._split(d)
        return self._join(self.weights.inverse_rows(dw + db @ self.M.T), db @ self.LS_inv.T)

    def apply(self, g):
        """Rows ``g Sigma``."""
        return self.factor_rows(self.factor_t_rows(g))
