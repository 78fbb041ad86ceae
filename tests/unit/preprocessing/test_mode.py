"""Mode finding: damped Newton agrees with L-BFGS within a few dozen data passes; the warm
start on a subsample; the control-variate anchor computed on the way.

(On real data L-BFGS needs 250-560 passes: benchmarks/results/exact_posterior.md
and the notes; these toy problems have D = 3 features, where it is quick too.)
"""

from dataclasses import replace

import numpy as np
import pytest

from skbayes_sg.models import GaussianPrior, LogisticModel, NoisePrior, Posterior
from skbayes_sg.models._base import Likelihood
from skbayes_sg.preprocessing import ModeConfig, _mode, _warm, find_mode, full_hessian
from skbayes_sg.preprocessing._kronecker import kronecker_covariance
from skbayes_sg.preprocessing._mode import lbfgs_mode
from skbayes_sg.preprocessing._newton import newton_mode

from support.problems import softmax_posterior, toy_model, toy_prior


D = 3


@pytest.fixture
def problem():
    """``problem(name, weighted, n=400)``: a Posterior with anisotropic features."""
    def make(name, weighted, n=400, seed=0):
        rng, model = np.random.default_rng(seed), toy_model(name)
        X = rng.normal(size=(n, D)) * rng.uniform(0.3, 3.0, size=(1, D))
        if name.startswith("linear"):
            y = X @ rng.normal(size=D) + 0.5 * rng.normal(size=n)
        elif name == "binary":
            y = np.where(X @ np.ones(D) + rng.logistic(size=n) > 0, 1.0, -1.0)
        else:
            y = rng.integers(0, 3, size=n)
        w = rng.integers(1, 4, size=n).astype(float) if weighted else None
        return Posterior(model, toy_prior(name, model), X, y, w)

    return make


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed", "linear_inferred"])
def test_newton_matches_lbfgs(problem, name, weighted):
    pb = problem(name, weighted)
    theta_n, evals_n, H_n = newton_mode(pb)[:3]
    theta_l, evals_l = lbfgs_mode(pb)
    assert theta_n is not None
    # distance in posterior-sd units (Laplace metric at the mode)
    H = full_hessian(pb, theta_l)
    d = theta_n - theta_l
    assert d @ H @ d < 1e-6
    assert np.abs(pb.full_grad(theta_n[None])[0]).max() < 1e-6 * pb.n_rows
    assert evals_n <= 40 * pb.n_rows
    assert np.allclose(H_n, full_hessian(pb, theta_n))  # reused by the Laplace step


@pytest.mark.slow
@pytest.mark.parametrize("weighted", [False, True])
def test_large_softmax_lbfgs_runs_in_kronecker_coordinates(weighted):
    # 12 classes x 45 features = 552 parameters > DENSE_MAX_PARAMS: L-BFGS, whitened by the
    # Kronecker factor at the start -- the exact inverse Hessian there, since every row has the
    # same class probabilities -- finds Newton's mode
    rng, K, d, n = np.random.default_rng(3), 12, 45, 1500
    model = LogisticModel(d, K)
    assert model.n_params > _mode.DENSE_MAX_PARAMS
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=(d, K)) / np.sqrt(d) + rng.gumbel(size=(n, K))).argmax(1)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    pb = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y, w)
    theta0 = pb.start()
    to_theta, to_u, evals, gram = _mode._whitening(pb, theta0)
    L = np.stack([to_theta(e) - theta0 for e in np.eye(model.n_params)], axis=1)
    assert np.allclose(L.T, np.stack([to_u(e) for e in np.eye(model.n_params)], axis=1))
    assert np.allclose(L.T @ full_hessian(pb, theta0) @ L, np.eye(model.n_params), atol=1e-8)
    assert evals == 2 * n  # the pass of the class factor and the Gram's (a record, reused)
    assert _mode._whitening(pb, theta0, gram)[2] == n
    theta_l, evals_l = lbfgs_mode(pb)
    theta_n, _, H = newton_mode(pb)[:3]
    assert (theta_l - theta_n) @ H @ (theta_l - theta_n) < 1e-8
    assert kronecker_covariance(pb, theta_n, gram)[1] == n  # the Laplace reuses the Gram
    assert evals_l <= 35 * n  # 25 passes here; the diagonal scaling took 49


