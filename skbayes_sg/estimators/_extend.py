"""Run until converged: extend the sampling phase while the assessment fails.

After the requested ``n_warmup + n_draws * thin`` steps, :func:`extend_until_converged` judges the
stored draws (``judge(draws) -> Assessment``).  While the judgement fails and fewer than
``max_doublings`` extensions were run, every chain continues from its last draw for as many steps
as it has sampled so far (so the sampling phase doubles), stored at twice the spacing; the old and
the new draws are then thinned by two, so ``draws_`` keeps ``n_draws`` per chain and memory stays
fixed.  The budget is therefore at most ``2 ** max_doublings`` times the requested sampling steps
(8x for the default 3), like ``max_iter`` of an iterative solver; past it ``fit`` warns with the
figures.  Each extension uses its own chain streams (``streams.extension(k)``), so the result is
reproducible and independent of ``n_jobs``.  The kernel state restarts at the last draw: momenta
are redrawn (a valid Gibbs refresh), a thermostat restarts at its initial value, HMC keeps its
adapted step size (no new warm-up) and control-variate / SVRG anchors are recomputed.

Runs with fewer than ``2 * ESS_PER_CHAIN`` stored draws per chain are not extended: thinning
cannot lift their ESS to ``ESS_PER_CHAIN`` per chain, so doubling would only spend the budget.
"""

from dataclasses import replace

import numpy as np

from ..diagnostics import ESS_PER_CHAIN
from ._fit import sample

__all__ = ["extend_until_converged"]


def extend_until_converged(sampler, prep, streams, result, judge, *, max_doublings, n_draws,
                           thin, n_jobs, progress=None):
    """Extend ``result = (draws, evals, steps, info, seconds)`` until ``judge`` passes.

    Returns the same tuple (draws thinned to ``n_draws`` per chain, evaluations and seconds of
    every round summed, ``info`` of the last round) plus the final assessment and the number of
    doublings run.
    """
    draws, evals, steps, info, seconds = result
    verdict, rounds = judge(draws), 0
    if n_draws < 2 * ESS_PER_CHAIN:
        max_doublings = 0
    while not verdict.converged and rounds < max_doublings:
        rounds += 1
        spacing = thin * 2 ** (rounds - 1)  # stored spacing so far
        noise, index = streams.extension(rounds)
        start = replace(prep, theta0=np.ascontiguousarray(draws[:, -1]))
        if progress is not None:
            progress.write(f"Not converged yet ({verdict.problems[0]}); extending the sampling "
                           f"phase to {2 * spacing * n_draws} steps per chain "
                           f"(doubling {rounds} of at most {max_doublings}).")
        new, more, steps, info, secs = sample(
            sampler, start, noise, index, float(np.mean(steps)), n_warmup=0, n_draws=n_draws,
            thin=spacing, n_jobs=n_jobs, progress=progress)
        draws = np.concatenate([draws, new], axis=1)[:, 1::2]
        evals, seconds = evals + more, seconds + secs
        verdict = judge(draws)
    info = {**info, "n_doublings": rounds, "sampling_steps": n_draws * thin * 2 ** rounds}
    return (draws, evals, steps, info, seconds), verdict
