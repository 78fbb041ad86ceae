"""Docstring sections shared by the three estimators (numpydoc)."""

COMMON_PARAMETERS = """\
    sampler : {"auto", "sgld", "psgld", "sghmc", "sgnht", "hmc"} or sampler object, \
default=see signature
        Dynamics, a string shortcut or an object from
        :mod:`skbayes_sg.samplers` (e.g. ``SGHMC(friction=0.5)``).  ``"hmc"``
        (full gradient, Metropolis-corrected, dual-averaging warm-up) needs
        ``subsampling="full"`` (or ``"compressed"``).  ``"auto"`` (the GLM default) runs
        ``"sghmc"``, with its friction ``sqrt(lam_min)`` within ``[0.5, 1]`` for the smallest
        measured curvature ``lam_min`` of the preconditioned posterior (1 for an exact Laplace;
        ``diagnostics_["friction"]``) and, from 10,000 rows on, the ABOBA splitting
        (``SGHMC(integrator="aboba")``: no discretisation error of the position on a Gaussian, so
        the automatic step is larger and each step mixes further; Euler on smaller data, for the
        MLP and with ``subsampling="ewsg"``; ``diagnostics_["integrator"]``), except when the
        minibatch reaches every row (small data, or a noisy problem whose automatic batch grows to
        ``N``): the gradient is then exact and ``"hmc"`` with ``subsampling="full"`` runs instead,
        whose Metropolis test removes the discretisation error and the rare tail excursions of a
        full-batch diffusion.  The sampler that ran is ``diagnostics_["sampler"]``.
    subsampling : str or strategy object, default=see signature
        Gradient estimator, a string shortcut or an object from
        :mod:`skbayes_sg.subsampling` (e.g. ``ControlVariates()``).  ``"auto"`` (the GLM
        default) runs ``"preferential_cv"`` (control variates at the mode, rows drawn by their
        gradient-difference bound), which had the smallest gradient noise at equal cost on every
        benchmark set and passes the exact-posterior check where plain ``"control_variates"``
        must take small steps (``benchmarks/README.md``) -- except on data so large that one
        pass over it costs at least the chains' whole base run at the smallest automatic batch
        (``n_chains * (n_warmup + n_draws * thin) * 100`` rows, 600,000 by default) and uniform
        control variates need no larger batch: their weights cannot pay for their pass there,
        and ``"control_variates"`` runs (with ``batch_size="auto"`` and ``step_size="auto"``;
        the MLP's ``"auto"`` is ``"uniform"``).  The strategy that ran is
        ``diagnostics_["subsampling"]``.
    batch_size : int or "auto", default=see signature
        Minibatch size ``b`` (clipped to the number of samples).  ``"auto"`` (the GLM default,
        with ``step_size="auto"``): start at 100 and double, up to 1600, while the measured
        gradient noise holds the automatic step below half its noise-free value
        (``auto_batch_size`` in :mod:`skbayes_sg.fitting._rules`; each doubling rebuilds the
        strategy and re-measures the noise).  Where the noise binds, the step and so the mixing
        per step grow like ``b``: noisy problems get more gradient evaluations per step,
        well-conditioned ones stay at 100.  The batch used is ``diagnostics_["batch_size"]``.
        With a numeric ``step_size``, HMC or an exact strategy it is 100.
    step_size : float or "auto", default="auto"
        Step ``h`` in preconditioned units (SGLD drift ``h/2``; the momentum samplers use ``h`` in
        both updates).  ``"auto"``: the largest step whose stationary variance on the
        Laplace-whitened Gaussian, with the gradient noise measured on a pilot (95% quantile over
        coordinates), is within 5% of exact, capped at 0.5 (:mod:`skbayes_sg.fitting._rules`);
        for ``"hmc"`` the initial step of dual averaging.
    preconditioner : {"auto", "laplace", "diagonal"} or None, default="auto"
        Constant preconditioner / inverse mass matrix from the Laplace approximation at the mode:
        ``"auto"`` is dense for GLMs up to 500 parameters (1,000 when the Hessian pass is cheap);
        above that, for softmax on dense rows, the class-block Laplace (each class's exact Hessian
        block, coupled by a Schur term, while ``K (d + 1)^2 <= 4e6``) or else the Kronecker-factored
        one on the weights with exact intercept rows; for wide data (``p >= 2 N``) the exact low
        rank plus prior; otherwise diagonal.
        ``"laplace"`` is the same but low rank plus diagonal where ``"auto"`` is diagonal (and dense
        whenever the Hessian pass is affordable); ``"diagonal"`` inverse diagonal curvature;
        ``None`` off.  The MLP has no exact Hessian: it takes ``"auto"`` (diagonal Gauss-Newton) or
        ``"diagonal"`` and refuses ``"laplace"``.
    n_warmup : int, default=see signature
        Steps per chain discarded as warm-up.
    n_draws : int, default=see signature
        Draws kept per chain; a chain runs ``n_warmup + n_draws * thin`` steps.
    thin : int, default=1
        Keep one step in ``thin``.
    n_chains : int, default=see signature
        Independent chains, started from Laplace draws around the mode, each
        with its own random streams.
    n_jobs : int, default=None
        Processes for the chains (joblib; ``None`` follows joblib's active
        ``parallel_config``, else 1); draws do not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds everything: one seed, and one named child stream per consumer
        (mode, curvature, strategy, pilot, initial points; per chain its noise
        and its minibatches -- see :mod:`skbayes_sg.utils._random`), so each
        consumer's draws are independent of the others'.
    verbose : int, default=0
        Progress on stdout.  ``0``: silent (the sampling loop pays nothing).  ``1``: one line after
        the preprocessing naming the sampler, the gradient and the step that run (e.g. ``hmc on
        the full gradient, step adapted from 0.9``); per phase (warm-up, sampling) and chain
        group at most ten lines (one per 10% of the steps, at most one per block of up to 256
        steps) with the chain ids, steps done, rate (steps/s), elapsed time and ETA; one line at
        the end with the cost, the step, and the worst R-hat / ESS of the verdict (for the MLP
        its predictive ones).  ``2``: a line per block of steps and the preprocessing details.
    max_doublings : int, default=3
        Budget of the run-until-converged rule.  After sampling, the draws are judged by the
        standard of Vehtari et al. (2021): rank-normalised split R-hat <= 1.01 and bulk and tail
        ESS >= 100 per chain (a network: the Monte-Carlo error of its pooled predictive on up
        to 100 training rows, see Notes).  While that fails, sampling continues from the last
        draws for as many steps again, and the stored draws are thinned by two so ``n_draws``
        per chain are kept -- at most ``max_doublings`` times, i.e. up to ``2 ** max_doublings``
        times the requested sampling steps; then ``fit`` warns with the figures.  It stops
        sooner when the budget cannot rescue the run: after a doubling, the fall of
        ``R-hat^2 - 1`` is extrapolated, and if R-hat would need more than one doubling beyond
        those left, ``fit`` warns at once (``diagnostics_["doublings_needed"]``, None when not
        stopped early); a network's verdict projects its own doublings from the first judgement
        and stops when they exceed those left.  ``0`` disables it.  Runs with ``n_draws < 200``
        are never extended (their draws cannot show 100 effective draws per chain), but for a
        network's, whose verdict asks for no ESS per chain.  ``diagnostics_["n_doublings"]``
        tells how many ran.
    init : {"laplace", "mode", "zeros", "prior"}, default="laplace"
        Where the chains start.  ``"laplace"``: independent draws of the Laplace approximation
        around the mode (the MLP at a tenth of its spread), so warm-up is short.  ``"mode"``: all
        at the mode.  ``"zeros"`` and ``"prior"`` (prior draws; flat-prior coordinates such as
        ``log noise_std`` at 0) are cold starts, for measuring how fast a sampler forgets its
        start (the convergence-speed claims of the seed papers); the mode and the
        preconditioner are still computed.
    draws_dtype : {"float64", "float32"}, default="float64"
        Dtype of the stored ``draws_``.  The chains always run in float64 and ``coef_``,
        ``diagnostics_`` and the verdict come from the float64 draws; ``"float32"`` casts them
        when they are stored, halving ``draws_``'s memory (a hashed-text model of 2^16 features
        with 4 chains x 200 draws: 400 MiB in float64).  Predictions, ``summary()`` and
        ``sample_posterior`` then use the float32 draws (rounding about 1e-7 relative, far below
        the Monte-Carlo error).  The peak memory of ``fit`` is unchanged.
"""