@pytest.mark.slow
def test_softmax_lbfgs_is_rewhitened_once_at_the_iterate(monkeypatch):
    # a softmax L-BFGS not converged after config.rewhiten iterations restarts in the Kronecker
    # coordinates of its iterate (one class-factor pass): the same mode, every pass counted
    rng, K, d, n = np.random.default_rng(4), 12, 45, 1500
    model = LogisticModel(d, K)
    X = rng.normal(size=(n, d)) + 2.0 * rng.random(d)  # uncentred: K-FAC at the start is off
    y = (X @ rng.normal(size=(d, K)) / np.sqrt(d) + rng.gumbel(size=(n, K))).argmax(1)
    pb = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    theta_n, _, H = newton_mode(pb)[:3]
    calls = []
    whitening = _mode._whitening
    monkeypatch.setattr(_mode, "_whitening",
                        lambda p, t, g=None: calls.append(t) or whitening(p, t, g))
    theta_l, evals_l = lbfgs_mode(pb, config=ModeConfig(rewhiten=3))
    assert len(calls) == 2 and not np.allclose(calls[1], calls[0])
    assert (theta_l - theta_n) @ H @ (theta_l - theta_n) < 1e-8
    assert (evals_l / n) % 1 == 0 and evals_l >= (2 + 1 + 4) * n  # Gram, 2 class factors, L-BFGS
    calls.clear()
    theta_1, evals_1 = lbfgs_mode(pb, config=ModeConfig(rewhiten=500))  # converged before
    assert len(calls) == 1 and (theta_1 - theta_n) @ H @ (theta_1 - theta_n) < 1e-8


def test_find_mode_uses_newton_for_dense_glms(problem):
    pb = problem("softmax", False)
    theta, evals, H = find_mode(pb, np.random.default_rng(0))[:3]
    assert np.allclose(theta, newton_mode(pb)[0])
    assert evals == newton_mode(pb)[1]
    assert H is not None


@pytest.mark.parametrize("name, weighted", [("binary", False), ("binary", True),
                                           ("softmax", False), ("linear_inferred", True)])
def test_large_data_newton_starts_from_a_subsample_mode(problem, name, weighted):
    # with N >= 4 x warm_rows, Newton first solves a scaled subsample; the
    # full-data iterations then start close and the mode is the same
    pb = problem(name, weighted, n=4000)
    cold = newton_mode(pb)
    warm = find_mode(pb, np.random.default_rng(0), config=ModeConfig(warm_rows=500))
    d = warm.theta - cold.theta
    assert d @ cold.hessian @ d < 1e-8
    if name == "binary":  # a mode far from 0 (the toy softmax labels are noise)
        assert warm.n_grad_evals < cold.n_grad_evals  # subsample passes cost 500 rows
    no_warm = ModeConfig(warm_rows=1001)  # N < 4 x m: no warm start
    assert np.allclose(find_mode(pb, np.random.default_rng(0), config=no_warm).theta, cold.theta)


def test_newton_gives_up_on_a_broken_hessian(problem):
    # the MLP has no exact Hessian, so find_mode never calls Newton for it; a
    # Hessian that is NaN makes every shift fail and Newton returns None
    pb = problem("binary", False)

    class Flat:
        n_params = pb.model.n_params

        def newton_terms(self, theta, X, y, w=None, hessian=True, value=True):
            f, g, H = pb.model.newton_terms(theta, X, y, w, hessian, value)
            return f, g, None if H is None else np.full_like(H, np.nan)

        def __getattr__(self, name):
            return getattr(pb.model, name)

    bad = Posterior(Flat(), pb.prior, pb.X, pb.y)
    theta, evals, H = newton_mode(bad)[:3]
    assert theta is None and evals > 0 and H is None


