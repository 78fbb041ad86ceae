"""``preferential``, ``preferential_cv`` and ``adaptive`` (methods.md §5-7, seed 004).

Monte-Carlo checks use fixed seeds and tolerances of 5 standard errors per
coordinate; each unbiasedness test also shows that a deliberately biased
variant (preferential draws without the ``1 / p_i`` reweighting) fails it.
"""

import warnings
from dataclasses import replace

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.model_selection import GridSearchCV

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.models import Laplace, Posterior
from skbayes_sg.preprocessing import (
    curvature_weights,
    gradient_norm_weights,
    laplace_at,
    lipschitz_constants,
    mix_uniform,
)
from skbayes_sg.subsampling import (
    SUBSAMPLING,
    Adaptive,
    ControlVariates,
    Preferential,
    PreferentialCV,
    SVRGAnchor,
    Uniform,
)

MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]
STRATEGIES = {"preferential": Preferential(), "preferential_cv": PreferentialCV(),
              "adaptive": Adaptive()}


@pytest.fixture
def problem(make_problem):
    """``problem(name, n=200, weighted=False, mode="random")``: rows of heterogeneous norm."""
    def make(name, n=200, weighted=False, mode="random"):
        return make_problem(name, n=n, weighted=weighted, layout="heavy", mode=mode)
    return make


# ------------------------------------------------------------------ weights

@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
@pytest.mark.parametrize("kind", ["auto", "diagonal"])
def test_curvature_weights_match_explicit_hessians(name, kind, problem):
    pb, lap, _ = problem(name, n=40)
    lap = laplace_at(pb, lap.mode, kind)[0]
    S = lap.covariance if lap.dense else np.diag(lap.covariance)
    exact = []
    for i in range(pb.n_rows):
        H = pb.model.hessian(lap.mode, pb.X[i:i + 1], pb.y[i:i + 1])
        exact.append(np.sqrt(np.trace(H @ S @ H)))
    p, evals = curvature_weights(pb, lap, uniform_mix=0.1)
    np.testing.assert_allclose(p, mix_uniform(np.array(exact), None, 0.1), rtol=1e-9)
    assert evals == pb.n_rows


@pytest.mark.parametrize("name", ["binary", "linear_fixed"])
@pytest.mark.parametrize("weighted", [False, True])
def test_curvature_pass_shares_the_control_variate_anchor(name, weighted, problem):
    # the weights' pass computes the anchor at the mode too: the strategy's data carries it at
    # no cost, equal to the anchor's own pass (oracle: anchor_terms on a fresh posterior)
    from skbayes_sg.preprocessing import anchor_terms, curvature_weights_and_anchor

    pb, lap, _ = problem(name, n=60, weighted=weighted)
    lap = laplace_at(pb, lap.mode, "auto")[0]
    _, evals, (G, r, point) = curvature_weights_and_anchor(pb, lap, anchor=True)
    G0, r0 = anchor_terms(replace(pb), lap.mode)
    assert evals == pb.n_rows and point is lap.mode
    data = PreferentialCV().preprocess(pb, lap, rng=np.random.default_rng(0))
    assert data.n_grad_evals == pb.n_rows and data.anchor.point is lap.mode
    np.testing.assert_allclose(G, G0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r, r0, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["binary", "softmax"])
def test_anchor_responses_are_written_chunk_by_chunk(name, problem, monkeypatch):
    # several chunks, written in place: every row's response (oracle: model.response on all
    # rows), row-contiguous, in the minibatch precision (float32 for float32 X)
    from skbayes_sg.preprocessing import anchor_terms
    from skbayes_sg.utils import row_chunks

    pb, lap, _ = problem(name, n=70)
    monkeypatch.setattr(Posterior, "chunks", lambda self, width=1: row_chunks(self.n_rows,
                                                                              rows=16))
    for X, tol in ((pb.X, 1e-12), (pb.X.astype(np.float32), 1e-5)):
        post = replace(pb, X=X)
        G, r = anchor_terms(post, lap.mode)
        exact = pb.model.response(lap.mode[None], pb.X, pb.y)[0]
        assert r.dtype == X.dtype and r.flags.c_contiguous and r.shape == exact.shape
        np.testing.assert_allclose(r, exact, rtol=0, atol=tol * np.abs(exact).max())


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("intercept", [True, False])
def test_quadratic_rows_from_the_triangular_factor(dtype, tol, intercept):
    # oracle: x~' S x~ and ||x~||^2 with x~ = [x, 1] formed explicitly, in float64
    from skbayes_sg.preprocessing._weights import _dense_quadratic_rows, _triangular_factor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 7)) * rng.uniform(0.1, 10.0, size=7)
    d1 = 8 if intercept else 7
    A = rng.normal(size=(d1, d1))
    S = A @ A.T + 0.1 * np.eye(d1)
    X1 = np.column_stack([X, np.ones(300)]) if intercept else X
    tri = _triangular_factor(np.linalg.cholesky(S), 7, dtype)
    q, sq = _dense_quadratic_rows(X.astype(dtype), *tri)
    np.testing.assert_allclose(q, np.einsum("ij,jk,ik->i", X1, S, X1), rtol=tol * 10)
    np.testing.assert_allclose(sq, (X1 * X1).sum(1), rtol=tol)


