"""Run until converged: extend the sampling phase while the assessment fails.

After the requested ``n_warmup + n_draws * thin`` steps, :func:`extend_until_converged` judges the
stored draws (``judge(draws) -> Assessment``).  While the judgement fails and fewer than
``max_doublings`` extensions were run, every chain continues from its last draw for as many steps
as it has sampled so far (so the sampling phase doubles), stored at twice the spacing; the old and
the new draws are then thinned by two, so ``draws_`` keeps ``n_draws`` per chain and memory stays
fixed.  The budget is therefore at most ``2 ** max_doublings`` times the requested sampling steps
(8x for the default 3), like ``max_iter`` of an iterative solver; past it ``fit`` warns with the
figures.  The judgements before a possible doubling stop at a failing R-hat
(``judge(draws, early=True)``, :func:`~skbayes_sg.diagnostics.assess`): the ESS are computed
for the verdict ``fit`` keeps.  Each extension uses its own chain streams
(``streams.extension(k)``), so the result is reproducible and independent of ``n_jobs``.  The
kernel state restarts at the last draw: momenta are redrawn (a valid Gibbs refresh), a
thermostat restarts at its initial value, HMC keeps its
adapted step size (no new warm-up) and control-variate / SVRG anchors are recomputed.

Runs with fewer than ``2 * ESS_PER_CHAIN`` stored draws per chain are not extended: thinning
cannot lift their ESS to ``ESS_PER_CHAIN`` per chain, so doubling would only spend the budget.
A verdict on the pooled predictive (``verdict.pooled``, the networks') asks for no ESS per
chain, so any run may be extended, and projects its own doublings
(:func:`~skbayes_sg.diagnostics.pooled_error`): from the first judgement, a run that the
doublings left cannot bring to the tolerance stops.  That projection halves the chains' own
error per doubling, which drifting chains do not deliver (a cadata network's error fell by 0.79
in three doublings, against 0.62 projected), so it gets no doubling of slack.  An extension
that diverges with the automatic step runs again with a smaller one, as the first run does
(a rare-event logistic chain restarted with fresh momenta made one deep tail excursion in 10
seeds); one that still diverges (a restarted thermostat on a tiny data set, a user-set step)
ends the extensions: the draws so far stand and are judged, and ``info["extension_diverged"]``
keeps the error for the warning.

Nor are runs the budget cannot rescue.  After a doubling, :func:`doublings_needed` extrapolates
the fall of ``R-hat^2 - 1`` (the between- over the within-chain variance of the worst quantity:
it halves per doubling for chains that mix, falls faster while a warm-up transient fades, and
stalls for chains held in different modes) to the doublings R-hat still needs, at the observed
rate or at the halving, whichever is faster (so R-hat's noise near 1.01 never stops a run that
mixes); when even that exceeds the doublings left by more than one, ``fit`` stops and warns with
the projection instead of spending the rest of the budget to warn anyway (a network whose
chains sit in different modes would otherwise run all its doublings).  The first doubling
always runs: one judgement cannot tell a transient from a stall.
"""

from dataclasses import replace

import numpy as np

from ..diagnostics import ESS_PER_CHAIN, RHAT_MAX
from ..utils import DivergenceError
from ._fit import Run, sample_with_retries

__all__ = ["doublings_needed", "extend_until_converged"]


def _excess(verdict):
    """``R^2 - 1`` for the largest R-hat ``R`` (NaN columns, constant quantities, ignored)."""
    rhat = verdict.rhat[~np.isnan(verdict.rhat)]
    return float(rhat.max()) ** 2 - 1.0 if rhat.size else 0.0


def doublings_needed(before, after):
    """Doublings R-hat still needs after one that took the verdict from ``before`` to ``after``.

    ``log(e / t) / log(max(e0 / e, 2))`` for the excesses ``e0``, ``e`` (:func:`_excess`) and the
    target ``t = RHAT_MAX^2 - 1``; 0 when R-hat passes, ``inf`` when it is infinite.  The rate
    is the observed fall or the halving of chains that mix, whichever is faster: near the
    threshold R-hat's own noise can hide the fall of one doubling, and the rule must not give up
    on a run that is mixing.
    """
    target, e0, e = RHAT_MAX**2 - 1.0, _excess(before), _excess(after)
    if e <= target:
        return 0.0
    with np.errstate(invalid="ignore"):
        ratio = e0 / e  # NaN when both are inf (chains stuck apart): the halving is assumed
    return float(np.log(e / target) / np.log(ratio if ratio > 2.0 else 2.0))