def _terms(pb, theta, X=None, **kw):
    X = pb.X if X is None else X
    return pb.model.newton_terms(theta, X, pb.y, pb.weight, **kw)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed", "linear_inferred"])
def test_fused_newton_terms_match_value_gradient_and_hessian(problem, name, weighted):
    # oracle: the generic nll / grad_sum / hessian path (float64), and finite differences
    pb = problem(name, weighted, n=300)
    theta = 0.3 * np.random.default_rng(1).normal(size=pb.model.n_params)
    generic = Likelihood.newton_terms(pb.model, theta, pb.X, pb.y, pb.weight)
    fused = _terms(pb, theta)
    assert np.isclose(fused[0], generic[0], rtol=1e-12)
    np.testing.assert_allclose(fused[1], generic[1], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fused[2], generic[2], rtol=1e-10, atol=1e-10)
    eps, E = 1e-6, np.eye(theta.size)
    plus, minus = ([_terms(pb, theta + sign * eps * e, hessian=False) for e in E]
                   for sign in (1, -1))
    fd_g = [(a[0] - b[0]) / (2 * eps) for a, b in zip(plus, minus)]
    fd_H = [(a[1] - b[1]) / (2 * eps) for a, b in zip(plus, minus)]
    np.testing.assert_allclose(fused[1], fd_g, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused[2], np.array(fd_H), rtol=1e-5, atol=1e-5)
    value_off = _terms(pb, theta, hessian=False, value=False)
    assert value_off[0] is None and value_off[2] is None
    np.testing.assert_allclose(value_off[1], fused[1], rtol=1e-12)
    # float32 rows: the same sums to float32 accuracy (products in float32, sums in float64)
    f32 = _terms(pb, theta, X=pb.X.astype(np.float32))
    f64 = _terms(pb, theta, X=pb.X.astype(np.float32).astype(np.float64))
    for a, b in zip(f32, f64):
        scale = np.max(np.abs(b))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
def test_anchor_terms_match_the_responses_and_their_gradient(problem, name, weighted):
    # oracle: the generic float64 response / grad_from_response; float32 rows (fused for the
    # scalar GLMs) agree to float32 accuracy
    pb = problem(name, weighted, n=300)
    theta = 0.3 * np.random.default_rng(1).normal(size=pb.model.n_params)
    r = pb.model.response(theta[None], pb.X, pb.y)
    g = pb.model.grad_from_response(r, pb.X, pb.weight)[0]
    for X, tol in ((pb.X, 1e-12), (pb.X.astype(np.float32), 1e-5)):
        ga, ra = pb.model.anchor_terms(theta, X, pb.y, pb.weight)
        np.testing.assert_allclose(ga, g, rtol=0, atol=tol * np.abs(g).max())
        np.testing.assert_allclose(ra, r[0], rtol=0, atol=tol * np.abs(r).max())


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
def test_newton_terms_write_the_anchor_responses(problem, name, weighted):
    # oracle: anchor_terms at the same position; the pass's other terms are unchanged
    pb = problem(name, weighted, n=300)
    theta = 0.3 * np.random.default_rng(1).normal(size=pb.model.n_params)
    for X in (pb.X, pb.X.astype(np.float32)):
        plain = pb.model.newton_terms(theta, X, pb.y, pb.weight)
        g, r = pb.model.anchor_terms(theta, X, pb.y, pb.weight)
        out = np.empty_like(r)
        terms = pb.model.newton_terms(theta, X, pb.y, pb.weight, response_out=out)
        np.testing.assert_array_equal(out, r)
        for a, b in zip(terms, plain):
            np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("float32", [False, True])
@pytest.mark.parametrize("name, weighted, n", [
    ("binary", False, 400), ("binary", True, 20_000), ("softmax", False, 400),
    ("linear_fixed", True, 20_000), ("linear_inferred", False, 20_000)])
