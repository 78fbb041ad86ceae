"""Likelihood models against finite differences and brute-force oracles.
"""

import pickle
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from skbayes_sg.models import GaussianLinearModel, LogisticModel, MLPModel

from support.problems import make_problem
from support.oracles import check_gradients, fd_rows


close = np.testing.assert_allclose
D = 3
GLMS = {"binary": lambda b: LogisticModel(D, 2, b), "softmax4": lambda b: LogisticModel(D, 4, b),
        "linear_fixed": lambda b: GaussianLinearModel(D, b, noise_std=0.7)}


NON_GLMS = {
    "linear_inferred": lambda b: GaussianLinearModel(D, b),
    **{f"mlp1_{act}": (lambda b, act=act: MLPModel((D, 5, 3), act, b))
       for act in ("relu", "tanh", "logistic")},
    **{f"mlp2_{act}": (lambda b, act=act: MLPModel((D, 4, 3, 4), act, b))
       for act in ("relu", "tanh", "logistic")},
}


ALL = {**GLMS, **NON_GLMS}


def _cases(table):
    return [pytest.param(make, fit_b, id=f"{name}-{'b' if fit_b else 'nob'}")
            for name, make in table.items() for fit_b in (True, False)]


def _targets(model, shape, rng):
    if isinstance(model, GaussianLinearModel):
        return rng.normal(size=shape)
    if isinstance(model, LogisticModel) and model.n_classes == 2:
        return rng.choice([-1.0, 1.0], size=shape)
    K = model.n_classes if isinstance(model, LogisticModel) else model.layer_units[-1]
    return rng.integers(0, K, size=shape)


def _problem(make, fit_b, n=7, C=2, seed=0):
    rng, model = np.random.default_rng(seed), make(fit_b)
    theta, X = 0.6 * rng.normal(size=(C, model.n_params)), rng.normal(size=(n, D))
    return model, theta, X, _targets(model, n, rng), rng



