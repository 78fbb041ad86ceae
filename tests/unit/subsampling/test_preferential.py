"""``preferential``, ``preferential_cv`` and ``adaptive`` (methods.md §5-7, seed 004).

Monte-Carlo checks use fixed seeds and tolerances of 5 standard errors per
coordinate; each unbiasedness test also shows that a deliberately biased
variant (preferential draws without the ``1 / p_i`` reweighting) fails it.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.models import Posterior
from skbayes_sg.subsampling import (
    SUBSAMPLING,
    Adaptive,
    ControlVariates,
    Preferential,
    PreferentialCV,
    SVRGAnchor,
    Uniform,
)

from support.oracles import within_5se
from support.problems import estimates


MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]
STRATEGIES = {"preferential": Preferential(), "preferential_cv": PreferentialCV(),
              "adaptive": Adaptive()}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("name", MODELS)
def test_unbiased_for_every_model(strategy, name, heavy_problem):
    pb, lap, rng = heavy_problem(name, weighted=name in ("linear_fixed", "mlp"))
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
def test_preferential_with_control_variates_unbiased(name, weighted, heavy_problem):
    """``Preferential(correction="cv")``: gradient-difference sums, curvature weights."""
    pb, lap, rng = heavy_problem(name, weighted=weighted)
    theta = np.tile(lap.mode + 0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    est = Preferential(correction="cv").build(pb, lap, batch_size=10, rng=rng)
    assert est.outputs["preferential_weights"] == "curvature"
    g, evals = estimates(est, theta, 30)
    assert within_5se(g, pb.full_grad(theta[:1])[0])
    assert evals[0] == 128 * 10 * (1 if pb.model.is_glm else 2)


@pytest.mark.parametrize("strategy", ["preferential", "preferential_cv"])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed", "mlp"])
def test_batch_of_all_rows_gives_the_exact_gradient(strategy, name, heavy_problem):
    # b >= N importance draws with replacement would stay noisy at the cost of the exact sum
    pb, lap, rng = heavy_problem(name, n=60, weighted=name == "linear_fixed")
    theta = lap.mode + 0.5 * rng.normal(size=(3, pb.model.n_params))
    cost = STRATEGIES[strategy].build(pb, lap, batch_size=59, rng=rng).evals_per_step / 59
    for b in (60, 90):
        est = STRATEGIES[strategy].build(pb, lap, batch_size=b, rng=np.random.default_rng(1))
        g, _ = estimates(est, theta, 2)
        np.testing.assert_allclose(g, np.tile(pb.full_grad(theta), (2, 1)), rtol=1e-9,
                                   atol=1e-9)
        assert est.evals_per_step == 60 * cost  # N rows, not b


def test_each_chain_uses_only_its_own_stream(heavy_problem):
    pb, lap, rng = heavy_problem("binary")
    theta = lap.mode + 0.3 * rng.normal(size=(3, pb.model.n_params))
    for strategy in STRATEGIES.values():
        est = strategy.build(pb, lap, batch_size=10, rng=np.random.default_rng(0))
        one, _ = estimates(est, theta[:1], 7)
        three, _ = estimates(est, theta, 7)
        np.testing.assert_array_equal(one, three[::3])


def test_a_rebuild_at_another_batch_reuses_the_weights_and_their_tables(heavy_problem):
    # batch_size="auto" builds twice from one preprocessing: the weights (a pass) and the
    # sampling tables (a sort of N cumulative weights) are computed once, in the data record
    pb, lap, _ = heavy_problem("binary")
    for strategy in (Preferential(), PreferentialCV()):
        data = strategy.preprocess(pb, lap, rng=np.random.default_rng(0))
        first = strategy.estimator(data, batch_size=10)
        second = strategy.estimator(data, batch_size=20)
        assert data.n_grad_evals > 0
        assert first.preprocessing_evals == second.preprocessing_evals == data.n_grad_evals
        assert second.index.b == 20 and second.index.guide is first.index.guide
        other = strategy.build(pb, lap, batch_size=20, rng=np.random.default_rng(1))
        assert np.array_equal(other.index.guide, first.index.guide)  # same weights for GLMs


@pytest.mark.parametrize("name", ["binary", "mlp"])
def test_adaptive_size_grows_with_distance_and_cost_is_exact(name, heavy_problem):
    pb, lap, rng = heavy_problem(name)
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


def test_adaptive_default_n_max(heavy_problem):
    pb, lap, rng = heavy_problem("binary", n=50)
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


def _mse(strategy, pb, lap, theta, exact, b=20, n_rounds=40):
    est = strategy.build(pb, lap, batch_size=b, rng=np.random.default_rng(0))
    g, evals = estimates(est, theta, n_rounds, seed=3)
    return np.mean(np.sum((g - np.tile(exact, (n_rounds, 1))) ** 2, axis=-1)), np.mean(evals)


@pytest.mark.parametrize("name", ["binary", "linear_fixed", "softmax"])
def test_lower_variance_near_the_mode(name, heavy_problem):
    pb, lap, rng = heavy_problem(name, n=2000, mode="fit")
    theta = lap.draws(rng, 32)
    exact = pb.full_grad(theta)
    mse = {k: _mse(s, pb, lap, theta, exact) for k, s in {
        "uniform": Uniform(), "preferential": Preferential(), "cv": ControlVariates(),
        "preferential_cv": PreferentialCV()}.items()}
    assert mse["preferential"][0] < 0.7 * mse["uniform"][0]
    assert mse["preferential_cv"][0] < 0.7 * mse["cv"][0]
    assert mse["preferential_cv"][1] == mse["cv"][1]  # same cost


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
@pytest.mark.parametrize("strategy", ["preferential_cv", "uniform", "control_variates"])
def test_wide_glm_minibatch_sums_run_in_cache_sized_chunks(name, strategy, shared, heavy_problem,
                                                           monkeypatch):
    # oracle: the same estimate from one minibatch sum (the chunks are the same rows, so the
    # same draws of the index stream and the same sum up to rounding)
    pb, lap, _ = heavy_problem(name, n=300, weighted=True)
    theta = lap.mode + 0.1 * np.random.default_rng(1).normal(size=(3, pb.model.n_params))

    def run(chunk_bytes=None):  # the estimates and the minibatch shapes the terms saw
        est = SUBSAMPLING[strategy](shared_minibatch=shared).build(
            pb, lap, batch_size=64, rng=np.random.default_rng(0))
        est.chunk_bytes = chunk_bytes or est.chunk_bytes
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
    chunked, calls = run(chains * 16 * pb.X.shape[1] * pb.X.itemsize)
    assert calls == [shape(16)] * len(calls) and len(calls) >= 12
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12 * np.abs(whole).max())
