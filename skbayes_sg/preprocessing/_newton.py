"""Damped Newton for the posterior mode of a GLM with a dense exact Hessian.

The GLM potentials are smooth and (for logistic and fixed-noise linear regression) strictly convex,
so Newton with a backtracking line search converges in a handful of iterations where L-BFGS on the
raw, ill-conditioned problem needs hundreds of data passes and can hit its iteration cap.  The
stopping rule is scale-free: the Newton decrement ``g' H^-1 g`` is the squared distance to the mode
in posterior-sd units.

Passes.  Every evaluation is one pass over the rows (:meth:`~skbayes_sg.models.Posterior.
newton_terms`: value, gradient and, when asked, the Hessian from one read of each chunk).  The
Hessian pass is the expensive one (``n d^2`` products against ``n d`` for the gradient), so given
an approximate Hessian (a subsample's, :func:`~skbayes_sg.preprocessing.find_mode`), the iterations
use it -- refined by a BFGS update from each step's gradient change -- and compute the exact one
only when they are about to stop (unless the caller estimates it on a subsample:
``exact_hessian=False``), or when the approximation converges too slowly (then every iteration
refreshes it).
The line search is skipped within ``sqrt(_NEAR)`` posterior sd of the mode, where the potential is
quadratic to within its rounding (with float32 ``X`` its rounding noise grows with the rows and on
large data exceeds the decrease it would test).

Rounded positions.  A model whose passes evaluate the position rounded to ``X``'s precision
(``posterior.evaluation_dtype``: binary logistic on float32 rows) gets iterates rounded to it, so
each gradient is that of the iterate itself (not of a neighbour one float32 spacing away: that
systematic error grows with the rows and on large data exceeds the tolerance).  The search stops
once the Newton target of an iterate is the mode to the tolerance (:func:`_finer`) and returns that
target, in float64: finer than the representable points.
"""

from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._anchor import Anchor
from ._kronecker import FeatureGram

__all__ = ["ModeResult", "newton_mode"]

_NEAR = 1e-3  # decrement below which the full step is taken without a line search
_SLOW = 0.1  # an approximate Hessian whose decrement shrinks by less than this is replaced
_STALE = 1e-4  # the returned Hessian is the exact one at most sqrt(_STALE) sd from the mode


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


class ModeResult(NamedTuple):
    """A mode search: ``theta`` (None if it failed), the per-example evaluations spent, and the
    dense Hessian when the method computed it (Newton: the exact Hessian at ``theta`` or at an
    iterate within 0.01 posterior sd of it; the Laplace approximation reuses it).
    ``hessian_rows``: None for a Hessian of all the rows, else the size of the uniform subsample
    it was estimated on (scaled to all the rows, :func:`~skbayes_sg.preprocessing.find_mode`).
    ``anchor``: the control-variate :class:`~skbayes_sg.preprocessing.Anchor` when asked for
    (``newton_mode(..., anchor=True)``) and the last pass computed it, else None.  ``gram``: a
    softmax's :class:`~skbayes_sg.preprocessing.FeatureGram` when the search made it (L-BFGS in
    Kronecker coordinates), for the Laplace approximation."""

    theta: np.ndarray
    n_grad_evals: int
    hessian: np.ndarray = None
    hessian_rows: int = None
    anchor: Anchor = None
    gram: FeatureGram = None


class _Anchor:
    """The rows' responses of the last full-data evaluation and its position (``anchor=True``).

    The search's last pass is at the iterate it stops at, within the tolerance of the mode (the
    mode itself, or for rounded positions the iterate its Newton target is computed from): what
    control variates need there -- ``G = sum_i m_i ∇f_i`` and a GLM's ``r_i`` (rows in memory)
    -- comes from that pass, and their own pass over the rows is saved.  The estimator is exactly
    unbiased at any anchor point whose ``G`` and ``∇f_i`` agree, so control variates use that
    point.
    """

    def __init__(self, posterior):
        self.out, self.at = posterior.response_buffer(), None

    def terms(self, posterior, it):
        """``(G, responses, it.theta)`` if the last evaluation was at ``it.theta``, else None."""
        if self.at is not it.theta:
            return None
        return Anchor(it.grad - posterior.prior.grad(it.theta[None])[0], self.out, it.theta)


