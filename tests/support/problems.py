"""Toy posteriors for the gradient-estimator and preprocessing tests, and per-chain generators."""

import numpy as np

D = 3  # feature count of the toy gradient-estimator problems
MODEL_NAMES = ("binary", "softmax", "linear_fixed", "linear_inferred", "mlp")


def toy_model(name):
    """The model ``name`` of :data:`MODEL_NAMES` on ``D`` features."""
    from skbayes_sg.models import GaussianLinearModel, LogisticModel, MLPModel

    return {
        "binary": lambda: LogisticModel(D, 2),
        "softmax": lambda: LogisticModel(D, 3),
        "linear_fixed": lambda: GaussianLinearModel(D, True, noise_std=0.7),
        "linear_inferred": lambda: GaussianLinearModel(D, True),
        "mlp": lambda: MLPModel((D, 5, 3), "tanh"),
    }[name]()


def toy_prior(name, model):
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


def make_problem(name, n=200, seed=0, weighted=False, layout="plain", mode="random"):
    """``(posterior, laplace, rng)`` of a toy model on ``n`` rows.

    Draws from one generator in a fixed order (rows, targets, weights,
    mode).  ``mode="random"`` puts the anchor a little off zero (estimators
    must be unbiased at any anchor); ``"fit"`` finds the real mode.  The
    covariance is the ``"auto"`` Laplace covariance there.
    """
    from skbayes_sg.models import Posterior
    from skbayes_sg.preprocessing import find_mode, laplace_at

    rng, model = np.random.default_rng(seed), toy_model(name)
    X = _design(layout, n, rng)
    y = _targets(model, X, rng)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    posterior = Posterior(model, toy_prior(name, model), X, y, w)
    theta_hat = (0.1 * rng.normal(size=model.n_params) if mode == "random"
                 else find_mode(posterior, rng).theta)
    return posterior, laplace_at(posterior, theta_hat, "auto")[0], rng


def rngs_for(C, seed=0):
    """One Generator per chain."""
    return tuple(np.random.default_rng([seed, c]) for c in range(C))


def estimates(est, theta, n_rounds, seed=0):
    """``(estimates (n_rounds * C, p), evaluations per round)`` at ``theta (C, p)``."""
    rngs = rngs_for(theta.shape[0], seed)
    state, out, evals = est.init(rngs, theta), [], []
    for _ in range(n_rounds):
        g, state, k = est.estimate(rngs, theta, state)
        out.append(g)
        evals.append(k)
    return np.concatenate(out), evals


def softmax_posterior(K, d, n, seed=0, scale=2.0):
    """``(posterior, mode)`` of a ``K``-class softmax on ``n`` Gaussian rows of ``d`` features."""
    from scipy.special import softmax

    from skbayes_sg.models import GaussianPrior, LogisticModel, Posterior
    from skbayes_sg.preprocessing import find_mode

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    P = softmax(X @ (scale * rng.normal(size=(K, d)) / np.sqrt(d)).T, axis=1)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    model = LogisticModel(d, K)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    return post, find_mode(post, rng).theta


def sparse_model(name, d=7):
    """The GLM ``name`` (binary, softmax, linear_fixed, linear_inferred) on ``d`` features."""
    from skbayes_sg.models import GaussianLinearModel, LogisticModel

    return {"binary": lambda: LogisticModel(d, 2), "softmax": lambda: LogisticModel(d, 3),
            "linear_fixed": lambda: GaussianLinearModel(d, noise_std=0.7),
            "linear_inferred": lambda: GaussianLinearModel(d)}[name]()


def sparse_twins(name, n=120, d=7, weighted=False, seed=0, density=0.3):
    """``(dense posterior, sparse posterior, rng)`` on the same rows (about 30% nonzero)."""
    import scipy.sparse as sp

    from skbayes_sg.models import GaussianPrior, NoisePrior, Posterior

    rng = np.random.default_rng(seed)
    model = sparse_model(name, d)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    z = X @ rng.normal(size=d)
    if model.is_regression:
        y = z + rng.normal(size=n)
    elif model.n_classes == 2:
        y = np.where(z + rng.logistic(size=n) > 0, 1.0, -1.0)
    else:
        y = rng.integers(0, 3, size=n)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    prec = model.prior_precision(1.0)
    if name == "linear_inferred":
        prec[-1] = 0.0
        prior = NoisePrior(prec, index=-1, a=1.0, b=1.0)
    else:
        prior = GaussianPrior(prec)
    return (Posterior(model, prior, X, y, w), Posterior(model, prior, sp.csr_matrix(X), y, w),
            rng)
