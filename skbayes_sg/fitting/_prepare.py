"""The preprocessing of ``fit``: mode, Laplace approximation, curvature, the strategy's data,
tuning and start points, ending in one :class:`Plan` record.

Each phase's wall seconds and per-example gradient evaluations are recorded in
``Plan.phases`` (``{phase: (seconds, evaluations)}``), from which ``diagnostics_`` and the
benchmarks read them.
"""

import time
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

from ..models import Laplace, Posterior
from ..preprocessing import find_mode, laplace_at
from ..samplers import from_laplace, identity
from ..subsampling import SUBSAMPLING
from ..utils import blas_threads
from ._plan import (auto_sampler, candidates, exact_instead, exact_sampler,
                    preconditioner_kind, try_alternative, use_alternative)
from ._shape import gaussian_misfit
from ._starts import ChainStarts
from ._tuning import Tuning, measure_curvature, tune

__all__ = ["Plan", "prepare"]


@dataclass(frozen=True, eq=False, kw_only=True)
class Plan:
    """Everything sampling needs, decided and built once per fit.

    ``sampler`` and ``estimator`` are what runs (``sampler="auto"`` resolved; the strategy's
    estimator at the tuned batch); ``phases`` maps each preprocessing phase to
    ``(seconds, per-example gradient evaluations)``; ``info`` is what goes to ``preprocessing_``;
    ``step_seconds`` is the predicted wall time of one step of one chain (from the pilots, or
    for the exact gradient from the mode search's rate), which decides whether ``n_jobs``
    workers can pay for their start.
    """

    posterior: Posterior
    laplace: Laplace
    precond: object
    estimator: object
    tuning: Tuning
    theta0: np.ndarray
    info: dict
    sampler: object
    phases: dict
    step_seconds: float = 0.0

    @property
    def n_grad_evals(self):
        """Per-example evaluations of the whole preprocessing."""
        return int(sum(evals for _, evals in self.phases.values()))


class _Context(NamedTuple):
    """What the tuning of each candidate strategy shares within :func:`prepare`."""

    settings: object
    posterior: Posterior
    sampler: object
    laplace: Laplace
    curvature: object
    precond: object
    streams: object
    clock: object


class _Clock:
    """Seconds and evaluations per phase, filled while :func:`prepare` runs (local to it)."""

    def __init__(self):
        self.phases, self._t = {}, time.perf_counter()

    def lap(self, name, evals=0):
        """Close phase ``name`` now, with ``evals`` evaluations (added to earlier laps)."""
        now = time.perf_counter()
        seconds, before = self.phases.get(name, (0.0, 0))
        self.phases[name] = (seconds + now - self._t, before + int(evals))
        self._t = now


def prepare(posterior, settings, streams):
    """Mode, Laplace approximation, preconditioner, strategy data, tuning, start points.

    The automatic choices are :mod:`._plan`'s.  The chains start where ``settings.init`` says
    (a key of :data:`~._starts.STARTS`: Laplace draws around the mode by default; a multimodal
    model's chains ``1..`` around their own Adam optima, run alongside the rest and counted in
    the ``starts`` phase).

    BLAS runs on one thread: the work is a long series of small products over row chunks, which
    gain little from a second thread, and with the other core busy (joblib chains, another job)
    a two-thread product on a row chunk can be far slower.
    """
    sampler, strategy, alternative = candidates(settings)
    clock = _Clock()
    background = blas_threads() > 1  # before the limit below (it holds for every thread)
    with threadpool_limits(1, user_api="blas"), ChainStarts(  # the MLP's Adam runs begin now
            posterior, settings.init, streams.child("init"), settings.n_chains,
            settings.dispersion, background=background) as starts:
        anchor = any(s is not None and s.anchors_at_mode for s in (strategy, alternative))
        mode = find_mode(posterior, streams.child("mode"), anchor=anchor,
                         config=settings.config.mode)
        clock.lap("mode", mode.n_grad_evals)
        laplace, evals = laplace_at(
            posterior, mode.theta, preconditioner_kind(posterior, settings.preconditioner),
            mode.hessian, mode.hessian_rows, mode.gram, config=settings.config.mode)
        precond = identity() if settings.preconditioner is None else from_laplace(laplace)
        clock.lap("laplace", evals)
        curvature = measure_curvature(posterior, laplace, precond, streams.child("curvature"))
        clock.lap("curvature", curvature.n_grad_evals)
        shape = _ShapeProbe(posterior, laplace, settings.config, clock)
        sampler = auto_sampler(settings, sampler, posterior, curvature, strategy, shape)
        context = _Context(settings, posterior, sampler, laplace, curvature, precond, streams,
                           clock)
        strategy, estimator, tuning, context = choose_strategy(strategy, alternative,
                                                               mode.anchor, context)
        if exact_instead(settings, posterior, tuning, estimator):
            sampler, strategy = exact_sampler(posterior), SUBSAMPLING["full"]()
            _, estimator, tuning, context = _tuned(strategy, None,
                                                   context._replace(sampler=sampler))
        laplace, precond = context.laplace, context.precond  # a surrogate's, where it has one
        theta0, evals = starts.result(laplace)
        clock.lap("starts", evals)
    info = {"preprocessing_grad_evals": int(sum(e for _, e in clock.phases.values())),
            "curvature": tuning.curvature, "curvature_min": tuning.curvature_min,
            "gradient_noise": tuning.gradient_noise, "gradient_noise_left": tuning.noise_left,
            "batch_size": tuning.batch_size, "laplace_hessian_rows": laplace.hessian_rows,
            "sampler": sampler.name, "subsampling": strategy.name,
            "gaussian_misfit": shape.misfit, **estimator.outputs}
    step = _step_seconds(sampler, estimator, tuning, clock.phases["mode"])
    return Plan(posterior=posterior, laplace=laplace, precond=precond, estimator=estimator,
                tuning=tuning, theta0=theta0, info=info, sampler=sampler,
                phases=dict(clock.phases), step_seconds=step)


