"""The fit engine's entry point: :func:`fit_posterior` and its :class:`FitResult` record."""

import time
from dataclasses import dataclass

import numpy as np

from ..subsampling import InMemoryRows
from ..utils import ApproximationWarning, warn_user
from ._audit import audit_fit
from ._extend import extend_until_converged
from ._compat import check_combination
from ._fit import sample_with_retries
from ._plan import candidates
from ._prepare import Plan, prepare
from ._tail import check_fit_tail

__all__ = ["FitResult", "check_settings", "fit_posterior"]


@dataclass(frozen=True, eq=False, kw_only=True)
class FitResult:
    """What one fit produced.

    Attributes
    ----------
    draws : ndarray of shape (n_chains, n_draws, n_params)
    verdict : Assessment
        The final judgement of the draws.
    plan : Plan
        What ran: sampler, estimator, tuning, Laplace approximation, preprocessing outputs.
    n_grad_evals : int
        Per-example gradient evaluations of the sampling phase (every round).
    step_sizes : ndarray of shape (n_chains,)
    info : dict
        The sampler's figures and the run-until-converged rule's (``n_doublings``, ...).
    phases : dict
        ``{phase: (seconds, per-example evaluations)}`` for ``mode``, ``laplace``,
        ``curvature``, ``strategy``, ``tuning``, ``starts`` (the preprocessing), ``sampling``
        (the chains, every round and retry) and ``verdict`` (the judgements between and after
        the rounds); ``audit`` and ``tail`` when those checks ran.
    audit : Audit or None
        The Metropolis audit of the draws (:mod:`._audit`), where it ran.
    tail : TailCheck or None
        The tail check of the draws (:mod:`._tail`), where it ran.
    """

    draws: np.ndarray
    verdict: object
    plan: Plan
    n_grad_evals: int
    step_sizes: np.ndarray
    info: dict
    phases: dict
    audit: object = None
    tail: object = None

    @property
    def preprocessing_seconds(self):
        """Wall seconds of the preprocessing phases."""
        return float(sum(self.phases[k][0] for k in self.plan.phases))


def check_settings(settings, X, rows=InMemoryRows):
    """Validate the sampler and strategy of ``settings`` against each other, ``X`` and the kind
    of row source ``rows`` holds them (a class, :mod:`~skbayes_sg.subsampling._rows`), before
    any pass over the data."""
    sampler, strategy, alternative = candidates(settings)
    strategy.check_data(X)
    check_combination(sampler, strategy, rows)
    if alternative is not None:
        alternative.check_data(X)
        check_combination(sampler, alternative, rows)


def fit_posterior(posterior, settings, streams, judge, *, progress=None):
    """Preprocess, sample (retrying smaller automatic steps on divergence), then extend until
    ``judge`` passes or ``settings.max_doublings`` is spent: a :class:`FitResult`.

    ``judge(draws, early=False) -> Assessment`` is the verdict
    (:func:`~skbayes_sg.diagnostics.assess` or a model's own); ``progress`` an optional reporter
    with ``preprocessed``, ``write`` and the sampling loop's calls.
    """
    s = settings
    t0 = time.perf_counter()
    plan = prepare(posterior, s, streams)
    t1 = time.perf_counter()
    _warn_user_step(s, plan)
    if progress is not None:
        progress.preprocessed(plan, t1 - t0, s.n_chains)
    min_seconds = s.config.parallel_min_seconds
    run = sample_with_retries(plan, streams, auto=s.step_size == "auto", config=s.config,
                              n_warmup=s.n_warmup, n_draws=s.n_draws, thin=s.thin,
                              n_jobs=s.n_jobs, progress=progress, min_seconds=min_seconds)
    run, verdict = extend_until_converged(plan, streams, run, judge,
                                          max_doublings=s.max_doublings, n_draws=s.n_draws,
                                          thin=s.thin, n_jobs=s.n_jobs,
                                          auto=s.step_size == "auto", config=s.config,
                                          progress=progress, min_seconds=min_seconds)
    elapsed = time.perf_counter() - t1
    phases = {**plan.phases, "sampling": (run.seconds, run.n_grad_evals),
              "verdict": (max(elapsed - run.seconds, 0.0), 0)}
    audit = audit_fit(plan, run.draws, plan.n_grad_evals + run.n_grad_evals, s.config,
                      streams.child("audit"))
    if audit is not None:
        phases["audit"] = (time.perf_counter() - t1 - elapsed, audit.grad_evals)
    t2 = time.perf_counter()
    tail = check_fit_tail(plan, run.draws, s.config)
    if tail is not None:
        phases["tail"] = (time.perf_counter() - t2, tail.grad_evals)
    return FitResult(draws=run.draws, verdict=verdict, plan=plan, n_grad_evals=run.n_grad_evals,
                     step_sizes=run.step_sizes, info=run.info, phases=phases, audit=audit,
                     tail=tail)


def _warn_user_step(settings, plan):
    """Warn, before sampling, when a user-set step is predicted to bias the posterior variance
    by over ``config.step_bias_max`` (closed-form stationary variance of the sampler on the
    Laplace approximation, with the measured gradient noise).  The step it advises is what
    ``step_size="auto"`` runs for the same sampler at the same batch size."""
    tuning = plan.tuning
    err = tuning.variance_error
    if settings.step_size == "auto" or err <= settings.config.step_bias_max:
        return
    effect = ("makes the sampler unstable" if not np.isfinite(err) else
              f"is predicted to put the posterior variance {100 * err:.0f}% off")
    warn_user(
        f"step_size={settings.step_size:g} {effect}: posterior sds will be wrong.\n"
        f"step_size='auto' gives {tuning.auto_step_size:.3g} for {_sampler_label(settings, plan)}"
        f", batch_size={tuning.batch_size} here: use it or a smaller step.",
        ApproximationWarning)


def _sampler_label(settings, plan):
    """The sampler as the user can ask for it again: ``sampler='auto' (sghmc)``, ..."""
    if not isinstance(settings.sampler, str):
        return f"this {plan.sampler.name} sampler"
    if settings.sampler == "auto":
        return f"sampler='auto' ({plan.sampler.name})"
    return f"sampler='{settings.sampler}'"
