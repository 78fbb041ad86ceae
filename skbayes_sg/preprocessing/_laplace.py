"""Laplace approximation at the mode: the default preconditioner.

``Sigma = (∇²U(theta_hat))^-1``.  Dense for models with an exact Hessian and
moderate ``p``; diagonal (``1 / diag ∇²U``) otherwise -- for the MLP the
diagonal of the Gauss-Newton (Fisher) matrix.  ``"laplace"`` on a GLM with more than
``DENSE_MAX_PARAMS`` parameters gives low rank plus diagonal (:mod:`._lowrank`).
"""

import numpy as np
from scipy.linalg import eigh

from ..models import Laplace
from ._lowrank import lowrank_covariance

__all__ = ["DENSE_MAX_PARAMS", "diagonal_curvature", "full_hessian", "laplace_at", "laplace_kind", "mode_shift",
           "uses_dense", "whitened_curvature"]

DENSE_MAX_PARAMS = 500  # "auto" uses a dense preconditioner up to this many parameters


def full_hessian(posterior, theta):
    """Dense ``∇²U(theta)`` (likelihood in row chunks plus prior), symmetrised.

    One fused pass (:meth:`~skbayes_sg.models.Posterior.newton_terms`, in ``X``'s precision).
    """
    return posterior.newton_terms(theta)[2]


def laplace_kind(posterior, kind):
    """The covariance a preconditioner option builds: ``"dense"``, ``"lowrank"`` or ``"diagonal"``.

    ``"laplace"``: dense up to ``DENSE_MAX_PARAMS`` parameters (and for models without
    Hessian-vector products), low rank plus diagonal above it for GLMs; ``"auto"``: dense when the
    model has an exact Hessian and ``p <= DENSE_MAX_PARAMS``, else diagonal; ``"diagonal"``.
    """
    model = posterior.model
    small = model.n_params <= DENSE_MAX_PARAMS
    if kind == "laplace":
        return "dense" if small or not model.is_glm else "lowrank"
    return "dense" if kind == "auto" and small and model.exact_hessian else "diagonal"


def diagonal_curvature(posterior, theta):
    """``diag ∇²U(theta)`` ``(p,)`` in one pass, floored at ``1e-12`` of its largest entry.

    A float32 ``X`` is read in float32, ``theta`` rounded to it (the MLP's Fisher pass then runs in
    float32; the GLMs cast their chunks): a preconditioner needs no more.
    """
    work = np.float32 if getattr(posterior.X, "dtype", None) == np.float32 else np.float64
    d = posterior.row_sum(posterior.model.hessian_diag, theta.astype(work), native=True)
    d = d + posterior.prior.hessian_diag(theta)
    return np.maximum(d, 1e-12 * max(d.max(), 1e-300))


def uses_dense(posterior, kind):
    """Whether ``kind`` means a dense Laplace Hessian for this posterior."""
    return laplace_kind(posterior, kind) == "dense"


def laplace_at(posterior, mode, kind="auto", hessian=None):
    """The Laplace approximation at ``mode``, and what it cost.

    Parameters
    ----------
    posterior : Posterior
    mode : ndarray of shape (p,)
    kind : {"auto", "laplace", "diagonal"}
        See :func:`laplace_kind`.  ``"laplace"`` with ``p > DENSE_MAX_PARAMS`` (a GLM) keeps
        the top ``LOWRANK_RANK`` eigenpairs of the diagonally whitened Hessian
        (:func:`~skbayes_sg.preprocessing.lowrank_covariance`).
    hessian : ndarray of shape (p, p), optional
        The dense Hessian at ``mode`` if already known (Newton's last one):
        used instead of a new pass when ``kind`` means dense.

    Returns
    -------
    laplace : Laplace
    n_grad_evals : int
        Per-example second-order evaluations (one pass, or 0 when ``hessian`` was given; more
        for low rank).
    """
    which = laplace_kind(posterior, kind)
    if which == "dense":
        evals = 0 if hessian is not None else posterior.n_rows
        H = full_hessian(posterior, mode) if hessian is None else hessian
        return Laplace(mode, np.linalg.inv(H), H), evals
    d = diagonal_curvature(posterior, mode)
    if which == "diagonal":
        return Laplace(mode, 1.0 / d), posterior.n_rows
    cov, evals = lowrank_covariance(posterior, mode, d)
    return Laplace(mode, cov), posterior.n_rows + evals


def whitened_curvature(hessian, precond):
    """Extreme eigenvalues of ``L^T H L`` (the preconditioned curvature)."""
    Lt = precond.from_u(np.eye(hessian.shape[0]))  # rows L e_j, i.e. L^T
    w = eigh(Lt @ hessian @ Lt.T, eigvals_only=True)
    return float(w[-1]), float(max(w[0], 1e-12))


def mode_shift(posterior, laplace):
    """Distance, in Laplace sds, from ``laplace.mode`` to the mode of ``posterior``.

    ``laplace`` belongs to another potential (the full data) and ``posterior`` is an approximation
    of it (centroids).  One Newton step on its potential from that mode,
    ``delta = -H~^-1 grad U~(theta_hat)`` (``H~`` its dense Hessian when :func:`uses_dense`, else
    ``Sigma^-1``), is exact for a quadratic potential.

    Returns
    -------
    shift : float
        ``max_k |delta_k| / sqrt(Sigma_kk)``.
    n_grad_evals : int
        Per-example evaluations spent (one or two passes over the rows).
    """
    theta = laplace.mode
    sd = np.sqrt(laplace.variances)
    if uses_dense(posterior, "auto"):
        _, g, H = posterior.newton_terms(theta)  # one read for both
        delta = np.linalg.lstsq(H, g, rcond=None)[0]
        return float(np.max(np.abs(delta) / sd)), 2 * posterior.n_rows
    g = posterior.full_grad(theta[None, :])[0]
    delta = laplace.apply(g[None, :])[0]
    return float(np.max(np.abs(delta) / sd)), posterior.n_rows
