"""Helpers of ``bench_preferential.py``: seed 004's synthetic problems (Fig. 1).

* :class:`GaussianMean` -- the bivariate Gaussian location model of seed 004
  App. C.1 (``x_i ~ N(theta, Σx)``) written against the library's model
  protocol (``skbayes_sg/models/_base.py``), so the library's strategies can
  build estimators on it unchanged.
* :func:`gaussian_problem` / :func:`logistic_problem` -- the data of App. C.1.3
  and C.2.3 (N = 1000) and ten evaluation positions (exact posterior draws for
  the Gaussian, Laplace draws for logistic regression, as §5.2.1 says).
* :func:`pseudo_variance` -- ``E||g - ∇U||^2`` of a strategy's estimator,
  measured as ``benchmarks/gradient_noise.py`` does (build, then ``estimate``).
"""

import warnings

import numpy as np
from gradient_noise import _mse_and_cost
from sklearn.datasets import make_classification

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.models import GaussianPrior
from skbayes_sg.models import Laplace, Posterior
from skbayes_sg.preprocessing import laplace_at

SIGMA_X = np.array([[1e5, 6e4], [6e4, 2e5]])  # App. C.1.3
THETA_TRUE = np.array([0.0, 1.0])
PRIOR_VAR = 1e3  # Λ0 = 1e3 I (Gaussian); logistic: diag(10)


class GaussianMean:
    """``f_i(theta) = (x_i - theta)^T P (x_i - theta) / 2`` with ``P = Σx^{-1}``; y unused."""

    is_glm = False
    exact_hessian = True
    random_init = False
    multimodal = False
    softmax = False
    is_regression = True
    fit_intercept = False
    multimodal = False
    softmax = False

    def __init__(self, cov):
        self.P = np.linalg.inv(cov)
        self.n_params = cov.shape[0]

    def param_shapes(self):
        return {"theta": (self.n_params,)}

    def unpack(self, theta):
        return {"theta": theta}

    def prior_precision(self, prior_scale):
        return np.full(self.n_params, 1.0 / prior_scale**2)

    def nll(self, theta, X, y):
        r = (X[None] if X.ndim == 2 else X) - theta[:, None, :]
        return 0.5 * np.einsum("cbi,ij,cbj->cb", r, self.P, r)

    def grad_sum(self, theta, X, y, weight=None):
        if X.ndim == 2:
            X = np.broadcast_to(X, (theta.shape[0],) + X.shape)
        w = np.ones(X.shape[:2]) if weight is None else np.broadcast_to(weight, X.shape[:2])
        sx = np.einsum("cb,cbi->ci", w, X)
        return (w.sum(axis=1)[:, None] * theta - sx) @ self.P

    def per_example_grad(self, theta1, X, y):
        return (theta1[None, :] - X) @ self.P

    def hessian(self, theta1, X, y, weight=None):
        n = X.shape[0] if weight is None else float(np.sum(weight))
        return n * self.P

    def hessian_diag(self, theta1, X, y, weight=None):
        return np.diag(self.hessian(theta1, X, y, weight))


def gaussian_problem(N, n_positions, seed=0):
    """App. C.1.3 data and ``n_positions`` exact (conjugate) posterior draws."""
    rng = np.random.default_rng(seed)
    X = rng.multivariate_normal(THETA_TRUE, SIGMA_X, size=N)
    model = GaussianMean(SIGMA_X)
    prior = GaussianPrior(model.prior_precision(np.sqrt(PRIOR_VAR)))
    prec = N * model.P + np.diag(prior.precision)
    cov = np.linalg.inv(prec)
    mode = cov @ (model.P @ X.sum(axis=0))
    problem = (Posterior(model, prior, X, np.zeros(N)), Laplace(mode, cov))
    return problem, rng.multivariate_normal(mode, cov, size=n_positions)


def logistic_problem(N, n_positions, imbalanced, seed=0):
    """App. C.2.3: make_classification, 4 features (d = 5 with the intercept),
    50% or 95% positives; positions from the Laplace (normal) approximation."""
    weights = [0.05, 0.95] if imbalanced else [0.5, 0.5]
    X, y = make_classification(N, n_features=4, n_informative=4, n_redundant=0,
                               weights=weights, random_state=seed)
    with warnings.catch_warnings():  # only model_, prior_ and mode_ are used
        warnings.simplefilter("ignore")
        est = BayesianLogisticRegression(prior_scale=np.sqrt(10.0), sampler="sgld",
                                         subsampling="uniform", n_warmup=5, n_draws=5,
                                         n_chains=1, n_jobs=1, random_state=seed).fit(X, y)
    t = np.where(y == est.classes_[1], 1.0, -1.0)
    posterior = Posterior(est.model_, est.prior_, X, t)
    laplace = laplace_at(posterior, est.mode_, "laplace")[0]
    rng = np.random.default_rng(seed)
    return (posterior, laplace), rng.multivariate_normal(est.mode_, laplace.covariance,
                                                         size=n_positions)


def pseudo_variance(strategy, problem, thetas, b, n_repeats, seed=0):
    """(mean pseudo-variance over positions, per-example gradient evals per estimate)."""
    est = strategy.build(*problem, batch_size=b, rng=np.random.default_rng(seed))
    return _mse_and_cost(est, problem[0], thetas, n_repeats, seed)


def fig1(strategies, fractions, N, n_positions, n_repeats, seed=0):
    """``{scenario: {strategy: {fraction: (pseudo-variance, evals)}}}``."""
    scenarios = {"gaussian": gaussian_problem(N, n_positions, seed),
                 "logistic_balanced": logistic_problem(N, n_positions, False, seed),
                 "logistic_imbalanced": logistic_problem(N, n_positions, True, seed)}
    out = {}
    for name, (problem, thetas) in scenarios.items():
        out[name] = {s: {f: pseudo_variance(cls(), problem, thetas, max(1, round(f * N)),
                                            n_repeats, seed) for f in fractions}
                     for s, cls in strategies.items()}
    return out