@pytest.mark.parametrize("name", MODELS)
def test_gradient_norm_weights_and_lipschitz(name, problem):
    pb, lap, _ = problem(name, n=40, weighted=True)
    norms = np.linalg.norm(pb.model.per_example_grad(lap.mode, pb.X, pb.y), axis=1)
    p, _ = gradient_norm_weights(pb, lap, uniform_mix=0.2)
    np.testing.assert_allclose(p, mix_uniform(norms * pb.weight, pb.weight, 0.2), rtol=1e-9)
    if name == "mlp":
        with pytest.raises(ValueError, match="No Lipschitz constants"):
            lipschitz_constants(pb, lap)
        return
    L = lipschitz_constants(pb, lap) / pb.weight
    for i in range(0, 40, 7):  # L_i bounds the curvature at the mode (equal for linear)
        H = pb.model.hessian(lap.mode, pb.X[i:i + 1], pb.y[i:i + 1])
        top = np.abs(np.linalg.eigvalsh(H)).max()
        assert top <= L[i] * (1 + 1e-12)
        if pb.model.is_regression:
            np.testing.assert_allclose(top, L[i], rtol=1e-10)


@pytest.mark.parametrize("name", ["binary", "softmax"])
def test_weights_positive_for_confident_points(name, problem):
    """``s(1-s)`` and the responses underflow to 0; the floor keeps ``p_i > 0``."""
    pb, lap, _ = problem(name, n=100)
    X = pb.X.copy()
    X[:10] *= 1e4  # margins ~1e4: curvature exactly 0 in float64
    pb = replace(pb, X=X)
    lap = Laplace(np.linspace(-1.0, 2.0, pb.model.n_params), lap.covariance)
    c = pb.model.curvature(lap.mode, X[:10])
    assert np.any(c == 0.0) if name == "binary" else np.any(c.max(axis=1) == 1.0)
    for p, _ in (curvature_weights(pb, lap, 0.05), gradient_norm_weights(pb, lap, 0.05)):
        assert np.all(p >= 0.05 / 100 * (1 - 1e-12)) and abs(p.sum() - 1) < 1e-12
    with pytest.raises(ValueError, match="uniform_mix"):
        mix_uniform(np.ones(3), None, 0.0)


# --------------------------------------------------------- unbiasedness

