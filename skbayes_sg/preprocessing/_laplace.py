"""Laplace approximation at the mode: the default preconditioner.

``Sigma = (∇²U(theta_hat))^-1``.  Dense for models with an exact Hessian and
moderate ``p``; structured for larger softmax (class blocks, :mod:`._blocks`, or Kronecker
factors with exact intercept rows, :mod:`._coupled`) and wide data (Woodbury,
:mod:`._lowrank`); diagonal (``1 / diag ∇²U``) otherwise -- for the MLP the diagonal of the
Gauss-Newton (Fisher) matrix.
``"laplace"`` on a GLM with more than ``DENSE_MAX_PARAMS`` parameters gives low rank plus
diagonal (:mod:`._lowrank`) where ``"auto"`` is diagonal.
"""

from types import MappingProxyType

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh

from ..models import Laplace
from ._blocks import block_covariance, block_fits
from ._config import DEFAULT_MODE_CONFIG
from ._coupled import coupled_covariance
from ._lowrank import lowrank_covariance

__all__ = ["DENSE_MAX_PARAMS", "dense_covariance", "diagonal_curvature", "full_hessian",
           "laplace_at", "laplace_kind", "mode_shift", "uses_dense", "whitened_curvature"]

DENSE_MAX_PARAMS = 500  # "auto" uses a dense preconditioner up to this many parameters ...
DENSE_AUTO_MAX, DENSE_FLOPS = 1000, 2e10  # ... and up to 1000 when n_rows p^2 <= 2e10
WIDE_MAX = 5e7  # largest p x rank basis of the exact wide-data Laplace (400 MB)
KRONECKER_MAX_COLS = 4000  # softmax above that: Kronecker-factored Laplace up to this many features


def full_hessian(posterior, theta):
    """Dense ``∇²U(theta)`` (likelihood in row chunks plus prior), symmetrised.

    One fused pass (:meth:`~skbayes_sg.models.Posterior.newton_terms`, in ``X``'s precision).
    """
    return posterior.newton_terms(theta)[2]


def laplace_kind(posterior, kind):
    """The covariance a preconditioner option builds: ``"dense"``, ``"lowrank"``, ``"wide"``,
    ``"block"``, ``"kronecker"`` or ``"diagonal"``.

    GLMs with more than ``DENSE_MAX_PARAMS`` parameters on wide data (:func:`is_wide`) get
    ``"wide"`` (exact, through the Woodbury identity, ``O(rank p)`` per product).  Otherwise
    ``"laplace"``: dense when :func:`dense_affordable` (and for models without Hessian-vector
    products); softmax regression on dense rows then gets ``"block"`` while its class blocks are
    affordable (:func:`~._blocks.block_fits`), else ``"kronecker"`` (:func:`kronecker_fits`);
    otherwise ``"laplace"`` gives low rank plus diagonal and ``"auto"`` diagonal; ``"diagonal"``.
    """
    model = posterior.model
    if kind == "diagonal":
        return "diagonal"
    if model.is_glm and model.n_params > DENSE_MAX_PARAMS and is_wide(posterior):
        return "wide"
    if dense_affordable(posterior) and (kind == "laplace" or model.exact_hessian):
        return "dense"
    if kind == "laplace" and not model.is_glm:
        return "dense"
    if kronecker_fits(posterior):
        K, d1 = model.n_outputs, model.n_params // model.n_outputs
        return "block" if block_fits(posterior.n_rows, K, d1) else "kronecker"
    return "lowrank" if kind == "laplace" else "diagonal"


def kronecker_fits(posterior):
    """Softmax regression on dense rows with at most ``KRONECKER_MAX_COLS`` features: the
    Kronecker-factored Laplace with exact intercept rows
    (:func:`~._coupled.coupled_covariance`)."""
    return (posterior.model.softmax and not sp.issparse(posterior.X)
            and posterior.X.shape[1] <= KRONECKER_MAX_COLS)


def dense_affordable(posterior):
    """Dense Laplace up to ``DENSE_MAX_PARAMS`` parameters, or up to ``DENSE_AUTO_MAX`` when the
    Hessian pass costs at most ``DENSE_FLOPS`` (``n_rows p^2``): a 650 x 650 Cholesky takes
    milliseconds; the pass over the rows and the ``p^2`` per step and chain are what grow."""
    p = posterior.model.n_params
    return p <= DENSE_MAX_PARAMS or (
        p <= DENSE_AUTO_MAX and posterior.n_rows * float(p) ** 2 <= DENSE_FLOPS)


def is_wide(posterior):
    """Whether the likelihood Hessian's rank (:func:`wide_rank`) is at most half of ``p``: then low
    rank plus prior is exact -- used while the ``p x rank`` basis stays small (``WIDE_MAX``)."""
    rank, p = wide_rank(posterior), posterior.model.n_params
    return 2 * rank <= p and rank * p <= WIDE_MAX


