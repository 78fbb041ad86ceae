"""``ewsg`` (methods.md §9) as a strategy: every candidate gradient unbiased (Monte Carlo,
5 standard errors), with or without control variates.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.samplers import SAMPLERS, SGHMC
from skbayes_sg.subsampling import EWSG, ControlVariate, GradientEstimator, Uniform, UniformIndex

from support.oracles import within_5se
from support.problems import make_problem, rngs_for


MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]


@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("mlp", True)])
def test_ewsg_each_candidate_unbiased(name, weighted):
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
def test_candidates_with_control_variates_unbiased(name):
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


def test_ewsg_estimate_is_plain_uniform():
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


def test_ewsg_builds_its_estimator_whole():
    # n_candidates, the cost per step and the outputs come from the constructor
    pb, lap, rng = make_problem("binary")
    est = EWSG(3).build(pb, lap, batch_size=10, rng=rng)
    assert est.n_candidates == 3 and est.evals_per_step == 30.0
    assert est.outputs == {"ewsg_n_index_steps": 3, "ewsg_evals_per_step": 30.0}
    plain = Uniform().build(pb, lap, batch_size=10, rng=rng)
    assert plain.n_candidates == 1 and plain.evals_per_step == 10.0
