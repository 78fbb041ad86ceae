"""The posterior mode: Newton or L-BFGS for the GLMs, Adam for the MLP.

The mode anchors control variates, centres the Laplace preconditioner and is
where the chains start, so the optimiser replaces most of burn-in.
"""

import warnings
from dataclasses import replace

import numpy as np
from scipy.optimize import minimize

from ..utils import ConvergenceWarning
from ._laplace import uses_dense
from ._newton import ModeResult, newton_mode

__all__ = ["ModeResult", "find_mode", "lbfgs_mode", "adam_mode"]

# Newton first runs on a uniform subsample of this many rows (likelihood scaled
# to N) when the data have at least 4x as many: full-data Newton then starts a
# few posterior sd from the mode and needs 2-3 iterations instead of 6-8.
_WARM_ROWS = 65_536


def find_mode(problem, rng, *, max_iter=None):
    """Mode of ``problem`` as a :class:`ModeResult` ``(theta, n_grad_evals, hessian)``.

    GLMs with a dense exact Hessian (``p <= DENSE_MAX_PARAMS``) use damped
    Newton (a few passes; on large data warm-started from the mode of a
    subsample drawn with ``rng``), falling back to full-batch L-BFGS when
    Newton cannot proceed; larger GLMs use L-BFGS; the MLP a few epochs of
    minibatch Adam from a Glorot initialisation.  ``hessian`` is Newton's
    Hessian at the mode, or None.
    """
    if getattr(problem.model, "is_glm", False) or not hasattr(problem.model, "init_position"):
        newton_evals = 0
        if max_iter is None and uses_dense(problem, "auto"):
            theta0, newton_evals = _warm_start(problem, rng)
            res = newton_mode(problem, theta0=theta0)
            newton_evals += res.n_grad_evals
            if res.theta is not None:
                return res._replace(n_grad_evals=newton_evals)
        theta, evals = lbfgs_mode(problem, max_iter=max_iter or 500)
        return ModeResult(theta, evals + newton_evals)
    return ModeResult(*adam_mode(problem, rng, n_epochs=max_iter))


def _warm_start(problem, rng):
    """``(theta0, evals)``: Newton's mode on a subsample, or ``(None, 0)``.

    The subsample's likelihood is scaled by ``N / m`` (weights), so its mode
    is within about ``sqrt(N / m)`` posterior sd of the full mode.
    """
    N, m = problem.n_rows, _WARM_ROWS
    if N < 4 * m:
        return None, 0
    idx = np.sort(rng.choice(N, size=m, replace=False))
    w = problem.rows_weight(idx)
    w = np.full(m, N / m) if w is None else w * (N / m)
    res = newton_mode(replace(problem, X=problem.X[idx], y=problem.y[idx], weight=w))
    return res.theta, res.n_grad_evals


def lbfgs_mode(problem, *, max_iter=500, theta0=None):
    """Full-batch L-BFGS on ``U``; warns ``ConvergenceWarning`` if unconverged."""
    p = problem.model.n_params
    x0 = np.zeros(p) if theta0 is None else theta0

    def fun(theta):
        t = theta[None, :]
        return float(problem.potential(t)[0]), problem.full_grad(t)[0]

    res = minimize(fun, x0, jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "gtol": 1e-8, "ftol": 1e-13})
    if not res.success and res.nit >= max_iter:
        warnings.warn(
            f"Mode finding (L-BFGS) did not converge in {max_iter} iterations: "
            f"{res.message}. Standardize X or increase prior regularisation.",
            ConvergenceWarning,
        )
    return res.x, int(res.nfev) * problem.n_rows


def adam_mode(problem, rng, *, n_epochs=None, batch_size=128, lr=1e-3):
    """Minibatch Adam on ``U`` (for the MLP), from ``model.init_position``.

    ``n_epochs`` defaults to enough epochs for about 3000 steps, between 2
    and 50 epochs.
    """
    model, N = problem.model, problem.n_rows
    b = min(batch_size, N)
    steps_per_epoch = max(N // b, 1)
    if n_epochs is None:
        n_epochs = int(np.clip(np.ceil(3000 / steps_per_epoch), 2, 50))
    theta = model.init_position(rng)[None, :]
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    beta1, beta2, t = 0.9, 0.999, 0
    for _ in range(n_epochs):
        perm = rng.permutation(N)
        for k in range(steps_per_epoch):
            idx = perm[k * b:(k + 1) * b]
            w = problem.rows_weight(idx)
            g = model.grad_sum(theta, problem.X[idx], problem.y[idx], w) * (problem.n_data / b if w is None else N / b)
            g = (g + problem.prior.grad(theta)) / problem.n_data
            t += 1
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            theta = theta - lr * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + 1e-8)
    return theta[0], n_epochs * steps_per_epoch * b
