"""``_BaseSGMCMC``: the scikit-learn side shared by the three estimators."""

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..diagnostics import assess
from ..fitting import DEFAULT_CONFIG, STARTS, FitSettings, check_settings, fit_posterior
from ..models import GaussianPrior
from ..samplers import SAMPLERS, BaseSampler
from ..subsampling import SUBSAMPLING, BaseStrategy
from ..utils import ApproximationWarning, make_rng, make_streams, warn_user
from ..utils import check_weight_total
from ._diagnostics import _DiagnosticsMixin
from ._progress import make_progress
from ._report import _ReportMixin
from ._rows import rows_for

__all__ = ["_BaseSGMCMC", "_store_params"]

# scale parameters (prior_scale, noise_std): 1 / scale^2 and its products with the data stay
# finite, normal floats
SCALE_MIN, SCALE_MAX = 1e-150, 1e150


def _is_fitted(name):
    """Whether an attribute is fitted state (scikit-learn's trailing underscore)."""
    return name.endswith("_") and not name.startswith("__")


def _unfitted_state(state):
    """An instance ``__dict__`` without its fitted attributes."""
    return {k: v for k, v in state.items() if not _is_fitted(k)}


def _store_params(estimator, arguments):
    """``__init__`` body: store every constructor argument verbatim (scikit-learn's rule)."""
    for name in estimator._get_param_names():
        setattr(estimator, name, arguments[name])


