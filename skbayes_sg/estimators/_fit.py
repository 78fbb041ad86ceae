"""The steps of ``fit`` between validated data and stored draws.

``prepare`` runs the preprocessing (mode, Laplace approximation, the strategy's own preprocessing,
tuning) and returns one :class:`Prepared` record; ``sample`` runs the chains, serially or in joblib
workers.  Both are plain functions so the estimator classes stay small.
"""

import time
from dataclasses import dataclass, replace

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from ..fitting import check_combination
from ..models import Laplace, Posterior
from ..preprocessing import find_mode, laplace_at
from ..samplers import SAMPLERS, from_laplace, identity, run_chains
from ..subsampling import SUBSAMPLING
from ..utils import DivergenceError, blas_threads
from ._starts import ChainStarts
from ._tuning import AUTO_BATCH, Tuning, tune

__all__ = ["Prepared", "check_combination", "prepare", "resolve", "sample_with_retries"]


@dataclass(frozen=True, eq=False)
class Prepared:
    """Everything sampling needs, built once per fit."""

    posterior: Posterior
    laplace: Laplace
    precond: object
    estimator: object
    tuning: Tuning
    theta0: np.ndarray
    info: dict
    sampler: object = None


def resolve(value, registry):
    """A fresh object for a string shortcut or a clone of a given object."""
    return registry[value]() if isinstance(value, str) else clone(value, safe=False)


def prepare(posterior, sampler, strategy, *, batch_size, step_size, preconditioner, n_chains,
            streams, dispersion=1.0, init="laplace", exact_switch=False, alternative=None,
            n_steps=0):
    """Mode, Laplace approximation, preconditioner, gradient estimator, tuning, start points.

    With ``exact_switch`` (``sampler="auto"``), a minibatch that reaches all the rows means the
    gradient is exact, and a diffusion without a Metropolis test would only add its
    discretisation error (and, at large steps, tail excursions): the chains then run
    Metropolis-corrected :class:`~skbayes_sg.samplers.HMC` on ``subsampling="full"``
    (``Prepared.sampler`` is the sampler that runs).  With an ``alternative`` strategy
    (``subsampling="auto"``) :func:`_choose_strategy` may run it instead of ``strategy``;
    ``n_steps`` are the steps of a chain's base run.

    The chains start where ``init`` says (a key of :data:`~._starts.STARTS`): Laplace
    draws around the mode scaled by ``dispersion`` (the default; the MLP's chains ``1..`` around
    their own Adam optima, run alongside the rest and counted in the preprocessing,
    :mod:`._starts`), the mode, zeros, or prior draws (cold starts, for convergence-speed
    experiments).

    BLAS runs on one thread: the work is a long series of small products over row chunks, which
    gain little from a second thread, and with the other core busy (joblib chains, another job) a
    two-thread ``(A * c).T @ A`` on an 8192 x 51 chunk took 0.17 s instead of 1.6 ms -- the Newton
    Hessians of a 10^6-row fit went from under 2 s to 36 s.
    """
    background = blas_threads() > 1  # before the limit below (it holds for every thread)
    with threadpool_limits(1, user_api="blas"), ChainStarts(  # the MLP's Adam runs begin now
            posterior, init, streams.child("init"), n_chains, dispersion,
            background=background) as starts:
        anchor = any(s is not None and s.anchors_at_mode for s in (strategy, alternative))
        mode = find_mode(posterior, streams.child("mode"), anchor=anchor)
        laplace, laplace_evals = laplace_at(
            posterior, mode.theta, "auto" if preconditioner is None else preconditioner,
            mode.hessian, mode.hessian_rows)
        precond = identity() if preconditioner is None else from_laplace(laplace)
        strategy, estimator, tuning = _choose_strategy(
            sampler, strategy, alternative, posterior, laplace, precond, n_chains * n_steps,
            batch_size=batch_size, step_size=step_size, streams=streams,
            choose_friction=exact_switch)
        if exact_switch and tuning.batch_size >= posterior.n_rows and not estimator.exact:
            sampler, strategy = SAMPLERS["hmc"](), SUBSAMPLING["full"]()
            spent = tuning.n_grad_evals + estimator.preprocessing_evals
            estimator, tuning = tune(sampler, strategy, posterior, laplace, precond,
                                     batch_size=batch_size, step_size=step_size, streams=streams)
            tuning = replace(tuning, n_grad_evals=tuning.n_grad_evals + spent)
        theta0, start_evals = starts.result(laplace)
    evals = (mode.n_grad_evals + laplace_evals + tuning.n_grad_evals
             + estimator.preprocessing_evals + start_evals)
    info = {"preprocessing_grad_evals": int(evals), "curvature": tuning.curvature,
            "curvature_min": tuning.curvature_min,
            "gradient_noise": tuning.gradient_noise, "gradient_noise_left": tuning.noise_left,
            "batch_size": tuning.batch_size,
            "laplace_hessian_rows": laplace.hessian_rows,
            "sampler": sampler.name, "subsampling": strategy.name, **estimator.outputs}
    return Prepared(posterior, laplace, precond, estimator, tuning, theta0, info, sampler)


