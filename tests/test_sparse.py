"""Sparse X (CSR) for the GLMs: every layer against its dense twin.

The same data as a dense array and as a CSR matrix must give the same numbers (to 1e-10) in every
model function, the mode, the Laplace covariances and each strategy's preprocessing; the sparse
estimators must be unbiased (Monte Carlo, 5 standard errors); the strategies that cluster rows
raise; and a fit on a design that would take 42 GB dense runs in seconds without densifying.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skbayes_sg.models import (ChainRows, GaussianLinearModel, GaussianPrior, Laplace,
                               LogisticModel, NoisePrior, Posterior)
from skbayes_sg.preprocessing import (find_mode, full_hessian, laplace_at, lbfgs_mode,
                                      lowrank_covariance)
from skbayes_sg.samplers import from_laplace
from skbayes_sg.subsampling import SUBSAMPLING, Compressed, Stratified

D, N = 7, 120
GLMS = ("binary", "softmax", "linear_fixed", "linear_inferred")
SUPPORTED = ("uniform", "control_variates", "preferential", "preferential_cv", "adaptive",
             "svrg", "ewsg", "full")


def close(a, b, tol=1e-10):
    a = a.toarray() if sp.issparse(a) else a
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, np.abs(b).max()))


def _model(name, d=D):
    return {"binary": lambda: LogisticModel(d, 2), "softmax": lambda: LogisticModel(d, 3),
            "linear_fixed": lambda: GaussianLinearModel(d, noise_std=0.7),
            "linear_inferred": lambda: GaussianLinearModel(d)}[name]()


def _twins(name, n=N, d=D, weighted=False, seed=0, density=0.3):
    """``(dense posterior, sparse posterior, rng)`` on the same rows (about 30% nonzero)."""
    rng = np.random.default_rng(seed)
    model = _model(name, d)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    z = X @ rng.normal(size=d)
    if model.is_regression:
        y = z + rng.normal(size=n)
    elif model.n_classes == 2:
        y = np.where(z + rng.logistic(size=n) > 0, 1.0, -1.0)
    else:
        y = rng.integers(0, 3, size=n)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    prec = model.prior_precision(1.0)
    if name == "linear_inferred":
        prec[-1] = 0.0
        prior = NoisePrior(prec, index=-1, a=1.0, b=1.0)
    else:
        prior = GaussianPrior(prec)
    return (Posterior(model, prior, X, y, w), Posterior(model, prior, sp.csr_matrix(X), y, w),
            rng)


# ------------------------------------------------------------------ models

@pytest.mark.parametrize("name", GLMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_model_functions_match_the_dense_twin(name, weighted):
    dense, sparse, rng = _twins(name, weighted=weighted)
    model, y, w = dense.model, dense.y, dense.weight
    theta = 0.3 * rng.normal(size=(4, model.n_params))
    Xd, Xs = dense.X, sparse.X
    close(model.nll(theta, Xs, y), model.nll(theta, Xd, y))
    close(model.grad_sum(theta, Xs, y, w), model.grad_sum(theta, Xd, y, w))
    close(model.per_example_grad(theta[0], Xs, y), model.per_example_grad(theta[0], Xd, y))
    close(model.hessian(theta[0], Xs, y, w), model.hessian(theta[0], Xd, y, w))
    close(model.hessian_diag(theta[0], Xs, y, w), model.hessian_diag(theta[0], Xd, y, w))
    close(model.predict_output(theta, Xs), model.predict_output(theta, Xd))
    if model.is_glm:
        r = model.response(theta, Xd, y)
        close(model.response(theta, Xs, y), r)
        close(model.grad_from_response(r, Xs, w), model.grad_from_response(r, Xd, w))
        close(model.curvature(theta[0], Xs, y), model.curvature(theta[0], Xd, y))
        V = rng.normal(size=(3, model.n_params))
        close(model.hessian_vector(theta[0], Xs, y, V, w), V @ model.hessian(theta[0], Xd, y, w))


@pytest.mark.parametrize("name", GLMS)
def test_gathered_minibatches_match_the_dense_twin(name):
    dense, sparse, rng = _twins(name)
    model = dense.model
    theta = 0.3 * rng.normal(size=(4, model.n_params))
    idx = rng.integers(0, N, size=(4, 9))
    (Xd, yd), (Xs, ys) = dense.rows(idx), sparse.rows(idx)
    assert isinstance(Xs, ChainRows) and Xs.shape == Xd.shape
    w = rng.random(idx.shape)
    close(model.nll(theta, Xs, ys), model.nll(theta, Xd, yd))
    close(model.grad_sum(theta, Xs, ys, w), model.grad_sum(theta, Xd, yd, w))
    close(model.grad_sum(theta, Xs, ys), model.grad_sum(theta, Xd, yd))
    if model.is_glm:
        r = model.response(theta, Xd, yd)
        close(model.response(theta, Xs, ys), r)
        close(model.grad_from_response(r, Xs, w), model.grad_from_response(r, Xd, w))
    rows = idx[0]  # a ragged chain: 1-D rows, shared CSR
    close(model.grad_sum(theta[:1], *sparse.rows(rows)),
          model.grad_sum(theta[:1], *dense.rows(rows)))


def test_float32_and_empty_rows():
    dense, _, rng = _twins("softmax")
    X = dense.X.astype(np.float32)
    X[::5] = 0.0  # rows without a stored entry
    Xs = sp.csr_matrix(X)
    Xs.eliminate_zeros()
    model, theta = dense.model, rng.normal(size=(2, dense.model.n_params))
    close(model.grad_sum(theta, Xs, dense.y), model.grad_sum(theta, X, dense.y), 1e-6)
    idx = np.arange(20).reshape(2, 10)
    sparse = Posterior(model, dense.prior, Xs, dense.y)
    close(model.nll(theta, *sparse.rows(idx)), model.nll(theta, X[idx], dense.y[idx]), 1e-6)


# ------------------------------------------------------------ mode, Laplace

@pytest.mark.parametrize("name", GLMS)
def test_mode_and_laplace_match_the_dense_twin(name):
    dense, sparse, rng = _twins(name, n=300, weighted=True)
    md = find_mode(dense, np.random.default_rng(1))
    ms = find_mode(sparse, np.random.default_rng(1))
    close(ms.theta, md.theta, 1e-8)
    close(ms.hessian, md.hessian, 1e-8)
    close(lbfgs_mode(sparse)[0], lbfgs_mode(dense)[0], 1e-8)
    for kind in ("auto", "diagonal"):
        ld, ls = laplace_at(dense, md.theta, kind)[0], laplace_at(sparse, md.theta, kind)[0]
        assert ld.kind == ls.kind
        close(ls.covariance, ld.covariance)


@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
def test_lowrank_of_full_rank_is_the_inverse_hessian(name):
    dense, sparse, _ = _twins(name, weighted=True)
    mode = find_mode(dense, np.random.default_rng(0)).theta
    exact = laplace_at(dense, mode, "laplace")[0]
    diag = 1.0 / laplace_at(sparse, mode, "diagonal")[0].covariance
    cov, evals = lowrank_covariance(sparse, mode, diag, rank=dense.model.n_params)
    lap = Laplace(mode, cov)
    assert lap.kind == "lowrank" and evals > 0
    close(cov.apply(np.eye(mode.size)), exact.covariance, 1e-8)
    close(lap.variances, exact.variances, 1e-8)


def test_lowrank_preconditioner_is_consistent():
    """``L L^T = Sigma``, ``to_u = L^T``, ``inv = L^{-1}``, draws have covariance ``Sigma``."""
    _, sparse, rng = _twins("binary", d=40, n=60)
    mode = 0.1 * rng.normal(size=41)
    lap = laplace_at(sparse, mode, "diagonal")[0]
    cov = lowrank_covariance(sparse, mode, 1.0 / lap.covariance, rank=5)[0]
    lap = Laplace(mode, cov)
    pre, eye = from_laplace(lap), np.eye(41)
    Lt = pre.from_u(eye)  # rows L e_j: L^T
    Sigma = cov.apply(eye)
    close(Lt.T @ Lt, Sigma)
    close(pre.to_u(eye), Lt.T)
    close(pre.inv(pre.from_u(eye)), eye)
    close(pre.apply(eye), Sigma)
    draws = lap.draws(np.random.default_rng(0), 40_000) - mode
    np.testing.assert_allclose(draws.var(0), lap.variances, rtol=0.05)
    H = full_hessian(sparse, mode)  # the low rank removes the top whitened curvatures
    s = 1.0 / np.sqrt(np.diag(H))
    diag_top = np.linalg.eigvalsh(H * s * s[:, None])
    lr_top = np.linalg.eigvalsh(Lt @ H @ Lt.T)
    # 2.77 -> 1.83 here (a flat spectrum: the range finder's subspace is not exactly the top 5)
    assert lr_top[-1] < 0.75 * diag_top[-1] and lr_top[-1] <= 1.1 * diag_top[-6]


def test_laplace_on_many_parameters_is_lowrank():
    # above 1,000 parameters and not wide (p < 2 N): low rank plus diagonal ("laplace") or
    # diagonal ("auto"); 601 parameters are cheap enough for a dense Laplace
    _, sparse, _ = _twins("binary", d=1200, n=700, density=0.02)
    lap, evals = laplace_at(sparse, np.zeros(1201), "laplace")
    assert lap.kind == "lowrank" and lap.covariance.basis.shape == (1201, 20)
    assert laplace_at(sparse, np.zeros(1201), "auto")[0].kind == "diagonal"
    assert evals > sparse.n_rows
    _, small, _ = _twins("binary", d=600, n=200, density=0.02)
    assert laplace_at(small, np.zeros(601), "auto")[0].kind == "dense"


# ------------------------------------------------------------ strategies

def _built(name, strategy, weighted=False, kind="auto"):
    dense, sparse, rng = _twins(name, weighted=weighted)
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
def test_strategies_on_sparse_match_the_twin_and_are_unbiased(strategy, name, estimates,
                                                             within_5se):
    (est_d, est_s), theta, sparse = _built(name, strategy, weighted=name == "binary")
    for key, value in est_d.outputs.items():
        if isinstance(value, np.ndarray):
            close(est_s.outputs[key], value)
    close(estimates(est_s, theta, 3)[0], estimates(est_d, theta, 3)[0], 1e-9)
    g, _ = estimates(est_s, theta, 40)
    exact = sparse.full_grad(theta)
    for c in range(3):
        assert within_5se(g[c::3], exact[c]), strategy


def test_ewsg_candidates_on_sparse():
    (est_d, est_s), theta, _ = _built("binary", "ewsg")
    rngs = [np.random.default_rng(5), np.random.default_rng(6), np.random.default_rng(7)]
    gd = est_d.candidates(rngs, theta, est_d.init(rngs, theta))[0]
    rngs = [np.random.default_rng(5), np.random.default_rng(6), np.random.default_rng(7)]
    close(est_s.candidates(rngs, theta, est_s.init(rngs, theta))[0], gd)


@pytest.mark.parametrize("strategy", ["preferential_cv", "adaptive", "control_variates"])
def test_strategies_with_a_lowrank_laplace(strategy, estimates, within_5se):
    _, sparse, rng = _twins("softmax")
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
    _, sparse, _ = _twins("binary")
    lap = laplace_at(sparse, np.zeros(D + 1), "diagonal")[0]
    with pytest.raises(ValueError, match="need dense X.*preferential_cv.*control_variates"):
        strategy.build(sparse, lap, batch_size=10, rng=np.random.default_rng(0))
    if isinstance(strategy, Stratified):
        with pytest.raises(ValueError, match="need dense X"):
            strategy.check_data(sparse.X)
    for name in SUPPORTED:
        SUBSAMPLING[name]().check_data(sparse.X)


# ------------------------------------------------------------ no densifying

def _hashed_text(N, d, nnz, seed=0):
    """Rows of ``nnz`` hashed tokens (value 1, duplicates summed), labels from 2,000 weights."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((np.ones(N * nnz), rng.integers(0, d, N * nnz), np.arange(N + 1) * nnz),
                      shape=(N, d))
    X.sum_duplicates()
    w = np.zeros(d)
    w[rng.choice(d, 2000, replace=False)] = rng.normal(size=2000)
    return X, np.where(X @ w + rng.logistic(size=N) > 0, 1.0, -1.0)


