"""``svrg`` (vrSG-MCMC, methods.md §8) and ``ewsg`` (methods.md §9).

Monte-Carlo checks use fixed seeds and tolerances of 5 standard errors per
coordinate; each unbiasedness test also shows that a deliberately biased
variant (a single frozen SVRG anchor) fails the same check.
"""

import warnings
from dataclasses import replace

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.samplers import SAMPLERS, SGHMC
from skbayes_sg.subsampling import (
    EWSG,
    SUBSAMPLING,
    SVRG,
    ControlVariate,
    ControlVariates,
    GradientEstimator,
    Preferential,
    Stratified,
    SVRGAnchor,
    Uniform,
    UniformIndex,
)

MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]


def svrg_estimates(est, theta, anchor, n_rounds, rngs):
    """Estimates at ``theta`` (C, p), each after a fresh anchor at ``anchor``.

    With ``update_every=2`` every round refreshes the anchor at ``anchor``
    (new ``B1`` per chain) and then estimates at ``theta`` with a new ``B``.
    """
    state, out = est.init(rngs, anchor), []
    for _ in range(n_rounds):
        if est.terms.tau == 2:
            _, state, _ = est.estimate(rngs, anchor, state)
        g, state, _ = est.estimate(rngs, theta, state)
        out.append(g)
    return np.concatenate(out)


@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("linear_fixed", True),
                                                                           ("mlp", True)])
def test_svrg_unbiased_over_anchors_and_minibatches(name, weighted, make_problem, rngs_for,
                                                    within_5se):
    pb, lap, rng = make_problem(name, weighted=weighted)
    p = pb.model.n_params
    theta = np.tile(0.5 * rng.normal(size=p), (128, 1))
    anchor = np.tile(theta[0] + 0.5 * rng.normal(size=p), (128, 1))
    exact = pb.full_grad(theta[:1])[0]
    est = SVRG(n1=40, update_every=2).build(pb, lap, batch_size=10, rng=rng)
    assert within_5se(svrg_estimates(est, theta, anchor, 60, rngs_for(128)), exact)
    # deliberately biased: one chain, one frozen anchor minibatch for all rounds
    frozen = SVRG(n1=40, update_every=10**9).build(pb, lap, batch_size=10, rng=rng)
    assert not within_5se(svrg_estimates(frozen, theta[:1], anchor[:1], 2000, rngs_for(1)),
                          exact)


@pytest.mark.parametrize("index", ["stratified", "preferential"])
@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("mlp", True)])
def test_svrg_anchors_with_any_index_unbiased(index, name, weighted, make_problem, rngs_for,
                                              within_5se):
    """``Stratified(correction="svrg")`` and ``Preferential(correction="svrg")``."""
    pb, lap, rng = make_problem(name, weighted=weighted, layout="blobs")
    p = pb.model.n_params
    theta = np.tile(0.5 * rng.normal(size=p), (128, 1))
    anchor = np.tile(theta[0] + 0.5 * rng.normal(size=p), (128, 1))
    correction = SVRGAnchor(n1=40, update_every=2)
    strategy = (Stratified(n_clusters=4, correction=correction) if index == "stratified"
                else Preferential(correction=correction))
    est = strategy.build(pb, lap, batch_size=12, rng=rng)
    assert est.outputs["anchor_batch_size"] == 40 and est.evals_per_step == (40 + 2 * 12) / 2
    g = svrg_estimates(est, theta, anchor, 40, rngs_for(128))
    assert within_5se(g, pb.full_grad(theta[:1])[0])


def test_svrg_exact_anchor_and_cost_accounting(make_problem, rngs_for):
    pb, lap, rng = make_problem("softmax")
    N, p, C, b = pb.n_rows, pb.model.n_params, 3, 10
    theta = rng.normal(size=(C, p))
    est = SVRG(n1=10**6, update_every=3).build(pb, lap, batch_size=b, rng=rng)
    assert est.terms.n1 == N and est.evals_per_step == (N + 2 * b * 2) / 3
    rngs = rngs_for(C)
    state = est.init(rngs, theta)
    g, state, n = est.estimate(rngs, theta, state)  # refresh: exact at the anchor
    np.testing.assert_allclose(g, pb.full_grad(theta), rtol=1e-10, atol=1e-10)
    _, state, n_next = est.estimate(rngs, theta + 0.1, state)
    assert (n, n_next) == (C * N, 2 * C * b)
    small = SVRG(n1=50, update_every=4).build(pb, lap, batch_size=b, rng=rng)
    state, seen = small.init(rngs, theta), []
    for _ in range(8):
        _, state, n = small.estimate(rngs, theta, state)
        seen.append(n)
    assert seen == [C * 50] + [2 * C * b] * 3 + [C * 50] + [2 * C * b] * 3
    out = small.outputs
    assert (out["svrg_n1"], out["svrg_update_every"], out["anchor_batch_size"]) == (50, 4, 50)
    assert out["svrg_evals_per_step"] == small.evals_per_step == (50 + 2 * b * 3) / 4


