"""Damped Newton for the posterior mode of a GLM with a dense exact Hessian.

The GLM potentials are smooth and (for logistic and fixed-noise linear regression) strictly convex,
so Newton with a backtracking line search converges in a handful of iterations where L-BFGS on the
raw, ill-conditioned problem took 250-560 data passes (pendigits, covtype, a9a; on a9a it hit its
500-iteration cap).  The stopping rule is scale-free: the Newton decrement ``g' H^-1 g`` is the
squared distance to the mode in posterior-sd units.
"""

from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._laplace import full_hessian

__all__ = ["ModeResult", "newton_mode"]


def _direction(H, g):
    """``(H + lam I)^-1 g`` with the smallest tried ``lam >= 0`` that makes it PD.

    ``lam = 0`` (pure Newton) whenever ``H`` is positive definite; otherwise (linear regression
    with inferred noise far from the mode) the shift grows from ``1e-6 mean(|diag H|)`` by factors
    of 10 -- a descent direction either way.  None if no shift up to ``1e6 mean(|diag H|)`` works.
    """
    scale = float(np.mean(np.abs(np.diag(H)))) or 1.0
    for lam in [0.0] + [scale * 10.0**k for k in range(-6, 7)]:
        try:
            return cho_solve(cho_factor(H + lam * np.eye(len(g))), g)
        except (LinAlgError, ValueError):  # not PD, or non-finite entries
            continue
    return None


def _line_search(posterior, theta, step, decrement):
    """Largest ``t`` in 1, 1/2, ... with sufficient decrease (Armijo, c = 1/4)."""
    u0 = posterior.potential(theta[None, :])[0]
    t, evals = 1.0, 0
    while t > 1e-10:
        new = theta - t * step
        evals += posterior.n_rows
        if posterior.potential(new[None, :])[0] <= u0 - 0.25 * t * decrement:
            return new, evals
        t *= 0.5
    return None, evals


class ModeResult(NamedTuple):
    """A mode search: ``theta`` (None if it failed), the per-example
    evaluations spent, and the dense Hessian at ``theta`` when the method
    computed it (Newton; the Laplace approximation reuses it)."""

    theta: np.ndarray
    n_grad_evals: int
    hessian: np.ndarray = None


def newton_mode(posterior, *, theta0=None, max_iter=50, tol=1e-10):
    """Mode by damped Newton, as a :class:`ModeResult`.

    ``theta`` is None when Newton could not proceed (no positive-definite shift of the Hessian,
    line search failed, or ``max_iter`` reached); the caller then restarts with L-BFGS.  Each
    iteration costs a gradient pass, a Hessian pass and the line-search potentials (all counted as
    per-example evaluations); the last Hessian is the one at the mode.
    """
    theta = np.zeros(posterior.model.n_params) if theta0 is None else np.array(theta0, float)
    evals = 0
    for _ in range(max_iter):
        g = posterior.full_grad(theta[None, :])[0]
        H = full_hessian(posterior, theta)
        evals += 2 * posterior.n_rows
        step = _direction(H, g)
        if step is None or not np.all(np.isfinite(step)):
            return ModeResult(None, evals)
        decrement = float(g @ step)
        if decrement < tol * max(1, theta.size):
            return ModeResult(theta, evals, H)
        theta, more = _line_search(posterior, theta, step, decrement)
        evals += more
        if theta is None:
            return ModeResult(None, evals)
    return ModeResult(None, evals)