@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_grad_sum_and_per_example_grad_match_finite_differences(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    w = rng.uniform(0.5, 2.0, size=y.shape)
    for t in theta:
        check_gradients(model, t, X, y, w)
    assert model.grad_sum(theta, X, y).shape == (2, model.n_params)


@pytest.mark.parametrize("make, fit_b", _cases({**GLMS, "lin_inf": NON_GLMS["linear_inferred"]}))
def test_hessian_matches_finite_differences_and_diag(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    w = rng.uniform(0.5, 2.0, size=y.shape)
    H = model.hessian(theta[0], X, y, w)
    fd = fd_rows(lambda T: model.grad_sum(T, X, y, w), theta[0])
    close(H, fd, rtol=1e-6, atol=1e-8)
    close(H, H.T, atol=1e-12)
    close(model.hessian_diag(theta[0], X, y, w), np.diag(H), rtol=1e-12)
    close(model.hessian_diag(theta[0], X, y), np.diag(model.hessian(theta[0], X, y)), rtol=1e-12)


def _brute_fisher_diag(model, theta1, X, w):
    P = model.predict_output(theta1[None], X)[0]
    out = np.zeros(model.n_params)
    for k in range(P.shape[1]):
        G = model.per_example_grad(theta1, X, np.full(X.shape[0], k))  # grad of -log p(k|x)
        out += (w[:, None] * P[:, k:k + 1] * G * G).sum(0)
    return out


@pytest.mark.parametrize("make, fit_b", _cases({k: v for k, v in ALL.items() if "mlp" in k}))
def test_mlp_hessian_diag_is_fisher_diagonal(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b, n=9)
    w = rng.uniform(0.5, 2.0, size=9)
    expected = _brute_fisher_diag(model, theta[0], X, w)
    close(model.hessian_diag(theta[0], X, y, w), expected, rtol=1e-10)
    close(model.hessian_diag(theta[0], X, y), _brute_fisher_diag(model, theta[0], X, np.ones(9)),
          rtol=1e-10)
    close(model.hessian_diag(theta[0], X, y, w, chunk_rows=4), expected, rtol=1e-10)  # 3 chunks
    with pytest.raises(NotImplementedError, match="hessian_diag"):
        model.hessian(theta[0], X, y)


@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_shared_and_gathered_data_agree(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b, C=3)
    Xg, yg, wg = rng.normal(size=(3, 5, D)), _targets(model, (3, 5), rng), rng.uniform(
        0.5, 2.0, size=(3, 5))
    tiled = np.broadcast_to(X, (3, *X.shape)).copy(), np.broadcast_to(y, (3, y.size)).copy()
    close(model.nll(theta, *tiled), model.nll(theta, X, y), rtol=1e-13)
    close(model.grad_sum(theta, *tiled), model.grad_sum(theta, X, y), rtol=1e-12, atol=1e-14)
    g, nll = model.grad_sum(theta, Xg, yg, wg), model.nll(theta, Xg, yg)
    if getattr(model, "is_glm", False):  # per-chain responses, C-ordered as after a subtraction
        r = np.ascontiguousarray(model.response(theta, Xg, yg))
        close(model.grad_from_response(r, Xg, wg), g, rtol=1e-12, atol=1e-14)
    for c in range(3):
        one = theta[c:c + 1]
        close(g[c], model.grad_sum(one, Xg[c], yg[c], wg[c])[0], rtol=1e-12, atol=1e-14)
        close(nll[c], model.nll(one, Xg[c], yg[c])[0], rtol=1e-13)
        close(g[c], wg[c] @ model.per_example_grad(theta[c], Xg[c], yg[c]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("make, fit_b", _cases(GLMS))
def test_response_is_dnll_dz_and_consistent_with_grad_sum(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    w = rng.uniform(0.5, 2.0, size=y.shape)
    r = model.response(theta, X, y)
    close(model.grad_from_response(r, X, w), model.grad_sum(theta, X, y, w), rtol=1e-13)
    n_logits = r.shape[2] if r.ndim == 3 else 1
    for j in range(n_logits if fit_b else 0):  # intercept j moves logit j of every example
        dz = 1e-5 * np.eye(model.n_params)[model.n_params - n_logits + j]
        fd = (model.nll(theta + dz, X, y) - model.nll(theta - dz, X, y)) / 2e-5
        close(r if r.ndim == 2 else r[..., j], fd, rtol=1e-6, atol=1e-9)
    curv = model.curvature(theta[0], X, y)
    if isinstance(model, GaussianLinearModel):
        close(curv, np.full(X.shape[0], 1 / 0.7**2))
    elif model.n_classes == 2:
        s = model.predict_output(theta[:1], X)[0, :, 1]
        close(curv, s * (1 - s), rtol=1e-12)
    else:
        close(curv, model.predict_output(theta[:1], X)[0], rtol=1e-12)


@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_value_and_grad_sum_is_nll_sum_and_grad_sum(make, fit_b):
    # the softmax shares one linear predictor between the two; the oracle is the separate calls
    model, theta, X, y, rng = _problem(make, fit_b)
    for w in (None, rng.uniform(0.5, 2.0, size=y.shape)):
        f, g = model.value_and_grad_sum(theta, X, y, w)
        nll = model.nll(theta, X, y)
        close(f, nll.sum(axis=1) if w is None else nll @ w, rtol=1e-13)
        close(g, model.grad_sum(theta, X, y, w), rtol=1e-12, atol=1e-14)
    if isinstance(model, LogisticModel) and model.n_classes > 2:
        z = model._z(theta, X)
        ref = logsumexp(z, axis=1) - np.take_along_axis(z, y[None, None, :].repeat(2, 0), 1)[:, 0]
        close(model.nll(theta, X, y), ref, rtol=1e-13)


@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_float32_input_gives_float64_results(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    X32 = X.astype(np.float32)
    for name in ("nll", "grad_sum", "per_example_grad", "hessian_diag", "predict_output"):
        t, ys = theta if name in ("nll", "grad_sum", "predict_output") else theta[0], (y,) * (
            name != "predict_output")
        got, ref = (getattr(model, name)(t, Xv, *ys) for Xv in (X32, X32.astype(np.float64)))
        assert got.dtype == np.float64
        close(got, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_huge_linear_predictor_is_finite_without_warnings(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    theta = theta * 1e4
    if isinstance(model, GaussianLinearModel) and model.noise_std is None:
        theta[:, -1] = 0.0
    calls = ["nll", "grad_sum", "predict_output", "per_example_grad", "hessian_diag"]
    calls += ["hessian"] * (not isinstance(model, MLPModel)) + ["response", "curvature"] * getattr(
        model, "is_glm", False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in calls:
            args = (theta, X, y) if name in ("nll", "grad_sum", "response") else (theta[0], X, y)
            out = getattr(model, name)(*args[:2] if name == "predict_output" else args)
            assert np.all(np.isfinite(out)), name


def test_logistic_nll_accurate_for_huge_logits():
    model = LogisticModel(1, 2, fit_intercept=False)
    X, t, theta = np.array([[1.0], [1.0], [-1.0]]), np.array([1.0, -1.0, -1.0]), np.array([[1e4]])
    close(model.nll(theta, X, t), [[0.0, 1e4, 0.0]], atol=1e-300)
    close(model.response(theta, X, t), [[0.0, 1.0, 0.0]])
    z = LogisticModel(1, 3, False).nll(np.array([[1e4, 0.0, -1e4]]), X, np.array([0, 1, 2]))
    close(z, [[0.0, 1e4, 0.0]], atol=1e-12)


@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_unpack_shapes_and_pack_order(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    shapes = model.param_shapes()
    assert sum(int(np.prod(s)) for s in shapes.values()) == model.n_params
    draws = rng.normal(size=(4, 2, model.n_params))
    parts = model.unpack(draws)
    flat = []
    for name, shape in shapes.items():
        key = "noise_std" if name == "log_noise_std" else name
        block = parts[key] if key != "noise_std" else np.log(parts[key])
        assert block.shape == (4, 2, *shape)
        flat.append(block.reshape(4, 2, -1))
    close(np.concatenate(flat, axis=-1), draws, rtol=1e-12)
    for value in (v for k, v in parts.items() if k.startswith("intercept") and not fit_b):
        assert np.all(value == 0.0) and value.shape[:2] == (4, 2)
    clone = pickle.loads(pickle.dumps(model))  # frozen dataclasses: picklable, comparable
    assert clone == model and clone.n_params == model.n_params
    close(clone.predict_output(draws[0], X), model.predict_output(draws[0], X), rtol=0)


def test_sklearn_shapes_prior_precision_and_flags():
    d = 6
    assert LogisticModel(d, 2).unpack(np.zeros(d + 1))["coef"].shape == (1, d)
    assert LogisticModel(d, 2, False).unpack(np.zeros(d))["intercept"].shape == (1,)
    parts = LogisticModel(d, 5, False).unpack(np.zeros((3, 5 * d)))
    assert parts["coef"].shape == (3, 5, d) and parts["intercept"].shape == (3, 5)
    lin = GaussianLinearModel(d, fit_intercept=False, noise_std=1.0).unpack(np.zeros(d))
    assert set(lin) == {"coef", "intercept"} and lin["intercept"].shape == ()
    lin = GaussianLinearModel(d).unpack(np.zeros((2, d + 2)))
    assert lin["noise_std"].shape == (2,) and np.all(lin["noise_std"] == 1.0)
    parts = MLPModel((d, 7, 3), fit_intercept=False).unpack(np.zeros(d * 7 + 21))
    assert [(k, v.shape) for k, v in parts.items()] == [
        ("coef_0", (d, 7)), ("intercept_0", (7,)), ("coef_1", (7, 3)), ("intercept_1", (3,))]
    close(LogisticModel(3, 4).prior_precision(2.0, 5.0), [0.25] * 12 + [0.04] * 4)
    close(GaussianLinearModel(2).prior_precision(0.5, 4.0), [4.0, 4.0, 1 / 16, 0.01])
    close(MLPModel((2, 3, 2)).prior_precision(1.0, 2.0), [1] * 6 + [.25] * 3 + [1] * 6 + [.25] * 2)
    assert LogisticModel(3, 2).is_glm and GaussianLinearModel(3, noise_std=1.0).is_glm
    assert not GaussianLinearModel(3).is_glm and not MLPModel((3, 2, 2)).is_glm


@pytest.mark.parametrize("make, fit_b", _cases(ALL))
def test_predict_output(make, fit_b):
    model, theta, X, y, rng = _problem(make, fit_b)
    draws = rng.normal(size=(5, model.n_params))
    out = model.predict_output(draws, X)
    if isinstance(model, GaussianLinearModel):
        assert out.shape == (5, X.shape[0])
        close(out, draws[:, :D] @ X.T + (draws[:, D:D + 1] if fit_b else 0))
        return
    assert out.shape[:2] == (5, X.shape[0]) and np.all(out >= 0)
    close(out.sum(-1), 1.0, rtol=1e-12)
    binary = isinstance(model, LogisticModel) and model.n_classes == 2
    for k in range(out.shape[2]):  # P(k | x) = exp(-nll) with target k (t = -1/+1 for binary)
        yk = np.full(X.shape[0], 2.0 * k - 1.0 if binary else k)
        close(out[..., k], np.exp(-model.nll(draws, X, yk)), rtol=1e-10)
    close(model.predict_output(draws, X, max_elements=1), out, rtol=1e-14)  # a draw per chunk


def test_mlp_init_position_is_glorot_uniform():
    model = MLPModel((50, 30, 4), "tanh")
    theta = model.init_position(np.random.default_rng(0))
    np.testing.assert_array_equal(theta, model.init_position(np.random.default_rng(0)))
    parts = model.unpack(theta)
    for l, (n_in, n_out) in enumerate([(50, 30), (30, 4)]):
        bound = np.sqrt(6.0 / (n_in + n_out))
        assert 0.9 * bound < np.abs(parts[f"coef_{l}"]).max() <= bound
        assert np.abs(parts[f"intercept_{l}"]).max() <= bound
    logistic = MLPModel((50, 30, 4), "logistic").init_position(np.random.default_rng(0))
    assert np.abs(logistic[:1500]).max() <= np.sqrt(2.0 / 80)


def test_models_start_at_the_location_and_scale_of_y():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 2)), 3.0 + 2.0 * rng.normal(size=50) + 1e6
    theta = GaussianLinearModel(2).start(X, y)
    np.testing.assert_allclose(theta, [0, 0, y.mean(), np.log(y.std())])
    assert np.allclose(GaussianLinearModel(2, fit_intercept=False, noise_std=1.0).start(X, y), 0)
    t = np.where(np.arange(40) < 30, 1.0, -1.0)
    np.testing.assert_allclose(LogisticModel(2, 2).start(X[:40], t), [0, 0, np.log(30.5 / 10.5)])
    start = LogisticModel(2, 3).start(X[:40], np.repeat([0, 1, 2], [20, 10, 10]))
    np.testing.assert_allclose(start[-3:], np.log([20.5, 10.5, 10.5]) - np.log(
        [20.5, 10.5, 10.5]).mean())


MODELS = ("binary", "softmax", "linear_fixed", "linear_inferred", "mlp")


@pytest.mark.parametrize("name", MODELS)
def test_models_compute_in_float32_only_when_both_are(name):
    posterior, laplace, _ = make_problem(name, n=50)
    model, X = posterior.model, posterior.X
    theta = np.tile(laplace.mode, (2, 1))
    g32 = model.grad_sum(theta.astype(np.float32), X.astype(np.float32), posterior.y)
    assert g32.dtype == np.float32
    for t, x in [(theta, X.astype(np.float32)), (theta.astype(np.float32), X)]:
        assert model.grad_sum(t, x, posterior.y).dtype == np.float64  # full passes stay float64
    np.testing.assert_allclose(g32, model.grad_sum(theta, X, posterior.y), rtol=1e-4,
                               atol=1e-5 * np.abs(g32).max())
