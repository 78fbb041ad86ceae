"""BayesianMLPRegressor."""

import numpy as np
from sklearn.base import RegressorMixin

from ..models import MLPRegressionModel
from ..utils import row_chunks
from ._base import _BaseSGMCMC, _store_params
from ._docs import COMMON_ATTRIBUTES, COMMON_PARAMETERS, MLP_PARAMETERS, REFERENCES, REPORT_NOTES
from ._mlp_base import _MLPMixin
from ._regressor import _NormalizeYMixin

__all__ = ["BayesianMLPRegressor"]


class BayesianMLPRegressor(_MLPMixin, _NormalizeYMixin, RegressorMixin, _BaseSGMCMC):
    __doc__ = f"""Bayesian multi-layer perceptron regressor sampled by SG-MCMC.

    Fully connected hidden layers, one identity output, Gaussian noise of inferred level
    ``noise_std`` and a Gaussian prior on every weight and bias.  ``fit`` runs a few epochs of
    Adam to a mode, builds a diagonal Gauss-Newton (Fisher) preconditioner there, and samples.

    Parameters
    ----------
{MLP_PARAMETERS}{COMMON_PARAMETERS}    n_predict_draws : int, default=100
        Posterior draws that :meth:`predict` averages (evenly spaced over all stored draws of
        all chains, so predictions are deterministic); the Monte-Carlo sd of the predictive mean
        is the network output's posterior sd over ``sqrt(n_predict_draws)``.
    normalize_y : bool, default=True
        Fit the network to ``(y - mean(y)) / sd(y)`` (no centring without an intercept; the
        moments weighted by ``sample_weight`` as frequencies), so the prior means the same for
        any scale of y, as in :class:`BayesianLinearRegression`.  ``coefs_``, ``intercepts_``,
        ``noise_std_``, ``sample_posterior``, ``predict``, ``sample_y`` and ``summary`` are in
        y's units (the last layer's weights and bias carry the scale); ``draws_`` and ``mode_``
        stay in the fitted coordinates.

    Attributes
    ----------
    coefs_ : list of ndarray
        Posterior means of the weight matrices, ``coefs_[l]`` of shape ``(n_in, n_out)`` (as in
        :class:`~sklearn.neural_network.MLPRegressor`).
    intercepts_ : list of ndarray
        Posterior means of the biases.
    noise_std_ : float
        Posterior mean of the noise standard deviation.
    y_mean_, y_scale_ : float
        The target's centre and scale removed by ``normalize_y`` (0.0 and 1.0 without it).
{COMMON_ATTRIBUTES}
    See Also
    --------
    sklearn.neural_network.MLPRegressor : point estimate.
    BayesianMLPClassifier, BayesianLinearRegression

    Notes
    -----
    The sampler, its defaults and the start of the chains are those of
    :class:`BayesianMLPClassifier`.  The noise prior is the linear regressor's,
    ``noise_std^2 ~ InvGamma(1, 0.01 var(y))``.  ``predict(X, return_std=True)`` gives the
    posterior-predictive sd: the spread of the network's output over the draws plus the noise.
    The verdict is the Monte-Carlo error of the pooled predictive (its means, in units of its
    sd) on up to 100 training rows and off the data, as the classifier's.

{REPORT_NOTES}
{REFERENCES}
    Examples
    --------
    >>> import numpy as np
    >>> from skbayes_sg import BayesianMLPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-2, 2, size=(200, 1))
    >>> y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
    >>> reg = BayesianMLPRegressor(hidden_layer_sizes=(16,), n_draws=50,
    ...                            random_state=0).fit(X, y)
    >>> mean, std = reg.predict(X[:3], return_std=True)
    >>> std.shape
    (3,)
    >>> reg.sample_y(X[:3], n_samples=5, random_state=0).shape
    (3, 5)
    >>> [w.shape for w in reg.coefs_]
    [(1, 16), (16, 1)]
    """

    _parameter_constraints: dict = {
        **_BaseSGMCMC._parameter_constraints, **_MLPMixin._mlp_constraints,
        **_NormalizeYMixin._regressor_constraints,
    }
    _judged_noun = "training-row predictive means"

    def __init__(self, *, hidden_layer_sizes=(100,), activation="relu", prior_scale=1.0,
                 prior_scaling="none",
                 fit_intercept=True, sampler="sgnht", subsampling="uniform", batch_size=100,
                 step_size="auto", preconditioner="auto", n_warmup=500, n_draws=100, thin=15,
                 n_chains=4, n_jobs=None, random_state=None, verbose=0, init="laplace",
                 max_doublings=3, draws_dtype="float64", n_predict_draws=100, normalize_y=True):
        _store_params(self, locals())

    @staticmethod
    def _judge_parts(model, draws, X, y):
        """The network's outputs (judged, and the pooled predictive's means), the predictive
        sd and the log noise sd."""
        means = model.predict_output(draws, X)
        log_sigma = draws[:, -1]  # the model's last coordinate (``log_noise_std``)
        with np.errstate(over="ignore"):
            noise = np.mean(np.exp(2.0 * log_sigma))
        return means, means, np.sqrt(means.var(axis=0) + noise), log_sigma

    def _make_model(self, n_features, n_outputs):
        return MLPRegressionModel((n_features, *self._hidden(), 1), self.activation,
                                  self.fit_intercept)

    def _make_prior(self, model, y):
        return self._noise_prior(self._prior_precision(model, y), y)

    def _intercept_scale(self, y):
        mean, sd, _ = self._moments(y)
        return 10.0 * max(self.prior_scale, 1.0, abs(mean) + sd)

    def _curvature_factor(self, y, total, dtype):
        return self._inferred_noise_curvature(y, total)

    def _to_user(self, named):
        """Undo ``normalize_y``: the last layer and the noise in ``y``'s units."""
        out, last = dict(named), self.model_.n_layers - 1
        out[f"coef_{last}"] = out[f"coef_{last}"] * self.y_scale_
        out[f"intercept_{last}"] = out[f"intercept_{last}"] * self.y_scale_ + self.y_mean_
        out["noise_std"] = out["noise_std"] * self.y_scale_
        return out

    def _store_summaries(self):
        super()._store_summaries()
        # the mean of sigma itself, not exp(mean log sigma) that unpacking the mean would give
        self.noise_std_ = float(self.model_.unpack(self._pooled_draws())["noise_std"].mean()
                                * self.y_scale_)

    def predict(self, X, return_std=False):
        """Posterior-predictive mean (and standard deviation, noise included).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of the posterior predictive
            ``p(y* | x*, data)``: the network output's spread over the draws plus the noise.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,)
        y_std : ndarray of shape (n_samples,), only if ``return_std``
        """
        return self._predict_on_rows("predict", X, return_std=return_std)

    def _predict(self, X, return_std=False):
        """In-memory :meth:`predict`."""
        X = self._validate_X_predict(X)
        draws = self._prediction_draws(self.n_predict_draws)
        mean, var = np.empty(X.shape[0]), np.empty(X.shape[0])
        for sl in row_chunks(X.shape[0], draws.shape[0]):
            out = self.model_.predict_output(draws, X[sl])
            mean[sl], var[sl] = out.mean(axis=0), out.var(axis=0)
        mean = mean * self.y_scale_ + self.y_mean_
        if not return_std:
            return mean
        noise = np.mean(self.model_.unpack(draws)["noise_std"].astype(np.float64) ** 2)
        return mean, np.sqrt(var + noise) * self.y_scale_

    def _sample_means(self, pick, X):
        """``(means (S, n) in y's units, noise sds (S,) in y's units)`` of draws ``pick``."""
        means = self.model_.predict_output(pick, X) * self.y_scale_ + self.y_mean_
        sigma = self.model_.unpack(pick)["noise_std"].astype(np.float64)
        return means, sigma * self.y_scale_
