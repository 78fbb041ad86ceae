"""The posterior mode: Newton or L-BFGS for the GLMs, Adam for the MLP.

The mode anchors control variates, centres the Laplace preconditioner and is
where the chains start, so the optimiser replaces most of burn-in.
"""

import warnings

import numpy as np
from scipy.optimize import minimize

from ..models import GaussianPrior, minibatch_dtype
from ..utils import ConvergenceWarning, user_stacklevel
from ._kronecker import kronecker_covariance
from ._config import DEFAULT_MODE_CONFIG
from ._laplace import DENSE_MAX_PARAMS, diagonal_curvature, kronecker_fits, uses_dense
from ._newton import ModeResult, newton_mode
from ._warm import hessian_rows, warm_start

__all__ = ["ModeResult", "adam_batch", "adam_mode", "adam_starts", "find_mode", "lbfgs_mode"]

def find_mode(posterior, rng, *, max_iter=None, anchor=False, config=DEFAULT_MODE_CONFIG):
    """Mode of ``posterior`` as a :class:`ModeResult` ``(theta, n_grad_evals, hessian)``.

    Models with a dense exact Hessian (``p <= DENSE_MAX_PARAMS``) use damped Newton (a few passes;
    on large data warm-started from the mode of a subsample drawn with ``rng``), falling back to
    full-batch L-BFGS when Newton cannot proceed; larger GLMs use L-BFGS; models that declare
    ``random_init`` (the MLP) a few epochs of minibatch Adam from their random initialisation.
    ``hessian`` is Newton's Hessian at the mode, or None; above ``4 * hessian_rows`` rows (of a
    posterior with ``cheap_subsets``) it is estimated on the warm start's subsample, of
    ``hessian_rows`` rows (``ModeResult.hessian_rows``), and Newton stops at the looser
    ``config.sampled_tol``.  ``config`` (a :class:`~skbayes_sg.preprocessing.ModeConfig`)
    holds the subsample sizes and tolerances.  With ``anchor`` (control variates at the mode
    will follow) Newton's last pass also computes their
    :class:`~skbayes_sg.preprocessing.Anchor`, returned as ``ModeResult.anchor``: their own
    pass is saved.  L-BFGS on a softmax returns the feature
    Gram matrix it made (``ModeResult.gram``) for the Laplace approximation.
    """
    if posterior.model.random_init:
        return ModeResult(*adam_mode(posterior, rng, n_epochs=max_iter))
    newton_evals = 0
    if max_iter is None and uses_dense(posterior, "auto"):
        theta0, hessian0, newton_evals, warm = warm_start(posterior, rng, config)
        sampled = (theta0 is not None and posterior.cheap_subsets
                   and posterior.n_rows >= 4 * hessian_rows(posterior, config))
        res = newton_mode(posterior, theta0=theta0, hessian0=hessian0, exact_hessian=not sampled,
                          tol=config.sampled_tol if sampled else config.tol, anchor=anchor)
        newton_evals += res.n_grad_evals
        if res.theta is not None:
            if res.hessian is None:  # sampled, and no fallback computed the exact one
                H = warm.newton_terms(res.theta, hessian=True, value=False)[2]
                newton_evals += 2 * warm.n_rows
                res = res._replace(hessian=H, hessian_rows=warm.n_rows)
            return res._replace(n_grad_evals=newton_evals)
    theta, evals, gram = _lbfgs_search(posterior, max_iter or 500, config.rewhiten)
    return ModeResult(theta, evals + newton_evals, gram=gram)


def lbfgs_mode(posterior, *, max_iter=500, config=DEFAULT_MODE_CONFIG):
    """Full-batch L-BFGS on ``U`` from ``posterior.start()``; warns ``ConvergenceWarning`` if
    unconverged.

    GLMs with more than ``DENSE_MAX_PARAMS`` parameters (no Newton) run L-BFGS in coordinates
    ``u`` whitened by the curvature at the start (:func:`_whitening`), where the raw problem is
    badly scaled: on hashed text the bucket frequencies span orders of magnitude, and a softmax's
    weights are coupled across classes, which a diagonal scaling misses and the Kronecker
    coordinates capture; the whitened problem needs several times fewer passes.  ``gtol`` then
    bounds the gradient in (approximate) posterior-sd units.  Softmax coordinates are renewed
    once at the iterate after ``config.rewhiten`` iterations (a
    :class:`~skbayes_sg.preprocessing.ModeConfig`).

    Returns ``(theta, n_grad_evals)``.
    """
    return _lbfgs_search(posterior, max_iter, config.rewhiten)[:2]


