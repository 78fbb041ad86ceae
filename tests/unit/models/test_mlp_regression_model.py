"""The MLP regression likelihood: gradients, the noise parameter, Fisher diagonal, outputs."""

import numpy as np
import pytest
from numpy.testing import assert_allclose as close

from skbayes_sg.models import MLPRegressionModel, NoisePrior
from support.oracles import check_gradients, fd_rows

D = 3
CASES = [pytest.param(units, act, fit_b, id=f"{len(units) - 2}h-{act}-{'b' if fit_b else 'nob'}")
         for units in ((D, 5, 1), (D, 4, 3, 1)) for act in ("relu", "tanh", "logistic")
         for fit_b in (True, False)]


def _problem(units, act, fit_b, n=7, C=2, seed=0):
    rng = np.random.default_rng(seed)
    model = MLPRegressionModel(units, act, fit_b)
    theta = 0.6 * rng.normal(size=(C, model.n_params))
    return model, theta, rng.normal(size=(n, D)), rng.normal(size=n), rng



@pytest.mark.parametrize("units, act, fit_b", CASES)
def test_gradients_match_finite_differences(units, act, fit_b):
    model, theta, X, y, rng = _problem(units, act, fit_b)
    w = rng.uniform(0.5, 2.0, size=y.shape)
    for t in theta:
        check_gradients(model, t, X, y, w)
    # gathered rows: one minibatch per chain
    Xg, yg = np.stack([X, X[::-1]]), np.stack([y, y[::-1]])
    close(model.grad_sum(theta, Xg, yg, np.stack([w, w[::-1]])),
          [model.grad_sum(theta[:1], X, y, w)[0], model.grad_sum(theta[1:], X[::-1], y[::-1],
                                                                 w[::-1])[0]], rtol=1e-10)


def test_noise_parameter_is_the_gaussian_log_likelihood():
    model, theta, X, y, _ = _problem((D, 4, 1), "tanh", True)
    z, sigma = model.predict_output(theta, X), model.unpack(theta)["noise_std"]
    exact = -np.log(np.exp(-0.5 * ((y - z) / sigma[:, None]) ** 2) / sigma[:, None])
    close(model.nll(theta, X, y), exact, rtol=1e-12)
    close(sigma, np.exp(theta[:, -1]))
    # d/d log sigma of the summed nll is zero at the maximum-likelihood sigma
    t = theta[0].copy()
    t[-1] = 0.5 * np.log(np.mean((y - z[0]) ** 2))
    close(model.grad_sum(t[None], X, y)[0, -1], 0.0, atol=1e-10)


def test_noise_prior_gradient_matches_finite_differences():
    model, theta, X, y, _ = _problem((D, 4, 1), "relu", True)
    prior = NoisePrior(model.prior_precision(1.0), index=-1, a=1.0, b=0.3)
    assert model.prior_precision(1.0)[-1] == 0.0
    fd = fd_rows(lambda T: prior.value(T) + model.nll(T, X, y).sum(1), theta[0])
    close(prior.grad(theta[:1])[0] + model.grad_sum(theta[:1], X, y)[0], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fit_b", [True, False])
def test_hessian_diag_is_the_gauss_newton_diagonal(fit_b):
    model, theta, X, y, rng = _problem((D, 4, 3, 1), "tanh", fit_b)
    w, t = rng.uniform(0.5, 2.0, size=y.shape), theta[0]
    J = fd_rows(lambda T: model.predict_output(T, X), t)  # (p, n): d z_i / d theta
    iv = np.exp(-2.0 * t[-1])
    expect = iv * (J * J) @ w
    expect[-1] = 2.0 * w.sum()
    close(model.hessian_diag(t, X, y, w), expect, rtol=1e-6, atol=1e-9)


def test_shapes_flags_and_unpack():
    model = MLPRegressionModel((D, 5, 1))
    assert model.n_params == D * 5 + 5 + 5 + 1 + 1
    assert model.is_regression and model.multimodal and model.random_init
    assert not model.is_glm and not model.softmax
    theta = np.arange(2 * model.n_params, dtype=float).reshape(2, -1) / 100
    parts = model.unpack(theta)
    assert [parts[k].shape for k in ("coef_0", "intercept_0", "coef_1", "intercept_1")] == [
        (2, D, 5), (2, 5), (2, 5, 1), (2, 1)]
    close(parts["noise_std"], np.exp(theta[:, -1]))
    assert list(model.param_shapes())[-1] == "log_noise_std"
    X = np.random.default_rng(1).normal(size=(4, D))
    assert model.predict_output(theta, X).shape == (2, 4)
    close(model.predict_mean(theta, X), model.predict_output(theta, X).mean(0))
    start = model.init_position(np.random.default_rng(0))
    assert start[-1] == 0.0 and np.all(np.abs(start[:D * 5 + 5]) <= np.sqrt(6 / (D + 5)))
    with pytest.raises(ValueError, match="one output unit"):
        MLPRegressionModel((D, 5, 2))
