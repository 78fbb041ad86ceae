"""The Kronecker-factored Laplace covariance of a softmax posterior.

``A = sum_i m_i S_i / sum_i m_i`` at the mode and ``B = sum_i m_i x~_i x~_i^T`` (see
:class:`~skbayes_sg.models.KroneckerCovariance`), then the eigen-decompositions of ``A`` and of
the prior-whitened ``B~`` -- ``O(n K d)`` for the pass of ``A``, ``O(n d^2)`` for ``B``'s (once
per posterior: it does not depend on the position), ``O(K^3 + d^3)`` after them, where a dense
Hessian would cost ``O(n K^2 d^2)`` and ``O(K^3 d^3)``.
"""

import numpy as np
from scipy.linalg import eigh
from scipy.special import softmax

from typing import NamedTuple

from ..models import KroneckerCovariance

__all__ = ["FeatureGram", "feature_factor", "feature_gram", "kronecker_covariance",
           "kronecker_factor", "softmax_layout"]


class FeatureGram(NamedTuple):
    """``B = sum_i m_i x~_i x~_i^T`` (with the ones column when ``ones``)."""

    matrix: np.ndarray
    ones: bool


def _class_factor(posterior, coef, intercept):
    """``A`` in one pass over the rows (:meth:`~skbayes_sg.models.Posterior.row_sum`: row
    chunks in memory, a map-reduce on dask)."""
    K = coef.shape[0]

    def sums(_, X, y, w):
        m = np.ones(X.shape[0]) if w is None else w
        P = softmax(X @ coef.T + intercept, axis=1)
        mP = P * m[:, None]
        return np.append((np.diag(mP.sum(axis=0)) - P.T @ mP).ravel(), m.sum())

    flat = posterior.row_sum(sums, None, width=2 * K)
    return flat[:-1].reshape(K, K) / flat[-1]


def feature_gram(posterior, ones, gram=None):
    """``(FeatureGram, n_grad_evals)``: ``gram`` itself (0 evaluations) when given and made with
    the same ``ones``, else one pass."""
    if gram is not None and gram.ones == bool(ones):
        return gram, 0

    def sums(_, X, y, w):
        Xt = np.hstack([X, np.ones((X.shape[0], 1))]) if ones else X
        return Xt.T @ Xt if w is None else Xt.T @ (Xt * w[:, None])  # unweighted: syrk, half

    d1 = posterior.X.shape[1] + bool(ones)
    return FeatureGram(posterior.row_sum(sums, None, width=2 * d1), bool(ones)), posterior.n_rows


def feature_factor(B, prior_sd):
    """Eigenpairs ``(mu, R)`` of the prior-whitened ``B~ = P^{-1/2} B P^{-1/2}``."""
    return eigh(0.5 * (B + B.T) * np.outer(prior_sd, prior_sd))


def kronecker_factor(A, mu, R, order, prior_sd):
    """The :class:`~skbayes_sg.models.KroneckerCovariance` of ``A (x) B + I (x) P``."""
    lam, Q = eigh(0.5 * (A + A.T))
    d_inv_sqrt = 1.0 / np.sqrt(1.0 + np.outer(np.maximum(lam, 0.0), np.maximum(mu, 0.0)))
    return KroneckerCovariance(order, prior_sd, Q, R, d_inv_sqrt)


def softmax_layout(posterior):
    """``(order, prior_sd, ones)`` of a softmax posterior: the flat indices of its ``(K, d1)``
    weight matrix, the prior sd of each column, and whether the last column is the intercept.

    Raises ``ValueError`` unless the prior has one positive precision per column, the same for
    every class (the structured Laplace approximations assume it).
    """
    model = posterior.model
    ones = "intercept" in model.param_shapes()
    index = model.unpack(np.arange(model.n_params))
    K = index["coef"].shape[0]
    cols = [index["coef"], index["intercept"][:, None]] if ones else [index["coef"]]
    order = np.hstack(cols).ravel().astype(np.intp)
    prec = posterior.prior.precision[order].reshape(K, -1)
    if not (np.all(prec > 0) and np.allclose(prec, prec[0])):
        raise ValueError("the structured softmax Laplace needs a proper prior with one precision "
                         "per feature column, the same for every class.")
    return order, 1.0 / np.sqrt(prec[0]), ones


def kronecker_covariance(posterior, mode, gram=None):
    """``Sigma ≈ H^{-1}`` as ``(I (x) P^{-1/2}) (Q (x) R) D^{-1} (...)^T``, and its cost.

    Parameters
    ----------
    posterior : Posterior
        A softmax posterior on dense rows (``model.unpack`` gives ``coef (K, d)``,
        ``intercept (K,)``), whose prior precision is the same for every class in a column.
    mode : ndarray of shape (p,)
    gram : FeatureGram, optional
        ``B`` if already made (the mode search's).

    Returns
    -------
    covariance : KroneckerCovariance
    n_grad_evals : int
        The pass for ``A``, and the pass for ``B`` unless ``gram`` was given.
    gram : FeatureGram
    """
    order, prior_sd, ones = softmax_layout(posterior)
    parts = posterior.model.unpack(mode)
    gram, evals = feature_gram(posterior, ones, gram)
    mu, R = feature_factor(gram.matrix, prior_sd)
    A = _class_factor(posterior, parts["coef"], parts["intercept"])
    return kronecker_factor(A, mu, R, order, prior_sd), posterior.n_rows + evals, gram
