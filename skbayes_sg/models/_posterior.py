"""The records that flow through ``fit``: the posterior and its Laplace approximation.

Both are small frozen dataclasses, built once per fit and never mutated: ``Posterior`` is what is
sampled (model, prior, data, row multiplicities), ``Laplace`` the Gaussian approximation at its
mode.  Every layer above the models takes them as arguments instead of loose tuples.
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..utils import row_chunks
from ._arrays import as_float64, minibatch_dtype
from ._sparse import gather_rows, row_block, row_dot, squared

__all__ = ["Laplace", "Posterior"]


@dataclass(frozen=True, eq=False)
class Posterior:
    """``U(theta) = f_0(theta) + sum_i m_i f_i(theta)`` on the data ``(X, y)``.

    Parameters
    ----------
    model, prior
        A likelihood of :mod:`skbayes_sg.models` and its prior.
    X : ndarray of shape (n_rows, d) or CSR matrix
        Sparse rows stay sparse everywhere (GLMs); see :meth:`rows`.
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

    #: Whether a uniform subset of the rows costs about its share of a pass (rows in memory), so
    #: that a large fit estimates its Laplace Hessian on one (``find_mode``).  Not on dask, where
    #: a subset is gathered row by row while a map-reduce pass adds the Hessian almost for free.
    cheap_subsets = True

    @property
    def n_rows(self):
        """Number of stored rows."""
        return self.X.shape[0]

    @property
    def n_data(self):
        """``N = sum_i m_i`` (the data size of the papers)."""
        return float(self.n_rows if self.weight is None else self.weight.sum())

    def row_source(self, in_memory):
        """The row source of these rows (:mod:`skbayes_sg.subsampling._rows`): ``in_memory(self)``,
        the one offered for rows in this process.  A posterior whose rows live elsewhere (dask)
        returns its own instead."""
        return in_memory(self)

    def rows_weight(self, idx):
        """Multiplicities of the rows ``idx`` (None when unweighted)."""
        return None if self.weight is None else self.weight[idx]

    def merge_weight(self, idx, w):
        """Per-row weights ``w_i m_i`` of a minibatch (None when both are one)."""
        if self.weight is None:
            return w
        return self.weight[idx] if w is None else w * self.weight[idx]

    def rows(self, idx):
        """``(X_B, y_B)``: rows ``idx`` in the form the models take.

        1-D ``idx`` gives rows shared by all chains; ``idx (C, b)`` per-chain minibatches,
        ``(C, b, d)`` for dense ``X`` and :class:`~skbayes_sg.models._sparse.ChainRows` (one CSR
        of ``C b`` rows) for sparse ``X``.  The one place minibatches are gathered.
        """
        X = gather_rows(self.X, idx) if sp.issparse(self.X) else self.X.take(idx, axis=0)
        return X, self.y.take(idx)  # take: about half the time of X[idx] for random rows

    def chunks(self, width=1):
        """Row slices of bounded memory (:func:`~skbayes_sg.utils.row_chunks`).

        ``width`` is the floats per row of the caller's largest temporary for dense rows; sparse
        rows scale it by the density ``nnz / (n d)`` (their temporaries hold the stored entries).
        """
        if sp.issparse(self.X):
            density = self.X.nnz / max(1, self.n_rows * self.X.shape[1])
            width = int(np.ceil(width * density)) + 1
        return row_chunks(self.n_rows, width)

    def row_sum(self, fn, theta, width=1, native=False):
        """``sum over chunks of fn(theta, X_chunk (float64), y_chunk, m_chunk)``.

        ``native``: the chunks in ``X``'s own precision (``fn`` handles float32 rows).
        """
        total, cast = None, (lambda X: X) if native else as_float64
        for sl in self.chunks(width):
            part = fn(theta, cast(row_block(self.X, sl)), self.y[sl], self.rows_weight(sl))
            total = part if total is None else total + part
        return total

    def full_grad(self, theta):
        """Exact ``∇U`` for the rows of ``theta`` ``(C, p)``."""
        return self.prior.grad(theta) + self.row_sum(self.model.grad_sum, theta)

    def _nll_sum(self, theta, X, y, w):
        f = self.model.nll(theta, X, y)
        return f.sum(axis=1) if w is None else f @ w

    def potential(self, theta):
        """Exact ``U`` for the rows of ``theta`` ``(C, p)`` -> ``(C,)``."""
        return self.prior.value(theta) + self.row_sum(self._nll_sum, theta)

    def value_and_grad(self, theta):
        """``(U (C,), ∇U (C, p))`` in one pass over the rows (each chunk read once)."""
        def both(t, X, y, w):
            return np.column_stack(self.model.value_and_grad_sum(t, X, y, w))

        vg = self.row_sum(both, theta)
        return self.prior.value(theta) + vg[:, 0], self.prior.grad(theta) + vg[:, 1:]

    @property
    def evaluation_dtype(self):
        """The precision :meth:`newton_terms` rounds positions to (``model.evaluation_dtype``),
        or None."""
        return self.model.evaluation_dtype(self.X)

    def newton_terms(self, theta1, hessian=True, value=True, responses=None):
        """``(U or None, ∇U (p,), ∇²U (p, p) or None)`` at one position ``theta1 (p,)``.

        Each chunk is read once, in ``X``'s own precision (``model.newton_terms``: fused for the
        scalar GLMs, float32 chunks for float32 ``X``), and the chunk sums accumulate in float64.
        The Hessian is symmetrised.  What a Newton iteration and the Laplace approximation need;
        ``value=False`` skips ``U`` (near the mode Newton takes full steps without it).
        ``responses`` (a GLM's :meth:`response_buffer`) is filled with every row's response
        ``r_i(theta1)`` on the way: the control-variate anchor at ``theta1`` for free.
        """
        model, p = self.model, self.model.n_params
        total, grad = 0.0, np.zeros(p)
        H = np.zeros((p, p)) if hessian else None
        for sl in self.chunks(self.X.shape[1] + 2 if hessian else 2):
            out = {} if responses is None else {"response_out": responses[sl]}
            f, g, h = model.newton_terms(theta1, row_block(self.X, sl), self.y[sl],
                                         self.rows_weight(sl), hessian, value, **out)
            grad += g
            if value:
                total += f
            if hessian:
                H += h
        theta = theta1[None]
        grad += self.prior.grad(theta)[0]
        if hessian:
            H = 0.5 * (H + H.T)
            H[np.diag_indices(p)] += self.prior.hessian_diag(theta1)
        return (float(total + self.prior.value(theta)[0]) if value else None), grad, H

    def response_buffer(self):
        """An empty array for every row's response (``(n_rows,)``, or ``(n_rows, K)`` for a
        model with ``K`` linear predictors per row) in the precision of the minibatch arithmetic
        (float32 for float32 ``X``), as control variates store them; None for a model that is
        not a GLM.  Stored row-contiguous: every step gathers ``b`` rows of them."""
        if not self.model.is_glm:
            return None
        k = self.model.linear_predictors
        dtype = minibatch_dtype(self.X) or np.float64
        return np.empty((self.n_rows,) if k == 1 else (self.n_rows, k), dtype=dtype)

    def start(self):
        """Where the mode search starts: ``model.start`` on the targets and multiplicities."""
        return self.model.start(self.X, self.y, self.weight)

    def subset(self, idx):
        """The rows ``idx`` with multiplicities scaled so ``n_data`` is kept."""
        w = self.rows_weight(idx)
        scale = self.n_data / (idx.size if w is None else w.sum())
        w = np.full(idx.size, scale) if w is None else w * scale
        X = self.X.take(idx, axis=0) if isinstance(self.X, np.ndarray) else self.X[idx]
        return replace(self, X=X, y=np.asarray(self.y).take(idx), weight=w)  # take: faster


