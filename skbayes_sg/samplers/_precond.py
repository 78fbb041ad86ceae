"""Constant preconditioners ``M = L L^T`` (the inverse mass matrix).

Every sampler runs in whitened coordinates ``u`` with ``theta = L u``: a gradient ``g`` w.r.t.
theta becomes ``L^T g`` and a move ``du`` becomes ``L du``.  With ``M`` the inverse Hessian at the
mode (Laplace) the whitened posterior is close to ``N(0, I)``, so one step size fits every
direction.  Rows are chains, so ``L^T g`` is computed as ``g @ L``.
"""

import numpy as np
from scipy.linalg import solve_triangular

__all__ = ["Preconditioner", "dense", "diagonal", "from_laplace", "identity", "lowrank"]


class Preconditioner:
    """Interface of the identity, diagonal and dense preconditioners.

    Per row (rows are chains): ``to_u(g) = L^T g`` (a gradient in whitened coordinates),
    ``from_u(du) = L du`` (a whitened move mapped back), ``inv(d) = L^{-1} d`` (a displacement
    whitened) and ``apply(g) = M g`` (the SGLD drift direction).  ``kind`` is ``"identity"``,
    ``"diagonal"``, ``"dense"`` or ``"lowrank"``; ``factor`` is None, the ``(p,)`` standard
    deviations, the lower-triangular ``(p, p)`` Cholesky factor ``L``, or the
    :class:`~skbayes_sg.models.LowRankCovariance` (``L = S (I + V diag(lambda^{-1/2} - 1) V^T)``,
    every product ``O(p k)``).
    """

    kind = factor = None

    def apply(self, g):
        return self.from_u(self.to_u(g))


class _Identity(Preconditioner):
    kind = "identity"

    def to_u(self, g):
        return g

    from_u = inv = apply = to_u


class _Diagonal(Preconditioner):
    kind = "diagonal"

    def __init__(self, sds):
        self.factor = sds

    def to_u(self, g):
        return g * self.factor

    from_u = to_u

    def inv(self, d):
        return d / self.factor


class _Dense(Preconditioner):
    kind = "dense"

    def __init__(self, factor):
        self.factor, self._factor_t = factor, factor.T
        self._full = factor @ factor.T  # M itself: one product per SGLD drift

    def to_u(self, g):
        return g @ self.factor

    def from_u(self, du):
        return du @ self._factor_t

    def inv(self, d):
        return solve_triangular(self.factor, d.T, lower=True).T

    def apply(self, g):
        return g @ self._full


class _LowRank(Preconditioner):
    """A structured covariance that applies its own factor (low rank, Kronecker)."""

    def __init__(self, covariance):
        self.factor, self.kind = covariance, covariance.kind
        self.to_u, self.from_u = covariance.factor_t_rows, covariance.factor_rows
        self.inv, self.apply = covariance.inverse_rows, covariance.apply


def identity():
    """No preconditioning (``M = I``)."""
    return _Identity()


def diagonal(variances):
    """Diagonal ``M = diag(variances)``."""
    return _Diagonal(np.sqrt(np.asarray(variances, dtype=float)))


def dense(covariance):
    """Dense ``M = covariance`` through its Cholesky factor."""
    cov = np.asarray(covariance, dtype=float)
    return _Dense(np.linalg.cholesky(0.5 * (cov + cov.T)))


def lowrank(covariance):
    """Low-rank-plus-diagonal ``M`` = a :class:`~skbayes_sg.models.LowRankCovariance`."""
    return _LowRank(covariance)


def from_laplace(laplace):
    """``M`` = the covariance of a :class:`~skbayes_sg.models.Laplace` (any kind)."""
    if laplace.structured:
        return _LowRank(laplace.covariance)
    return (_Dense if laplace.dense else _Diagonal)(np.asarray(laplace.factor, dtype=float))
