"""The tuned thresholds of the fit engine, in one frozen and documented record.

Every field is a measured choice (the comment of each says why); tests construct a
:class:`FitConfig` with other values instead of patching module constants, and pass it to the
engine through :class:`~skbayes_sg.fitting.FitSettings`.
"""

from dataclasses import dataclass

from ..preprocessing import DEFAULT_MODE_CONFIG, ModeConfig

__all__ = ["DEFAULT_CONFIG", "FitConfig"]


@dataclass(frozen=True, kw_only=True)
class FitConfig:
    """Thresholds of tuning and sampling (the defaults are the library's).

    Attributes
    ----------
    pilot_positions : int
        Laplace draws at which the gradient-noise pilot measures: the control-variate noise
        grows like ``||theta - mode||^2``, so its mean needs many positions (with a handful the
        automatic step varies several-fold between seeds).
    pilot_estimates : int
        Gradient estimates per pilot position.
    subtract_estimates : int
        Estimates per position where the sampler subtracts the measured noise: the rule then
        sees the measurement's error, and 4x the estimates halve it.
    subtract_min_rows : int
        The measured noise is subtracted, and ``sampler="auto"`` runs :attr:`auto_integrator`,
        from this many rows on; smaller data keep the textbook Euler scheme, since their
        posteriors can be far from Gaussian and large steps without a Metropolis test make tail
        excursions there.
    auto_batch, auto_batch_max : int
        ``batch_size="auto"`` starts at ``auto_batch`` and doubles while the gradient noise binds
        the automatic step, up to ``auto_batch_max``.
    auto_integrator : str
        SGHMC's integrator for ``sampler="auto"`` from ``subtract_min_rows`` rows on: the ABOBA
        splitting has no position error on a Gaussian, so the automatic step reaches its cap.
    max_retries, retry_factor : int, float
        A diverging automatic step is multiplied by ``retry_factor`` and the chains restarted,
        at most ``max_retries`` times.
    step_bias_max : float
        A user-set step whose predicted relative error of the stationary variance exceeds this
        warns.
    parallel_min_seconds : float
        ``n_jobs > 1`` runs the chains in worker processes only where the sampling phase is
        predicted to take at least this long in one process: starting the workers and importing
        the library in them costs about a second, and the draws do not depend on where the
        chains run.
    mode : ModeConfig
        The thresholds of the mode search and of the Laplace approximation (subsample sizes,
        Newton's tolerances; :class:`~skbayes_sg.preprocessing.ModeConfig` says why each),
        handed to :func:`~skbayes_sg.preprocessing.find_mode` and
        :func:`~skbayes_sg.preprocessing.laplace_at`.
    shape_max_params, shape_max_evals, shape_sd : int, float, float
        Before :attr:`auto_integrator` is chosen, posteriors of at most ``shape_max_params``
        parameters, or whose probe costs at most ``shape_max_evals`` per-example evaluations,
        are probed along the whitened axes at ``+- shape_sd`` sd (:mod:`._shape`, one batched
        pass of ``2 p + 1`` positions); a potential off its quadratic by more than
        ``exp(shape_misfit_max)`` keeps the Euler scheme: ABOBA's large steps, which no
        Metropolis test corrects, make deep excursions into an exponential tail (a logistic
        intercept fitted on a handful of positive rows).
    shape_misfit_max, shape_misfit_full : float
        See above; above ``shape_misfit_full`` the splitting's step cap falls
        (:func:`~._plan.aboba_step_cap`).
    tail_points : int
        After sampling a log-concave model on a subsampled gradient, ``U`` is evaluated at this
        many stored draws farthest from the mode (:mod:`._tail`, one batched pass): a draw
        beyond what a log-concave posterior allows warns (a deep excursion in one chain).
    audit : {"auto", True, False}
        Whether ``fit`` runs the Metropolis audit (:mod:`._audit`) after sampling on a
        subsampled gradient: ``"auto"`` where its per-example evaluations are at most
        ``audit_budget`` times the fit's (a batched evaluation costs about half a minibatch
        step's, measured); True always (but never for a multimodal model).
    audit_positions, audit_min_positions, audit_transitions : int
        Stored draws the audit starts from (at most; ``"auto"`` runs it with as many as its
        budget allows, if at least ``audit_min_positions``), and exact HMC transitions from each.
    audit_alpha : float
        Family-wise level of the audit's tests (and of the tail check): the rate of false alarms
        on exact draws.
    audit_budget : float
        See ``audit``.
    """

    pilot_positions: int = 16
    pilot_estimates: int = 8
    subtract_estimates: int = 32
    subtract_min_rows: int = 10_000
    auto_batch: int = 100
    auto_batch_max: int = 1600
    auto_integrator: str = "aboba"
    max_retries: int = 3
    retry_factor: float = 0.25
    step_bias_max: float = 0.1
    parallel_min_seconds: float = 2.0
    mode: ModeConfig = DEFAULT_MODE_CONFIG
    shape_max_params: int = 16
    # beyond: a 10-class softmax on 50 features and 10,000 rows (1.02e7), about a quarter of its
    # fit's seconds; not 10^6 rows x 50 features (1e8, several times the fit)
    shape_max_evals: float = 1.2e7
    shape_sd: float = 2.5
    # measured misfits: 1-5 positive rows in 10^4-10^5: 0.40-0.95 (ABOBA biased); 35 positives
    # in 20,000 rows: 0.14 (ABOBA correct); the calibration problems: 0.01-0.02
    shape_misfit_max: float = 0.25
    # the calibration problems on 20,000 rows: 0.01-0.015; a softmax with a class of 35 rows
    # among 10,000: 0.137 (step 0.74 put an intercept 0.32 sd off)
    shape_misfit_full: float = 0.05
    tail_points: int = 4
    audit: object = "auto"
    audit_positions: int = 64
    audit_min_positions: int = 32
    audit_transitions: int = 2
    # 0.01 flagged 7 in-tolerance calibration fits of one seed at once (fits of one
    # random_state share their streams under every sampler, so their audits fail together)
    audit_alpha: float = 0.001
    audit_budget: float = 0.2


DEFAULT_CONFIG = FitConfig()