def test_the_mode_search_computes_the_control_variate_anchor(problem, name, weighted, n,
                                                             float32):
    # asked for it, Newton's last pass leaves the anchor for control variates: no pass of their
    # own, and an exactly unbiased estimator -- G is the sum of the stored responses' gradients
    # (oracle: grad_from_response on all rows) -- at a point within Newton's tolerance of the
    # mode (oracle: the anchor computed there); models without responses get G at the mode
    from skbayes_sg.preprocessing import anchor_terms

    pb = problem(name, weighted, n=n)
    if float32:
        pb = Posterior(pb.model, pb.prior, pb.X.astype(np.float32), pb.y, pb.weight)
    sampled = ModeConfig(warm_rows=1000, hessian_rows_per_param=10)  # the sampled-Hessian search
    res = find_mode(pb, np.random.default_rng(0), anchor=True, config=sampled)
    G, r, point = res.anchor
    H, p = full_hessian(pb, res.theta), pb.model.n_params
    G_mode, r_mode = anchor_terms(pb, res.theta)
    d = np.linalg.solve(H, G - G_mode)  # the anchors' distance, in the mode's metric
    assert d @ H @ d < 1e-4 * p and (point - res.theta) @ H @ (point - res.theta) < 1e-4 * p
    tol = 1e-5 if float32 else 1e-10  # of the scale of the summed terms
    X64 = np.asarray(pb.X, dtype=np.float64)
    if r is None:  # the gradient at the point
        assert not pb.model.is_glm
        G_point = pb.full_grad(point[None])[0] - pb.prior.grad(point[None])[0]
        np.testing.assert_array_less(np.abs(G - G_point), tol * n)  # n terms of size ~1
    else:
        resp = r.astype(np.float64)[None]
        G_r = pb.model.grad_from_response(resp, X64, pb.weight)[0]
        scale = pb.model.grad_from_response(np.abs(resp), np.abs(X64), pb.weight)[0]
        np.testing.assert_array_less(np.abs(G - G_r), tol * scale.max())
        assert r.dtype == r_mode.dtype
    fresh = problem(name, weighted, n=n)  # not asked: control variates make their own pass
    assert find_mode(fresh, np.random.default_rng(0)).anchor is None


def test_float32_and_float64_rows_give_the_same_mode(problem):
    # float32 chunks (products in float32, sums in float64) on the warm-started path, at Newton's
    # tight tolerance (the float32 precision is the question, not the sampled path's tolerance)
    config = ModeConfig(warm_rows=2000, sampled_tol=1e-10)
    pb64 = problem("binary", False, n=20_000)
    pb64 = Posterior(pb64.model, pb64.prior, pb64.X.astype(np.float32).astype(np.float64), pb64.y)
    pb32 = Posterior(pb64.model, pb64.prior, pb64.X.astype(np.float32), pb64.y)
    m64, m32 = (find_mode(pb, np.random.default_rng(0), config=config) for pb in (pb64, pb32))
    d = m32.theta - m64.theta
    assert d @ m64.hessian @ d < 1e-8  # squared distance in posterior sd
    np.testing.assert_allclose(m32.hessian, m64.hessian, rtol=1e-4)


def test_float32_logistic_newton_iterates_on_float32_points(problem, monkeypatch):
    # the fused binary pass evaluates the position rounded to float32, so Newton iterates there
    # (every gradient is then that of the iterate, not of a neighbour 1e-7 away) and returns the
    # last Newton target in float64; oracle: a float64 Newton on the same (float32-valued) rows
    pb = problem("binary", True, n=5000)
    X32 = pb.X.astype(np.float32)
    pb32 = Posterior(pb.model, pb.prior, X32, pb.y, pb.weight)
    pb64 = Posterior(pb.model, pb.prior, X32.astype(np.float64), pb.y, pb.weight)
    assert pb32.evaluation_dtype == np.float32 and pb64.evaluation_dtype is None
    seen, terms = [], Posterior.newton_terms

    def record(self, theta1, *args, **kwargs):
        seen.append(np.array(theta1))
        return terms(self, theta1, *args, **kwargs)

    monkeypatch.setattr(Posterior, "newton_terms", record)
    m32 = newton_mode(pb32)
    assert all(np.array_equal(t, t.astype(np.float32)) for t in seen) and len(seen) > 3
    assert not np.array_equal(m32.theta, m32.theta.astype(np.float32))  # the target, finer
    seen.clear()
    m64 = newton_mode(pb64, tol=1e-14)
    assert not any(np.array_equal(t, t.astype(np.float32)) for t in seen[1:])
    d = m32.theta - m64.theta
    assert d @ m64.hessian @ d < 1e-10 * pb.model.n_params