def _give_up(verdict, before, left):
    """``(stop, projected)``: whether the doublings ``left`` cannot meet the standard, and the
    doublings it still needs (None before the first doubling of an R-hat verdict).

    A pooled verdict projects its own, on the training rows and off the data (a model that
    halves the chains' own error per doubling, optimistic for chains that still drift), and
    stops as soon as a failing part needs more than ``left``: the verdict fails whatever the
    other part does, so doublings would only delay its warning.  R-hat's
    :func:`doublings_needed` is noisy, so it stops only when they exceed ``left`` by more than
    one.
    """
    if verdict.pooled is not None:
        needed = max((e.doublings for e in (verdict.pooled, verdict.off_data)
                      if e is not None and e.error > e.tolerance), default=0.0)
        return needed > left, needed
    if before is None:
        return False, None
    projected = doublings_needed(before, verdict)
    return projected > left + 1, projected


def extend_until_converged(plan, streams, run, judge, *, max_doublings, n_draws, thin, n_jobs,
                           auto, config, progress=None, min_seconds=0.0):
    """Extend ``run`` (a :class:`~skbayes_sg.fitting.Run`) until ``judge`` passes.

    ``auto`` (``step_size="auto"``) and ``config``: an extension that diverges runs again with
    a smaller step, as :func:`~._fit.sample_with_retries` runs the first one.

    Returns ``(run, verdict)``: the draws thinned to ``n_draws`` per chain, the evaluations and
    seconds of every round summed, ``info`` the last round's plus ``n_doublings``,
    ``sampling_steps`` and ``doublings_needed``; and the final assessment.
    """
    draws, evals, steps, info, seconds = run
    early = max_doublings > 0  # a failing R-hat decides; the ESS are left for the last verdict
    verdict, rounds, before, projected = judge(draws, early=early), 0, None, None
    if verdict.pooled is None and n_draws < 2 * ESS_PER_CHAIN:
        max_doublings = 0
    while not verdict.converged and rounds < max_doublings:
        stop, projected = _give_up(verdict, before, max_doublings - rounds)
        if stop:
            break
        rounds += 1
        spacing = thin * 2 ** (rounds - 1)  # stored spacing so far
        start = replace(plan, theta0=np.ascontiguousarray(draws[:, -1]))
        if progress is not None:
            progress.write(f"Not converged yet ({verdict.problems[0]}); extending the sampling "
                           f"phase to {2 * spacing * n_draws} steps per chain "
                           f"(doubling {rounds} of at most {max_doublings}).")
        try:
            new = sample_with_retries(start, streams, auto=auto, config=config,
                                      step=float(np.mean(steps)), extension=rounds, n_warmup=0,
                                      n_draws=n_draws, thin=spacing, n_jobs=n_jobs,
                                      progress=progress, min_seconds=min_seconds)
        except DivergenceError as err:  # the draws so far stand, judged as they are
            rounds -= 1
            info = {**info, "extension_diverged": str(err)}
            break
        draws = _thin_pair(draws, new.draws)
        evals, steps, seconds = evals + new.n_grad_evals, new.step_sizes, seconds + new.seconds
        info = {**new.info, "step_size_retries": (info.get("step_size_retries", 0)
                                                  + new.info["step_size_retries"])}
        early = rounds < max_doublings
        before, verdict = verdict, judge(draws, early=early)
    if early and not verdict.converged:  # stopped on a projection: the whole verdict
        verdict = judge(draws)
    stopped = not verdict.converged and rounds < max_doublings
    info = {**info, "n_doublings": rounds, "sampling_steps": n_draws * thin * 2 ** rounds,
            "doublings_needed": projected if stopped else None}
    return Run(draws, evals, steps, info, seconds), verdict


def _thin_pair(old, new):
    """``concatenate([old, new], axis=1)[:, 1::2]`` written into ``old``'s memory.

    ``n`` draws from each keep ``n`` (every second of the ``2 n``); ``old`` is compacted in place
    (draw ``i`` comes from ``2 i + 1 >= i``, so in order no draw is read after it is overwritten),
    since a network's draws are hundreds of megabytes and fresh memory costs its page faults.
    """
    n = old.shape[1]
    k = n // 2
    for i in range(k):
        old[:, i] = old[:, 2 * i + 1]
    old[:, k:] = new[:, (n + 1) % 2::2]
    return old
