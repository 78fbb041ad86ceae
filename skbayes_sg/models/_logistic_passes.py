"""The binary logistic model's full-data passes fused in the rows' own precision."""

import numpy as np

from ._fused import binary_logistic_terms, native_predictor, scalar_glm_terms
from ._sparse import is_sparse

__all__ = ["FusedBinaryPasses"]


class FusedBinaryPasses:
    """``newton_terms`` and ``anchor_terms`` of a binary logistic model on dense rows, fused in
    ``X``'s precision (:mod:`._fused`); softmax and sparse rows take the generic float64 path
    of :class:`~skbayes_sg.models._base.Likelihood` (next in the method resolution order)."""

    def evaluation_dtype(self, X):
        """float32 for binary dense float32 rows (their fused passes round the position to it,
        :func:`~skbayes_sg.models._fused.native_predictor`), else None."""
        fused = self._rows == 1 and not is_sparse(X) and X.dtype == np.float32
        return np.float32 if fused else None

    def _fused_tz(self, theta1, X, y):
        """``(t_i z_i, t_i)`` in ``X``'s precision (mixed-precision products are much slower)."""
        nw = self._nw
        tz = native_predictor(X, theta1[:nw], theta1[nw] if self.fit_intercept else 0.0)
        t = np.asarray(y).astype(X.dtype, copy=False)
        tz *= t
        return tz, t

    def newton_terms(self, theta1, X, y, weight=None, hessian=True, value=True,
                     response_out=None):
        """Value, gradient and Hessian of a chunk in one read (:meth:`Likelihood.newton_terms`).

        Binary with dense ``X``: fused in ``X``'s precision at ``theta1`` rounded to it
        (:meth:`evaluation_dtype`, :mod:`._fused`); otherwise the generic float64 path.
        """
        if self._rows > 1 or is_sparse(X):
            return super().newton_terms(theta1, X, y, weight, hessian, value, response_out)
        f, r, c = binary_logistic_terms(*self._fused_tz(theta1, X, y), value, hessian)
        if response_out is not None:
            response_out[...] = r
        return scalar_glm_terms(X, f, r, c, weight, self.fit_intercept)

    def anchor_terms(self, theta1, X, y, weight=None, curvature=False):
        """Gradient, responses (and curvatures) of a chunk (:meth:`Likelihood.anchor_terms`);
        binary with dense ``X`` fused in ``X``'s precision like :meth:`newton_terms` (the
        gradient and the responses of the same rounded position: a consistent anchor)."""
        if self._rows > 1 or is_sparse(X):
            return super().anchor_terms(theta1, X, y, weight, curvature)
        _, r, c = binary_logistic_terms(*self._fused_tz(theta1, X, y), value=False,
                                        hessian=curvature)
        g = scalar_glm_terms(X, None, r, None, weight, self.fit_intercept)[1]
        return (g, r, c) if curvature else (g, r)