@dataclass(frozen=True, eq=False)
class Laplace:
    """``N(mode, covariance)``: the Laplace approximation at the posterior mode.

    Parameters
    ----------
    mode : ndarray of shape (p,)
    covariance : ndarray of shape (p, p) or (p,), or LowRankCovariance
        Dense, the variances of a diagonal approximation, or low-rank-plus-diagonal
        (:class:`~skbayes_sg.models.LowRankCovariance`, for many parameters).
    hessian : ndarray of shape (p, p), optional
        The dense Hessian of ``U`` at the mode when it was computed.
    hessian_rows : int, optional
        None when ``hessian`` is exact, else the size of the uniform subsample it was estimated
        on (scaled to all the rows).
    """

    mode: np.ndarray
    covariance: object
    hessian: np.ndarray = None
    hessian_rows: int = None

    @property
    def kind(self):
        """``"dense"``, ``"diagonal"``, or a structured covariance's own ``kind``
        (``"lowrank"``, ``"kronecker"``)."""
        return {2: "dense", 1: "diagonal"}.get(self.covariance.ndim) or self.covariance.kind

    @property
    def structured(self):
        """True for a covariance object that applies itself (low rank, Kronecker)."""
        return self.covariance.ndim == 0

    @property
    def dense(self):
        """True for a dense covariance."""
        return self.kind == "dense"

    @property
    def variances(self):
        """Marginal variances ``(p,)``."""
        if self.structured:
            return self.covariance.variances
        return np.diag(self.covariance) if self.dense else self.covariance

    @property
    def factor(self):
        """``L`` with ``L L^T = covariance``: lower Cholesky ``(p, p)``, sds ``(p,)``, or the
        :class:`~skbayes_sg.models.LowRankCovariance` itself (it applies its factor)."""
        cov = self.covariance
        if self.structured:
            return cov
        return np.linalg.cholesky(0.5 * (cov + cov.T)) if self.dense else np.sqrt(cov)

    def apply(self, g):
        """Rows ``g Sigma`` for rows ``g (n, p)``."""
        cov = self.covariance
        if self.structured:
            return cov.apply(g)
        return g @ cov if self.dense else g * cov

    def quadratic_rows(self, X1):
        """``x_i^T Sigma x_i`` for the rows of ``X1 (n, p)`` (dense or CSR) ``(n,)``."""
        cov = self.covariance
        if self.structured:
            return cov.quadratic_rows(X1)
        return row_dot(X1, X1 @ cov) if self.dense else squared(X1) @ cov

    def draws(self, rng, n, scale=1.0):
        """``n`` draws ``mode + scale L z`` ``(n, p)``."""
        z = rng.standard_normal((n, self.mode.shape[0]))
        L = self.factor
        if self.structured:
            return self.mode + scale * L.factor_rows(z)
        return self.mode + scale * (z @ L.T if self.dense else z * L)
