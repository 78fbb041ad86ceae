"""The steps of ``fit`` between validated data and stored draws.

``prepare`` runs the preprocessing (mode, Laplace preconditioner, the
strategy's own preprocessing, the step-size pilots) and ``sample`` runs the
chains, serially or in joblib processes.  Both are plain functions so the
estimator classes stay small.
"""

import time
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from ..preprocessing import (
    find_mode,
    gradient_noise,
    laplace_covariance,
    laplace_draws,
    power_curvature,
    whitened_curvature,
)
from ..samplers import (
    SAMPLERS,
    auto_batch_size,
    auto_step_size,
    dense,
    diagonal,
    identity,
    run_chains,
)
from ..subsampling import SUBSAMPLING, Problem
from ..utils import DivergenceError

__all__ = ["Prepared", "prepare", "resolve", "sample", "sample_with_retries"]


class Prepared(NamedTuple):
    """Everything sampling needs, built once per fit."""

    estimator: object
    precond: object
    step_size: float
    theta0: np.ndarray
    mode: np.ndarray
    info: dict


# Gradient-noise pilot: the CV noise grows like ||theta - mode||^2, so its mean over
# the Laplace draws needs many positions (4 gave a 6x spread of the auto step).
_PILOT_POSITIONS, _PILOT_ESTIMATES = 16, 8
# batch_size="auto": start here, double while the gradient noise binds the auto step, stop here
AUTO_BATCH, AUTO_BATCH_MAX = 100, 1600

def resolve(value, registry, what):
    """A fresh object for a string shortcut or a clone of a given object."""
    if isinstance(value, str):
        return registry[value]()
    return clone(value, safe=False)


def check_combination(sampler, strategy):
    """Raise a ValueError for sampler/subsampling pairs that make no sense."""
    if sampler.needs_exact_gradient and not strategy.exact:
        exact = sorted(k for k, v in SUBSAMPLING.items() if v().exact)
        raise ValueError(
            f"sampler={sampler.name!r} needs the exact full-data gradient, but "
            f"subsampling={strategy!r} gives a stochastic estimate. Use "
            f"subsampling in {exact} (with their default settings) with 'hmc', or an SG sampler "
            f"({sorted(k for k, v in SAMPLERS.items() if not v.needs_exact_gradient)})."
        )
    check = getattr(strategy, "check_sampler", None)
    if check is not None:
        check(sampler)


def _as_precond(cov):
    return dense(cov) if cov.ndim == 2 else diagonal(cov)


def _preconditioner(kind, problem, rng, hessian):
    """(Preconditioner, Laplace precond, covariance, lam_max, lam_min, n_evals).

    The Laplace approximation is computed even when ``kind`` is None: the
    chains start from its draws whatever the preconditioner.  ``hessian`` is
    the mode finder's Hessian at the mode, or None.
    """
    cov, H, evals = laplace_covariance(problem, "auto" if kind is None else kind, hessian)
    laplace = _as_precond(cov)
    precond = identity() if kind is None else laplace
    if H is not None:
        lam_max, lam_min = whitened_curvature(H, precond)
        return precond, laplace, cov, lam_max, lam_min, evals
    lam, more = power_curvature(problem, precond, rng)
    return precond, laplace, cov, lam, None, evals + more


def prepare(problem, sampler, strategy, **kwargs):
    """Mode, preconditioner, strategy preprocessing, step size, start points.

    Keyword arguments: ``batch_size, step_size, preconditioner, n_chains,
    streams, dispersion``.  BLAS runs on one thread: the work is a long
    series of small products over row chunks, which gain little from a second
    thread, and with the other core busy (joblib chains, another job) a
    two-thread ``(A * c).T @ A`` on an 8192 x 51 chunk took 0.17 s instead
    of 1.6 ms -- the Newton Hessians of a 10^6-row fit went from under 2 s
    to 36 s.

    Returns
    -------
    Prepared
        ``info`` holds the preprocessing gradient evaluations, the measured
        curvature and gradient noise, and what the strategy reports.
    """
    with threadpool_limits(1, user_api="blas"):
        return _prepare(problem, sampler, strategy, **kwargs)


def _prepare(problem, sampler, strategy, *, batch_size, step_size, preconditioner,
             n_chains, streams, dispersion=1.0):
    rng = streams.prep
    mode, mode_evals, hessian = find_mode(problem, rng)
    problem = Problem(problem.model, problem.prior, problem.X, problem.y, problem.weight, mode)
    precond, laplace, cov, lam_max, lam_min, pre_evals = _preconditioner(
        preconditioner, problem, rng, hessian)
    problem = Problem(problem.model, problem.prior, problem.X, problem.y, problem.weight, mode, cov)
    b = min(AUTO_BATCH if batch_size == "auto" else batch_size, problem.n_rows)
    estimator = strategy.build(problem, batch_size=b, rng=rng)
    pilot = laplace_draws(mode, laplace, rng, _PILOT_POSITIONS)
    nu, nu_evals = _noise(estimator, rng, pilot, precond)
    if batch_size == "auto" and step_size == "auto":
        estimator, nu, nu_evals, b = _auto_batch(sampler, strategy, problem, rng, pilot, precond,
                                                 (estimator, nu, nu_evals, b), lam_max, lam_min)
    if step_size == "auto":
        initial = getattr(sampler, "initial_step_size", None)
        h = (initial(lam_max) if initial is not None else
             auto_step_size(sampler, lam_max, nu, lam_min=lam_min, n_data=estimator.n_data))
    else:
        h = float(step_size)
    estimator.bind(h, sampler, precond)
    theta0 = laplace_draws(mode, laplace, streams.init, n_chains, scale=dispersion)
    evals = mode_evals + pre_evals + nu_evals + estimator.preprocessing_evals
    info = {"preprocessing_grad_evals": int(evals), "curvature": lam_max,
            "gradient_noise": nu, "batch_size": int(b), **estimator.info}
    return Prepared(estimator, precond, h, theta0, mode, info)