@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("name", MODELS)
def test_unbiased_for_every_model(strategy, name, problem, estimates, within_5se):
    pb, lap, rng = problem(name, weighted=name in ("linear_fixed", "mlp"))
    theta = np.tile(lap.mode + 0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    exact = pb.full_grad(theta[:1])[0]
    est = STRATEGIES[strategy].build(pb, lap, batch_size=10, rng=np.random.default_rng(1))
    g, _ = estimates(est, theta, 30)
    assert within_5se(g, exact)
    # deliberately biased: the same preferential draws, weighted as if uniform
    est.index.p = np.full(pb.n_rows, est.index.total / pb.n_rows)
    g, _ = estimates(est, theta[:16], 300)
    assert not within_5se(g, exact)


@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("mlp", True)])
def test_preferential_with_control_variates_unbiased(name, weighted, problem, estimates,
                                                      within_5se):
    """``Preferential(correction="cv")``: gradient-difference sums, curvature weights."""
    pb, lap, rng = problem(name, weighted=weighted)
    theta = np.tile(lap.mode + 0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    est = Preferential(correction="cv").build(pb, lap, batch_size=10, rng=rng)
    assert est.outputs["preferential_weights"] == "curvature"
    g, evals = estimates(est, theta, 30)
    assert within_5se(g, pb.full_grad(theta[:1])[0])
    assert evals[0] == 128 * 10 * (1 if pb.model.is_glm else 2)


@pytest.mark.parametrize("strategy", ["preferential", "preferential_cv"])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed", "mlp"])
def test_batch_of_all_rows_gives_the_exact_gradient(strategy, name, problem, estimates):
    # b >= N importance draws with replacement would stay noisy at the cost of the exact sum
    pb, lap, rng = problem(name, n=60, weighted=name == "linear_fixed")
    theta = lap.mode + 0.5 * rng.normal(size=(3, pb.model.n_params))
    cost = STRATEGIES[strategy].build(pb, lap, batch_size=59, rng=rng).evals_per_step / 59
    for b in (60, 90):
        est = STRATEGIES[strategy].build(pb, lap, batch_size=b, rng=np.random.default_rng(1))
        g, _ = estimates(est, theta, 2)
        np.testing.assert_allclose(g, np.tile(pb.full_grad(theta), (2, 1)), rtol=1e-9,
                                   atol=1e-9)
        assert est.evals_per_step == 60 * cost  # N rows, not b


def test_each_chain_uses_only_its_own_stream(problem, estimates):
    pb, lap, rng = problem("binary")
    theta = lap.mode + 0.3 * rng.normal(size=(3, pb.model.n_params))
    for strategy in STRATEGIES.values():
        est = strategy.build(pb, lap, batch_size=10, rng=np.random.default_rng(0))
        one, _ = estimates(est, theta[:1], 7)
        three, _ = estimates(est, theta, 7)
        np.testing.assert_array_equal(one, three[::3])


def test_a_rebuild_at_another_batch_reuses_the_weights_and_their_tables(problem):
    # batch_size="auto" builds twice from one preprocessing: the weights (a pass) and the
    # sampling tables (a sort of N cumulative weights) are computed once, in the data record
    pb, lap, _ = problem("binary")
    for strategy in (Preferential(), PreferentialCV()):
        data = strategy.preprocess(pb, lap, rng=np.random.default_rng(0))
        first = strategy.estimator(data, batch_size=10)
        second = strategy.estimator(data, batch_size=20)
        assert data.n_grad_evals > 0
        assert first.preprocessing_evals == second.preprocessing_evals == data.n_grad_evals
        assert second.index.b == 20 and second.index.guide is first.index.guide
        other = strategy.build(pb, lap, batch_size=20, rng=np.random.default_rng(1))
        assert np.array_equal(other.index.guide, first.index.guide)  # same weights for GLMs


# ------------------------------------------------------- adaptive sizes

@pytest.mark.parametrize("name", ["binary", "mlp"])
def test_adaptive_size_grows_with_distance_and_cost_is_exact(name, problem, estimates):
    pb, lap, rng = problem(name)
    est = Adaptive(n_max=150).build(pb, lap, batch_size=10, rng=np.random.default_rng(0))
    out = est.outputs
    v = rng.normal(size=pb.model.n_params)
    v *= np.sqrt(out["adaptive_r95"]) / np.linalg.norm(v)  # n = 10 t^2 for t < 3.8
    per_row = 1 if name == "binary" else 2
    seen = []
    for t in [0.0, 0.5, 0.9, 1.5, 2.5, 3.5, 100.0]:  # 10 t^2 off integers (no rounding tie)
        theta = np.stack([lap.mode + t * v, lap.mode + 2 * t * v])
        sizes = est.index.sizes(theta)
        _, evals = estimates(est, theta, 3)
        assert evals == [per_row * sizes.sum()] * 3
        seen.append(sizes[0])
        assert sizes[1] >= sizes[0]
    assert seen == [1, 3, 9, 23, 63, 123, 150]
    np.testing.assert_allclose(est.index.rate, 10 / out["adaptive_r95"])
    if name == "binary":  # V0 from eq. 18 at the 95th percentile with n = b
        np.testing.assert_allclose(out["adaptive_V0"],
                                   out["adaptive_r95"] * out["adaptive_lipschitz_sum"] / 10)
        fixed = Adaptive(V0=out["adaptive_V0"]).build(pb, lap, batch_size=10, rng=rng)
        np.testing.assert_allclose(fixed.index.rate, est.index.rate)
    else:
        assert out["adaptive_V0"] is None and out["adaptive_lipschitz_sum"] is None
        with pytest.raises(ValueError, match="needs Lipschitz constants"):
            Adaptive(V0=1.0).build(pb, lap, batch_size=10, rng=rng)


def test_adaptive_default_n_max(problem):
    pb, lap, rng = problem("binary", n=50)
    assert Adaptive().build(pb, lap, batch_size=10, rng=rng).index.n_max == 50
    with pytest.raises(ValueError, match="below n_min=120"):
        Adaptive(n_min=120).build(pb, lap, batch_size=10, rng=rng)


@pytest.mark.parametrize("strategy, bad, param", [
    (Preferential, {"uniform_mix": 0}, "uniform_mix"),
    (Preferential, {"uniform_mix": 1.5}, "uniform_mix"),
    (Preferential, {"correction": "none"}, "correction"),
    (Preferential, {"correction": SVRGAnchor(n1=0)}, "n1"),
    (PreferentialCV, {"uniform_mix": "a"}, "uniform_mix"),
    (Adaptive, {"n_min": 0}, "n_min"),
    (Adaptive, {"n_max": 2.5}, "n_max"),
    (Adaptive, {"n_min": 5, "n_max": 3}, "n_max"),
    (Adaptive, {"V0": -1.0}, "V0"),
    (Adaptive, {"n_pilot": 5}, "n_pilot"),
    (Adaptive, {"uniform_mix": 0.0}, "uniform_mix"),
])
def test_validate_names_the_bad_parameter(strategy, bad, param):
    with pytest.raises(ValueError, match=param):
        strategy(**bad).validate()
    strategy().validate()


def test_validate_runs_before_any_data_pass(monkeypatch):
    def no_pass(*args, **kwargs):
        raise AssertionError("a pass over the data ran before validate()")

    monkeypatch.setattr(Posterior, "row_sum", no_pass)
    X, y = make_blobs(60, 2, centers=2, random_state=0)
    for sub, param in [(PreferentialCV(uniform_mix=0), "uniform_mix"),
                       (Adaptive(n_pilot=1), "n_pilot")]:
        with pytest.raises(ValueError, match=param):
            BayesianLogisticRegression(subsampling=sub).fit(X, y)


# ----------------------------------------------------------- variance

def _mse(strategy, pb, lap, theta, exact, estimates, b=20, n_rounds=40):
    est = strategy.build(pb, lap, batch_size=b, rng=np.random.default_rng(0))
    g, evals = estimates(est, theta, n_rounds, seed=3)
    return np.mean(np.sum((g - np.tile(exact, (n_rounds, 1))) ** 2, axis=-1)), np.mean(evals)


@pytest.mark.parametrize("name", ["binary", "linear_fixed", "softmax"])
def test_lower_variance_near_the_mode(name, problem, estimates):
    pb, lap, rng = problem(name, n=2000, mode="fit")
    theta = lap.draws(rng, 32)
    exact = pb.full_grad(theta)
    mse = {k: _mse(s, pb, lap, theta, exact, estimates) for k, s in {
        "uniform": Uniform(), "preferential": Preferential(), "cv": ControlVariates(),
        "preferential_cv": PreferentialCV()}.items()}
    assert mse["preferential"][0] < 0.7 * mse["uniform"][0]
    assert mse["preferential_cv"][0] < 0.7 * mse["cv"][0]
    assert mse["preferential_cv"][1] == mse["cv"][1]  # same cost


# ------------------------------------------------- exact linear posterior

# As test_exact_posterior.test_sg_samplers_well_conditioned: no preconditioner,
# b = 100 of N = 2000, 102,000 SGLD steps per chain.
@pytest.mark.parametrize("subsampling", list(STRATEGIES))
def test_well_conditioned_long_chains(subsampling, well_conditioned_problem, fit_exact_linear,
                                      check_exact):
    X, y, s, (mean, cov) = well_conditioned_problem
    reg = fit_exact_linear(X, y, s, sampler="sgld", subsampling=subsampling, preconditioner=None,
                           n_warmup=2000, n_draws=20_000, thin=5, batch_size=100)
    check_exact(reg, mean, cov)


@pytest.mark.parametrize("problem_name", ["diabetes_problem", "correlated_problem"])
@pytest.mark.parametrize("subsampling", ["preferential_cv", "adaptive"])
def test_ill_conditioned_default_lengths(problem_name, subsampling, request, fit_exact_linear,
                                         check_exact):
    X, y, s, (mean, cov) = request.getfixturevalue(problem_name)
    reg = fit_exact_linear(X, y, s, subsampling=subsampling)
    check_exact(reg, mean, cov)
    assert reg.preprocessing_["subsampling_weights"].shape == (X.shape[0],)


# ------------------------------------------------------------ estimators

FAST = dict(n_warmup=100, n_draws=100, n_chains=2, batch_size=100, random_state=0)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_estimators_smoke(strategy, cancer):
    X, y = cancer
    assert SUBSAMPLING[strategy] is type(STRATEGIES[strategy])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = BayesianLogisticRegression(subsampling=strategy, **FAST).fit(X, y)
        assert clf.score(X, y) > 0.95
        Xr = X[:, :5]
        reg = BayesianLinearRegression(subsampling=strategy, sampler="sgld", **FAST).fit(
            Xr, Xr @ np.arange(5.0) + np.random.default_rng(0).normal(size=len(Xr)))
        assert reg.score(Xr, Xr @ np.arange(5.0)) > 0.9
        Xb, yb = make_blobs(n_samples=300, centers=3, n_features=4, random_state=0)
        mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=strategy,
                                    n_warmup=200, n_draws=30, random_state=0).fit(Xb, yb)
        assert mlp.score(Xb, yb) > 0.9
    p = clf.preprocessing_["subsampling_weights"]
    assert p.shape == (X.shape[0],) and np.all(p > 0) and abs(p.sum() - 1) < 1e-12
    assert clf.preprocessing_["preferential_uniform_mix"] == 0.1
    per_step = clf.diagnostics_["grad_evals_per_step"]
    if strategy == "adaptive":
        assert 1 <= per_step <= clf.preprocessing_["adaptive_n_max"]
        assert 1 <= mlp.diagnostics_["grad_evals_per_step"] / 2 <= 1000
    else:
        assert per_step == 100 and mlp.diagnostics_["grad_evals_per_step"] == 100 * (
            2 if strategy == "preferential_cv" else 1)


