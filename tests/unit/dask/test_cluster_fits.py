"""Fit and predict on dask input, on a LocalCluster of two worker processes (the dask extra).

Oracles: the in-memory fit with the same ``random_state`` (same minibatch indices, posterior
equal within Monte-Carlo error), the in-memory posterior's exact passes, the in-memory index
samplers, and the client's traced memory against the size of X.
"""

import pickle
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from skbayes_sg.fitting import FitConfig
from skbayes_sg import (BayesianLinearRegression, BayesianLogisticRegression,  # noqa: E402
                        BayesianMLPClassifier)
from skbayes_sg.dask import (CarriedResponses, DaskIndex, DaskPosterior, RowSource,  # noqa: E402
                             WeightTargets)
from skbayes_sg.models import GaussianPrior, LogisticModel, Posterior  # noqa: E402
from skbayes_sg.preprocessing import find_mode  # noqa: E402
from skbayes_sg.subsampling import (ControlVariate, ControlVariates, UniformIndex,  # noqa: E402
                                    WeightedIndex)

N, D, CHUNK = 12_000, 4, 2_500  # five chunks, the last one short
FIT = dict(random_state=0, n_warmup=200, n_draws=300)
if "max_doublings" in BayesianLogisticRegression().get_params():
    FIT["max_doublings"] = 0  # short fixed-length runs: the comparison needs no convergence


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit="700MB", dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    X[:, 1] += 0.5 * X[:, 0]
    w = np.array([1.0, -0.5, 0.25, 0.0])
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-(X @ w + 0.3)))).astype(int)
    y_reg = X @ w + 0.5 * rng.standard_normal(N)
    return X, y, y_reg


def _dask(client, *arrays):
    return [da.from_array(a, chunks=(CHUNK,) + a.shape[1:]).persist() for a in arrays]


def _mc_se(est):
    """Monte-Carlo standard error of the pooled posterior mean of each parameter."""
    d = est.draws_.reshape(-1, est.draws_.shape[-1])
    return d.std(axis=0) / np.sqrt(np.maximum(est.diagnostics_["ess"], 1.0))