def test_rounded_newton_stops_below_the_spacing_or_on_the_predicted_decrement():
    # _finer's two exits (oracle: np.spacing of the float32 point, the linear-rate prediction
    # decrement^2 / previous), and never without a rounding model
    from skbayes_sg.preprocessing._newton import _finer

    rounded, exact = (type("P", (), {"evaluation_dtype": dt}) for dt in (np.float32, None))
    theta = np.array([1.0, 1e-3, -2.0]).astype(np.float32).astype(np.float64)
    spacing = np.abs(np.spacing(theta.astype(np.float32))).astype(np.float64)  # < 0 below 0
    assert _finer(rounded, theta, 0.5 * spacing, 1.0, None, 1e-12)
    assert not _finer(rounded, theta, 2.0 * spacing, 1.0, None, 1e-12)
    assert _finer(rounded, theta, 2.0 * spacing, 1e-6, 1e-2, 1e-9)  # predicted 1e-10
    assert not _finer(rounded, theta, 2.0 * spacing, 1e-6, 1e-5, 1e-9)  # predicted 1e-7
    assert not _finer(exact, theta, 0.0 * spacing, 1e-6, 1e-2, 1e-9)


@pytest.mark.parametrize("name, weighted", [("binary", False), ("binary", True),
                                           ("linear_inferred", True)])
def test_warm_newton_takes_one_hessian_pass(problem, monkeypatch, name, weighted):
    # from the subsample's mode, the full-data iterations use its Hessian and compute the exact
    # one once, at (or within 0.01 sd of) the mode they return
    pb = problem(name, weighted, n=8000)
    exact = ModeConfig(warm_rows=1000, hessian_rows_per_param=1000)  # 4 x 1000 p rows > N
    calls = _count_newton_passes(monkeypatch)
    warm = find_mode(pb, np.random.default_rng(0), config=exact)
    full = [h for n, h in calls if n == pb.n_rows]
    assert sum(full) == 1 and len(full) <= 8 and warm.hessian_rows is None
    cold = newton_mode(pb)
    d = warm.theta - cold.theta
    assert d @ cold.hessian @ d < 1e-8
    np.testing.assert_allclose(warm.hessian, full_hessian(pb, warm.theta), rtol=2e-3)


@pytest.mark.parametrize("name, weighted", [("binary", False), ("linear_inferred", True)])
def test_the_warm_start_starts_from_a_smaller_subsample(problem, monkeypatch, name, weighted):
    # the warm subsample's Newton starts from the mode of a quarter or less of its rows, so its
    # own exact Hessian is computed once (oracle: its mode from the model's start)
    pb = problem(name, weighted, n=8000)
    config = ModeConfig(warm_rows=2000, hessian_rows_per_param=1, first_rows=500,
                        first_rows_per_param=1)
    calls = _count_newton_passes(monkeypatch)
    theta0, hessian0, evals, warm = _warm.warm_start(pb, np.random.default_rng(0), config)
    assert warm.n_rows == 2000 and [n for n, h in calls if h].count(2000) == 1
    assert {n for n, h in calls} == {500, 2000}
    assert evals == sum(n * (1 + h) for n, h in calls)
    cold = newton_mode(warm, tol=config.warm_tol)
    d = theta0 - cold.theta
    assert d @ cold.hessian @ d < config.warm_tol * pb.model.n_params
    np.testing.assert_allclose(hessian0, full_hessian(warm, theta0), rtol=1e-6)