def test_grid_search_over_uniform_mix(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(subsampling=PreferentialCV(), **FAST)
    grid = GridSearchCV(est, {"subsampling__uniform_mix": [0.05, 0.5]}, cv=2).fit(X, y)
    assert grid.best_params_["subsampling__uniform_mix"] in (0.05, 0.5)
    assert grid.best_estimator_.preprocessing_["preferential_uniform_mix"] in (0.05, 0.5)
    assert est.subsampling.uniform_mix == 0.1  # the original object is untouched
    assert Adaptive().get_params() == {"uniform_mix": 0.1, "n_min": 1, "n_max": None,
                                       "V0": None, "n_pilot": 1000}
    assert Preferential().get_params() == {"uniform_mix": 0.1, "correction": "plain",
                                           "shared_minibatch": False}


# ------------------------------------------------------------------ wide minibatches

@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
@pytest.mark.parametrize("strategy", ["preferential_cv", "uniform", "control_variates"])
def test_wide_glm_minibatch_sums_run_in_cache_sized_chunks(name, strategy, shared, problem,
                                                           estimates, monkeypatch):
    # oracle: the same estimate from one minibatch sum (the chunks are the same rows, so the
    # same draws of the index stream and the same sum up to rounding)
    from skbayes_sg.subsampling import _estimator

    pb, lap, _ = problem(name, n=300, weighted=True)
    theta = lap.mode + 0.1 * np.random.default_rng(1).normal(size=(3, pb.model.n_params))

    def run():  # the estimates and the minibatch shapes the terms saw
        est = SUBSAMPLING[strategy](shared_minibatch=shared).build(
            pb, lap, batch_size=64, rng=np.random.default_rng(0))
        calls, difference = [], est.terms.difference

        def counted(*args):
            calls.append(args[4].shape)
            return difference(*args)

        monkeypatch.setattr(est.terms, "difference", counted)
        return estimates(est, theta, 3)[0], calls

    def shape(b):  # one minibatch for every chain, or one per chain
        return (b,) if shared else (3, b)

    whole, calls = run()
    assert calls == [shape(64)] * len(calls)
    # 16-row chunks: (1 or 3 chains) x 16 rows x D floats
    chains = 1 if shared else 3
    monkeypatch.setattr(_estimator, "_CHUNK_BYTES", chains * 16 * pb.X.shape[1] * pb.X.itemsize)
    chunked, calls = run()
    assert calls == [shape(16)] * len(calls) and len(calls) >= 12
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12 * np.abs(whole).max())
