"""Newton's warm start on a uniform subsample, and Hessians estimated on subsamples.

On large data, damped Newton on all the rows (:func:`~skbayes_sg.preprocessing.find_mode`)
starts from the mode of a uniform subsample, whose likelihood is scaled to ``N``; above a few
times :func:`hessian_rows` rows the Hessian at the mode is estimated on those rows instead of a
full, compute-bound pass.
"""

import numpy as np

from ._newton import newton_mode

__all__ = ["hessian_rows", "subsample_hessian", "warm_start"]

# Newton first runs on a uniform subsample of this many rows (likelihood scaled
# to N) when the data have at least 4x as many: full-data Newton then starts a
# few posterior sd from the mode, and its directions use the subsample's Hessian
# (about sqrt(p / m) off) until the one exact Hessian pass at the mode.
_WARM_ROWS = 65_536
# ... itself started from the mode of this many rows of it (max(4,096, 64 p)), if it has 4x as many
_FIRST_ROWS, _FIRST_ROWS_PER_PARAM = 4096, 64
# the subsample's mode need not be exact: it is about sqrt(N / m) sd from the full one
_WARM_TOL = 1e-6
# Above 4x max(_WARM_ROWS, _HESSIAN_ROWS_PER_PARAM * p) rows, the Hessian at the mode is estimated
# on that many uniform rows (scaled to N; the warm start's) instead of a full pass: it only shapes
# the preconditioner and the chains' starts (the chains sample the exact posterior whatever it
# is), its relative error is about 2 / sqrt(400) = 0.1 in the worst direction, and the full pass
# is compute-bound (n p^2 products, against the n p of a pass that only reads X).
_HESSIAN_ROWS_PER_PARAM = 400


def hessian_rows(posterior):
    """Rows of a subsample Hessian (the warm start's, :func:`subsample_hessian`'s):
    ``max(65,536, 400 p)``."""
    return max(_WARM_ROWS, _HESSIAN_ROWS_PER_PARAM * posterior.model.n_params)


def subsample_hessian(posterior, theta, rng):
    """``(∇²U(theta), evals)`` estimated on :func:`hessian_rows` uniform rows drawn with ``rng``
    (likelihood scaled to all the rows, the prior's Hessian exact)."""
    N, m = posterior.n_rows, min(hessian_rows(posterior), posterior.n_rows)
    sub = posterior.subset(np.sort(rng.choice(N, size=m, replace=False)))
    return sub.newton_terms(theta, hessian=True, value=False)[2], 2 * m


def warm_start(posterior, rng):
    """``(theta0, hessian0, evals, warm)``: Newton's mode and Hessian on a uniform subsample
    ``warm`` (a Posterior), or ``(None, None, 0, None)``.

    The subsample's likelihood is scaled by ``N / m`` (weights), so its mode is within about
    ``sqrt(N / m)`` posterior sd of the full mode and its Hessian estimates the full one.  It has
    :func:`hessian_rows` rows where :func:`find_mode` estimates the Hessian at the mode on a
    subsample (``cheap_subsets`` and ``N`` at least four times that): on these same rows, with no
    second gather.  Else ``_WARM_ROWS``.  Newton on it starts from the mode of a smaller
    subsample (:func:`_staged_newton`).
    """
    N, m = posterior.n_rows, hessian_rows(posterior)
    if not (posterior.cheap_subsets and N >= 4 * m):
        m = _WARM_ROWS
    if N < 4 * m:
        return None, None, 0, None
    warm = posterior.subset(np.sort(rng.choice(N, size=m, replace=False)))
    res, evals = _staged_newton(warm, rng)
    return res.theta, res.hessian, evals, warm


def _staged_newton(posterior, rng):
    """``(ModeResult, evals)`` of Newton on ``posterior`` (a subsample, to ``_WARM_TOL``),
    started from the mode and Hessian of ``_first_rows`` of its rows when it has four times as
    many: the exact Hessian passes of a start far out are then paid on the small set (from the
    first stage's mode the larger set needs gradient passes and one Hessian pass)."""
    n, m = posterior.n_rows, _first_rows(posterior)
    if n < 4 * m:
        res = newton_mode(posterior, tol=_WARM_TOL)
        return res, res.n_grad_evals
    first = newton_mode(posterior.subset(np.sort(rng.choice(n, size=m, replace=False))),
                        tol=_WARM_TOL)
    res = newton_mode(posterior, theta0=first.theta, hessian0=first.hessian, tol=_WARM_TOL)
    evals = first.n_grad_evals + res.n_grad_evals
    if res.theta is None:  # the first stage failed, or its start did: from the model's start
        res = newton_mode(posterior, tol=_WARM_TOL)
        evals += res.n_grad_evals
    return res, evals


def _first_rows(posterior):
    """Rows of the first stage of :func:`_staged_newton`: ``max(4,096, 64 p)`` (its Hessian
    about ``sqrt(p / m) = 1/8`` off, so the second stage converges at about that rate)."""
    return max(_FIRST_ROWS, _FIRST_ROWS_PER_PARAM * posterior.model.n_params)
