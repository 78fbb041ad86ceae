"""Sparse X (CSR) through the estimators: end to end, and a design that would take 42 GB
dense fits without densifying.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skbayes_sg.models import GaussianPrior, LogisticModel, Posterior


D, N = 7, 120


def _hashed_text(N, d, nnz, seed=0):
    """Rows of ``nnz`` hashed tokens (value 1, duplicates summed), labels from 2,000 weights."""
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((np.ones(N * nnz), rng.integers(0, d, N * nnz), np.arange(N + 1) * nnz),
                      shape=(N, d))
    X.sum_duplicates()
    w = np.zeros(d)
    w[rng.choice(d, 2000, replace=False)] = rng.normal(size=2000)
    return X, np.where(X @ w + rng.logistic(size=N) > 0, 1.0, -1.0)


@pytest.mark.slow
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