class _ShapeProbe:
    """``probe()``: how far from Gaussian the posterior is at the mode, for ABOBA's large steps
    (:func:`~._shape.gaussian_misfit`, lapped as the phase ``shape``), or None where not probed:
    more than ``config.shape_max_params`` parameters and a probe of more than
    ``config.shape_max_evals`` per-example evaluations.  ``misfit``: the measure once taken, or
    None."""

    def __init__(self, posterior, laplace, config, clock):
        self.args, self.config, self.clock, self.misfit = (posterior, laplace), config, clock, None

    def __call__(self):
        c = self.config
        p, n = self.args[1].mode.shape[0], self.args[0].n_rows
        if p > c.shape_max_params and (2 * p + 1) * n > c.shape_max_evals:
            return None
        result = gaussian_misfit(*self.args, c=c.shape_sd)
        self.clock.lap("shape", result.grad_evals)
        self.misfit = result.misfit
        return result.misfit


def _step_seconds(sampler, estimator, tuning, mode):
    """Predicted seconds of one step of one chain: the pilots' seconds per single-chain
    estimate, or for the exact gradient the mode search's seconds per evaluation times a
    pass; times the estimates a step costs (HMC: its leapfrog steps)."""
    if tuning.pilot_chain_estimates:
        per_estimate = tuning.pilot_seconds / tuning.pilot_chain_estimates
    else:
        seconds, evals = mode
        per_estimate = seconds / max(evals, 1) * estimator.evals_per_step
    return per_estimate * sampler.gradients_per_step(tuning.step_size)


def choose_strategy(strategy, alternative, anchor, context):
    """``(strategy, estimator, tuning, context)``: ``strategy`` tuned, or ``alternative`` where
    it cannot pay for its own preprocessing (``subsampling="auto"``,
    :func:`~._plan.try_alternative` and :func:`~._plan.use_alternative`).

    ``strategy`` is ``preferential_cv``, ``alternative`` uniform control variates: the curvature
    weights cost a pass over the data and pay by lowering the minibatch noise, which lets the
    automatic batch shrink or the step grow.  The anchor the alternative computed is handed on.
    """
    settings, posterior = context.settings, context.posterior
    if alternative is not None and try_alternative(settings, posterior):
        data, estimator, tuning, tuned = _tuned(alternative, anchor, context, probe=True)
        if use_alternative(settings, posterior, tuning, estimator):
            return alternative, estimator, tuning, tuned
        anchor = data.anchor if anchor is None else anchor
    return strategy, *_tuned(strategy, anchor, context)[1:]


def _tuned(strategy, anchor, context, probe=False):
    """``(data, estimator, tuning, context)`` of ``strategy``: its preprocessing, then
    :func:`tune`; the phases ``strategy`` and ``tuning`` are lapped on the context's clock.

    A strategy that samples a surrogate posterior (``compressed``: the centroids) gets that
    posterior's own mode, Laplace approximation and curvature (:func:`_surrogate`): its chains
    are preconditioned, sized and started for the posterior they sample.
    """
    c = context
    data = strategy.preprocess(c.posterior, c.laplace, rng=c.streams.child("strategy"),
                               anchor=anchor)
    c.clock.lap("strategy", data.n_grad_evals)
    if data.posterior is not c.posterior:
        c = _surrogate(c, data.posterior)
        data = replace(data, laplace=c.laplace)
    estimator, tuning = tune(c.sampler, strategy, data, c.curvature, c.precond,
                             batch_size=c.settings.batch_size, step_size=c.settings.step_size,
                             streams=c.streams, config=c.settings.config, probe=probe)
    c.clock.lap("tuning", tuning.n_grad_evals)
    return data, estimator, tuning, c


def _surrogate(context, surrogate):
    """``context`` on the ``surrogate`` posterior: its mode (from a search of its own), its
    Laplace approximation of the kind the fit's has, and its curvature (the phase
    ``surrogate``)."""
    c = context
    config = c.settings.config.mode
    mode = find_mode(surrogate, c.streams.child("surrogate mode"), config=config)
    laplace, evals = laplace_at(surrogate, mode.theta, c.laplace.kind, mode.hessian,
                                mode.hessian_rows, mode.gram, config=config)
    precond = identity() if c.settings.preconditioner is None else from_laplace(laplace)
    curvature = measure_curvature(surrogate, laplace, precond, c.streams.child("curvature"))
    c.clock.lap("surrogate", mode.n_grad_evals + evals + curvature.n_grad_evals)
    return c._replace(laplace=laplace, precond=precond, curvature=curvature)
