"""Shared regressor behaviour: ``normalize_y`` and the prior on an inferred noise level."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..models import NoisePrior
from ..utils import location_scale, make_rng, standardize
from ..utils._scale import weighted_moments

__all__ = ["_NormalizeYMixin"]

_NOISE_PRIOR_A, _NOISE_PRIOR_B = 1.0, 0.01  # sigma^2 ~ InvGamma(1, 0.01 var(y))


class _NormalizeYMixin:
    """``y_mean_`` / ``y_scale_`` from ``normalize_y`` and ``sigma^2 ~ InvGamma(1, 0.01 var(y))``
    on the noise, in the fitted units (the linear and the MLP regressors)."""

    _regressor_constraints = {"normalize_y": ["boolean"]}

    def _encode_targets(self, y, weight=None):
        """``(y_enc, 1)``: ``y`` standardized by its moments weighted by ``weight`` (as
        frequencies); rows of weight zero, which ``fit`` drops, take no part."""
        y = np.asarray(y, dtype=float)
        if weight is not None and not np.all(weight > 0):
            keep = weight > 0
            kept = weight[keep]
            out = np.zeros_like(y)
            out[keep], _ = self._encode_targets(y[keep], None if np.all(kept == 1) else kept)
            return out, 1
        self.y_mean_, self.y_scale_ = 0.0, 1.0
        if self.normalize_y:
            self.y_mean_, self.y_scale_ = location_scale(y, self.fit_intercept, weight)
            y = standardize(y, self.y_mean_, self.y_scale_)
        else:
            with np.errstate(over="ignore"):
                if not np.isfinite(np.dot(y, y)):
                    raise ValueError(
                        f"y reaches {np.max(np.abs(y)):.3g}: its squared residuals overflow "
                        "float64 with normalize_y=False. Use normalize_y=True (y is then "
                        "standardized without overflow) or rescale y.")
        # the fitted targets' weighted moments, for the priors (None: computed from y there)
        self._y_moments = None if weight is None else weighted_moments(y, weight)
        return y, 1

    def _noise_prior(self, precision, y):
        """The prior with ``log sigma`` last (``precision[-1]`` set to 0)."""
        precision[-1] = 0.0
        return NoisePrior(precision, index=-1, a=_NOISE_PRIOR_A, b=self._noise_prior_b(y))

    def _noise_prior_b(self, y):
        """``b`` of the noise prior ``InvGamma(1, b)``: 1% of the fitted targets' variance, of
        their square where they are constant (one row), or 1% of 1 where they are all zero."""
        mean, _, var = self._moments(y)
        return _NOISE_PRIOR_B * (var if var > 0 else (mean * mean if mean != 0 else 1.0))

    def _inferred_noise_curvature(self, y, total):
        """``(precision, advice)`` of :meth:`_curvature_factor` for an inferred noise: at most
        that of its mode with zero residuals, ``(a + 1 + total / 2) / b``."""
        with np.errstate(over="ignore", divide="ignore"):
            precision = float((_NOISE_PRIOR_A + 1 + total / 2) / np.float64(self._noise_prior_b(y)))
        return precision, ([] if self.normalize_y else ["use normalize_y=True"])

    def _moments(self, y):
        """Mean, sd and variance of the fitted targets ``y``, weighted as their rows are."""
        moments = getattr(self, "_y_moments", None)
        if moments is not None:
            return moments
        return float(np.mean(y)), float(np.std(y)), float(np.var(y))

    def sample_y(self, X, n_samples=1, random_state=None):
        """Draws from the posterior predictive at ``X``.

        Each column uses one posterior draw (picked as in :meth:`sample_posterior`) plus
        Gaussian noise.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        n_samples : int, default=1
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        rng = make_rng(random_state)
        pooled = self._pooled_draws()
        pick = pooled[rng.choice(pooled.shape[0], size=n_samples,
                                 replace=n_samples > pooled.shape[0])]
        means, sigma = self._sample_means(pick, X)
        return (means + rng.standard_normal(means.shape) * sigma[:, None]).T