def _count_newton_passes(monkeypatch):
    """``[(rows, hessian), ...]`` of every ``Posterior.newton_terms`` call from now on."""
    calls, original = [], Posterior.newton_terms

    def counted(self, theta, hessian=True, value=True, responses=None):
        calls.append((self.n_rows, hessian))
        return original(self, theta, hessian, value, responses)

    monkeypatch.setattr(Posterior, "newton_terms", counted)
    return calls


def test_posteriors_without_cheap_subsets_keep_the_exact_hessian(problem, monkeypatch):
    # dask gathers a subset row by row: there the Hessian rides on a full pass instead
    from dataclasses import dataclass

    @dataclass(frozen=True, eq=False)
    class Remote(Posterior):
        cheap_subsets = False

    pb = problem("binary", False, n=20_000)
    config = ModeConfig(warm_rows=1000, hessian_rows_per_param=10)
    calls = _count_newton_passes(monkeypatch)
    res = find_mode(Remote(pb.model, pb.prior, pb.X, pb.y), np.random.default_rng(0),
                    config=config)
    assert res.hessian_rows is None and sum(h for n, h in calls if n == pb.n_rows) == 1


@pytest.mark.parametrize("name, weighted", [("binary", False), ("linear_inferred", True)])
def test_large_data_estimate_the_mode_hessian_on_a_subsample(problem, monkeypatch, name, weighted):
    # above 4 x hessian_rows rows no full Hessian pass: the mode to Newton's looser tolerance
    # there (oracle: the tight mode; the tight tolerance costs more passes), and a Hessian of
    # 1,000 rows whose whitened error is of the order 2 sqrt(p / m) (oracle: the exact Hessian)
    pb = problem(name, weighted, n=20_000)
    p = pb.model.n_params
    config = ModeConfig(warm_rows=1000, hessian_rows_per_param=10)
    calls = _count_newton_passes(monkeypatch)
    warm = find_mode(pb, np.random.default_rng(0), config=config)
    assert not any(h for n, h in calls if n == pb.n_rows)
    assert warm.hessian_rows == 1000 and [n for n, h in calls if h][-1] == 1000
    cold = newton_mode(pb)
    d = warm.theta - cold.theta
    assert d @ cold.hessian @ d < config.sampled_tol * p
    tight = find_mode(pb, np.random.default_rng(0), config=replace(config, sampled_tol=1e-10))
    d = tight.theta - cold.theta
    assert d @ cold.hessian @ d < 1e-8 and tight.n_grad_evals > warm.n_grad_evals
    L = np.linalg.cholesky(np.linalg.inv(warm.hessian))
    spread = np.linalg.eigvalsh(L.T @ cold.hessian @ L)
    assert 0.002 < np.abs(spread - 1).max() < 4 * np.sqrt(p / 1000)


def _profile_mode(pb):
    """Exact mode of linear regression with inferred noise: ``beta(sigma)`` in closed form, then
    the root in ``log sigma`` of the profile's derivative ``dU/d log sigma`` at ``beta(sigma)`` (the
    oracle; no Newton.  The root of the derivative, not a minimum of ``U``: with ``y + 1e6`` the
    rounding of ``U`` is larger than its change within the tolerance)."""
    from scipy.optimize import brentq

    X1 = np.column_stack([pb.X, np.ones(pb.n_rows)])
    w = np.ones(pb.n_rows) if pb.weight is None else pb.weight
    P = np.diag(pb.prior.precision[:-1])

    c = np.average(pb.y, weights=w)  # solved for beta - c e_b: y's offset would cost digits

    def beta(s):
        iv, e_b = np.exp(-2 * s), np.eye(X1.shape[1])[-1]
        rhs = iv * (X1.T * w) @ (pb.y - c) - c * P @ e_b
        return np.linalg.solve(iv * (X1.T * w) @ X1 + P, rhs) + c * e_b

    def dU(s):
        return pb.full_grad(np.append(beta(s), s)[None])[0, -1]

    s0 = 0.5 * np.log(np.var(pb.y))
    s = brentq(dU, s0 - 10, s0 + 1, xtol=1e-14)
    return np.append(beta(s), s)


