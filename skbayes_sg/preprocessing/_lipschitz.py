"""Per-row Lipschitz constants of the gradients (seed 004 Assumption 1, App. C)."""

import numpy as np

from ._weights import per_row, row_sq_norms_glm

__all__ = ["lipschitz_constants"]


def lipschitz_constants(posterior, laplace):
    """Per-row constants ``L_i`` of ``∇(m_i f_i)`` (seed 004 Assumption 1, App. C).

    Binary logistic ``||x~_i||^2 / 4``; softmax ``||x~_i||^2 / 2`` (the largest eigenvalue of
    ``diag(s) - s s'`` is at most 1/2); fixed-noise linear ``||x~_i||^2 / sigma^2``.  Inferred
    noise has no global constant: the spectral norm of ``H_i`` at the mode ``laplace.mode`` is used
    (local), ``(T + sqrt(T^2 + 8 e_i^2 ||x~_i||^2)) / (2 sigma^2)``, ``T = ||x~_i||^2 + 2 e_i^2``,
    ``e_i`` the residual.  Other models (the MLP) raise ``ValueError``.  Multiplicities scale
    ``L_i`` by ``m_i``.
    """
    model, mode = posterior.model, laplace.mode
    if not (model.is_glm or model.is_regression):
        raise ValueError(f"No Lipschitz constants are known for {type(model).__name__}.")
    sq = per_row(posterior, lambda X, y: row_sq_norms_glm(model, X), posterior.X.shape[1])
    if not model.is_regression:
        L = sq / (4.0 if model.n_classes == 2 else 2.0)
    elif model.is_glm:
        L = sq / model.noise_std**2
    else:
        inv_var = np.exp(-2.0 * mode[-1])
        e2 = per_row(posterior, lambda X, y: model.response(mode[None], X, y)[0] ** 2,
                      posterior.X.shape[1])
        e2 /= inv_var**2  # response = -e / sigma^2
        T = sq + 2.0 * e2
        L = 0.5 * inv_var * (T + np.sqrt(T * T + 8.0 * e2 * sq))
    return L if posterior.weight is None else L * posterior.weight