@pytest.mark.parametrize("name", ["binary", "mlp"])
def test_svrg_pilot_is_the_anchor_errors_white_noise_equivalent(name, make_problem, estimates,
                                                                within_5se):
    pb, lap, rng = make_problem(name)
    theta = lap.mode + 0.3 * rng.normal(size=(64, pb.model.n_params))
    # exact anchor: the pilot is control variates at the mode (same draws, same estimates)
    exact = SVRG(n1=10**6).build(pb, lap, batch_size=10, rng=rng)
    # a copy of the posterior: the anchor pass is done once per posterior (preprocessing.once_per)
    cv = ControlVariates().build(replace(pb), lap, batch_size=10, rng=rng)
    assert exact.preprocessing_evals == cv.preprocessing_evals == pb.n_rows
    np.testing.assert_allclose(estimates(exact.pilot(), theta, 3)[0],
                               estimates(cv, theta, 3)[0], rtol=1e-9, atol=1e-9)
    # minibatch anchor: redrawn on m_eff rows at every call, unbiased
    est = SVRG(n1=50, update_every=4).build(pb, lap, batch_size=10, rng=rng)
    m_eff = round(1 / (4 * (1 / 50 - 1 / pb.n_rows) + 1 / pb.n_rows))
    pilot = est.pilot()
    assert est.outputs["svrg_pilot_batch"] == m_eff and pilot.preprocessing_evals == 0
    g, evals = estimates(pilot, theta, 20)
    assert evals == [64 * (m_eff + 2 * 10)] * 20
    assert within_5se(g - np.tile(pb.full_grad(theta), (20, 1)), 0.0)


@pytest.mark.parametrize("model", ["binary", "linear_fixed", "mlp"])
def test_svrg_lower_mse_than_uniform_near_the_mode(model, make_problem, rngs_for, estimates):
    pb, lap, rng = make_problem(model, n=2000)
    mode, p = lap.mode, pb.model.n_params
    sd = 1.0 / np.sqrt(pb.n_rows)  # posterior scale of these problems
    theta = np.tile(mode + sd * rng.normal(size=p), (32, 1))
    anchor = np.tile(mode + sd * rng.normal(size=p), (32, 1))
    exact = pb.full_grad(theta[:1])[0]
    est = SVRG(n1=200, update_every=2).build(pb, lap, batch_size=20, rng=rng)
    g = svrg_estimates(est, theta, anchor, 20, rngs_for(32))
    gu, _ = estimates(Uniform().build(pb, lap, batch_size=20, rng=rng), theta, 20, seed=1)
    mse_svrg = np.mean(np.sum((g - exact) ** 2, axis=-1))
    mse_uniform = np.mean(np.sum((gu - exact) ** 2, axis=-1))
    assert mse_svrg < 0.3 * mse_uniform


def test_svrg_rejects_small_anchor_batches(make_problem):
    pb, lap, rng = make_problem("binary", n=100)
    with pytest.raises(ValueError, match="n1=20 <= batch_size=20"):
        SVRG(n1=20).build(pb, lap, batch_size=20, rng=rng)
    assert SVRG(n1=100).build(pb, lap, batch_size=100, rng=rng).terms.n1 == 100  # n1 == N
    # defaults: the paper's regime n1 >> tau b (n1 = 100 b, tau = n1 / (10 b))
    assert SVRGAnchor().resolve(100_000, 100) == (10_000, 10)
    assert SVRGAnchor().resolve(5_000, 100) == (5_000, 5)  # exact anchor, tau b = N / 10
    assert SVRGAnchor().resolve(500, 100) == (500, 1)
    assert SVRG(n1=300).max_batch_size(1000) == 299 and SVRG().max_batch_size(1000) == 1000


@pytest.mark.parametrize("strategy, bad, param", [
    (SVRG, {"n1": 0}, "n1"), (SVRG, {"n1": 2.5}, "n1"), (SVRG, {"update_every": 0}, "update_every"),
    (SVRG, {"update_every": "2"}, "update_every"), (EWSG, {"n_index_steps": 0}, "n_index_steps"),
    (EWSG, {"n_index_steps": 2.0}, "n_index_steps"),
])
def test_validate_names_the_bad_parameter(strategy, bad, param):
    with pytest.raises(ValueError, match=param):
        strategy(**bad).validate()
    strategy().validate()


