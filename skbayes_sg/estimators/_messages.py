"""The convergence warning of ``fit``: at most three short lines.

What is wrong (the run that failed), the key figures (largest R-hat, smallest ESS), what to do.
The full sentences stay in ``diagnostics_["convergence_problems"]`` and ``summary()``.
"""

from types import MappingProxyType

import numpy as np

from ..diagnostics import ESS_PER_CHAIN, MIN_DRAWS, RHAT_MAX, longer_factor

__all__ = ["audit_message", "convergence_message", "noise_advice", "run_longer_advice",
           "tail_message"]

#: what the judged columns are, by the estimator's ``_judged_as`` (None: the raw parameters)
_NOUNS = MappingProxyType({None: "parameters", "predictive": "training rows",
                           "identified": "quantities"})


def convergence_message(verdict, info, advice, *, judged_as, n_chains, max_doublings):
    """The three lines of the ``ConvergenceWarning``.

    Parameters
    ----------
    verdict : Assessment
        The failing verdict of ``fit``.
    info : dict
        The run-until-converged figures (``sampling_steps``, ``n_doublings``,
        ``doublings_needed``).
    advice : str
        The last line: what to do.
    judged_as : str or None
        The prefix of the judged quantities (``"predictive"``, ``"identified"``); None for the
        parameters themselves.
    n_chains, max_doublings : int
    """
    return "\n".join([_what(info, max_doublings), _figures(verdict, judged_as, n_chains),
                      advice])


def _what(info, max_doublings):
    """First line: how long the chains ran, and why the run stopped there."""
    steps, done = info["sampling_steps"], info["n_doublings"]
    head = f"Chains not converged in {steps:,} sampling steps each"
    if info.get("extension_diverged"):
        return head + "; a longer run diverged (diagnostics_['extension_diverged'])."
    need = info.get("doublings_needed")
    if need is None:
        return head + (f" ({done} doublings, max_doublings={max_doublings})." if done else ".")
    if not np.isfinite(need):
        return head + "; stopped early: R-hat is infinite (chains stuck apart)."
    return (head + f"; stopped early: R-hat needs ~{need:.2g} more doublings, "
            f"{max_doublings - done} left.")


def _figures(verdict, judged_as, n_chains):
    """Second line: the largest R-hat and the smallest ESS against their thresholds."""
    rhat, bulk, tail = verdict.rhat, verdict.ess_bulk, verdict.ess_tail
    if np.all(np.isnan(rhat)):
        return (f"ESS and R-hat are undefined (fewer than {MIN_DRAWS} draws per chain, or "
                "constant draws).")
    ess_min = ESS_PER_CHAIN * int(n_chains)
    prefix = "" if judged_as is None else f"{judged_as} "
    with np.errstate(invalid="ignore"):
        bad = int(np.sum(rhat > RHAT_MAX))
        low_ess = bool(np.any(bulk < ess_min) or np.any(tail < ess_min))
    parts = []
    if bad:
        parts.append(f"{prefix}R-hat above {RHAT_MAX} for {bad} of {rhat.size} "
                     f"{_NOUNS.get(judged_as, 'quantities')} (max {np.nanmax(rhat):.3f})")
    if low_ess:
        parts.append(f"ESS below {ess_min} (min {np.nanmin(np.minimum(bulk, tail)):.0f})")
    return "; ".join(parts) + "."


def run_longer_advice(verdict, n_chains, n_draws):
    """Last line: run longer, by about how much (:func:`~skbayes_sg.diagnostics.longer_factor`)."""
    if np.all(np.isnan(verdict.rhat)):
        return f"Increase n_draws (at least {MIN_DRAWS} per chain); see summary()."
    factor = longer_factor(verdict.rhat, verdict.ess_bulk, verdict.ess_tail, n_chains,
                           n_draws)[0]
    how = "Run longer" if np.isnan(factor) else f"Run about {factor:.3g}x longer"
    return f"{how}: increase n_draws (and n_warmup) or max_doublings; see summary()."


def noise_advice(step_size, subsampling):
    """Last line when minibatch noise forced a tiny automatic step."""
    other = ("sampler='hmc', subsampling='full'" if subsampling in ("auto", "preferential_cv")
             else "subsampling='preferential_cv'")
    return f"Minibatch noise forced a step of {step_size:.2g}: increase batch_size or use {other}."


def audit_message(audit):
    """The three lines of the failed Metropolis audit's warning (``diagnostics_["audit"]``)."""
    j = audit.worst
    return (f"Exact Metropolis steps from the draws moved parameter {j}: its mean by "
            f"{audit.mean_shift[j]:+.2f} sd,\nits variance by {100 * audit.var_shift[j]:+.0f}% "
            f"(p={audit.p_value:.1g}): the sampler is biased (diagnostics_['audit']).\n"
            "Use sampler='hmc', subsampling='full', or a smaller step_size.")


def tail_message(tail):
    """The three lines of the failed tail check's warning (``diagnostics_["tail_check"]``)."""
    return (f"A chain made a deep excursion: a draw's potential is {tail.excess:.3g} above the "
            f"mode's,\nwhere this log-concave posterior allows {tail.bound:.3g} at most "
            "(diagnostics_['tail_check']).\n"
            "Use a smaller step_size, or sampler='hmc', subsampling='full'.")