@pytest.mark.parametrize("Est, target, subsampling", [
    pytest.param(BayesianLogisticRegression, 1, "preferential_cv", marks=pytest.mark.slow),
    pytest.param(BayesianLogisticRegression, 1, "preferential", marks=pytest.mark.slow),
    (BayesianLinearRegression, 2, "control_variates"),
])
def test_fit_matches_in_memory(client, data, Est, target, subsampling):
    X, y = data[0], data[target]
    Xd, yd = _dask(client, X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uniform minibatches mix slowly: both fits warn alike
        mem = Est(subsampling=subsampling, **FIT).fit(X, y)
        dsk = Est(subsampling=subsampling, **FIT).fit(Xd, yd)
    sd = mem.draws_.reshape(-1, mem.draws_.shape[-1]).std(axis=0)
    assert np.all(np.abs(dsk.mode_ - mem.mode_) < 1e-3 * sd)  # same mode, up to Newton's tol
    assert dsk.diagnostics_["batch_size"] == mem.diagnostics_["batch_size"]
    se = np.hypot(_mc_se(mem), _mc_se(dsk))
    diff = dsk.draws_.mean(axis=(0, 1)) - mem.draws_.mean(axis=(0, 1))
    assert np.all(np.abs(diff) < 4 * se)
    ratio = dsk.draws_.reshape(-1, sd.size).std(axis=0) / sd
    assert np.all(np.abs(ratio - 1) < 0.1)
    assert dsk.diagnostics_["data_passes"] == pytest.approx(mem.diagnostics_["data_passes"],
                                                            rel=0.05)


def test_large_softmax_fits_on_dask(client):
    # 12 classes x 90 features = 1,092 parameters: the L-BFGS mode search in Kronecker
    # coordinates and the Kronecker Laplace take their passes as map-reduce over the chunks
    rng = np.random.default_rng(0)
    K, d, n = 12, 90, 3000
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal((d, K)) / np.sqrt(d) + rng.gumbel(size=(n, K))).argmax(1)
    fit = dict(random_state=0, n_warmup=20, n_draws=20, max_doublings=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 20 draws do not converge
        mem = BayesianLogisticRegression(**fit).fit(X, y)
        dsk = BayesianLogisticRegression(**fit).fit(*_dask(client, X, y))
    assert mem.model_.n_params > 1000
    np.testing.assert_allclose(dsk.mode_, mem.mode_, atol=1e-5)
    assert np.all(np.isfinite(dsk.draws_))


def test_same_minibatch_indices(client, data):
    X, y = data[0], data[1].astype(float)
    Xd, yd = _dask(client, X, y)
    source = RowSource(Xd, yd)
    def rngs():
        return [np.random.default_rng(s) for s in (1, 2, 3)]

    mem, r_mem = UniformIndex(N, 500), rngs()  # blocks of 400 steps
    dsk, r_dsk = DaskIndex(source, UniformIndex(N, 500), gather_rows=3 * 500 * 100), rngs()
    s_mem, s_dsk = mem.init(r_mem, 3), dsk.init(r_dsk, 3)
    for _ in range(mem.n_block + 5):  # across a block refill and many pieces
        idx, _, s_mem = mem.draw(r_mem, None, s_mem)
        batch, w, s_dsk = dsk.draw(r_dsk, None, s_dsk)
        np.testing.assert_array_equal(np.asarray(batch), idx)
        np.testing.assert_array_equal(batch.X, X[idx])
        np.testing.assert_array_equal(batch.y, y[idx])
        assert w is None
    # preferential draws: targets resolved where the weights live, same rows and 1 / P(row)
    p = np.random.default_rng(4).random(N) + 0.05
    p /= p.sum()
    pd_ = da.from_array(p, chunks=CHUNK).persist()
    weighted = source.with_weights(pd_, pd_.map_blocks(np.cumsum).persist())
    mem, r_mem = WeightedIndex(p, 40), rngs()
    dsk, r_dsk = DaskIndex(weighted, WeightTargets(N, 40, weighted.weights[4]),
                           gather_rows=3 * 40 * 100), rngs()
    s_mem, s_dsk = mem.init(r_mem, 3), dsk.init(r_dsk, 3)
    for _ in range(300):
        idx, w_mem, s_mem = mem.draw(r_mem, None, s_mem)
        batch, w, s_dsk = dsk.draw(r_dsk, None, s_dsk)
        np.testing.assert_array_equal(np.asarray(batch), idx)
        np.testing.assert_allclose(w, w_mem, rtol=1e-10)
        np.testing.assert_array_equal(batch.X, X[idx])


def test_full_data_passes_are_exact(client, data):
    X, y = data[0], np.where(data[1] == 1, 1.0, -1.0)
    model = LogisticModel(D, 2)
    prior = GaussianPrior(model.prior_precision(1.0))
    mem = Posterior(model, prior, X, y)
    dsk = DaskPosterior(model, prior, *_dask(client, X, y))
    theta = np.random.default_rng(0).standard_normal((2, model.n_params)) * 0.3
    np.testing.assert_allclose(dsk.full_grad(theta), mem.full_grad(theta), rtol=1e-10)
    np.testing.assert_allclose(dsk.potential(theta), mem.potential(theta), rtol=1e-10)
    np.testing.assert_allclose(dsk.value_and_grad(theta)[1], mem.full_grad(theta), rtol=1e-10)
    for a, b in zip(dsk.newton_terms(theta[0]), mem.newton_terms(theta[0])):
        np.testing.assert_allclose(a, b, rtol=1e-9)
    np.testing.assert_allclose(dsk.row_sum(model.hessian_diag, theta[0]),
                               mem.row_sum(model.hessian_diag, theta[0]), rtol=1e-10)
    np.testing.assert_allclose(dsk.start(), mem.start(), rtol=1e-12)
    sub = dsk.subset(np.array([5, 17, 2600, N - 1]))
    np.testing.assert_array_equal(sub.X, mem.X[[5, 17, 2600, N - 1]])
    assert sub.n_data == pytest.approx(N)
    assert len(pickle.dumps(dsk)) < X.nbytes / 10  # the posterior ships graphs, not rows


def test_predict_returns_dask_arrays(client, data):
    X, y, y_reg = data
    Xd, yd, yrd = _dask(client, X, y, y_reg)
    clf = BayesianLogisticRegression(**FIT).fit(Xd, yd)
    for name in ("predict_proba", "predict_log_proba", "decision_function", "predict"):
        out = getattr(clf, name)(Xd)
        assert isinstance(out, da.Array)
        expected = getattr(clf, name)(X)
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.compute(), expected, rtol=1e-12, atol=1e-12)
    reg = BayesianLinearRegression(**FIT).fit(Xd, yrd)
    mean, std = reg.predict(Xd, return_std=True)
    assert isinstance(mean, da.Array) and isinstance(std, da.Array)
    m0, s0 = reg.predict(X, return_std=True)
    np.testing.assert_allclose(mean.compute(), m0, rtol=1e-12)
    np.testing.assert_allclose(std.compute(), s0, rtol=1e-12)
    assert clf.score(X, y) > 0.6