@pytest.mark.parametrize("offset, scale", [(1e6, 1.0), (1e6, 1e-4), (-3e4, 1e3), (0.0, 1.0)])
def test_linear_mode_is_robust_to_offsets_and_scales_of_y(problem, offset, scale):
    # issue 14 item 6: from zeros, y + 1e6 with inferred noise raised LinAlgError
    pb = problem("linear_inferred", False)
    y = pb.y * scale + offset
    v = np.var(y)
    prec = pb.prior.precision.copy()
    prec[D] = 1.0 / (10 * (abs(y.mean()) + np.sqrt(v) + 1)) ** 2  # the estimator's intercept prior
    pb = Posterior(pb.model, NoisePrior(prec, index=-1, a=1.0, b=0.1 * v), pb.X, y)
    res = find_mode(pb, np.random.default_rng(0))
    exact = _profile_mode(pb)
    d = res.theta - exact
    assert d @ res.hessian @ d < 1e-6
    assert np.allclose(res.hessian, full_hessian(pb, res.theta), rtol=1e-6)


def test_a_subsample_hessian_laplace_gives_the_same_posterior():
    # the subsample Hessian only preconditions: the draws match a fit with the exact Laplace
    # within Monte-Carlo error (means 0.35 sd, sds within 20%), and preprocessing_ says so
    from skbayes_sg import BayesianLogisticRegression
    from skbayes_sg.fitting import FitConfig

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 5)) * rng.uniform(0.3, 3.0, size=5)
    y = (X @ np.ones(5) / 3 + rng.logistic(size=20_000) > 0).astype(int)
    fits = {}
    for per_param in (10, 10_000):  # 4 x max(1000, 60) <= N: sampled; 4 x 60,000 > N: exact
        est = BayesianLogisticRegression(random_state=0)
        est._fit_config = FitConfig(mode=ModeConfig(warm_rows=1000,
                                                    hessian_rows_per_param=per_param))
        fits[per_param] = est.fit(X, y)
    assert fits[10].preprocessing_["laplace_hessian_rows"] == 1000
    assert fits[10_000].preprocessing_["laplace_hessian_rows"] is None
    a, b = (f.draws_.reshape(-1, f.draws_.shape[-1]) for f in fits.values())
    sd = b.std(0)
    assert np.abs(a.mean(0) - b.mean(0)).max() < 0.35 * sd.min()
    assert np.all((a.std(0) / sd > 0.8) & (a.std(0) / sd < 1.25))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # a short run
@pytest.mark.parametrize("subsampling", ["control_variates", "preferential_cv", "auto"])
def test_fits_with_control_variates_take_their_anchor_from_the_mode_search(monkeypatch,
                                                                           subsampling):
    # the anchor's own pass is never made (it would raise), for any strategy anchored at the mode
    from skbayes_sg import BayesianLogisticRegression
    from skbayes_sg.preprocessing import _anchor

    def no_pass(posterior, mode):
        raise AssertionError("the anchor was computed in a pass of its own")

    monkeypatch.setattr(_anchor, "anchor_terms", no_pass)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)).astype(np.float32)
    y = (X @ np.ones(4) + rng.logistic(size=3000) > 0).astype(int)
    est = BayesianLogisticRegression(subsampling=subsampling, n_draws=50, n_warmup=50,
                                     random_state=0).fit(X, y)
    assert np.all(np.isfinite(est.coef_))


def test_softmax_anchor_responses_are_stored_row_major():
    # every step gathers b rows of them: column-major (as the chunks give them) cost 3.3 ms per
    # step against 0.5 ms on 6,400 rows of a 100-class model
    from skbayes_sg.preprocessing import anchor_terms

    post, mode = softmax_posterior(6, 4, 20_000)  # three row chunks
    G, responses = anchor_terms(post, mode)
    assert responses.shape == (20_000, 6) and responses.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(G, post.full_grad(mode[None])[0] - post.prior.grad(mode[None])[0],
                               rtol=1e-8, atol=1e-8)
