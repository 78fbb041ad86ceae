"""Shared fixtures: exact conjugate posteriors for the linear model."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.preprocessing import StandardScaler


def exact_linear_posterior(X, y, noise_std, prior_scale=1.0):
    """Mean and covariance of the conjugate posterior (no intercept)."""
    prec = X.T @ X / noise_std**2 + np.eye(X.shape[1]) / prior_scale**2
    cov = np.linalg.inv(prec)
    return cov @ X.T @ y / noise_std**2, cov


def _standardize(X, y):
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    return X, y


def _ls_noise(X, y):
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return float(np.sqrt(resid @ resid / (X.shape[0] - X.shape[1])))


@pytest.fixture(scope="session")
def cancer():
    """scikit-learn's breast cancer data, standardized features."""
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="session")
def diabetes_problem():
    """All ten standardized diabetes features, standardized y, LS noise."""
    X, y = _standardize(*load_diabetes(return_X_y=True))
    s = _ls_noise(X, y)
    return X, y, s, exact_linear_posterior(X, y, s)


@pytest.fixture(scope="session")
def correlated_problem():
    """20,000 x 20 strongly correlated synthetic design (condition ~ hundreds)."""
    rng = np.random.default_rng(20)
    p, N = 20, 20_000
    A = rng.normal(size=(p, p))
    corr = 0.95 * np.ones((p, p)) + 0.05 * np.eye(p)
    L = np.linalg.cholesky(corr)
    X = rng.normal(size=(N, p)) @ L.T + 0.05 * rng.normal(size=(N, p)) @ A.T / np.sqrt(p)
    y = X @ rng.normal(size=p) * 0.3 + rng.normal(size=N) * 3.0
    X, y = _standardize(X, y)
    s = _ls_noise(X, y)
    return X, y, s, exact_linear_posterior(X, y, s)


@pytest.fixture(scope="session")
def well_conditioned_problem():
    """2,000 x 20 orthogonal-ish design scaled so the posterior is near N(m, I/5).

    Raw-unit curvature about 5 in every direction (condition number ~1.3), so
    the samplers' default hyperparameters fit without any preconditioner.
    """
    rng = np.random.default_rng(3)
    N = 2000
    X = rng.normal(size=(N, 20)) * 2.0 / np.sqrt(N)
    y = X @ rng.normal(size=20) + rng.normal(size=N)
    s = 1.0
    return X, y, s, exact_linear_posterior(X, y, s)


def posterior_errors(draws_coef, mean, cov):
    """(max |mean error| in posterior sds, sd ratios) of pooled draws."""
    sd = np.sqrt(np.diag(cov))
    z = np.abs(draws_coef.mean(0) - mean) / sd
    return z.max(), draws_coef.std(0) / sd


# --------------------------------------------------------------------- shared test helpers
# Tests take these as fixtures (never ``from conftest import``).

D = 3  # feature count of the toy gradient-estimator problems
MODEL_NAMES = ("binary", "softmax", "linear_fixed", "linear_inferred", "mlp")


def _toy_model(name):
    from skbayes_sg.models import GaussianLinearModel, LogisticModel, MLPModel

    return {
        "binary": lambda: LogisticModel(D, 2),
        "softmax": lambda: LogisticModel(D, 3),
        "linear_fixed": lambda: GaussianLinearModel(D, True, noise_std=0.7),
        "linear_inferred": lambda: GaussianLinearModel(D, True),
        "mlp": lambda: MLPModel((D, 5, 3), "tanh"),
    }[name]()


def _toy_prior(name, model):
    """Unit Gaussian prior; InvGamma(1, 1) on the noise of ``linear_inferred``."""
    from skbayes_sg.models import GaussianPrior, NoisePrior

    prec = model.prior_precision(1.0)
    if name == "linear_inferred":
        prec[-1] = 0.0
        return NoisePrior(prec, index=-1, a=1.0, b=1.0)
    return GaussianPrior(prec)