@pytest.mark.parametrize("strategy", [SVRG(n1=30, update_every=3), EWSG(3)])
def test_each_chain_uses_only_its_own_stream(strategy, make_problem, rngs_for):
    pb, lap, rng = make_problem("binary")
    theta = rng.normal(size=(3, pb.model.n_params))

    def run(C):
        est = strategy.build(pb, lap, batch_size=10, rng=np.random.default_rng(0))
        step = est.candidates if est.n_candidates > 1 else est.estimate
        rngs = rngs_for(C)
        state, out = est.init(rngs, theta[:C]), []
        for k in range(7):
            g, state, _ = step(rngs, theta[:C] + 0.01 * k, state)
            out.append(g[..., 0, :])
        return np.array(out)

    np.testing.assert_array_equal(run(1), run(3))


@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("mlp", True)])
def test_ewsg_each_candidate_unbiased(name, weighted, make_problem, rngs_for, within_5se):
    pb, lap, rng = make_problem(name, weighted=weighted)
    theta = np.tile(0.5 * rng.normal(size=pb.model.n_params), (64, 1))
    est = EWSG(3).build(pb, lap, batch_size=10, rng=rng)
    assert est.n_candidates == 3 and est.evals_per_step == 30
    rngs = rngs_for(64)
    state, out = est.init(rngs, theta), []
    for _ in range(30):
        G, state, n = est.candidates(rngs, theta, state)
        assert G.shape == (3, 64, pb.model.n_params) and n == 3 * 64 * 10
        out.append(G)
    G, exact = np.concatenate(out, axis=1), pb.full_grad(theta[:1])[0]
    assert all(within_5se(G[m], exact) for m in range(3))
    assert not np.allclose(G[0], G[1])  # distinct minibatches


@pytest.mark.parametrize("name", ["binary", "mlp"])
def test_candidates_with_control_variates_unbiased(name, make_problem, rngs_for, within_5se):
    """Candidates work for any fixed-anchor correction, not only EWSG's plain sums."""
    pb, lap, rng = make_problem(name)
    theta = np.tile(lap.mode + 0.5 * rng.normal(size=pb.model.n_params), (64, 1))
    est = GradientEstimator(pb, UniformIndex(pb.n_rows, 10), ControlVariate().build(
        pb, lap, batch_size=10), n_candidates=2)
    rngs = rngs_for(64)
    state, out = est.init(rngs, theta), []
    for _ in range(30):
        G, state, n = est.candidates(rngs, theta, state)
        out.append(G)
    assert n == 2 * 64 * 10 * (1 if pb.model.is_glm else 2)
    G, exact = np.concatenate(out, axis=1), pb.full_grad(theta[:1])[0]
    assert within_5se(G[0], exact) and within_5se(G[1], exact)


def test_ewsg_estimate_is_plain_uniform(make_problem, rngs_for):
    pb, lap, rng = make_problem("mlp")
    theta = rng.normal(size=(2, pb.model.n_params))
    ew = EWSG(3).build(pb, lap, batch_size=10, rng=rng)
    un = Uniform().build(pb, lap, batch_size=10, rng=rng)
    ra, rb = rngs_for(2), rngs_for(2)
    sa, sb = ew.init(ra, theta), un.init(rb, theta)
    for _ in range(3):
        ga, sa, na = ew.estimate(ra, theta, sa)
        gb, sb, nb = un.estimate(rb, theta, sb)
        np.testing.assert_array_equal(ga, gb)
        assert na == nb == 20


def test_ewsg_needs_a_sampler_that_couples_the_index():
    # the one compatibility check accepts exactly the samplers whose kernel picks a candidate
    from skbayes_sg.fitting import check_combination

    for sampler in [cls() for cls in SAMPLERS.values()] + [SGHMC(integrator="aboba")]:
        if sampler.couples_index:
            check_combination(sampler, EWSG())
        else:
            with pytest.raises(ValueError, match="candidate gradients|exact full-data"):
                check_combination(sampler, EWSG())
    X, y = make_blobs(60, 2, centers=2, random_state=0)
    with pytest.raises(ValueError, match="subsampling='ewsg' gives candidate gradients"):
        BayesianLogisticRegression(sampler="psgld", subsampling="ewsg").fit(X, y)
    with pytest.raises(ValueError, match="full"):
        BayesianLogisticRegression(sampler="hmc", subsampling="ewsg").fit(X, y)


def test_ewsg_builds_its_estimator_whole(make_problem):
    # n_candidates, the cost per step and the outputs come from the constructor
    pb, lap, rng = make_problem("binary")
    est = EWSG(3).build(pb, lap, batch_size=10, rng=rng)
    assert est.n_candidates == 3 and est.evals_per_step == 30.0
    assert est.outputs == {"ewsg_n_index_steps": 3, "ewsg_evals_per_step": 30.0}
    plain = Uniform().build(pb, lap, batch_size=10, rng=rng)
    assert plain.n_candidates == 1 and plain.evals_per_step == 10.0