def test_large_p_fit_never_densifies():
    """N = 20,000 rows, p = 2^18 (42 GB dense), 50 entries a row: seconds and < 400 MB.

    X holds 12 MB; the peak (about 320 MB) is the step-size pilot's ``(16, p)`` buffers (16
    positions); one dense minibatch of the two chains' 200 rows would already take 420 MB.
    """
    import tracemalloc

    from skbayes_sg.fitting import DEFAULT_CONFIG, FitSettings, prepare, sample_with_retries
    from skbayes_sg.utils import make_streams

    X, y = _hashed_text(20_000, 2**18, 50)
    model = LogisticModel(2**18, 2)
    posterior = Posterior(model, GaussianPrior(model.prior_precision(1.0, 10.0)), X, y)
    streams = make_streams(0, 2)
    settings = FitSettings(sampler="sghmc", subsampling="preferential_cv", batch_size=100,
                           step_size="auto", preconditioner="auto", n_chains=2, n_warmup=20,
                           n_draws=10, thin=1, n_jobs=None, max_doublings=0)
    tracemalloc.start()
    prep = prepare(posterior, settings, streams)
    draws = sample_with_retries(prep, streams, auto=True, config=DEFAULT_CONFIG, n_warmup=20,
                                n_draws=10, thin=1, n_jobs=None).draws
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert draws.shape == (2, 10, 2**18 + 1) and np.all(np.isfinite(draws))
    assert prep.laplace.kind == "diagonal"
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MB"


def test_estimators_accept_sparse_end_to_end():
    """End to end through ``fit``/``predict_proba``/``predict(return_std=True)`` on CSR."""
    from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression

    X, y = _hashed_text(3000, 2**12, 20)
    clf = BayesianLogisticRegression(n_warmup=50, n_draws=20, n_chains=2, random_state=0)
    clf.fit(X, y)
    proba = clf.predict_proba(X[:100])
    assert proba.shape == (100, 2) and clf.score(X, y) > 0.7
    reg = BayesianLinearRegression(n_warmup=50, n_draws=20, n_chains=2, random_state=0)
    mean, std = reg.fit(X, y).predict(X[:50], return_std=True)
    assert mean.shape == std.shape == (50,)
    from skbayes_sg.fitting import _prepare

    def no_data_pass(*args, **kwargs):
        raise AssertionError("the mode search ran before the sparse check")

    for name in ("stratified", "compressed"):
        with pytest.MonkeyPatch.context() as mp, pytest.raises(ValueError, match="need dense X"):
            mp.setattr(_prepare, "find_mode", no_data_pass)
            BayesianLogisticRegression(subsampling=name).fit(X, y)
