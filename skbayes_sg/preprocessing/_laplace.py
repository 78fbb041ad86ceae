"""Laplace approximation at the mode: the default preconditioner.

``Sigma = (∇²U(theta_hat))^-1``.  Dense for models with an exact Hessian and
moderate ``p``; diagonal (``1 / diag ∇²U``) otherwise -- for the MLP the
diagonal of the Gauss-Newton (Fisher) matrix.
"""

import numpy as np
from scipy.linalg import eigh

from ..models import Laplace

__all__ = ["DENSE_MAX_PARAMS", "full_hessian", "laplace_at", "mode_shift", "uses_dense",
           "whitened_curvature"]

DENSE_MAX_PARAMS = 500  # "auto" uses a dense preconditioner up to this many parameters


def full_hessian(posterior, theta):
    """Dense ``∇²U(theta)`` (likelihood in row chunks plus prior), symmetrised."""
    H = posterior.row_sum(posterior.model.hessian, theta, width=posterior.model.n_params)
    H = H + np.diag(posterior.prior.hessian_diag(theta))
    return 0.5 * (H + H.T)


def uses_dense(posterior, kind):
    """Whether ``kind`` means a dense Laplace Hessian for this posterior."""
    model = posterior.model
    return kind == "laplace" or (
        kind == "auto" and model.n_params <= DENSE_MAX_PARAMS and model.exact_hessian)


def laplace_at(posterior, mode, kind="auto", hessian=None):
    """The Laplace approximation at ``mode``, and what it cost.

    Parameters
    ----------
    posterior : Posterior
    mode : ndarray of shape (p,)
    kind : {"auto", "laplace", "diagonal"}
        ``"laplace"`` dense (models with an exact Hessian), ``"diagonal"``
        inverse diagonal curvature, ``"auto"`` dense when the model has an
        exact Hessian and ``p <= DENSE_MAX_PARAMS``, else diagonal.
    hessian : ndarray of shape (p, p), optional
        The dense Hessian at ``mode`` if already known (Newton's last one):
        used instead of a new pass when ``kind`` means dense.

    Returns
    -------
    laplace : Laplace
    n_grad_evals : int
        Per-example second-order evaluations (one pass, or 0 when ``hessian`` was given).
    """
    if uses_dense(posterior, kind):
        evals = 0 if hessian is not None else posterior.n_rows
        H = full_hessian(posterior, mode) if hessian is None else hessian
        return Laplace(mode, np.linalg.inv(H), H), evals
    d = posterior.row_sum(posterior.model.hessian_diag, mode)
    d = d + posterior.prior.hessian_diag(mode)
    return Laplace(mode, 1.0 / np.maximum(d, 1e-12 * d.max())), posterior.n_rows


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
    theta, cov = laplace.mode, laplace.covariance
    g = posterior.full_grad(theta[None, :])[0]
    sd = np.sqrt(laplace.variances)
    if uses_dense(posterior, "auto"):
        delta = np.linalg.lstsq(full_hessian(posterior, theta), g, rcond=None)[0]
        return float(np.max(np.abs(delta) / sd)), 2 * posterior.n_rows
    delta = cov @ g if laplace.dense else cov * g
    return float(np.max(np.abs(delta) / sd)), posterior.n_rows