MLP_PARAMETERS = """\
    hidden_layer_sizes : tuple of int, default=(100,)
        Units of each hidden layer.
    activation : {"relu", "tanh", "logistic"}, default="relu"
        Hidden activation.
    prior_scale : float, default=1.0
        Standard deviation of the Gaussian prior on every weight (in the units
        of standardized inputs; the regressor's in units of ``sd(y)`` with ``normalize_y``);
        biases get ``10 max(prior_scale, 1)``.
    prior_scaling : {"none", "fan_in"}, default="none"
        ``"fan_in"`` divides the prior variance of layer ``l``'s weights by the layer's number of
        inputs (Neal, 1996): every unit's pre-activation then has prior sd ``prior_scale``
        times its inputs' root mean square, whatever the width.
    fit_intercept : bool, default=True
        Whether layers have biases.
"""

CLASSIFIER_PARAMETERS = """\
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in :class:`~sklearn.linear_model.LogisticRegression`: each
        row's log-likelihood is multiplied by its class's weight (times its ``sample_weight``);
        ``"balanced"`` uses ``n_samples / (n_classes * np.bincount(y))``.
    n_predict_draws : int, default=100
        Posterior draws averaged by :meth:`predict_proba` (evenly spaced over all stored draws
        of all chains, so predictions are deterministic and the draws nearly independent).  The
        Monte-Carlo sd of a predicted probability is its posterior sd over
        ``sqrt(n_predict_draws)``: 10% of it at 100 -- the precision 100 effective draws give a
        posterior mean, the standard ``fit`` holds the chains to -- which adds 1% to its
        variance, while prediction costs ``n_predict_draws`` times a point estimate's
        (``benchmarks/bench_predict.py`` measures both; ``sample_posterior`` gives every draw).
"""

