"""``svrg`` (vrSG-MCMC, methods.md §8), and the parameters of ``svrg`` and ``ewsg``.

Monte-Carlo checks use fixed seeds and tolerances of 5 standard errors per
coordinate; each unbiasedness test also shows that a deliberately biased
variant (a single frozen SVRG anchor) fails the same check.
"""

from dataclasses import replace

import numpy as np
import pytest

from skbayes_sg.subsampling import (
    EWSG,
    SUBSAMPLING,
    SVRG,
    ControlVariates,
    Preferential,
    Stratified,
    SVRGAnchor,
    Uniform,
)

from support.oracles import within_5se
from support.problems import estimates, make_problem, rngs_for


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
def test_svrg_unbiased_over_anchors_and_minibatches(name, weighted):
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
def test_svrg_anchors_with_any_index_unbiased(index, name, weighted):
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


def test_svrg_exact_anchor_and_cost_accounting():
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
def test_svrg_pilot_is_the_anchor_errors_white_noise_equivalent(name):
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
def test_svrg_lower_mse_than_uniform_near_the_mode(model):
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


def test_svrg_rejects_small_anchor_batches():
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
def test_each_chain_uses_only_its_own_stream(strategy):
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


def test_registry_and_params():
    assert SUBSAMPLING["svrg"] is SVRG and SUBSAMPLING["ewsg"] is EWSG
    assert SVRG().get_params() == {"n1": None, "update_every": None}
    assert EWSG().get_params() == {"n_index_steps": 2}
