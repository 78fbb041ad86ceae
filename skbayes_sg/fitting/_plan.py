"""Every ``"auto"`` of a fit, decided here: the settings record and the rules that resolve it.

The estimator hands the engine a :class:`FitSettings` record (its validated parameters, with
``"auto"`` unresolved).  The engine measures (mode, Laplace approximation, curvature, gradient
noise) and asks the functions below what to run:

* :func:`candidates` -- the sampler and strategy objects named (``"auto"``: the estimator's
  defaults) and, for ``subsampling="auto"``, the cheaper alternative strategy;
* :func:`preconditioner_kind` -- the Laplace approximation ``preconditioner="auto"`` means;
* :func:`auto_sampler` -- ``sampler="auto"``'s SGHMC: friction from the curvature, integrator
  from the data size and the posterior's shape, the step's cap from that shape
  (:func:`aboba_step_cap`);
* :func:`try_alternative`, :func:`use_alternative` -- whether ``subsampling="auto"`` tries and
  keeps the cheaper strategy;
* :func:`exact_instead` -- whether ``sampler="auto"`` runs Metropolis-corrected HMC on the exact
  gradient instead (the minibatch reaches every row and no strategy was named).

Objects are built with their parameters, never mutated.
"""

from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from ..preprocessing import laplace_kind
from ..samplers import INTEGRATORS, SAMPLERS
from ..subsampling import SUBSAMPLING
from ._config import DEFAULT_CONFIG, FitConfig
from ._rules import auto_friction

__all__ = ["FitSettings", "aboba_step_cap", "auto_sampler", "candidates", "exact_instead",
           "exact_sampler", "preconditioner_kind", "resolve", "try_alternative",
           "use_alternative"]


@dataclass(frozen=True, kw_only=True)
class FitSettings:
    """The settings of one fit, as the estimator validated them (``"auto"`` unresolved).

    ``auto_sampler``, ``auto_subsampling`` and ``cheap_subsampling`` say what ``"auto"`` means
    for the estimator (``cheap_subsampling``: the alternative of ``subsampling="auto"``, or
    None); ``dispersion`` scales the Laplace draws the chains start from.
    """

    sampler: object
    subsampling: object
    batch_size: object
    step_size: object
    preconditioner: object
    n_chains: int
    n_warmup: int
    n_draws: int
    thin: int
    n_jobs: object
    max_doublings: int
    init: str = "laplace"
    dispersion: float = 1.0
    auto_sampler: str = "sghmc"
    auto_subsampling: str = "preferential_cv"
    cheap_subsampling: str = "control_variates"
    config: FitConfig = DEFAULT_CONFIG

    @property
    def n_steps(self):
        """Steps of one chain's base run."""
        return self.n_warmup + self.n_draws * self.thin


def resolve(value, registry):
    """A fresh object for a string shortcut or a clone of a given object."""
    return registry[value]() if isinstance(value, str) else clone(value, safe=False)


def candidates(settings):
    """``(sampler, strategy, alternative or None)``: fresh objects, validated."""
    sampler = resolve(settings.auto_sampler if settings.sampler == "auto" else settings.sampler,
                      SAMPLERS)
    auto_sub = settings.subsampling == "auto"
    strategy = resolve(settings.auto_subsampling if auto_sub else settings.subsampling,
                       SUBSAMPLING)
    alternative = (resolve(settings.cheap_subsampling, SUBSAMPLING)
                   if auto_sub and settings.cheap_subsampling else None)
    sampler.validate()
    strategy.validate()
    return sampler, strategy, alternative


def preconditioner_kind(posterior, preconditioner):
    """The Laplace approximation to build: ``"auto"`` (also for ``preconditioner=None``, whose
    Laplace only sizes the step) resolved for this posterior (see
    :func:`~skbayes_sg.preprocessing.laplace_kind`)."""
    return laplace_kind(posterior, "auto" if preconditioner is None else preconditioner)


