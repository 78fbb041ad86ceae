"""Oracles: the exact conjugate posterior of linear regression and Monte-Carlo unbiasedness."""

import numpy as np


def exact_linear_posterior(X, y, noise_std, prior_scale=1.0):
    """Mean and covariance of the conjugate posterior (no intercept)."""
    prec = X.T @ X / noise_std**2 + np.eye(X.shape[1]) / prior_scale**2
    cov = np.linalg.inv(prec)
    return cov @ X.T @ y / noise_std**2, cov


def posterior_errors(draws_coef, mean, cov):
    """(max |mean error| in posterior sds, sd ratios) of pooled draws."""
    sd = np.sqrt(np.diag(cov))
    z = np.abs(draws_coef.mean(0) - mean) / sd
    return z.max(), draws_coef.std(0) / sd


def fit_exact_linear(X, y, s, **kw):
    """``BayesianLinearRegression`` in the exact-posterior test setting."""
    from skbayes_sg import BayesianLinearRegression

    reg = BayesianLinearRegression(noise_std=s, fit_intercept=False, prior_scale=1.0,
                                   normalize_y=False, random_state=0, **kw)
    return reg.fit(X, y)


def check_exact(reg, mean, cov):
    """The issue contract: mean error < 0.2 sd, sd ratios in [0.8, 1.25]."""
    z, ratio = posterior_errors(reg.sample_posterior()["coef"], mean, cov)
    assert z < 0.2, f"posterior-mean error {z:.3f} sd"
    assert np.all((ratio > 0.8) & (ratio < 1.25)), f"sd ratios {np.round(ratio, 3)}"
    return z, ratio


def within_5se(samples, exact):
    """Monte-Carlo unbiasedness: every coordinate's mean within 5 standard errors."""
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    return bool(np.all(np.abs(samples.mean(axis=0) - exact)
                       <= 5 * se + 1e-9 * np.abs(exact).max()))


def assert_close_dense(a, b, tol=1e-10):
    """``a`` (dense or sparse) equals the dense ``b`` to ``tol``, relative to ``b``'s scale."""
    import scipy.sparse as sp

    a = a.toarray() if sp.issparse(a) else a
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, np.abs(b).max()))


def fd_rows(fun, theta1, eps=1e-5):
    """Central differences of ``fun(theta (p, p)) -> (p, ...)`` along each axis of ``theta1``."""
    step = eps * np.eye(theta1.size)
    return (fun(theta1 + step) - fun(theta1 - step)) / (2 * eps)


def check_gradients(model, t, X, y, w):
    """A model's per-example and summed gradients (unweighted and weighted ``w``) at ``t``
    against central differences of its per-example ``nll``."""
    fd = fd_rows(lambda T: model.nll(T, X, y), t)  # (p, b)
    np.testing.assert_allclose(model.per_example_grad(t, X, y), fd.T, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.grad_sum(t[None], X, y)[0], fd.sum(1), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(model.grad_sum(t[None], X, y, w)[0], fd @ w, rtol=1e-6,
                               atol=1e-8)