@pytest.mark.slow
def test_client_memory_bounded(client):
    """The client's traced memory during fit stays far below X, which never comes over: it holds
    the index blocks (about 200k indices per chain, as in memory) and two gathered pieces."""
    n, d = 1_200_000, 40
    rs = da.random.default_rng(0)
    X = rs.standard_normal((n, d), chunks=(200_000, d)).astype(np.float32)
    X = X.persist()  # 183 MiB, on the workers
    y = (rs.random(n, chunks=200_000) < 1.0 / (1.0 + da.exp(-X[:, 0]))).astype(int).persist()
    distributed.wait([X, y])
    tracemalloc.start()
    try:
        est = BayesianLogisticRegression(**{**FIT, "n_warmup": 100, "n_draws": 200}).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert est.diagnostics_["rhat"].max() < 1.2
    assert peak < X.nbytes / 4, (peak, X.nbytes)


def test_dataframe_input(client, data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = data[0], data[1]
    cols = [f"f{j}" for j in range(D)]
    frame = pd.DataFrame(X, columns=cols)
    ddf = dd.from_pandas(frame, npartitions=4)
    dy = dd.from_pandas(pd.Series(y, name="t"), npartitions=4)
    est = BayesianLogisticRegression(**FIT).fit(ddf, dy)
    assert list(est.feature_names_in_) == cols and est.n_features_in_ == D
    mem = BayesianLogisticRegression(**FIT).fit(frame, y)
    np.testing.assert_allclose(est.mode_, mem.mode_, rtol=1e-6, atol=1e-8)
    proba = est.predict_proba(ddf)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), est.predict_proba(frame), rtol=1e-12)


def test_chains_on_the_cluster(client, data):
    joblib = pytest.importorskip("joblib")
    X, y = data[0], data[1]
    Xd, yd = _dask(client, X, y)
    serial = BayesianLogisticRegression(n_jobs=1, **FIT).fit(Xd, yd)
    with joblib.parallel_backend("dask"):
        parallel = BayesianLogisticRegression(n_jobs=2, **FIT)
        parallel._fit_config = FitConfig(parallel_min_seconds=0.0)  # on the cluster, however short
        parallel.fit(Xd, yd)
    assert parallel.diagnostics_["worker_groups"] == 2
    # the same streams, indices and arithmetic; a worker process's BLAS may round differently
    np.testing.assert_allclose(parallel.draws_, serial.draws_, rtol=0, atol=1e-12)