def auto_sampler(settings, sampler, posterior, curvature, strategy, misfit=lambda: None):
    """The sampler to run: ``sampler="auto"``'s SGHMC gets :func:`auto_friction` of the measured
    curvature and, on unimodal models from ``config.subtract_min_rows`` rows on without EWSG's
    candidates (whose energies are the Euler kernel's) whose posterior is close to Gaussian at
    the mode (``misfit()``, asked only then: :func:`~._shape.gaussian_misfit`, or None where
    not measured), ``config.auto_integrator`` with :func:`aboba_step_cap`; any other sampler is
    returned as given."""
    if settings.sampler != "auto" or sampler.name != "sghmc" or posterior.model.multimodal:
        return sampler
    config, measured = settings.config, None
    large = posterior.n_rows >= config.subtract_min_rows and strategy.n_candidates == 1
    if large:
        measured = misfit()
        large = measured is None or measured <= config.shape_misfit_max
    return type(sampler)(**{**sampler.get_params(deep=False),
                            "friction": auto_friction(curvature.lam_min),
                            "integrator": config.auto_integrator if large else "euler",
                            "step_cap": aboba_step_cap(measured, config) if large else None})


def aboba_step_cap(misfit, config):
    """The automatic step's cap for ``sampler="auto"``'s splitting at a measured ``misfit``:
    None (the integrator's own, ``h_max`` = 0.75) up to ``config.shape_misfit_full``, above it
    ``h_max sqrt(shape_misfit_full / misfit)``.

    The splitting has no position error on a Gaussian; elsewhere its bias grows like ``h^2``
    times the departure from it, which the misfit measures (to first order), so the cap keeps
    that product where the calibration problems have it.  Measured on a softmax with a class of
    35 rows among 10,000 (misfit 0.137): a class-centred intercept 0.32 sd off at step 0.74,
    0.14 at 0.56 and 0.10 at 0.37, at the same data passes; the other calibration problems on
    20,000 rows (0.01-0.015) keep 0.75.
    """
    if misfit is None or misfit <= config.shape_misfit_full:
        return None
    top = INTEGRATORS[config.auto_integrator].max_step
    return top * float(np.sqrt(config.shape_misfit_full / misfit))


def use_alternative(settings, posterior, tuning, estimator):
    """Whether ``subsampling="auto"`` keeps its cheaper alternative (uniform control variates),
    tuned first where its preferred strategy may not pay for its preprocessing
    (:func:`~skbayes_sg.fitting._fit.choose_strategy`): where its batch stays at
    ``config.auto_batch`` or its gradient is exact."""
    return tuning.batch_size <= settings.config.auto_batch or estimator.exact


def try_alternative(settings, posterior):
    """Whether to tune the alternative first: where one pass (``N`` evaluations) is at least the
    chains' whole base run at the smallest automatic batch, the preferred strategy's weights
    cannot save as much as they cost unless uniform rows need a larger batch."""
    auto = settings.batch_size == "auto" and settings.step_size == "auto"
    run = settings.n_chains * settings.n_steps * settings.config.auto_batch
    return auto and posterior.n_rows >= run


# parameters from which the exact route's HMC aims at acceptance 0.65, the optimum as the
# dimension grows (Beskos et al. 2013): a longer step, fewer leapfrogs per transition
_LARGE_HMC, _LARGE_HMC_ACCEPT = 256, 0.65


def exact_sampler(posterior):
    """The HMC that :func:`exact_instead` runs: the sampler's defaults, but from
    ``_LARGE_HMC`` parameters a target acceptance of 0.65 (digits' softmax, 650 parameters:
    24 leapfrogs a transition instead of 30, the same draws' accuracy)."""
    if posterior.model.n_params >= _LARGE_HMC:
        return SAMPLERS["hmc"](target_accept=_LARGE_HMC_ACCEPT)
    return SAMPLERS["hmc"]()


def exact_instead(settings, posterior, tuning, estimator):
    """Whether ``sampler="auto"`` runs HMC on ``subsampling="full"`` instead: where the tuned
    minibatch reaches every row (the gradient is exact, and a diffusion without a Metropolis
    test would only add its discretisation error) and the strategy was not named by the user
    (an explicit ``subsampling=`` is honoured)."""
    return (settings.sampler == "auto" and settings.subsampling == "auto"
            and tuning.batch_size >= posterior.n_rows and not estimator.exact)