def test_registry_and_params():
    assert SUBSAMPLING["svrg"] is SVRG and SUBSAMPLING["ewsg"] is EWSG
    assert SVRG().get_params() == {"n1": None, "update_every": None}
    assert EWSG().get_params() == {"n_index_steps": 2}


# ---------------------------------------------------------------- estimators

FAST = dict(n_warmup=100, n_draws=100, n_chains=2, batch_size=100, random_state=0)


# As test_exact_posterior.test_sg_samplers_well_conditioned: no preconditioner,
# b = 100 of N = 2000, 102,000 steps per chain.  svrg defaults: n1 = 1000,
# update_every = 10 (pilot batch m_eff = 182, so the auto step is about twice
# uniform's).
@pytest.mark.parametrize("sampler, subsampling", [("sgld", "svrg"), ("sghmc", "svrg"),
                                                  ("sghmc", "ewsg")])
def test_well_conditioned_long_chains(sampler, subsampling, well_conditioned_problem,
                                      fit_exact_linear, check_exact):
    X, y, s, (mean, cov) = well_conditioned_problem
    reg = fit_exact_linear(X, y, s, sampler=sampler, subsampling=subsampling,
                           preconditioner=None, n_warmup=2000, n_draws=20_000, thin=5,
                           batch_size=100)
    check_exact(reg, mean, cov)


# Default chain lengths and preconditioner.  On diabetes (N = 442) the default
# anchor covers the data (n1 = N, exact SVRG-LD); on the 20,000-row correlated
# problem only the exact anchor passes (the default n1 = 1000 anchor is as noisy
# as uniform there, which fails at default lengths too).
@pytest.mark.parametrize("problem, strategy", [("diabetes_problem", "svrg"),
                                               ("correlated_problem", SVRG(n1=20_000))])
def test_ill_conditioned_default_lengths(problem, strategy, request, fit_exact_linear,
                                         check_exact):
    X, y, s, (mean, cov) = request.getfixturevalue(problem)
    reg = fit_exact_linear(X, y, s, subsampling=strategy)
    check_exact(reg, mean, cov)
    assert reg.preprocessing_["anchor_batch_size"] == X.shape[0]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("strategy, sampler", [("svrg", "sghmc"), ("svrg", "sgld"),
                                               ("ewsg", "sghmc"), ("ewsg", "sgnht")])
def test_estimators_smoke(strategy, sampler, cancer):
    X, y = cancer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = BayesianLogisticRegression(subsampling=strategy, sampler=sampler, **FAST).fit(X, y)
        assert clf.score(X, y) > 0.95
        Xr = X[:, :5]
        reg = BayesianLinearRegression(subsampling=strategy, sampler=sampler, **FAST).fit(
            Xr, Xr @ np.arange(5.0) + np.random.default_rng(0).normal(size=len(Xr)))
        assert reg.score(Xr, Xr @ np.arange(5.0)) > 0.9
        Xb, yb = make_blobs(n_samples=300, centers=3, n_features=4, random_state=0)
        mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=strategy,
                                    sampler=sampler, n_warmup=200, n_draws=30,
                                    random_state=0).fit(Xb, yb)
        assert mlp.score(Xb, yb) > 0.9
    d, pre, n_steps = clf.diagnostics_, clf.preprocessing_, 200
    if strategy == "svrg":
        N, b = X.shape[0], d["batch_size"]
        tau = max(1, N // (10 * b))  # n1 = min(N, 100 b) = N: the exact anchor
        assert pre["anchor_batch_size"] == pre["svrg_n1"] == N
        assert pre["anchor_update_every"] == tau
        # per chain: a refresh of N rows every tau steps, 2b rows on the other steps
        refreshes = -(-n_steps // tau)
        assert d["sampling_grad_evals"] == 2 * (refreshes * N + (n_steps - refreshes) * 2 * b)
    else:
        assert pre["ewsg_evals_per_step"] == 200
        assert d["sampling_grad_evals"] == 2 * n_steps * 200


def test_grid_search_over_svrg_params(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(subsampling=SVRG(), **FAST)
    grid = GridSearchCV(est, {"subsampling__n1": [150, 250],
                              "subsampling__update_every": [2, 5]}, cv=2).fit(X, y)
    assert grid.best_params_["subsampling__n1"] in (150, 250)
    assert grid.best_estimator_.preprocessing_["anchor_batch_size"] in (150, 250)
    assert est.subsampling.n1 is None  # the original object is untouched
    grid = GridSearchCV(BayesianLogisticRegression(subsampling=EWSG(), **FAST),
                        {"subsampling__n_index_steps": [1, 3]}, cv=2).fit(X, y)
    assert grid.best_score_ > 0.9