def _noise(estimator, rng, pilot, precond):
    """Gradient noise of ``estimator`` at the pilot positions, and its cost."""
    return gradient_noise(estimator, rng.spawn(_PILOT_POSITIONS), pilot, precond,
                          n_estimates=_PILOT_ESTIMATES)


def _auto_batch(sampler, strategy, problem, rng, pilot, precond, first, lam_max, lam_min):
    """``batch_size="auto"``: rebuild at a larger batch when the noise binds the step.

    ``first`` is ``(estimator, nu, n_evals, b)`` at ``AUTO_BATCH``; returns the
    same tuple for the batch :func:`auto_batch_size` picks (HMC and exact
    strategies keep it), the evaluations of both builds and pilots counted.
    """
    estimator, nu, evals, b = first
    if estimator.exact or hasattr(sampler, "initial_step_size"):
        return first
    cap = min(AUTO_BATCH_MAX, problem.n_rows, strategy.max_batch_size(problem.n_rows))
    b_auto = auto_batch_size(sampler, lam_max, nu, b, max(b, cap), lam_min=lam_min,
                             n_data=estimator.n_data)
    if b_auto == b:
        return first
    spent = evals + estimator.preprocessing_evals
    estimator = strategy.build(problem, batch_size=b_auto, rng=rng)
    nu, evals = _noise(estimator, rng, pilot, precond)
    return estimator, nu, evals + spent, b_auto


def _run_group(sampler, prep, ids, streams, n_warmup, n_draws, thin, progress):
    return run_chains(
        sampler, prep.estimator, prep.theta0[ids],
        [streams.noise[c] for c in ids], [streams.index[c] for c in ids],
        step_size=prep.step_size, precond=prep.precond, n_warmup=n_warmup,
        n_draws=n_draws, thin=thin, progress=progress, chain_ids=ids)


_MAX_RETRIES, _RETRY_FACTOR = 3, 0.25


def sample_with_retries(sampler, prep, streams, *, auto, **kwargs):
    """:func:`sample`; with ``step_size="auto"``, retry smaller steps on divergence.

    A chain that diverges during warm-up with the automatic step restarts
    all chains with the step multiplied by 0.25 and fresh chain streams
    spawned from the preprocessing stream (so still reproducible), at most
    three times; ``info["step_size_retries"]`` records how many.  With a
    user-given step, or after the retries, the :class:`DivergenceError`
    propagates.
    """
    for retry in range(_MAX_RETRIES + 1):
        if retry:
            fresh = streams.prep.spawn(2 * len(streams.noise))
            streams = streams._replace(noise=tuple(fresh[::2]), index=tuple(fresh[1::2]))
        try:
            draws, evals, steps, info, seconds = sample(sampler, prep, streams, **kwargs)
            info["step_size_retries"] = retry
            return draws, evals, steps, info, seconds
        except DivergenceError as err:
            if not auto or retry == _MAX_RETRIES or getattr(err, "phase", "") != "warmup":
                raise
            prep = prep._replace(step_size=prep.step_size * _RETRY_FACTOR)
            if kwargs.get("progress") is not None:
                kwargs["progress"].write(f"{err} Retrying with step_size={prep.step_size:.3g}.")
            prep.estimator.bind(prep.step_size, sampler, prep.precond)


def sample(sampler, prep, streams, *, n_warmup, n_draws, thin, n_jobs, progress=None):
    """Run all chains; with ``n_jobs`` > 1 chain groups go to joblib workers.

    Chain ``c`` uses only its own streams, so draws do not depend on
    ``n_jobs``.  Returns ``(draws (C, n_draws, p), n_grad_evals, step_sizes,
    info, seconds)``.
    """
    C = prep.theta0.shape[0]
    n_groups = min(C, _effective_jobs(n_jobs))
    groups = [list(g) for g in np.array_split(np.arange(C), n_groups)]
    start = time.perf_counter()
    if n_groups == 1:
        traces = [_run_group(sampler, prep, groups[0], streams, n_warmup, n_draws, thin, progress)]
    else:
        traces = Parallel(n_jobs=n_groups)(
            delayed(_run_group)(sampler, prep, g, streams, n_warmup, n_draws, thin, progress)
            for g in groups)
    seconds = time.perf_counter() - start
    draws = np.concatenate([t.draws for t in traces])
    info = {k: np.concatenate([np.atleast_1d(t.info[k]) for t in traces])
            for k in traces[0].info}
    steps = np.concatenate([t.step_size for t in traces])
    return draws, sum(t.n_grad_evals for t in traces), steps, info, seconds


def _effective_jobs(n_jobs):
    if n_jobs is None:
        return 1
    from joblib import cpu_count

    return max(1, cpu_count() + 1 + n_jobs) if n_jobs < 0 else n_jobs
