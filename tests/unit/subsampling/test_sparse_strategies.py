"""Sparse X (CSR) in the strategies: preprocessing against the dense twin, estimates
unbiased (Monte Carlo, 5 standard errors), the clustering strategies raise.
"""

import numpy as np
import pytest

from skbayes_sg.models import Laplace
from skbayes_sg.preprocessing import find_mode, laplace_at, lowrank_covariance
from skbayes_sg.subsampling import SUBSAMPLING, Compressed, Stratified

from support.oracles import assert_close_dense, within_5se
from support.problems import estimates, sparse_twins


D, N = 7, 120
GLMS = ("binary", "softmax", "linear_fixed", "linear_inferred")
SUPPORTED = ("uniform", "control_variates", "preferential", "preferential_cv", "adaptive",
             "svrg", "ewsg", "full")


def _built(name, strategy, weighted=False, kind="auto"):
    dense, sparse, rng = sparse_twins(name, weighted=weighted)
    mode = find_mode(dense, np.random.default_rng(0)).theta
    out = []
    for pst in (dense, sparse):
        lap = laplace_at(pst, mode, kind)[0]
        est = SUBSAMPLING[strategy]().build(pst, lap, batch_size=10, rng=np.random.default_rng(2))
        out.append(est)
    theta = mode + 0.3 * rng.normal(size=(3, mode.size))
    return out, theta, sparse


@pytest.mark.parametrize("strategy", SUPPORTED)
@pytest.mark.parametrize("name", GLMS)
def test_strategies_on_sparse_match_the_twin_and_are_unbiased(strategy, name):
    (est_d, est_s), theta, sparse = _built(name, strategy, weighted=name == "binary")
    for key, value in est_d.outputs.items():
        if isinstance(value, np.ndarray):
            assert_close_dense(est_s.outputs[key], value)
    assert_close_dense(estimates(est_s, theta, 3)[0], estimates(est_d, theta, 3)[0], 1e-9)
    g, _ = estimates(est_s, theta, 40)
    exact = sparse.full_grad(theta)
    for c in range(3):
        assert within_5se(g[c::3], exact[c]), strategy


def test_ewsg_candidates_on_sparse():
    (est_d, est_s), theta, _ = _built("binary", "ewsg")
    rngs = [np.random.default_rng(5), np.random.default_rng(6), np.random.default_rng(7)]
    gd = est_d.candidates(rngs, theta, est_d.init(rngs, theta))[0]
    rngs = [np.random.default_rng(5), np.random.default_rng(6), np.random.default_rng(7)]
    assert_close_dense(est_s.candidates(rngs, theta, est_s.init(rngs, theta))[0], gd)


@pytest.mark.parametrize("strategy", ["preferential_cv", "adaptive", "control_variates"])
def test_strategies_with_a_lowrank_laplace(strategy):
    _, sparse, rng = sparse_twins("softmax")
    mode = find_mode(sparse, rng).theta
    diag = 1.0 / laplace_at(sparse, mode, "diagonal")[0].covariance
    lap = Laplace(mode, lowrank_covariance(sparse, mode, diag, rank=3)[0])
    est = SUBSAMPLING[strategy]().build(sparse, lap, batch_size=10, rng=rng)
    theta = lap.draws(rng, 2)
    g, _ = estimates(est, theta, 40)
    exact = sparse.full_grad(theta)
    assert within_5se(g[0::2], exact[0]) and within_5se(g[1::2], exact[1])


@pytest.mark.parametrize("strategy", [Stratified(), Compressed(), Stratified(features="x")])
def test_clustering_strategies_raise_on_sparse(strategy):
    _, sparse, _ = sparse_twins("binary")
    lap = laplace_at(sparse, np.zeros(D + 1), "diagonal")[0]
    with pytest.raises(ValueError, match="need dense X.*preferential_cv.*control_variates"):
        strategy.build(sparse, lap, batch_size=10, rng=np.random.default_rng(0))
    if isinstance(strategy, Stratified):
        with pytest.raises(ValueError, match="need dense X"):
            strategy.check_data(sparse.X)
    for name in SUPPORTED:
        SUBSAMPLING[name]().check_data(sparse.X)