def _choose_strategy(sampler, strategy, alternative, posterior, laplace, precond, run_steps,
                     **kwargs):
    """``(strategy, estimator, tuning)``: ``strategy`` tuned, or ``alternative`` where it cannot
    pay for its own preprocessing (``subsampling="auto"``).

    ``strategy`` is ``preferential_cv``, ``alternative`` uniform control variates.  The curvature
    weights cost a pass over the data (and ``n d^2 / 2`` products) and pay by lowering the
    minibatch noise, which lets the automatic batch shrink or the step grow.  Where one pass
    (``N`` evaluations) is at least the chains' whole base run at the smallest automatic batch
    (``run_steps * AUTO_BATCH``) and uniform rows need no larger batch, they cannot save that
    much: the batch cannot shrink, and the automatic step is already at least half its
    noise-free value, so a larger one buys at most about one doubling of the sampling phase (at
    most a base run).  Uniform control variates are tuned first there, and kept when their batch
    stays at ``AUTO_BATCH`` (10^6 x 50 float32 rows: the weights took 0.16 s of a 0.60 s fit,
    and both strategies ran 2,500 steps of 100 rows; 10^7: 1.7 s of 2.9 s).
    """
    auto = kwargs["batch_size"] == "auto" and kwargs["step_size"] == "auto"
    if alternative is not None and auto and posterior.n_rows >= run_steps * AUTO_BATCH:
        estimator, tuning = tune(sampler, alternative, posterior, laplace, precond, probe=True,
                                 **kwargs)
        if tuning.batch_size <= AUTO_BATCH or estimator.exact:
            return alternative, estimator, tuning
        spent = tuning.n_grad_evals + estimator.preprocessing_evals
        estimator, tuning = tune(sampler, strategy, posterior, laplace, precond, **kwargs)
        return strategy, estimator, replace(tuning, n_grad_evals=tuning.n_grad_evals + spent)
    return strategy, *tune(sampler, strategy, posterior, laplace, precond, **kwargs)


_MAX_RETRIES, _RETRY_FACTOR = 3, 0.25


def sample_with_retries(sampler, prep, streams, *, auto, **kwargs):
    """:func:`sample`; with ``step_size="auto"``, retry smaller steps on divergence.

    A chain that diverges with the automatic step -- in warm-up, or later where the step tuned at
    the mode is too large (an MLP chain started in another mode, of higher curvature) -- restarts
    all chains with the step multiplied by 0.25 and fresh chain streams (``streams.retry(k)``, so
    still reproducible), at most three times; ``info["step_size_retries"]`` records how many.
    With a user-given step, or after the retries, the :class:`DivergenceError` propagates.
    """
    noise, index, step = streams.noise, streams.index, prep.tuning.step_size
    for retry in range(_MAX_RETRIES + 1):
        if retry:
            noise, index = streams.retry(retry)
        try:
            draws, evals, steps, info, seconds = sample(sampler, prep, noise, index, step,
                                                        **kwargs)
            info["step_size_retries"] = retry
            return draws, evals, steps, info, seconds
        except DivergenceError as err:
            if not auto or retry == _MAX_RETRIES:
                err.args = (f"{err} {_step_origin(auto, retry)}",)
                raise
            step *= _RETRY_FACTOR
            if kwargs.get("progress") is not None:
                kwargs["progress"].write(f"{err} Retrying with step_size={step:.3g}.")


def _step_origin(auto, retry):
    """Where the diverging step came from, for the :class:`DivergenceError` message."""
    if not auto:
        return "The step was set by hand: step_size='auto' sizes it from the curvature."
    return (f"The step was the automatic one (step_size='auto'), divided by 4 {retry} time(s) "
            "after divergences in warm-up.")


def _run_group(sampler, prep, ids, noise, index, step, n_warmup, n_draws, thin, progress):
    return run_chains(sampler, prep.estimator, prep.theta0[ids], [noise[c] for c in ids],
                      [index[c] for c in ids], step_size=step, precond=prep.precond,
                      n_warmup=n_warmup, n_draws=n_draws, thin=thin, progress=progress,
                      chain_ids=ids, noise_correction=prep.tuning.noise_correction)


def sample(sampler, prep, noise, index, step, *, n_warmup, n_draws, thin, n_jobs,
           progress=None):
    """Run all chains; with ``n_jobs`` > 1 chain groups go to joblib workers.

    Chain ``c`` uses only its own streams ``noise[c]``, ``index[c]``, so draws do not depend on
    ``n_jobs``.  Returns ``(draws (C, n_draws, p), n_grad_evals, step_sizes, info, seconds)``.
    """
    C = prep.theta0.shape[0]
    n_groups = min(C, effective_n_jobs(n_jobs))
    groups = [list(g) for g in np.array_split(np.arange(C), n_groups)]
    args = (noise, index, step, n_warmup, n_draws, thin, progress)
    start = time.perf_counter()
    if n_groups == 1:
        traces = [_run_group(sampler, prep, groups[0], *args)]
    else:
        traces = Parallel(n_jobs=n_groups)(
            delayed(_run_group)(sampler, prep, g, *args) for g in groups)
    seconds = time.perf_counter() - start
    draws = traces[0].draws if len(traces) == 1 else np.concatenate([t.draws for t in traces])
    info = {k: np.concatenate([np.atleast_1d(t.info[k]) for t in traces])
            for k in traces[0].info}
    steps = np.concatenate([t.step_size for t in traces])
    return draws, sum(t.n_grad_evals for t in traces), steps, info, seconds