def test_clear_errors(client, data):
    X, y = data[0], data[1]
    Xd, yd = _dask(client, X, y)
    for subsampling in ("stratified", "compressed", "adaptive", "svrg", "ewsg"):
        with pytest.raises(ValueError, match="preferential_cv"):
            BayesianLogisticRegression(subsampling=subsampling).fit(Xd, yd)
    with pytest.raises(ValueError, match="sample_weight"):
        BayesianLogisticRegression().fit(Xd, yd, sample_weight=np.ones(N))
    with pytest.raises(ValueError, match="in-memory data"):
        BayesianMLPClassifier().fit(Xd, yd)
    with pytest.raises(ValueError, match="shared_minibatch"):
        BayesianLogisticRegression(subsampling=ControlVariates(shared_minibatch=True)).fit(Xd, yd)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        BayesianLogisticRegression().fit(Xd[Xd[:, 0] > 0], yd[Xd[:, 0] > 0])


def test_numpy_users_never_import_dask():
    code = ("import sys, numpy as np; from skbayes_sg import BayesianLogisticRegression as B;"
            "X = np.random.default_rng(0).standard_normal((200, 2)); y = (X[:, 0] > 0) * 1;"
            "c = B(n_warmup=20, n_draws=40, random_state=0).fit(X, y); c.predict_proba(X);"
            "print('dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_dask_posteriors_keep_the_exact_laplace_hessian():
    # a subset is a row-by-row gather on dask (13 s for 65,536 of 10^8 disk-backed rows), while
    # the Hessian rides on a map-reduce pass: find_mode must not estimate it on a subsample
    assert DaskPosterior.cheap_subsets is False and Posterior.cheap_subsets is True


def test_auto_subsampling_switches_on_dask_as_in_memory(client, data):
    # one pass (12,000 rows) costs more than the base run at batch 100 (2 x 50 x 100): "auto"
    # tunes uniform control variates first on dask too, and keeps them as in memory
    X, y, _ = data
    kw = dict(random_state=0, n_chains=2, n_warmup=10, n_draws=40, max_doublings=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = BayesianLogisticRegression(**kw).fit(X, y)
        dsk = BayesianLogisticRegression(**kw).fit(*_dask(client, X, y))
    assert mem.diagnostics_["subsampling"] == dsk.diagnostics_["subsampling"] == "control_variates"
    assert dsk.diagnostics_["batch_size"] == mem.diagnostics_["batch_size"] == 100


@pytest.mark.parametrize("float32", [False, True])
def test_the_dask_anchor_comes_from_the_mode_search(client, data, float32):
    # the mode search's last map-reduce pass leaves G and its point (no pass of the anchor's own),
    # G the exact gradient there (oracle: in memory), responses evaluated with the gathered rows
    X, y = data[0], np.where(data[1] == 1, 1.0, -1.0)
    X, model = (X.astype(np.float32) if float32 else X), LogisticModel(D, 2)
    prior = GaussianPrior(model.prior_precision(1.0))
    dsk = DaskPosterior(model, prior, *_dask(client, X, y))
    res = find_mode(dsk, np.random.default_rng(0), anchor=True)
    mode, cv, mem = res.theta, ControlVariate(), Posterior(model, prior, X, y)
    laplace = type("L", (), {"mode": mode})()  # all the control variates read of it
    found, evals = cv.preprocess(dsk, laplace, res.anchor)
    terms = cv.build(dsk, laplace, batch_size=10, data=found)
    assert evals == 0 and found is res.anchor and terms.responses_at is terms.mode
    assert isinstance(terms.responses, CarriedResponses) and terms.per_row == 1
    # without it: one map-reduce pass for G at the mode, responses left on the workers
    again, evals = cv.preprocess(dsk, laplace)
    assert evals == N and again.responses is None and again.point is mode
    for G, at in ((terms.offset, terms.mode), (again.G, mode)):
        exact = mem.newton_terms(at, hessian=False)[1] - prior.grad(at[None])[0]
        # float32: products rounded in chunks of other sizes (N terms of size ~1, eps 6e-8)
        np.testing.assert_allclose(G, exact, rtol=1e-10, atol=1e-7 * N if float32 else 1e-9)
    H = mem.newton_terms(mode)[2]
    assert (terms.mode - mode) @ H @ (terms.mode - mode) < 1e-6 * model.n_params