def _design(layout, n, rng):
    """Toy rows: plain normal, two blobs (strata differ), or heavy (a few large rows)."""
    if layout == "blobs":
        return rng.normal(size=(n, D)) * rng.uniform(0.3, 2.0, size=(n, 1)) + rng.choice(
            [-2, 2], (n, 1))
    if layout == "heavy":
        X = rng.normal(size=(n, D)) * rng.uniform(0.3, 1.5, size=(n, 1))
        X[: n // 20] *= 6.0
        return X
    return rng.normal(size=(n, D)) * rng.uniform(0.3, 2.0, size=(n, 1))


def _targets(model, X, rng):
    n = X.shape[0]
    if model.is_regression:
        return X @ rng.normal(size=D) + rng.normal(size=n)
    if model.n_outputs == 2 and model.is_glm:
        return np.where(X @ np.ones(D) + rng.logistic(size=n) > 0, 1.0, -1.0)
    return rng.integers(0, 3, size=n)


def _make_problem(name, n=200, seed=0, weighted=False, layout="plain", mode="random"):
    """``(posterior, laplace, rng)`` of a toy model on ``n`` rows.

    Draws from one generator in a fixed order (rows, targets, weights,
    mode).  ``mode="random"`` puts the anchor a little off zero (estimators
    must be unbiased at any anchor); ``"fit"`` finds the real mode.  The
    covariance is the ``"auto"`` Laplace covariance there.
    """
    from skbayes_sg.models import Posterior
    from skbayes_sg.preprocessing import find_mode, laplace_at

    rng, model = np.random.default_rng(seed), _toy_model(name)
    X = _design(layout, n, rng)
    y = _targets(model, X, rng)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    posterior = Posterior(model, _toy_prior(name, model), X, y, w)
    theta_hat = (0.1 * rng.normal(size=model.n_params) if mode == "random"
                 else find_mode(posterior, rng).theta)
    return posterior, laplace_at(posterior, theta_hat, "auto")[0], rng


def _rngs_for(C, seed=0):
    """One Generator per chain."""
    return tuple(np.random.default_rng([seed, c]) for c in range(C))


def _estimates(est, theta, n_rounds, seed=0):
    """``(estimates (n_rounds * C, p), evaluations per round)`` at ``theta (C, p)``."""
    rngs = _rngs_for(theta.shape[0], seed)
    state, out, evals = est.init(rngs, theta), [], []
    for _ in range(n_rounds):
        g, state, k = est.estimate(rngs, theta, state)
        out.append(g)
        evals.append(k)
    return np.concatenate(out), evals


def _within_5se(samples, exact):
    """Monte-Carlo unbiasedness: every coordinate's mean within 5 standard errors."""
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    return bool(np.all(np.abs(samples.mean(axis=0) - exact)
                       <= 5 * se + 1e-9 * np.abs(exact).max()))


def _fit_exact_linear(X, y, s, **kw):
    """``BayesianLinearRegression`` in the exact-posterior test setting."""
    from skbayes_sg import BayesianLinearRegression

    reg = BayesianLinearRegression(noise_std=s, fit_intercept=False, prior_scale=1.0,
                                   normalize_y=False, random_state=0, **kw)
    return reg.fit(X, y)


def _check_exact(reg, mean, cov):
    """The issue contract: mean error < 0.2 sd, sd ratios in [0.8, 1.25]."""
    z, ratio = posterior_errors(reg.sample_posterior()["coef"], mean, cov)
    assert z < 0.2, f"posterior-mean error {z:.3f} sd"
    assert np.all((ratio > 0.8) & (ratio < 1.25)), f"sd ratios {np.round(ratio, 3)}"
    return z, ratio


def _helper_fixture(name, helper):
    """A session fixture ``name`` whose value is the helper function itself."""
    def fixture():
        return helper

    fixture.__doc__ = helper.__doc__
    return pytest.fixture(scope="session", name=name)(fixture)


# The helpers above, as fixtures named without the underscore (tests take them as arguments).
for _name, _helper in {"toy_model": _toy_model, "toy_prior": _toy_prior,
                       "make_problem": _make_problem, "rngs_for": _rngs_for,
                       "estimates": _estimates, "within_5se": _within_5se,
                       "fit_exact_linear": _fit_exact_linear,
                       "check_exact": _check_exact}.items():
    globals()[f"{_name}_fixture"] = _helper_fixture(_name, _helper)