def wide_rank(posterior):
    """Rank of ``S H S - I`` when ``S`` whitens the prior: rows x outputs + twice the flat coordinates."""
    flat = int(np.sum(posterior.prior.precision <= 0))
    return posterior.n_rows * posterior.model.n_outputs + 2 * flat


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


def laplace_at(posterior, mode, kind="auto", hessian=None, hessian_rows=None, gram=None, *,
               config=DEFAULT_MODE_CONFIG):
    """The Laplace approximation at ``mode``, and what it cost.

    Parameters
    ----------
    posterior : Posterior
    mode : ndarray of shape (p,)
    kind : str
        A covariance kind of :func:`laplace_kind` (``"dense"``, ``"diagonal"``, ...; the fit
        engine resolves ``preconditioner`` to one), or a ``preconditioner`` option
        (``"auto"``, ``"laplace"``) resolved here.  ``"laplace"`` with ``p > DENSE_MAX_PARAMS``
        (a GLM) keeps the top ``LOWRANK_RANK`` eigenpairs of the diagonally whitened Hessian
        (:func:`~skbayes_sg.preprocessing.lowrank_covariance`).
    hessian : ndarray of shape (p, p), optional
        The dense Hessian at ``mode`` if already known (Newton's last one):
        used instead of a new pass when ``kind`` means dense.
    hessian_rows : int, optional
        The subsample ``hessian`` was estimated on, if not all the rows (``ModeResult``).
    gram : FeatureGram, optional
        A softmax's feature Gram matrix if already made (``ModeResult.gram``).
    config : ModeConfig, optional
        The thresholds of the structured kinds (the fit's ``FitConfig.mode``).

    Returns
    -------
    laplace : Laplace
    n_grad_evals : int
        Per-example second-order evaluations (one pass, or 0 when ``hessian`` was given; more
        for the structured kinds).
    """
    which = kind if kind in _BUILDERS else laplace_kind(posterior, kind)
    return _BUILDERS[which](posterior, mode, hessian, hessian_rows, gram, config)


def _dense(posterior, mode, hessian, hessian_rows, gram, config):
    evals = 0 if hessian is not None else posterior.n_rows
    H = full_hessian(posterior, mode) if hessian is None else hessian
    return Laplace(mode, dense_covariance(H), H, None if hessian is None else hessian_rows), evals


def _diagonal(posterior, mode, hessian, hessian_rows, gram, config):
    return Laplace(mode, 1.0 / diagonal_curvature(posterior, mode)), posterior.n_rows


def _block(posterior, mode, hessian, hessian_rows, gram, config):
    cov, evals = block_covariance(posterior, mode)
    return Laplace(mode, cov), evals


def _kronecker(posterior, mode, hessian, hessian_rows, gram, config):
    cov, evals = coupled_covariance(posterior, mode, gram, config=config)
    return Laplace(mode, cov), evals


def _lowrank(posterior, mode, hessian, hessian_rows, gram, config, wide=False):
    d = diagonal_curvature(posterior, mode)
    if wide:
        cov, evals = lowrank_covariance(posterior, mode, d, rank=wide_rank(posterior),
                                        scale=_prior_whitening(posterior, d))
    else:
        cov, evals = lowrank_covariance(posterior, mode, d)
    return Laplace(mode, cov), posterior.n_rows + evals


# covariance kind (laplace_kind) -> builder(posterior, mode, hessian, hessian_rows, gram, config)
_BUILDERS = MappingProxyType({
    "dense": _dense, "diagonal": _diagonal, "block": _block, "kronecker": _kronecker,
    "lowrank": _lowrank, "wide": lambda *args: _lowrank(*args, wide=True)})


def dense_covariance(H):
    """``H^-1``; where that is singular or not positive definite -- a saddle the mode search
    stopped at (one row, inferred noise), or rounding at a condition number past 1e16 (columns
    1e50 apart) -- the inverse of ``|H|`` with its eigenvalues floored at ``1e-12`` of the
    largest, in equilibrated coordinates (``H = D R D``, ``D = sqrt |diag H|``)."""
    try:
        cov = np.linalg.inv(H)
        np.linalg.cholesky(0.5 * (cov + cov.T))  # what the preconditioner factors next
        return cov
    except np.linalg.LinAlgError:  # singular or not positive definite
        pass
    d = np.sqrt(np.maximum(np.abs(np.diag(H)), np.finfo(float).tiny))
    w, V = np.linalg.eigh(H / np.outer(d, d))
    w = np.maximum(np.abs(w), 1e-12 * np.abs(w).max())
    return ((V / w) @ V.T) / np.outer(d, d)


def _prior_whitening(posterior, diagonal):
    """``S``: prior sds, and ``diag(H)^{-1/2}`` on flat-prior coordinates.  Then ``S H S - I``
    has the rank of the likelihood Hessian plus the flat coordinates (:func:`wide_rank`)."""
    prec = posterior.prior.precision
    return np.where(prec > 0, 1.0 / np.sqrt(np.where(prec > 0, prec, 1.0)),
                    1.0 / np.sqrt(diagonal))


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
