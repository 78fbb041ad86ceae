"""Sampling in ``fit``: the chains, serially or in joblib workers, with retries on divergence.

:func:`sample` runs every chain of a :class:`~skbayes_sg.fitting.Plan` once and returns a
:class:`Run` record; :func:`sample_with_retries` restarts the chains with a smaller automatic
step after a divergence.
"""

import copy
import time
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ..samplers import run_chains
from ..utils import DivergenceError

__all__ = ["Run", "sample", "sample_with_retries"]


class Run(NamedTuple):
    """One sampling round: ``draws (C, n_draws, p)``, per-example evaluations, each chain's step
    size, the sampler's figures (``info``) and wall seconds."""

    draws: np.ndarray
    n_grad_evals: int
    step_sizes: np.ndarray
    info: dict
    seconds: float


def sample_with_retries(plan, streams, *, auto, config, step=None, extension=0, **kwargs):
    """:func:`sample`; with ``step_size="auto"``, retry smaller steps on divergence.

    A chain that diverges with the automatic step -- in warm-up, or later where the step tuned at
    the mode is too large (an MLP chain started in another mode, of higher curvature) -- restarts
    all chains with the step multiplied by ``config.retry_factor`` and fresh chain streams
    (``streams.retry(k)``, so still reproducible), at most ``config.max_retries`` times;
    ``info["step_size_retries"]`` records how many.  With a user-given step, or after the
    retries, the :class:`DivergenceError` propagates.  ``extension = k >= 1`` runs the ``k``-th
    extension of the sampling phase (from ``plan.theta0``, at ``step``; the streams
    ``streams.extension(k)``, then ``streams.extension_retry(k, r)``).
    """
    step = plan.tuning.step_size if step is None else step
    for retry in range(config.max_retries + 1):
        noise, index = _chain_streams(streams, extension, retry)
        try:
            run = sample(plan, noise, index, step, **kwargs)
            return run._replace(info={**run.info, "step_size_retries": retry})
        except DivergenceError as err:
            if not auto or retry == config.max_retries:
                err.args = (f"{err} {_step_origin(auto, retry)}",)
                raise
            step *= config.retry_factor
            if kwargs.get("progress") is not None:
                kwargs["progress"].write(f"{err} Retrying with step_size={step:.3g}.")


def _chain_streams(streams, extension, retry):
    """``(noise, index)`` of try ``retry`` of the first run or of extension ``extension``."""
    if extension:
        return (streams.extension(extension) if not retry
                else streams.extension_retry(extension, retry))
    return (streams.noise, streams.index) if not retry else streams.retry(retry)


def _step_origin(auto, retry):
    """Where the diverging step came from, for the :class:`DivergenceError` message."""
    if not auto:
        return "The step was set by hand: step_size='auto' sizes it from the curvature."
    return (f"The step was the automatic one (step_size='auto'), divided by 4 {retry} time(s) "
            "after divergences.")


def _index_streams(plan, groups, index):
    """Each group's minibatch streams: its chains', except that with a shared minibatch every
    group draws chain 0's rows, from its own copy of chain 0's stream (made before any group
    runs), as one group of all chains would."""
    streams = [[index[c] for c in ids] for ids in groups]
    if plan.estimator.shared_minibatch:
        for group in streams[1:]:
            group[0] = copy.deepcopy(index[0])
    return streams


def _run_group(plan, ids, noise, index, step, n_warmup, n_draws, thin, progress):
    return run_chains(plan.sampler, plan.estimator, plan.theta0[ids], [noise[c] for c in ids],
                      index, step_size=step, precond=plan.precond,
                      n_warmup=n_warmup, n_draws=n_draws, thin=thin, progress=progress,
                      chain_ids=ids, noise_correction=plan.tuning.noise_correction)


def sample(plan, noise, index, step, *, n_warmup, n_draws, thin, n_jobs, progress=None,
           min_seconds=0.0):
    """Run all chains of ``plan``; with ``n_jobs`` > 1 chain groups go to joblib workers.

    Chain ``c`` uses only its own streams ``noise[c]``, ``index[c]``, so draws do not depend on
    ``n_jobs``, and the chains stay in this process where they are predicted to take less than
    ``min_seconds`` here (``plan.step_seconds``): workers would cost more to start than they
    save.  Returns a :class:`Run` (``info["worker_groups"]``: the groups that ran).
    """
    C = plan.theta0.shape[0]
    n_groups = min(C, effective_n_jobs(n_jobs))
    if plan.step_seconds * C * (n_warmup + n_draws * thin) < min_seconds:
        n_groups = 1
    groups = [list(g) for g in np.array_split(np.arange(C), n_groups)]
    rows = _index_streams(plan, groups, index)
    args = (step, n_warmup, n_draws, thin, progress)
    start = time.perf_counter()
    if n_groups == 1:
        traces = [_run_group(plan, groups[0], noise, rows[0], *args)]
    else:
        traces = Parallel(n_jobs=n_groups)(delayed(_run_group)(plan, g, noise, r, *args)
                                           for g, r in zip(groups, rows))
    seconds = time.perf_counter() - start
    draws = traces[0].draws if len(traces) == 1 else np.concatenate([t.draws for t in traces])
    info = {k: np.concatenate([np.atleast_1d(t.info[k]) for t in traces])
            for k in traces[0].info}
    steps = np.concatenate([t.step_size for t in traces])
    info["worker_groups"] = n_groups
    return Run(draws, sum(t.n_grad_evals for t in traces), steps, info, seconds)
