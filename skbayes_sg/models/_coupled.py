"""A Kronecker-factored softmax Laplace whose intercepts keep their exact coupling to the weights.

K-FAC (:class:`~skbayes_sg.models.KroneckerCovariance`) replaces ``sum_i S_i (x) x~_i x~_i^T`` by
``mean_i S_i (x) sum_i x~_i x~_i^T``.  For the intercepts (``x~_ij = 1``) that drops the coupling
``C = sum_i S_i (x) x_i`` between them and the weights, which does not vanish because ``S_i``
depends on ``x_i``.  Here only the weight block is factored, in centred coordinates: with the
weights ``w`` (``K d``, rows ``W``) and the intercepts moved to ``b' = b + E W x_bar`` (``x_bar``
the feature means, ``E = I - 1 1^T / K``: the class mean of ``b``, set by the prior alone, is left
alone), ``theta = T theta'`` and the precision ``H' = T^T H T`` is approximated by::

    H' ≈ [[K_w, C'], [C'^T, H_bb]],   K_w = A (x) B_c + I (x) P_x  (Kronecker, centred Gram),
    H_bb = sum_i S_i + pi_b I,        C' = exact coupling in these coordinates.

With ``M`` the weights' regression on ``b'`` and ``S = [-M^T, I] H' [-M; I]`` (``S^{-1} =
L_S L_S^T``; the exact Schur complement when ``M = H'_ww^{-1} C'``) a factor of ``Sigma`` is::

    T F,   F = [[L_w, -M L_S], [0, L_S]],   F^{-1} = [[L_w^{-1}, L_w^{-1} M], [0, L_S^{-1}]],

each product the Kronecker one on the weights plus ``O(K^2 d)`` per row.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["CoupledInterceptCovariance"]


@dataclass(frozen=True, eq=False)
class CoupledInterceptCovariance:
    """``Sigma = T F F^T T^T`` of the module docstring, on the flat parameters of a softmax model.

    Parameters
    ----------
    weights : KroneckerCovariance
        ``L_w``, on the weights alone (flat ``(K d,)`` vectors in ``weight_index`` order).
    weight_index, intercept_index : ndarray of shape (K d,) and (K,)
        Where the weights (class-major) and the intercepts sit in ``theta``.
    M : ndarray of shape (K d, K)
        The weights' regression on the centred intercepts.
    LS, LS_inv : ndarray of shape (K, K)
        ``L_S`` (``L_S L_S^T = S^{-1}``) and its inverse.
    shift : ndarray of shape (d,)
        ``x_bar``: the centred intercepts are ``b' = b + E W x_bar`` (``E = I - 1 1^T / K``).
    """

    weights: object
    weight_index: np.ndarray
    intercept_index: np.ndarray
    M: np.ndarray
    LS: np.ndarray
    LS_inv: np.ndarray
    shift: np.ndarray

    ndim = 0  # a structured covariance: it applies its own factor
    kind = "kronecker"

    def _split(self, rows):
        return rows[..., self.weight_index], rows[..., self.intercept_index]

    def _join(self, w, b):
        out = np.empty((*w.shape[:-1], w.shape[-1] + b.shape[-1]), dtype=np.result_type(w, b))
        out[..., self.weight_index], out[..., self.intercept_index] = w, b
        return out

    def _moved(self, w, b, sign):
        """``b + sign E W x_bar`` (``T``: sign -1; ``T^{-1}``: +1)."""
        return b + sign * _contrast(w.reshape(*w.shape[:-1], b.shape[-1], -1) @ self.shift)

    @property
    def variances(self):
        """``diag(Sigma)`` ``(p,)``: the weights' ``diag(L_w L_w^T) + diag(M S^{-1} M^T)``; the
        intercepts' squared norms of their rows of ``T F``."""
        K, p = self.intercept_index.size, self.weight_index.size + self.intercept_index.size
        E = np.zeros((K, p))
        E[np.arange(K), self.intercept_index] = 1.0
        return self._join(self.weights.variances + ((self.M @ self.LS) ** 2).sum(axis=1),
                          (self.factor_t_rows(E) ** 2).sum(axis=1))

    def factor_rows(self, z):
        """Rows ``z (T F)^T``: standard normal rows become draws of ``N(0, Sigma)``."""
        zw, zb = self._split(z)
        b = zb @ self.LS.T
        w = self.weights.factor_rows(zw) - b @ self.M.T
        return self._join(w, self._moved(w, b, -1.0))

    def factor_t_rows(self, g):
        """Rows ``g T F``: a gradient in whitened coordinates."""
        gw, gb = self._split(g)
        gw = gw - (_contrast(gb)[..., :, None] * self.shift).reshape(gw.shape)
        return self._join(self.weights.factor_t_rows(gw), (gb - gw @ self.M) @ self.LS)

    def inverse_rows(self, d):
        """Rows ``d (T F)^{-T}``: a displacement whitened."""
        dw, db = self._split(d)
        db = self._moved(dw, db, 1.0)
        return self._join(self.weights.inverse_rows(dw + db @ self.M.T), db @ self.LS_inv.T)

    def apply(self, g):
        """Rows ``g Sigma``."""
        return self.factor_rows(self.factor_t_rows(g))


def _contrast(v):
    """``E v``: ``v (..., K)`` minus its mean over the classes."""
    return v - v.mean(axis=-1, keepdims=True)