def _lbfgs_search(posterior, max_iter, rewhiten):
    """``(theta, n_grad_evals, gram)``: :func:`lbfgs_mode` (re-whitened after ``rewhiten``
    iterations), and a softmax's feature Gram."""
    theta, evals, done, nfev, gram = posterior.start(), 0, 0, 0, None
    stages = (min(rewhiten, max_iter), max_iter) if kronecker_fits(posterior) else (max_iter,)
    for limit in stages:  # softmax: re-whitened once at the iterate if not converged by then
        to_theta, to_u, more, gram = _whitening(posterior, theta, gram)
        res = _lbfgs(posterior, theta, to_theta, to_u, limit - done)
        theta, evals, done, nfev = to_theta(res.x), evals + more, done + res.nit, nfev + res.nfev
        if res.success or done < limit or done >= max_iter:  # only the iteration limit goes on
            break
    if not res.success and done >= max_iter:
        warnings.warn(
            f"Mode search (L-BFGS) not converged in {max_iter} iterations: "
            f"{res.message}.\nStandardize X, or use a smaller prior_scale.",
            ConvergenceWarning, stacklevel=user_stacklevel(),
        )
    return theta, int(nfev) * posterior.n_rows + evals, gram


def _lbfgs(posterior, theta0, to_theta, to_u, max_iter):
    """L-BFGS on ``U(to_theta(u))`` from ``u = 0`` (``to_theta(0) = theta0``)."""
    def fun(u):
        value, grad = posterior.value_and_grad(to_theta(u)[None, :])
        return float(value[0]), to_u(grad[0])

    return minimize(fun, np.zeros_like(theta0), jac=True, method="L-BFGS-B",
                    options={"maxiter": max_iter, "gtol": 1e-8, "ftol": 1e-13})


def _whitening(posterior, theta0, gram=None):
    """``(to_theta, to_u, evals, gram)``: ``theta = theta0 + L u``, gradients ``L^T g``, the
    passes spent on ``L`` and a softmax's feature Gram matrix (made once, ``gram`` if given).

    ``L`` is a factor of the inverse curvature at the start, for GLMs with more than
    ``DENSE_MAX_PARAMS`` parameters: the Kronecker-factored one for softmax regression on dense
    rows (:func:`~skbayes_sg.preprocessing.kronecker_covariance`; at the start every row has the
    same class probabilities, so it is the exact likelihood Hessian there; two passes, and the
    Laplace at the mode reuses the Gram matrix of one), else the diagonal ``(∇²U)_jj^{-1/2}``
    (one pass).  Other models: ``L = I``.
    """
    model = posterior.model
    if not (model.is_glm and model.n_params > DENSE_MAX_PARAMS):
        return (lambda u: theta0 + u), (lambda g: g), 0, gram
    if kronecker_fits(posterior):
        cov, evals, gram = kronecker_covariance(posterior, theta0, gram)
        return ((lambda u: theta0 + cov.factor_rows(u[None])[0]),
                (lambda g: cov.factor_t_rows(g[None])[0]), evals, gram)
    s = 1.0 / np.sqrt(diagonal_curvature(posterior, theta0))
    return (lambda u: theta0 + s * u), (lambda g: g * s), posterior.n_rows, gram


def _adam_step(theta, g, m, v, buf, lr, beta1, beta2, t, eps=1e-8):
    """One Adam update of ``theta`` in place (moments ``m``, ``v``; ``buf`` scratch).

    The bias corrections are folded into the step and ``eps`` (Kingma and Ba's efficient form,
    the same update): no temporaries of size ``p`` (the MLP's 80k parameters made them cost
    about as much as the minibatch gradient).
    """
    m *= beta1
    m += np.multiply(g, 1.0 - beta1, out=buf)
    v *= beta2
    np.multiply(g, g, out=buf)
    buf *= 1.0 - beta2
    v += buf
    root = np.sqrt(1.0 - beta2**t)
    np.sqrt(v, out=buf)
    buf += eps * root
    np.divide(m, buf, out=buf)
    buf *= lr * root / (1.0 - beta1**t)
    theta -= buf


# Adam's minibatch: the largest of these that still gives an epoch this many steps, with the
# learning rate scaled in proportion (1e-3 at 128 rows).  A larger batch reaches at least as low a
# potential in the same epochs in less time: a step's products are about proportional to the
# rows but its update of the p parameters is not.
_ADAM_BATCHES, _ADAM_MIN_STEPS, _ADAM_BASE = (512, 256, 128), 100, 128
# Adam's run: about this many steps of _ADAM_BASE rows, in at most _ADAM_MAX_EPOCHS epochs; where
# the cap leaves fewer (small data), the rate grows in proportion, up to _ADAM_MAX_BOOST times
_ADAM_STEPS, _ADAM_MAX_EPOCHS, _ADAM_MAX_BOOST = 3000, 50, 5.0