class _BaseSGMCMC(_DiagnosticsMixin, _ReportMixin, BaseEstimator):
    """Shared ``fit``, ``sample_posterior`` and parameter handling.

    Subclasses define ``_make_model(n_features, n_outputs)``,
    ``_encode_targets(y, weight) -> (y_enc, n_outputs)``, ``_intercept_scale(y)`` and
    ``_store_summaries()``.
    """

    _parameter_constraints: dict = {
        "prior_scale": [Interval(Real, SCALE_MIN, SCALE_MAX, closed="both")],
        "fit_intercept": ["boolean"],
        "sampler": [StrOptions(set(SAMPLERS) | {"auto"}), BaseSampler],
        "subsampling": [StrOptions(set(SUBSAMPLING) | {"auto"}), BaseStrategy],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "step_size": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "preconditioner": [StrOptions({"auto", "laplace", "diagonal"}), None],
        "n_warmup": [Interval(Integral, 0, None, closed="left")],
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "thin": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "init": [StrOptions(set(STARTS))],
        "max_doublings": [Interval(Integral, 0, None, closed="left")],
        "draws_dtype": [StrOptions({"float64", "float32"})],
    }
    _auto_sampler = "sghmc"  # what sampler="auto" runs when the gradient is not exact
    # what subsampling="auto" runs, and the strategy it switches to where that cannot pay for its
    # preprocessing (fitting._fit._choose_strategy)
    _auto_subsampling, _cheap_subsampling = "preferential_cv", "control_variates"
    _init_dispersion = 1.0
    _fit_config = DEFAULT_CONFIG  # the engine's thresholds (tests set another FitConfig)
    _sparse = "csr"  # sparse X accepted (converted to CSR once); False for the MLP
    _is_classifier = False

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Find the mode, preprocess, and draw posterior samples.

        The fit is atomic: the new fitted state is built aside and replaces the old one only
        when the fit succeeds, so a fit that raises or is interrupted leaves the estimator as it
        was (fitted on the earlier data, or unfitted).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (float32 stays float32; sparse matrices are converted to CSR once and
            never densified; ``stratified`` and ``compressed`` need dense X).  A column-major
            array (e.g. from a pandas DataFrame) is copied to row-major once: every step gathers
            rows.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights: row ``i``'s log-likelihood is multiplied by
            ``sample_weight[i]`` (an integer weight is the same posterior as repeating the row;
            the data size ``N`` of the subsampling estimators is their sum).  Every subsampling
            strategy combines them with its own weights.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        fitted = copy.copy(self)
        fitted.__dict__ = _unfitted_state(vars(self))
        fitted._fit(X, y, sample_weight)
        # one assignment: the parameters as they are, every fitted attribute from this fit
        self.__dict__ = {**_unfitted_state(vars(self)),
                         **{k: v for k, v in vars(fitted).items() if _is_fitted(k)}}
        return self

    def _fit(self, X, y, sample_weight):
        """:meth:`fit` on this (unfitted) copy: validate, run the engine, store the results."""
        rows = rows_for(X)  # where the rows live: validation, posterior, row source
        X, y_enc, n_outputs, weight = rows.fit_data(self, X, y, sample_weight)
        settings = self._fit_settings()
        check_settings(settings, X, rows.source)
        model = self._make_model(X.shape[1], n_outputs)
        prior = self._make_prior(model, y_enc)
        posterior = rows.posterior(model, prior, X, y_enc, weight)
        progress = make_progress(self.verbose)
        result = fit_posterior(posterior, settings, make_streams(self.random_state, self.n_chains),
                               self._judge(posterior), progress=progress)
        plan = result.plan
        self.model_, self.prior_, self.draws_ = model, prior, result.draws
        self.mode_, self.preprocessing_ = plan.laplace.mode, plan.info
        for message in plan.estimator.warnings:
            warn_user(message, ApproximationWarning)
        self._set_diagnostics(result)
        self._store_summaries()
        self.draws_ = self.draws_.astype(self.draws_dtype, copy=False)  # as stored
        if progress is not None:
            progress.finished(self.diagnostics_)

    def _fit_settings(self):
        """The :class:`~skbayes_sg.fitting.FitSettings` of this estimator's parameters."""
        return FitSettings(
            sampler=self.sampler, subsampling=self.subsampling, batch_size=self.batch_size,
            step_size=self.step_size, preconditioner=self.preconditioner,
            n_chains=self.n_chains, n_warmup=self.n_warmup, n_draws=self.n_draws,
            thin=self.thin, n_jobs=self.n_jobs, max_doublings=self.max_doublings,
            init=self.init, dispersion=self._init_dispersion, auto_sampler=self._auto_sampler,
            auto_subsampling=self._auto_subsampling,
            cheap_subsampling=self._cheap_subsampling, config=self._fit_config)

    def _predict_on_rows(self, name, X, *args, **kwargs):
        """``name``'s prediction where ``X``'s rows live: the in-memory ``_<name>`` for arrays,
        a dask array computed blockwise for a dask collection (:func:`._rows.rows_for`).  Every
        public predict method goes through here."""
        check_is_fitted(self)
        return rows_for(X).predict(self, name, X, *args, **kwargs)

    def _row_weights(self, X, y, sample_weight):
        """Row multiplicities of the posterior: ``sample_weight`` (None when all ones; its sum
        at most ``WEIGHT_SUM_MAX``, :mod:`._checks`)."""
        if sample_weight is None:
            return None
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        check_weight_total(w, "sample_weight")
        return None if np.all(w == 1.0) else w

    def _curvature_factor(self, y, total, dtype):
        """``(precision, advice)`` for :func:`._checks.check_X_scale`: the largest factor on
        ``x^2`` in the likelihood's curvature (1: the classifiers'), and what to do."""
        return 1.0, ""

    def _make_prior(self, model, y):
        return GaussianPrior(self._prior_precision(model, y))

    def _prior_precision(self, model, y):
        """The diagonal prior precision of ``model`` for the encoded targets ``y``."""
        return model.prior_precision(self.prior_scale, self._intercept_scale(y))

    #: prefix of the ``diagnostics_`` keys of a verdict taken on functions of the parameters
    _judged_as = None

    def _judge(self, posterior):
        """``(draws, early=False) -> Assessment``: the verdict of ``fit`` (parameters; the MLP
        and the softmax override it, and name their columns
        ``diagnostics_[f"{_judged_as}_rhat"]``, ...); ``early`` as in
        :func:`~skbayes_sg.diagnostics.assess`."""
        return assess

    def _posterior_mean(self):
        pooled = self.draws_.reshape(-1, self.draws_.shape[-1]).mean(axis=0)
        return self._to_user(self.model_.unpack(pooled))

    def _to_user(self, named):
        """Named draws in the user's units (identity; the regressor undoes ``normalize_y``)."""
        return named

    def _pooled_draws(self):
        return self.draws_.reshape(-1, self.draws_.shape[-1])

    def _prediction_draws(self, n):
        """At most ``n`` pooled draws, evenly spaced (deterministic)."""
        pooled = self._pooled_draws()
        if n >= pooled.shape[0]:
            return pooled
        return pooled[np.linspace(0, pooled.shape[0] - 1, n).round().astype(np.intp)]

    def sample_posterior(self, n_samples=None, random_state=None):
        """Posterior draws as a dict of named arrays.

        Parameters
        ----------
        n_samples : int, default=None
            Number of draws.  ``None`` returns every stored draw (all chains pooled, chain-major).
            Otherwise draws are picked from the stored ones without replacement when ``n_samples``
            <= stored, with replacement above.
        random_state : int, RandomState instance or None, default=None
            Seed of the pick.

        Returns
        -------
        draws : dict of str to ndarray
            Each value has shape ``(n_samples, *shape of the fitted attribute)``.
        """
        check_is_fitted(self)
        pooled = self._pooled_draws()
        if n_samples is not None:
            n_samples = int(n_samples)
            if n_samples < 1:
                raise ValueError(f"n_samples must be >= 1, got {n_samples}.")
            rng = make_rng(random_state)
            replace = n_samples > pooled.shape[0]
            pooled = pooled[rng.choice(pooled.shape[0], size=n_samples, replace=replace)]
        return self._to_user(self.model_.unpack(pooled))

    def _validate_X_predict(self, X, ensure_all_finite=True):
        """``X`` checked against the fit (features, format, dtype float64 / float32).

        ``ensure_all_finite=False`` leaves the finiteness check to the caller (``predict_proba``
        folds it into its overflow pass, :func:`~skbayes_sg.models._finite.peak_abs`).
        """
        return validate_data(self, X, reset=False, accept_sparse=self._sparse,
                             dtype=[np.float64, np.float32], ensure_all_finite=ensure_all_finite)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self._sparse)
        return tags
