"""Laplace approximation at the mode: the default preconditioner.

``Sigma = (∇²U(theta_hat))^-1``.  Dense for GLMs with moderate ``p``;
diagonal (``1 / diag ∇²U``) otherwise -- for the MLP the diagonal of the
Gauss-Newton (Fisher) matrix.
"""

import numpy as np
from scipy.linalg import eigh

from ..models import as_float64

__all__ = ["laplace_covariance", "mode_shift", "whitened_curvature", "full_hessian",
           "DENSE_MAX_PARAMS"]

DENSE_MAX_PARAMS = 500  # "auto" uses a dense preconditioner up to this many parameters


def has_exact_hessian(model):
    """True when ``model.hessian`` is implemented (GLMs, linear with inferred noise)."""
    try:
        model.hessian(np.zeros(model.n_params), np.zeros((1, getattr(model, "n_features", 1))),
                      np.zeros(1))
    except NotImplementedError:
        return False
    return True


def _chunked(problem, fn, theta, chunk=8192):
    total = None
    for start in range(0, problem.n_rows, chunk):
        sl = slice(start, start + chunk)
        w = None if problem.weight is None else problem.weight[sl]
        part = fn(theta, as_float64(problem.X[sl]), problem.y[sl], w)
        total = part if total is None else total + part
    return total


def full_hessian(problem, theta):
    """Dense ``∇²U(theta)`` (likelihood in row chunks plus prior), symmetrised."""
    H = _chunked(problem, problem.model.hessian, theta)
    H = H + np.diag(problem.prior.hessian_diag(theta))
    return 0.5 * (H + H.T)


def uses_dense(problem, kind):
    """Whether ``kind`` means a dense Laplace Hessian for this problem."""
    model = problem.model
    return kind == "laplace" or (
        kind == "auto" and model.n_params <= DENSE_MAX_PARAMS and has_exact_hessian(model))


def laplace_covariance(problem, kind, hessian=None):
    """Laplace covariance at ``problem.mode``.

    Parameters
    ----------
    problem : Problem
    kind : {"auto", "laplace", "diagonal"}
        ``"laplace"`` dense (models with an exact Hessian), ``"diagonal"``
        inverse diagonal curvature, ``"auto"`` dense when the model has an
        exact Hessian and ``p <= DENSE_MAX_PARAMS``, else diagonal.
    hessian : ndarray of shape (p, p), optional
        The dense Hessian at the mode if already known (Newton's last one):
        used instead of a new pass when ``kind`` means dense.

    Returns
    -------
    cov : ndarray (p, p) or (p,)
    hessian : ndarray (p, p) or None
        The dense Hessian when it was computed (reused for the curvature).
    n_grad_evals : int
        Per-example second-order evaluations (one pass, or 0 when
        ``hessian`` was given).
    """
    model, theta = problem.model, problem.mode
    prec = problem.prior.hessian_diag(theta)
    if uses_dense(problem, kind):
        if hessian is not None:
            return np.linalg.inv(hessian), hessian, 0
        H = full_hessian(problem, theta)
        return np.linalg.inv(H), H, problem.n_rows
    d = _chunked(problem, model.hessian_diag, theta) + prec
    return 1.0 / np.maximum(d, 1e-12 * d.max()), None, problem.n_rows


def whitened_curvature(hessian, precond):
    """Extreme eigenvalues of ``L^T H L`` (the preconditioned curvature)."""
    p = hessian.shape[0]
    L = precond.from_u(np.eye(p))  # rows: L e_j mapped back, i.e. L^T
    w = eigh(L @ hessian @ L.T, eigvals_only=True)
    return float(w[-1]), float(max(w[0], 1e-12))


def mode_shift(problem):
    """Distance, in Laplace sds, from ``problem.mode`` to the mode of ``problem``'s potential.

    ``problem`` carries the mode and Laplace covariance ``Sigma`` of another
    potential (the full data) and its own, approximate, data (centroids).
    One Newton step on its potential from that mode,
    ``delta = -H~^-1 grad U~(theta_hat)`` (``H~`` its dense Hessian when the
    model has one and ``p <= DENSE_MAX_PARAMS``, else ``Sigma^-1``), is exact
    for a quadratic potential.

    Returns
    -------
    shift : float
        ``max_k |delta_k| / sqrt(Sigma_kk)``; NaN without a mode/covariance.
    n_grad_evals : int
        Per-example evaluations spent (one or two passes over the rows).
    """
    if problem.mode is None or problem.covariance is None:
        return float("nan"), 0
    theta, cov = problem.mode, problem.covariance
    g = problem.full_grad(theta[None, :])[0]
    var = np.diag(cov) if cov.ndim == 2 else cov
    if uses_dense(problem, "auto"):
        delta = np.linalg.lstsq(full_hessian(problem, theta), g, rcond=None)[0]
        return float(np.max(np.abs(delta) / np.sqrt(var))), 2 * problem.n_rows
    delta = cov @ g if cov.ndim == 2 else cov * g
    return float(np.max(np.abs(delta) / np.sqrt(var))), problem.n_rows
