"""``_ReportMixin``: ``summary()``, ``stein_discrepancy()``, ``to_inference_data()``.

Mixed into every estimator: a plain-text (and programmatic) posterior summary
per parameter group with cost and warnings, the kernel Stein discrepancy of
the stored draws against the exact posterior's score, and ArviZ export.
"""

import numpy as np
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from ..diagnostics import kernel_stein_discrepancy, summarize
from ..utils import make_rng, row_chunks
from ._inference_data import inference_data, pointwise_log_likelihood
from ._posterior_summary import PosteriorSummary, convergence_warnings

__all__ = ["_ReportMixin"]

_SCORE_ELEMENTS = 200_000  # draws x rows per score evaluation chunk


def _moments(x, quantiles):
    """Mean, sd and quantiles of ``x (C, D, k)`` pooled over chains and draws."""
    flat = x.reshape(-1, x.shape[2])
    cols = {"mean": flat.mean(axis=0), "sd": flat.std(axis=0, ddof=1)}
    for q, v in zip(quantiles, np.quantile(flat, quantiles, axis=0), strict=True):
        cols[f"q{100.0 * q:.10g}"] = v
    return cols


def _name(obj):
    return obj if isinstance(obj, str) else getattr(obj, "name", type(obj).__name__)


class _ReportMixin:
    """Posterior report, Stein discrepancy and ArviZ export for fitted estimators.

    ``_summary_reuse_above``: ``summary`` reuses the ESS and R-hat computed in ``fit`` for
    parameter groups of more columns than this (the same functions of the same draws; a test
    sets another value on its estimator).
    """

    _summary_reuse_above = 2000

    def _groups(self):
        """``name -> (draws (C, D, *shape), flat slice or None if transformed)``."""
        shapes, slices, start = self.model_.param_shapes(), {}, 0
        for name, shape in shapes.items():
            size = int(np.prod(shape, dtype=int))
            slices[name], start = slice(start, start + size), start + size
        out = {}
        for name, values in self._to_user(self.model_.unpack(self.draws_)).items():
            if name in slices:
                out[name] = (values, slices[name])
            elif f"log_{name}" in shapes:  # sampled on the log scale
                out[name] = (values, None)
        return out

    def _summarize_group(self, values, flat, quantiles):
        shape = values.shape[2:]
        x = values.reshape(*values.shape[:2], -1)
        if flat is None or x.shape[2] <= self._summary_reuse_above:
            cols = summarize(x, quantiles=quantiles)
            cols.pop("name")
        else:  # same functions and draws as fit's diagnostics_: reuse them
            d = self.diagnostics_
            cols = {**_moments(x, quantiles), "ess_bulk": d["ess"][flat],
                    "ess_tail": d["ess_tail"][flat], "rhat": d["rhat"][flat]}
        return {k: np.asarray(v, dtype=float).reshape(shape) for k, v in cols.items()}

    def summary(self, quantiles=(0.05, 0.5, 0.95), max_rows=30):
        """Posterior summary per parameter group, cost, and convergence warnings.

        Parameters
        ----------
        quantiles : sequence of float, default=(0.05, 0.5, 0.95)
            Posterior quantiles to report (columns ``"q5"``, ``"q50"``, ...).
        max_rows : int, default=30
            Groups with more parameters print only the five rows with the
            highest R-hat (all values stay in ``groups``).

        Returns
        -------
        summary : PosteriorSummary
            ``str(summary)`` is a plain-text report; ``summary["coef"]["sd"]`` is an array shaped
            like ``coef_``; ``summary.cost`` and ``summary.warnings`` hold the cost and the
            warnings in plain words.  Moments and quantiles pool all chains; ESS and R-hat are the
            rank-normalised bulk/tail ESS and split R-hat of
            :func:`skbayes_sg.diagnostics.summarize`.
        """
        check_is_fitted(self)
        groups = {name: self._summarize_group(values, flat, quantiles)
                  for name, (values, flat) in self._groups().items()}
        C, D, p = self.draws_.shape
        d = self.diagnostics_
        warnings = convergence_warnings(d)
        cost = {"seconds": d["preprocessing_seconds"] + d["sampling_seconds"],
                **{k: d[k] for k in ("preprocessing_seconds", "sampling_seconds",
                                     "n_grad_evals", "data_passes")}}
        header = (f"{type(self).__name__}: {C} chains x {D} draws, {p} parameters; "
                  f"sampler {d.get('sampler') or _name(self.sampler)}, "  # what ran ("auto")
                  f"subsampling {d.get('subsampling') or _name(self.subsampling)}, "
                  f"step size {d['step_size']:.3g}")
        return PosteriorSummary(groups, cost, warnings, header, max_rows, self._axis_labels())

    def _feature_axes(self):
        """``{group: axis of its shape that runs over the features}`` of the reported groups."""
        return self.model_.feature_axes

    def _axis_labels(self):
        """``{group: {axis: feature names}}`` when ``feature_names_in_`` exists."""
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            return {}
        return {group: {axis: list(names)} for group, axis in self._feature_axes().items()}

    def _training_targets(self, y, n_rows):
        y = column_or_1d(y)
        check_consistent_length(np.empty(n_rows), y)
        if not getattr(self, "_is_classifier", False):  # the fitted (normalized) units
            return (np.asarray(y, dtype=float) - self.y_mean_) / self.y_scale_
        codes = np.clip(np.searchsorted(self.classes_, y), 0, len(self.classes_) - 1)
        unseen = self.classes_[codes] != y
        if np.any(unseen):
            raise ValueError(f"y contains labels not seen in fit: {np.unique(y[unseen])[:5]}.")
        return self._code_targets(codes)

    def _scores(self, theta, X, y):
        """``-grad U(theta)`` on ``(X, y)`` for draws ``theta (S, p)``, in chunks."""
        out = np.empty_like(theta)
        for sl in row_chunks(theta.shape[0], X.shape[0], rows=theta.shape[0],
                             elements=_SCORE_ELEMENTS):
            out[sl] = -(self.model_.grad_sum(theta[sl], X, y) + self.prior_.grad(theta[sl]))
        return out

    def stein_discrepancy(self, X, y, n_draws=500, random_state=0, c=1.0):
        """Kernel Stein discrepancy of the stored draws (smaller is better).

        Measures how far the draws are from the exact posterior without a reference run: only the
        score ``-grad U(theta)`` at each draw is needed.  ``X, y`` must be the training data
        exactly as the estimator saw it (after any ``Pipeline`` transforms).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Training targets.
        n_draws : int, default=500
            Pooled draws used (picked without replacement); the cost is
            ``O(n_draws^2 n_params)`` plus ``n_draws`` full-data gradients.
        random_state : int, RandomState instance or None, default=0
            Seed of the pick.
        c : float, default=1.0
            Scale of the inverse multiquadric kernel (parameter units).

        Returns
        -------
        ksd : float
            See :func:`skbayes_sg.diagnostics.kernel_stein_discrepancy`.
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        y = self._training_targets(y, X.shape[0])
        theta = self._pooled_draws()
        if n_draws < theta.shape[0]:
            pick = make_rng(random_state).choice(theta.shape[0], size=int(n_draws), replace=False)
            theta = theta[np.sort(pick)]
        return kernel_stein_discrepancy(theta, self._scores(theta, X, y), c=c)

    def log_likelihood(self, X, y):
        """Pointwise log-likelihood of every stored draw on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Targets in the user's labels / units.

        Returns
        -------
        loglik : ndarray of shape (n_chains, n_draws, n_samples)
            ``log p(y_i | x_i, theta)`` for each draw (the input of PSIS-LOO and WAIC).
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        return pointwise_log_likelihood(self, X, self._training_targets(y, X.shape[0]))

    def to_inference_data(self, X=None, y=None):
        """The draws as an ArviZ ``InferenceData`` (needs ``pip install arviz``).

        Parameters
        ----------
        X, y : array-like, optional
            Data (usually the training data) for the ``log_likelihood`` and ``observed_data``
            groups, which ``arviz.loo``, ``arviz.waic`` and ``arviz.compare`` need.

        Returns
        -------
        idata : arviz.InferenceData
            ``posterior`` holds one variable per parameter group (``coef``, ``intercept``,
            ``noise_std``, ``coef_0``, ...) in the user's units with dimensions ``(chain, draw,
            *shape)`` (the feature axis named ``feature``, with ``feature_names_in_`` as
            coordinates when X had column names); ``sample_stats`` the step size.
        """
        check_is_fitted(self)
        return inference_data(self, X, y)