class _Iterate(NamedTuple):
    theta: np.ndarray
    value: float  # None when not computed (full steps near the mode do not need it)
    grad: np.ndarray
    hessian: np.ndarray  # exact Hessian at theta, or None


def _rounded(posterior, theta):
    """``theta`` rounded to ``posterior.evaluation_dtype`` (as float64), or ``theta``."""
    dtype = posterior.evaluation_dtype
    return theta if dtype is None else theta.astype(dtype).astype(np.float64)


def _finer(posterior, theta, step, decrement, previous, tol):
    """Whether a rounded iterate's Newton target ``theta - step`` is the mode to ``tol``: the
    step is within one spacing of the rounded positions in every coordinate, or the linear
    convergence (``decrement^2 / previous``) predicts the target's decrement below ``tol``.

    The decrement of the iterate itself stalls at its rounding (``sum_j H_jj spacing_j^2 / 12``,
    which grows with the rows and on large float32 data exceeds ``tol``), but its gradient is
    exact, so the target is accurate; coordinates near zero have spacings finer than the float32
    noise of the gradient, so the first test alone would not end it.
    """
    dtype = posterior.evaluation_dtype
    if dtype is None:
        return False
    if previous is not None and decrement * decrement / previous < tol:
        return True
    return bool(np.all(np.abs(step) <= np.abs(np.spacing(theta.astype(dtype)))))


def _evaluate(posterior, theta, hessian, value=True, anchor=None):
    """The iterate at ``theta`` (rounded, :func:`_rounded`) and its per-example evaluations
    (``2 n`` with the Hessian); with an :class:`_Anchor`, the rows' responses recorded in it."""
    theta = _rounded(posterior, theta)
    responses = None if anchor is None else anchor.out
    it = _Iterate(theta, *posterior.newton_terms(theta, hessian, value, responses))
    if anchor is not None:
        anchor.at = theta
    return it, posterior.n_rows * (1 + bool(hessian))


def _advance(posterior, it, step, decrement, hessian, anchor=None):
    """The next iterate and its cost: the full step near the mode, else Armijo (c = 1/4)."""
    if decrement < _NEAR:
        return _evaluate(posterior, it.theta - step, hessian, value=False, anchor=anchor)
    evals = 0
    if it.value is None:  # came by a full step, and is now far: the value it skipped
        it, evals = it._replace(value=posterior.newton_terms(it.theta, False)[0]), posterior.n_rows
    t = 1.0
    for _ in range(35):  # t down to 2^-34 ~ 6e-11
        with np.errstate(over="ignore", invalid="ignore"):  # a trial far out is rejected below
            new, more = _evaluate(posterior, it.theta - t * step, hessian, anchor=anchor)
        evals += more
        if np.isfinite(new.value) and new.value <= it.value - 0.25 * t * decrement:
            return new, evals
        t *= 0.5
    return None, evals


def _at_floor(exact, it, decrement, previous):
    """Whether exact Newton steps near the mode stopped shrinking the decrement: its rounding
    floor (residuals of a target with a large offset, ``y + 1e6``, lose digits).  Exact steps
    there shrink it quadratically, so a fall by less than ``_SLOW`` is the noise."""
    return (exact and it.hessian is not None and previous is not None and decrement < _NEAR
            and decrement > _SLOW * previous)


