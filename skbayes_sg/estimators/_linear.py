"""BayesianLinearRegression."""

from numbers import Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval

from ..models import GaussianLinearModel, GaussianPrior, design
from ..models._finite import ray_outputs
from ..models._sparse import row_dot
from ..utils import row_chunks
from ._base import SCALE_MAX, SCALE_MIN, _BaseSGMCMC, _store_params
from ..utils import WEIGHT_SUM_MAX
from ._docs import COMMON_ATTRIBUTES, COMMON_PARAMETERS, REFERENCES, REPORT_NOTES
from ._regressor import _NormalizeYMixin

__all__ = ["BayesianLinearRegression"]

_DENSE_COV = 2000  # above this many coefficients predict's variance uses the draws, not C


class BayesianLinearRegression(_NormalizeYMixin, RegressorMixin, _BaseSGMCMC):
    __doc__ = f"""Bayesian linear regression sampled by stochastic-gradient MCMC.

    Gaussian likelihood ``y = X w + b + e``, ``e ~ N(0, noise_std^2)``, with a
    Gaussian prior on ``w``; the noise level is fixed or inferred.

    Parameters
    ----------
    prior_scale : float, default=1.0
        Standard deviation of the Gaussian prior on every weight.  With ``normalize_y=True`` (the
        default) it is in units of ``sd(y)`` per unit of X, so ``1.0`` suits standardized X
        (``StandardScaler``) whatever the scale of y; with ``normalize_y=False`` it is in y's own
        units.  The intercept gets a broad prior ``N(0, (10 (|mean y| + sd y + prior_scale))^2)``
        (in the units the model is fitted in).
    noise_std : float or None, default=None
        Noise standard deviation; ``None`` infers it: ``log noise_std`` is sampled under the weakly
        informative conjugate-style prior ``noise_std^2 ~ InvGamma(1, 0.01 var(y))`` (two
        pseudo-observations with 1% of the target's variance -- of ``mean(y)^2``, or 1, where y
        is constant; it keeps the posterior proper and funnel-free even when y is an exact
        linear function of X).
    fit_intercept : bool, default=True
        Whether to fit an intercept.
{COMMON_PARAMETERS}    normalize_y : bool, default=True
        Fit the model to ``(y - mean(y)) / sd(y)`` (no centring without an intercept; the moments
        weighted by ``sample_weight`` as frequencies, so an integer weight is the same fit as
        repeating the row and a row of weight zero the same as removing it), like
        :class:`~sklearn.gaussian_process.GaussianProcessRegressor`: the prior then means the same
        for any scale of y (without it, a prior fixed in y's units shrinks targets of a large
        scale too hard).
        Everything the estimator returns -- ``coef_``, ``intercept_``, ``noise_std_``,
        ``sample_posterior``, ``predict(return_std=True)``, ``sample_y``, ``summary`` -- is in
        y's units; ``draws_`` and ``mode_`` stay in the fitted (normalized) coordinates, and a
        given ``noise_std`` is in y's units.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the weights.
    intercept_ : float
        Posterior mean of the intercept (0.0 if ``fit_intercept=False``).
    noise_std_ : float
        Posterior mean of the noise standard deviation (or the fixed value).
    y_mean_, y_scale_ : float
        The target's centre and scale removed by ``normalize_y`` (0.0 and 1.0 without it).
{COMMON_ATTRIBUTES}
    See Also
    --------
    sklearn.linear_model.BayesianRidge : conjugate evidence-maximisation.
    BayesianLogisticRegression, BayesianMLPClassifier

    Notes
    -----
    With ``noise_std`` fixed the posterior is Gaussian, ``Sigma = (X1'X1 / sigma^2 + P)^-1``,
    ``mu = Sigma X1'y / sigma^2``; the test-suite checks the sampler's draws against it.  The
    default (``subsampling="auto"``: ``preferential_cv``, control variates at the mode with rows
    drawn in proportion to their gradient-difference bound, below 600,000 rows) passes that check
    on real data sets (``benchmarks/results/exact_posterior.md``), where plain
    ``control_variates`` has to take small steps because a heavy-tailed feature carries most of its
    noise.  ``predict(X, return_std=True)`` is the posterior-predictive sd (parameter uncertainty
    plus noise, like ``BayesianRidge``); unlike ``BayesianRidge`` the draws also give the
    intercept's and the noise level's uncertainty (``sample_posterior()["intercept"]``).

{REPORT_NOTES}
{REFERENCES}
    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_sg import BayesianLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=200)
    >>> reg = BayesianLinearRegression(random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 1)
    array([ 1. , -2. ,  0.5])
    >>> mean, std = reg.predict(X[:2], return_std=True)
    >>> std.shape
    (2,)
    >>> reg.sample_y(X[:2], n_samples=5, random_state=0).shape
    (2, 5)
    >>> sorted(reg.summary().groups)
    ['coef', 'intercept', 'noise_std']
    """

    _parameter_constraints: dict = {
        **_BaseSGMCMC._parameter_constraints,
        "noise_std": [Interval(Real, SCALE_MIN, SCALE_MAX, closed="both"), None],
        **_NormalizeYMixin._regressor_constraints,
    }

    def __init__(self, *, prior_scale=1.0, noise_std=None, fit_intercept=True,
                 sampler="auto", subsampling="auto", batch_size="auto",
                 step_size="auto", preconditioner="auto", n_warmup=500, n_draws=1000,
                 thin=1, n_chains=4, n_jobs=None, random_state=None, verbose=0, init="laplace",
                 max_doublings=3, draws_dtype="float64", normalize_y=True):
        _store_params(self, locals())

    def _make_model(self, n_features, n_outputs):
        noise = None if self.noise_std is None else self.noise_std / self.y_scale_
        return GaussianLinearModel(n_features, self.fit_intercept, noise)

    def _to_user(self, named):
        """Undo ``normalize_y``: coefficients, intercept and noise in ``y``'s units."""
        out = dict(named)
        for key in ("coef", "intercept", "noise_std"):
            if key in out:
                out[key] = out[key] * self.y_scale_
        out["intercept"] = out["intercept"] + self.y_mean_
        return out

    def _make_prior(self, model, y):
        prec = model.prior_precision(self.prior_scale, self._intercept_scale(y))
        if self.noise_std is not None:
            return GaussianPrior(prec)
        return self._noise_prior(prec, y)

    def _curvature_factor(self, y, total, dtype):
        """The noise precision ``1 / noise^2`` (fitted units): fixed, or at most that of the
        inferred noise's mode with zero residuals, ``(a + 1 + total / 2) / b``."""
        if self.noise_std is not None:
            ratio = np.float64(self.noise_std) / self.y_scale_
            advice = (f"give noise_std in y's units (noise_std={self.noise_std:.3g} is "
                      f"{ratio:.3g} of y's scale {self.y_scale_:.3g}) or leave it None")
            with np.errstate(over="ignore", divide="ignore"):
                precision = float(1.0 / ratio**2)
            if not total * precision <= WEIGHT_SUM_MAX:  # as many rows as a weight sum past it
                raise ValueError(f"The posterior is narrower than float64 draws resolve: "
                                 f"{advice[0].upper()}{advice[1:]}.")
            return precision, [advice]
        return self._inferred_noise_curvature(y, total)

    def _intercept_scale(self, y):
        mean, sd, _ = self._moments(y)
        return 10.0 * (abs(mean) + sd + self.prior_scale)

    def _store_summaries(self):
        mean = self._posterior_mean()
        self.coef_, self.intercept_ = mean["coef"], float(mean["intercept"])
        # the mean of sigma itself, not exp(mean log sigma) that unpacking the mean would give
        self.noise_std_ = (float(self.noise_std) if self.noise_std is not None else float(
            (self.model_.unpack(self._pooled_draws())["noise_std"] * self.y_scale_).mean()))

    def _noise_var(self, draws):
        """Noise variance of each draw in the fitted units (``y / y_scale_``: no overflow)."""
        if self.noise_std is not None:
            return np.full(draws.shape[0], (float(self.noise_std) / self.y_scale_) ** 2)
        return self.model_.unpack(draws)["noise_std"] ** 2

    def predict(self, X, return_std=False):
        """Posterior-predictive mean (and standard deviation, noise included).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive
            ``p(y* | x*, data)``: parameter uncertainty plus noise.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
        y_std : ndarray of shape (n_samples,), only if ``return_std``

        Notes
        -----
        Closed form from the draws' mean ``m`` and covariance ``C`` of ``[w, b]``: the mean is
        ``x1 m`` and the variance ``x1 C x1' + E[noise_std^2]`` (``x1 = [x, 1]``), computed in row
        chunks, so the cost is ``O(n d^2)`` and the extra memory does not grow with ``n``.  Above
        2,000 coefficients (wide or sparse X) the variance of ``x1 w`` over the draws replaces
        ``x1 C x1'`` (the same number, without a ``d x d`` matrix).  A row whose prediction
        passes float64's range (values near 1e308 in ``x``) gives ``+-inf``, never NaN.
        """
        return self._predict_on_rows("predict", X, return_std=return_std)

    def _predict(self, X, return_std=False):
        """In-memory :meth:`predict`."""
        X = self._validate_X_predict(X)
        draws = self._pooled_draws()
        lin = draws[:, :self.model_.n_features + self.fit_intercept]  # [w, b] of each draw
        w, wide = lin.mean(axis=0), lin.shape[1] > _DENSE_COV
        C = None if wide else np.cov(lin, rowvar=False, bias=True).reshape(w.size, w.size)
        mean = np.empty(X.shape[0])
        var = np.empty(X.shape[0]) if return_std else None
        for sl in row_chunks(X.shape[0], draws.shape[0] if wide else 2 * w.size, rows=1 << 16):
            X1 = design(X[sl], self.fit_intercept)
            mean[sl] = X1 @ w
            if return_std and wide:  # no p x p covariance: the variance over the draws
                var[sl] = self.model_.predict_output(draws, X[sl]).var(axis=0)
            elif return_std:
                var[sl] = row_dot(X1, np.asarray(X1 @ C))
        mean = mean * self.y_scale_ + self.y_mean_
        noise = self._noise_var(draws).mean()  # fitted units: y_scale_**2 may overflow
        std = np.sqrt(var + noise) * self.y_scale_ if return_std else mean
        bad = ~(np.isfinite(mean) & np.isfinite(std))
        if bad.any():  # a product overflowed: the ray form, +-inf past float64's range, no NaN
            s, Z = ray_outputs(lin, X[bad], self.fit_intercept)
            with np.errstate(over="ignore", invalid="ignore"):
                mean[bad] = s * (Z.mean(axis=0) * self.y_scale_) + self.y_mean_
                if return_std:
                    std[bad] = s * (np.sqrt(Z.var(axis=0) + noise / s / s) * self.y_scale_)
        return (mean, std) if return_std else mean

    def _sample_means(self, pick, X):
        """``(means (S, n) in y's units, noise sds (S,) in y's units)`` of draws ``pick``."""
        means = self.model_.predict_output(pick, X) * self.y_scale_ + self.y_mean_
        bad = ~np.isfinite(means).all(axis=0)
        if bad.any():  # as in predict: the ray form where the product overflowed
            lin = pick[:, :self.model_.n_features + self.fit_intercept]
            s, Z = ray_outputs(lin, X[bad], self.fit_intercept)
            with np.errstate(over="ignore", invalid="ignore"):
                means[:, bad] = s * (Z * self.y_scale_) + self.y_mean_
        return means, np.sqrt(self._noise_var(pick)) * self.y_scale_