COMMON_ATTRIBUTES = """\
    draws_ : ndarray of shape (n_chains, n_draws, n_params)
        Stored posterior draws of the flat parameter vector.
    mode_ : ndarray of shape (n_params,)
        Posterior mode found before sampling (chains start near it).
    model_ : object
        The frozen likelihood (maps the flat vector to named parameters).
    prior_ : object
        The frozen prior (``value``/``grad`` of ``-log p(theta)``).
    preprocessing_ : dict
        What the preprocessing produced: ``"preprocessing_grad_evals"``,
        ``"curvature"`` / ``"curvature_min"`` (extreme eigenvalues of the preconditioned
        Hessian at the mode; the smallest is None for the MLP),
        ``"gradient_noise"`` (whitened variance per coordinate, 95% quantile),
        ``"gradient_noise_left"`` (what remains once ``step_size="auto"`` has SGLD or SGHMC
        subtract the measured noise from the noise they inject; None otherwise),
        ``"batch_size"``, ``"laplace_hessian_rows"`` (None when the
        Laplace approximation's Hessian is exact; from ``4 m`` in-memory rows, ``m = max(65,536,
        400 p)``, a dense one is estimated on ``m`` uniform rows), and the subsampling strategy's
        own outputs under the keys its docstring lists (e.g. ``"n_strata"``,
        ``"subsampling_weights"``, ``"compression_ratio"``).  Rebuilt by every ``fit``.
    diagnostics_ : dict
        ``"ess"`` / ``"ess_tail"`` (bulk / tail ESS per parameter), ``"rhat"`` (rank-normalised
        split R-hat), ``"step_size"``, ``"n_grad_evals"`` (preprocessing included),
        ``"data_passes"``, ``"preprocessing_seconds"``, ``"sampling_seconds"`` and more.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of features seen during fit (only when X has string names).
"""

REPORT_NOTES = """\
    After ``fit``, :meth:`summary` reports the posterior per parameter group
    (mean, sd, quantiles, bulk/tail ESS, split R-hat), the cost and, in plain words, any
    convergence problem; :meth:`stein_discrepancy` measures the draws against the exact posterior's
    score on the training data (no reference run needed); :meth:`to_inference_data` exports the
    draws to ArviZ (optional dependency).
"""

REFERENCES = """\
    References
    ----------
    Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic
    gradient Langevin dynamics. ICML.

    Chen, T., Fox, E. and Guestrin, C. (2014). Stochastic gradient Hamiltonian Monte Carlo. ICML.

    Ding, N., Fang, Y., Babbush, R., Chen, C., Skeel, R. D. and Neven, H.
    (2014). Bayesian sampling using stochastic gradient thermostats. NeurIPS.

    Li, C., Chen, C., Carlson, D. and Carin, L. (2016). Preconditioned
    stochastic gradient Langevin dynamics for deep neural networks. AAAI.

    Baker, J., Fearnhead, P., Fox, E. B. and Nemeth, C. (2019). Control
    variates for stochastic gradient MCMC. Statistics and Computing 29.

    Fu, T. and Zhang, Z. (2017). CPSG-MCMC: Clustering-based preprocessing
    method for stochastic gradient MCMC. AISTATS.

    Chen, C., Wang, W., Zhang, Y., Su, Q. and Carin, L. (2017). A convergence analysis for a class
    of practical variance-reduction stochastic gradient MCMC. arXiv:1709.01180.

    Li, R., Wang, X., Zha, H. and Tao, M. (2020). Improving sampling accuracy of stochastic
    gradient MCMC methods via non-uniform subsampling of gradients. arXiv:2002.08949.

    Song, Q. (2022). Approximate inference via clustering.

    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.

    Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C.
    (2021). Rank-normalization, folding, and localization: an improved R-hat
    for assessing convergence of MCMC. Bayesian Analysis 16(2).

    Gorham, J. and Mackey, L. (2017). Measuring sample quality with kernels. ICML.
"""
