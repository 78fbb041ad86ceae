"""Constant preconditioners ``M = L L^T`` (the inverse mass matrix).

Every sampler runs in whitened coordinates ``u`` with ``theta = L u``: a
gradient ``g`` w.r.t. theta becomes ``L^T g`` and a move ``du`` becomes
``L du``.  With ``M`` the inverse Hessian at the mode (Laplace) the whitened
posterior is close to ``N(0, I)``, so one step size fits every direction.
Rows are chains, so ``L^T g`` is computed as ``g @ L``.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

__all__ = ["Preconditioner", "identity", "diagonal", "dense"]


@dataclass(frozen=True, eq=False)
class Preconditioner:
    """Factor ``L`` of ``M = L L^T``; ``kind`` is identity, diagonal or dense.

    ``factor`` is None (identity), ``(p,)`` (diagonal) or lower-triangular
    ``(p, p)`` (dense); ``full`` is ``M`` itself for dense (one product per
    SGLD drift instead of two).
    """

    kind: str
    factor: np.ndarray = None
    full: np.ndarray = None

    def to_u(self, g):
        """Gradient in whitened coordinates: ``L^T g`` per row."""
        return _TO_U[self.kind](g, self.factor)

    def from_u(self, du):
        """Move in whitened coordinates mapped back: ``L du`` per row."""
        return _FROM_U[self.kind](du, self.factor)

    def inv(self, dtheta):
        """Whiten a displacement: ``L^{-1} dtheta`` per row."""
        return _INV[self.kind](dtheta, self.factor)

    def apply(self, g):
        """``M g`` per row (the SGLD drift direction)."""
        if self.full is not None:
            return g @ self.full
        return self.from_u(self.to_u(g))

    def matrix(self, p):
        """Dense ``M`` (for inspection and tests)."""
        return self.apply(np.eye(p))


def identity():
    """No preconditioning (``M = I``)."""
    return Preconditioner("identity")


def diagonal(variances):
    """Diagonal ``M = diag(variances)``."""
    return Preconditioner("diagonal", np.sqrt(np.asarray(variances, dtype=float)))


def dense(covariance):
    """Dense ``M = covariance`` through its Cholesky factor."""
    cov = np.asarray(covariance, dtype=float)
    factor = np.linalg.cholesky(0.5 * (cov + cov.T))
    return Preconditioner("dense", factor, factor @ factor.T)


_TO_U = {
    "identity": lambda g, L: g,
    "diagonal": lambda g, L: g * L,
    "dense": lambda g, L: g @ L,
}
_FROM_U = {
    "identity": lambda du, L: du,
    "diagonal": lambda du, L: du * L,
    "dense": lambda du, L: du @ L.T,
}
_INV = {
    "identity": lambda d, L: d,
    "diagonal": lambda d, L: d / L,
    "dense": lambda d, L: solve_triangular(L, d.T, lower=True).T,
}