def adam_batch(n_rows):
    """``(batch_size, lr)`` of :func:`adam_mode` for ``n_rows`` rows (see ``_ADAM_BATCHES``).

    Below 25,600 rows (100 steps of 256) it is ``(min(128, n_rows), 1e-3)``, as before the rule.
    """
    b = next((b for b in _ADAM_BATCHES if n_rows // b >= _ADAM_MIN_STEPS), _ADAM_BASE)
    return min(b, n_rows), 1e-3 * b / _ADAM_BASE


def adam_mode(posterior, rng, *, n_epochs=None, batch_size=None, lr=None):
    """Minibatch Adam on ``U`` (for the MLP), from ``model.init_position``.

    ``batch_size`` defaults to :func:`adam_batch`; ``n_epochs`` to enough epochs for about 3000
    steps of 128 rows (the same epochs whatever the batch), between 2 and 50; ``lr`` to
    :func:`adam_batch`'s, times the shortfall of those epochs' steps of 128 rows below 3000, at
    most 5 (below 7,680 rows 50 epochs are short of 3000 steps, and Adam at 1e-3 stops far
    from the optimum: a 1,000-row regression's noise sd was a quarter above the posterior's and
    the chains' drift from it was the default's largest error against NUTS).  With a
    float32 ``X`` everything runs in float32 -- the minibatch gradients, Adam's moments and the
    iterate (the usual precision of network training): the products are about half the time of
    float64 ones and the update's dozen passes over the ``p`` parameters move half the bytes.
    The optimum is returned in float64.
    """
    model, N = posterior.model, posterior.n_rows
    auto_b, auto_lr = adam_batch(N)
    b = auto_b if batch_size is None else min(int(batch_size), N)
    steps_per_epoch, base_steps = max(N // b, 1), max(N // _ADAM_BASE, 1)
    if n_epochs is None:
        n_epochs = int(np.clip(np.ceil(_ADAM_STEPS / base_steps), 2, _ADAM_MAX_EPOCHS))
    if lr is None:
        lr = auto_lr * float(np.clip(_ADAM_STEPS / (n_epochs * base_steps), 1.0, _ADAM_MAX_BOOST))
    work = minibatch_dtype(posterior.X) or np.float64  # float32 for a dense float32 X
    theta = model.init_position(rng)[None, :].astype(work)
    m, v, buf = np.zeros_like(theta), np.zeros_like(theta), np.empty_like(theta)
    prior_grad = _prior_grad(posterior, work)
    beta1, beta2, t = 0.9, 0.999, 0
    for _ in range(n_epochs):
        perm = rng.permutation(N)
        for k in range(steps_per_epoch):
            idx = perm[k * b:(k + 1) * b]
            w = posterior.rows_weight(idx)
            g = model.grad_sum(theta, *posterior.rows(idx), None if w is None else w.astype(work))
            g *= (posterior.n_data if w is None else N) / (b * posterior.n_data)
            g += prior_grad(theta, buf)
            t += 1
            _adam_step(theta, g, m, v, buf, lr, beta1, beta2, t)
    return theta[0].astype(np.float64), n_epochs * steps_per_epoch * b


def _prior_grad(posterior, work):
    """``(theta, out) -> ∇f_0(theta) / n_data`` in ``work`` precision (``out`` may be filled).

    A plain Gaussian prior's ``precision * theta`` runs with the precision cast once; other priors
    go through their own float64 ``grad``.
    """
    prior, n = posterior.prior, posterior.n_data
    if type(prior) is GaussianPrior:
        scaled = (prior.precision / n).astype(work)
        return lambda theta, out: np.multiply(theta, scaled, out=out)
    return lambda theta, out: (prior.grad(theta.astype(np.float64)) / n).astype(work)


def adam_starts(posterior, rngs):
    """One :func:`adam_mode` run per generator of ``rngs``, each from its own random
    initialisation: ``(thetas (len(rngs), p), n_grad_evals)``.

    Over-dispersed chain starts for a multimodal posterior (the MLP): hidden units permute and
    separate runs settle in different modes, so chains started there disagree unless they mix;
    starting every chain at one optimum would let R-hat miss the other modes.
    """
    runs = [adam_mode(posterior, rng) for rng in rngs]
    return np.array([theta for theta, _ in runs]), sum(evals for _, evals in runs)
