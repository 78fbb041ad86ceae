"""Posterior-predictive probabilities: exact averages, float32, tiny probabilities, memory, MC.

Oracles: the plain average over the selected draws of ``expit`` / ``softmax`` of logits (and of a
forward pass) computed here with plain numpy, the float32 input's result, and
log-space sums for probabilities far below float64's ``1 - p`` resolution.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, log_expit, logsumexp, softmax
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import skbayes_sg.models._predictive as predictive
from skbayes_sg.models._predictive import PredictChunks
from skbayes_sg import BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.models import LogisticModel, MLPModel
from skbayes_sg.utils import ConvergenceWarning

from support.settings import FAST


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _fit(Est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return Est(**{**FAST, **kw}).fit(X, y)


def _glm_oracle(clf, X):
    """Average of expit / softmax over the selected draws, straight from coef and intercept."""
    named = clf.model_.unpack(clf._prediction_draws(clf.n_predict_draws))
    z = np.einsum("srd,nd->srn", named["coef"], X) + named["intercept"][..., None]
    if z.shape[1] == 1:
        p1 = expit(z[:, 0]).mean(0)
        return np.stack([1 - p1, p1], axis=1)
    return softmax(z, axis=1).mean(0).T


def _mlp_oracle(clf, X):
    named = clf.model_.unpack(clf._prediction_draws(clf.n_predict_draws))
    a = X[None]
    for l in range(clf.model_.n_layers):
        a = a @ named[f"coef_{l}"] + named[f"intercept_{l}"][:, None, :]
        if l < clf.model_.n_layers - 1:
            a = np.maximum(a, 0.0)
    return softmax(a, axis=-1).mean(0)


@pytest.mark.parametrize("multiclass", [False, True])
def test_logistic_proba_is_the_plain_average_over_the_draws(cancer, iris, multiclass):
    X, y = iris if multiclass else cancer
    clf = _fit(BayesianLogisticRegression, X, y, n_predict_draws=37)
    expected = _glm_oracle(clf, X)
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(clf.predict_proba(sp.csr_matrix(X)), expected, rtol=1e-12,
                               atol=1e-15)
    got32 = clf.predict_proba(X.astype(np.float32))
    assert got32.dtype == np.float32  # X's dtype, as scikit-learn's LogisticRegression
    np.testing.assert_allclose(got32, expected, atol=1e-5)
    np.testing.assert_allclose(got32.sum(1), 1.0, rtol=1e-6)


def test_mlp_proba_is_the_plain_average_over_the_draws(iris):
    X, y = iris
    clf = _fit(BayesianMLPClassifier, X, y, hidden_layer_sizes=(6, 5), n_draws=30,
               n_predict_draws=45)
    expected = _mlp_oracle(clf, X)
    assert clf._prediction_draws(45).shape[0] == 45
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(clf.predict_proba(X.astype(np.float32)), expected, atol=1e-5)


@pytest.mark.parametrize("make", [lambda: LogisticModel(5, 2), lambda: LogisticModel(5, 3),
                                  lambda: MLPModel((5, 7, 3), "tanh")])
def test_groups_of_draws_and_row_chunks_do_not_change_the_average(make):
    model, rng = make(), np.random.default_rng(0)
    draws, X = rng.normal(size=(23, model.n_params)), rng.normal(size=(1000, 5))
    whole = model.predict_mean(draws, X)
    np.testing.assert_allclose(whole, model.predict_output(draws, X).mean(0), rtol=1e-12)
    # tiny groups (several draw groups) and tiny chunks (many row chunks, a ragged last one)
    tiny = PredictChunks(group_elements=3 * model.n_params, cache_bytes=4096, min_rows=7)
    np.testing.assert_allclose(model.predict_mean(draws, X, chunks=tiny), whole, rtol=1e-12)


def test_binary_tiny_probabilities_keep_their_relative_precision():
    # logits from -800 to +800: exp(-z) overflows below -709 (float64) and -88 (float32); the
    # smaller class probability must still be right relative to itself (no 1 - p)
    model = LogisticModel(1, 2)
    rng = np.random.default_rng(1)
    draws = np.c_[rng.uniform(0.9, 1.1, 40), rng.normal(0.0, 1.0, 40)]
    X = np.linspace(-800, 800, 161)[:, None]
    z = draws[:, :1] @ X.T + draws[:, 1:]
    log_p = np.stack([logsumexp(log_expit(-z), axis=0), logsumexp(log_expit(z), axis=0)], 1)
    log_p -= np.log(len(draws))
    for Xd, atol, floor in ((X, 1e-11, 1e-290), (X.astype(np.float32), 5e-4, 1e-25)):
        p = model.predict_mean(draws, Xd)
        assert np.all(np.isfinite(p))
        ok = log_p > np.log(floor)
        np.testing.assert_allclose(np.log(p[ok]), log_p[ok], rtol=0, atol=atol)
        assert np.all(p[~ok] < 10 * floor)


def test_predict_proba_memory_does_not_grow_with_rows(cancer):
    X, y = cancer
    clf = _fit(BayesianLogisticRegression, X, y)
    big = np.tile(X, (160, 1))  # 91,040 rows
    peaks = []
    for rows in (big[:20_000], big):
        seen = []
        for _ in range(3):  # the peak moves with the predictive worker threads' timing
            tracemalloc.start()
            proba = clf.predict_proba(rows)
            seen.append(tracemalloc.get_traced_memory()[1] - proba.nbytes)
            tracemalloc.stop()
        peaks.append(seen)
    # working memory: a few cache-sized buffers, and not proportional to the rows (4.5x the
    # rows, at most 1 MiB more than the small input's largest peak; a row-sized float64
    # temporary would add 1.4 MiB)
    assert min(peaks[1]) < 4 << 20 and min(peaks[1]) < max(peaks[0]) + (1 << 20)


def test_monte_carlo_error_of_the_default_draws_is_small_next_to_the_posterior_spread(cancer):
    # the n_predict_draws claim: evenly spaced draws are nearly independent, so the Monte-Carlo
    # sd of predict_proba is ~ its posterior sd / sqrt(100) = 10% of it
    X, y = cancer
    clf = _fit(BayesianLogisticRegression, X, y, n_draws=1000, n_chains=4)
    assert clf.n_predict_draws == 100
    named = clf.sample_posterior()
    p = expit(named["coef"][:, 0] @ X.T + named["intercept"])  # (4000, n): every draw
    err = clf.predict_proba(X)[:, 1] - p.mean(0)
    ratio = np.sqrt(np.mean(err**2) / np.mean(p.var(0)))
    assert 0.03 < ratio < 0.2


@pytest.mark.parametrize("sparse", [False, True])
def test_row_blocks_in_threads_give_the_one_block_result(sparse):
    # blocks run in worker threads on views of X and of the output; rows whose exp overflows
    # (redone with clipping, by their index inside the block) sit in every block
    model, rng = LogisticModel(4, 2), np.random.default_rng(2)
    draws = rng.normal(size=(30, 5))
    draws[:, 0] = rng.uniform(0.5, 2.5, 30)
    X = rng.normal(size=(1000, 4))
    X[::97, 0] = -900.0  # logits from -450 to -2250: exp(-z) overflows in most draws
    X = sp.csr_matrix(X) if sparse else X
    one = model.predict_mean(draws, X)
    # 64-row chunks (the least), 1000 // (4 x 64) = 3 blocks of 333 rows, each in a thread
    assert predictive._row_blocks(1000, 64, 3) == [slice(0, 333), slice(333, 667),
                                                   slice(667, 1000)]
    blocks = PredictChunks(cache_bytes=4096, threads=3)
    np.testing.assert_allclose(model.predict_mean(draws, X, chunks=blocks), one, rtol=1e-11,
                               atol=1e-300)
    assert np.all(one[::97, 1] < 1e-100) and np.all(one[::97, 1] > 0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_fused_overflow_pass_is_the_finiteness_check(cancer, bad):
    from skbayes_sg.models._finite import peak_abs

    X = np.random.default_rng(0).normal(size=(5000, 7))
    assert peak_abs(X, rows=64) == np.abs(X).max() and peak_abs(X[:0]) == 0.0
    assert peak_abs(sp.csr_matrix(X)) == np.abs(X).max()
    X[4321, 3] = bad  # in a late chunk
    assert not np.isfinite(peak_abs(X, rows=64))
    Xc, y = cancer
    clf = _fit(BayesianLogisticRegression, Xc, y)
    Xc = Xc.copy()
    Xc[-1, 0] = bad
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        clf.predict_proba(Xc)
