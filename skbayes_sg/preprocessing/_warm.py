"""Newton's warm start on a uniform subsample, and Hessians estimated on subsamples.

On large data, damped Newton on all the rows (:func:`~skbayes_sg.preprocessing.find_mode`)
starts from the mode of a uniform subsample, whose likelihood is scaled to ``N``; above a few
times :func:`hessian_rows` rows the Hessian at the mode is estimated on those rows instead of a
full, compute-bound pass.  The sizes and tolerances are fields of
:class:`~skbayes_sg.preprocessing.ModeConfig` (each says why its value).
"""

import numpy as np

from ._config import DEFAULT_MODE_CONFIG
from ._newton import newton_mode

__all__ = ["hessian_rows", "subsample_hessian", "warm_start"]


def hessian_rows(posterior, config=DEFAULT_MODE_CONFIG):
    """Rows of a subsample Hessian (the warm start's, :func:`subsample_hessian`'s):
    ``max(warm_rows, hessian_rows_per_param p)`` of ``config`` (65,536 and 400 p)."""
    return max(config.warm_rows, config.hessian_rows_per_param * posterior.model.n_params)


def subsample_hessian(posterior, theta, rng, rows=None):
    """``(∇²U(theta), evals)`` estimated on ``rows`` uniform rows drawn with ``rng`` (default
    :func:`hessian_rows`; likelihood scaled to all the rows, the prior's Hessian exact)."""
    rows = hessian_rows(posterior) if rows is None else rows
    N, m = posterior.n_rows, min(rows, posterior.n_rows)
    sub = posterior.subset(np.sort(rng.choice(N, size=m, replace=False)))
    return sub.newton_terms(theta, hessian=True, value=False)[2], 2 * m


def warm_start(posterior, rng, config=DEFAULT_MODE_CONFIG):
    """``(theta0, hessian0, evals, warm)``: Newton's mode and Hessian on a uniform subsample
    ``warm`` (a Posterior), or ``(None, None, 0, None)``.

    The subsample's likelihood is scaled by ``N / m`` (weights), so its mode is within about
    ``sqrt(N / m)`` posterior sd of the full mode and its Hessian estimates the full one.  It has
    :func:`hessian_rows` rows where :func:`find_mode` estimates the Hessian at the mode on a
    subsample (``cheap_subsets`` and ``N`` at least four times that): on these same rows, with no
    second gather.  Else ``config.warm_rows``.  Newton on it starts from the mode of a smaller
    subsample (:func:`_staged_newton`).
    """
    N, m = posterior.n_rows, hessian_rows(posterior, config)
    if not (posterior.cheap_subsets and N >= 4 * m):
        m = config.warm_rows
    if N < 4 * m:
        return None, None, 0, None
    warm = posterior.subset(np.sort(rng.choice(N, size=m, replace=False)))
    res, evals = _staged_newton(warm, rng, config)
    return res.theta, res.hessian, evals, warm


def _staged_newton(posterior, rng, config):
    """``(ModeResult, evals)`` of Newton on ``posterior`` (a subsample, to ``config.warm_tol``),
    started from the mode and Hessian of :func:`_first_rows` of its rows when it has four times
    as many: the exact Hessian passes of a start far out are then paid on the small set (from the
    first stage's mode the larger set needs gradient passes and one Hessian pass)."""
    n, m, tol = posterior.n_rows, _first_rows(posterior, config), config.warm_tol
    if n < 4 * m:
        res = newton_mode(posterior, tol=tol)
        return res, res.n_grad_evals
    first = newton_mode(posterior.subset(np.sort(rng.choice(n, size=m, replace=False))), tol=tol)
    res = newton_mode(posterior, theta0=first.theta, hessian0=first.hessian, tol=tol)
    evals = first.n_grad_evals + res.n_grad_evals
    if res.theta is None:  # the first stage failed, or its start did: from the model's start
        res = newton_mode(posterior, tol=tol)
        evals += res.n_grad_evals
    return res, evals


def _first_rows(posterior, config):
    """Rows of the first stage of :func:`_staged_newton`: ``max(first_rows,
    first_rows_per_param p)`` of ``config`` (4,096 and 64 p)."""
    return max(config.first_rows, config.first_rows_per_param * posterior.model.n_params)