def newton_mode(posterior, *, theta0=None, hessian0=None, max_iter=100, tol=1e-10,
                exact_hessian=True, anchor=False):
    """Mode by damped Newton, as a :class:`ModeResult`.

    Parameters
    ----------
    posterior : Posterior
    theta0 : ndarray of shape (p,), optional
        Start; default ``posterior.start()`` (the model's own start).
    hessian0 : ndarray of shape (p, p), optional
        An approximate Hessian (a subsample's): used for the directions until the iterations are
        about to stop, then the exact Hessian is computed once (see the module docstring).
        Without it every iteration computes the exact Hessian.
    max_iter : int
        Passes allowed, in per-example evaluations over ``n_rows`` (a Hessian pass counts 2).
    tol : float
        Stop when the decrement is below ``tol * p``.
    exact_hessian : bool, default=True
        Whether the result carries the exact Hessian at the mode (one more pass if the iterations
        did not end with one).  False with ``hessian0``: the caller estimates it on a subsample
        (the returned ``hessian`` is then None unless a fallback computed the exact one there).
    anchor : bool, default=False
        Whether the passes also record the control-variate anchor (:class:`_Anchor`), returned
        as ``ModeResult.anchor`` when the last one was at the iterate the search stops at.

    Returns
    -------
    ModeResult
        ``theta`` None when Newton could not proceed (no positive-definite shift of the Hessian,
        line search failed, or ``max_iter`` reached); the caller then restarts with L-BFGS.
    """
    p, n = posterior.model.n_params, posterior.n_rows
    theta = posterior.start() if theta0 is None else np.array(theta0, dtype=float)
    tol, exact = tol * max(1, p), hessian0 is None
    record = _Anchor(posterior) if anchor else None
    it, evals = _evaluate(posterior, theta, exact, anchor=record)
    H, h_exact, moved, previous = hessian0, False, 0.0, None
    while evals < max_iter * n:
        if it.hessian is not None:
            H, h_exact, moved = it.hessian, True, 0.0
        step = _direction(H, it.grad)
        if step is None or not np.all(np.isfinite(step)):
            return ModeResult(None, evals)
        decrement = float(it.grad @ step)
        finer = _finer(posterior, it.theta, step, decrement, previous, tol)
        if decrement < tol or finer or _at_floor(exact, it, decrement, previous):
            mode = it.theta - step if finer else it.theta
            at = None if record is None else record.terms(posterior, it)
            if h_exact and moved < _STALE:
                return ModeResult(mode, evals, H, anchor=at)
            if not exact_hessian:
                return ModeResult(mode, evals, anchor=at)
            it, more = _evaluate(posterior, it.theta, True, anchor=record)  # the exact Hessian
            evals += more
            continue
        switch = previous is not None and not exact and decrement > _SLOW * previous
        exact = exact or switch  # the approximate Hessian converges too slowly: replace it
        about_to_stop = previous is not None and decrement * decrement / previous < tol
        stale = exact_hessian and (not h_exact or moved + decrement >= _STALE)
        nxt, more = _advance(posterior, it, step, decrement, exact or (about_to_stop and stale),
                             record)
        evals += more
        if nxt is None and exact:
            return ModeResult(None, evals)
        if nxt is None:  # the approximate Hessian failed: restart here with the exact one
            exact, previous = True, None
            it, more = _evaluate(posterior, it.theta, True, anchor=record)
            evals += more
            continue
        if nxt.hessian is None and not h_exact:
            H = _bfgs(H, nxt.theta - it.theta, nxt.grad - it.grad)
        moved += decrement
        it, previous = nxt, None if switch else decrement
    return ModeResult(None, evals)


def _bfgs(H, s, y):
    """The BFGS update of the approximate Hessian ``H`` by the step ``s`` and gradient change ``y``
    (``H s = y`` afterwards); ``H`` unchanged when the pair has no positive curvature."""
    Hs = H @ s
    ys, sHs = float(y @ s), float(s @ Hs)
    if not (ys > 0 and sHs > 0):
        return H
    return H - np.outer(Hs, Hs) / sHs + np.outer(y, y) / ys
