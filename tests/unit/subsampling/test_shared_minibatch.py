"""Chains sharing one minibatch per step (``Uniform`` / ``ControlVariates(shared_minibatch=True)``).

Oracles: the rows are the first chain's stream's (the same whatever the number of chains), each
chain's estimate is the per-chain estimator's on those rows, Monte-Carlo unbiasedness over steps.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.subsampling import (
    ControlVariates,
    Preferential,
    PreferentialCV,
    Stratified,
    Uniform,
    UniformIndex,
)

from support.oracles import within_5se
from support.problems import make_problem, rngs_for


MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]
SHARED = {"uniform": Uniform(shared_minibatch=True),
          "control_variates": ControlVariates(shared_minibatch=True),
          "preferential": Preferential(shared_minibatch=True),
          "preferential_cv": PreferentialCV(shared_minibatch=True),
          "stratified_cv": Stratified(n_clusters=3, correction="cv", shared_minibatch=True)}


def test_shared_index_draws_one_minibatch_from_the_first_stream():
    def run(C, shared=True):
        index, rngs = UniformIndex(50, 4), rngs_for(C)
        index.shared = shared  # as Uniform(shared_minibatch=...) sets it
        index.n_block = 3  # refills every 3 steps
        state, out = index.init(rngs, C), []
        for _ in range(10):
            idx, w, state = index.draw(rngs, None, state)
            assert w is None
            out.append(idx.copy())
        return out

    one, four, alone = run(1), run(4), run(1, shared=False)
    for a, b, c in zip(one, four, alone):
        assert a.shape == b.shape == (4,)
        np.testing.assert_array_equal(a, b)  # chain 0's stream, whatever C is
        np.testing.assert_array_equal(a, c[0])  # ... and the rows chain 0 draws unshared
    assert len({tuple(i) for i in one}) == 10


@pytest.mark.parametrize("strategy", list(SHARED))
@pytest.mark.parametrize("name", MODELS)
def test_each_chain_gets_its_own_estimate_on_the_shared_rows(strategy, name):
    """Chains at different positions: chain c's estimate is what the estimator gives chain c
    alone on the same rows (here: a one-chain run of the unshared index on chain 0's stream)."""
    pb, lap, rng = make_problem(name, weighted=name in ("linear_fixed", "mlp"))
    theta = lap.mode + 0.3 * rng.normal(size=(3, pb.model.n_params))
    shared = SHARED[strategy].build(pb, lap, batch_size=10, rng=np.random.default_rng(1))
    unshared = clone(SHARED[strategy]).set_params(shared_minibatch=False)
    alone = unshared.build(pb, lap, batch_size=10, rng=np.random.default_rng(1))
    rngs = rngs_for(3)
    state = shared.init(rngs, theta)
    singles = [alone.init(rngs_for(1), theta[c:c + 1]) for c in range(3)]
    for _ in range(5):
        g, state, n = shared.estimate(rngs, theta, state)
        assert n == 3 * 10 * shared.terms.per_row
        for c in range(3):
            gc, singles[c], _ = alone.estimate(rngs_for(1), theta[c:c + 1], singles[c])
            np.testing.assert_allclose(g[c], gc[0], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("strategy", list(SHARED))
@pytest.mark.parametrize("name", MODELS)
def test_shared_estimates_unbiased(strategy, name):
    """Steps are independent (chains are not): the first chain's estimates over 600 steps."""
    pb, lap, rng = make_problem(name, weighted=name in ("linear_fixed", "mlp"))
    theta = lap.mode + 0.5 * rng.normal(size=(2, pb.model.n_params))
    est = SHARED[strategy].build(pb, lap, batch_size=10, rng=np.random.default_rng(1))
    rngs = rngs_for(2)
    state, out = est.init(rngs, theta), []
    for _ in range(600):
        g, state, _ = est.estimate(rngs, theta, state)
        out.append(g[0])
    assert within_5se(np.array(out), pb.full_grad(theta[:1])[0])


@pytest.mark.parametrize("strategy", ["control_variates", "preferential_cv"])
@pytest.mark.parametrize("layout, name", [("float32", m) for m in ("binary", "softmax",
                                                                    "linear_fixed", "mlp")]
                         + [("sparse", m) for m in ("binary", "softmax", "linear_fixed")])
def test_shared_rows_in_float32_and_sparse_agree_with_dense_float64(layout, name, strategy):
    """The same estimates (to float32 rounding) from float32 or CSR rows (the MLP takes dense
    rows only): the shared gather takes every layout the per-chain one does."""
    pb, lap, rng = make_problem(name, n=400, weighted=name == "linear_fixed")
    theta = lap.mode + 0.3 * rng.normal(size=(4, pb.model.n_params))
    X = pb.X.astype(np.float32) if layout == "float32" else sp.csr_matrix(pb.X)
    other = type(pb)(pb.model, pb.prior, X, pb.y, pb.weight)
    g = []
    for posterior in (pb, other):
        est = clone(SHARED[strategy]).build(posterior, lap, batch_size=20,
                                            rng=np.random.default_rng(1))
        g.append(est.estimate(rngs_for(4), theta, est.init(rngs_for(4), theta))[0])
    tol = 1e-4 if layout == "float32" else 1e-10
    np.testing.assert_allclose(g[1], g[0], rtol=tol, atol=tol * np.abs(g[0]).max())


@pytest.mark.parametrize("strategy", [ControlVariates(shared_minibatch=True),
                                      Preferential(correction="cv", shared_minibatch=True),
                                      Uniform()])
def test_no_dependence_warning_with_control_variates_or_independent_chains(strategy):
    pb, lap, rng = make_problem("binary")
    assert strategy.build(pb, lap, batch_size=10, rng=rng).warnings == ()


@pytest.mark.filterwarnings("ignore:The chains have not converged")
def test_parameter_protocol_and_validation():
    cv = ControlVariates(shared_minibatch=True)
    assert cv.get_params() == {"shared_minibatch": True}
    assert clone(BayesianLogisticRegression(subsampling=cv)).subsampling.shared_minibatch
    with pytest.raises(ValueError, match="shared_minibatch"):
        Uniform(shared_minibatch="yes").validate()
    with pytest.raises(ValueError, match="svrg"):
        Stratified(correction="svrg", shared_minibatch=True).validate()
    X, y = np.random.default_rng(0).normal(size=(300, 3)), np.arange(300) % 2
    search = GridSearchCV(BayesianLogisticRegression(subsampling=ControlVariates(), n_draws=50,
                                                     n_warmup=50, random_state=0),
                          {"subsampling__shared_minibatch": [False, True]}, cv=2).fit(X, y)
    assert list(search.cv_results_["param_subsampling__shared_minibatch"]) == [False, True]
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    best = search.best_params_["subsampling__shared_minibatch"]
    assert search.best_estimator_.subsampling.shared_minibatch is best
