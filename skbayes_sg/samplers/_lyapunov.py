"""Stationary variance of a linear two-variable recursion: the closed forms of the SG samplers.

On ``U = lam u^2 / 2`` every momentum sampler's step is linear-Gaussian,
``(theta, r) <- A (theta, r) + n e`` with ``e ~ N(0, q)``, so the stationary covariance solves
the discrete Lyapunov equation ``X = A X A^T + q n n^T``.
"""

import numpy as np

__all__ = ["position_variance"]


def position_variance(A, q, n1, n2):
    """``X[0, 0]`` of ``X = A X A^T + q n n^T`` for ``A (..., 2, 2)``, ``n = (n1, n2)``.

    The three unknowns of the symmetric ``X`` solve one 3 x 3 system, batched over the leading
    axes (the step-size rule passes a whole grid of steps).  ``inf`` where ``A`` has an
    eigenvalue on or outside the unit circle (Jury: ``|det A| < 1`` and ``|tr A| < 1 + det A``
    is stability).  Scalar inputs give a float.
    """
    A = np.asarray(A, dtype=float)
    a11, a12, a21, a22 = A[..., 0, 0], A[..., 0, 1], A[..., 1, 0], A[..., 1, 1]
    det, trace = a11 * a22 - a12 * a21, a11 + a22
    M = np.stack([np.stack([1.0 - a11 * a11, -2.0 * a11 * a12, -a12 * a12], -1),
                  np.stack([-a11 * a21, 1.0 - a11 * a22 - a12 * a21, -a12 * a22], -1),
                  np.stack([-a21 * a21, -2.0 * a21 * a22, 1.0 - a22 * a22], -1)], -2)
    n1, n2 = np.broadcast_arrays(n1, n2)
    q = np.broadcast_to(q, det.shape)
    rhs = (q[..., None] * np.stack([n1 * n1, n1 * n2, n2 * n2], -1))[..., None]
    stable = (np.abs(det) < 1.0) & (np.abs(trace) < 1.0 + det)
    M[~stable] = np.eye(3)  # any invertible matrix: the answer there is inf
    variance = np.where(stable, np.linalg.solve(M, rhs)[..., 0, 0], np.inf)
    return float(variance) if variance.ndim == 0 else variance
