"""scikit-learn's data contract: sample and class weights, prediction at scale, target scaling."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import StandardScaler

from skbayes_sg.fitting import FitConfig
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.utils import ConvergenceWarning

from support.settings import FAST


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _repeated(X, y, w):
    return np.repeat(X, w, axis=0), np.repeat(y, w)


def test_integer_weights_are_repeated_rows_linear(diabetes):
    # fixed noise: the posterior is Gaussian and the mode and Laplace covariance are exact,
    # so weights and repeated rows must agree to rounding; the draws within Monte Carlo
    X, y = diabetes
    w = np.random.default_rng(0).integers(0, 4, size=len(y))
    kw = dict(noise_std=50.0, normalize_y=False, **FAST)  # same prior units for both fits
    weighted = BayesianLinearRegression(**kw).fit(X, y, sample_weight=w)
    repeated = BayesianLinearRegression(**kw).fit(*_repeated(X, y, w))
    np.testing.assert_allclose(weighted.mode_, repeated.mode_, rtol=1e-6)
    draws_w, draws_r = (e.sample_posterior()["coef"] for e in (weighted, repeated))
    sd = draws_r.std(0)
    assert np.all(np.abs(draws_w.mean(0) - draws_r.mean(0)) < 0.25 * sd)
    assert np.all(np.abs(draws_w.std(0) / sd - 1) < 0.25)


def test_integer_weights_are_repeated_rows_logistic(cancer):
    X, y = cancer
    w = np.random.default_rng(1).integers(1, 3, size=len(y))
    a = BayesianLogisticRegression(**FAST).fit(X, y, sample_weight=w)
    b = BayesianLogisticRegression(**FAST).fit(*_repeated(X, y, w))
    np.testing.assert_allclose(a.mode_, b.mode_, rtol=1e-6, atol=1e-6)
    da, db = a.sample_posterior()["coef"], b.sample_posterior()["coef"]
    assert np.all(np.abs(da.mean(0) - db.mean(0)) < 0.3 * db.std(0))


@pytest.mark.parametrize("Est", [BayesianLogisticRegression, BayesianLinearRegression])
def test_column_major_X_fits_as_row_major(cancer, diabetes, monkeypatch, Est):
    # pandas hands out column-major arrays; every step gathers rows, and strided rows made a
    # 10^5-row default fit 20x slower: fit copies X to row-major once, so the draws are the same
    from skbayes_sg.models import Posterior

    X, y = cancer if Est is BayesianLogisticRegression else diabetes
    seen, init = [], Posterior.__init__
    monkeypatch.setattr(Posterior, "__init__", lambda self, model, prior, X, *a, **k: (
        seen.append(X.flags["C_CONTIGUOUS"]), init(self, model, prior, X, *a, **k))[1])
    a = Est(**FAST).fit(np.asfortranarray(X), y)
    b = Est(**FAST).fit(np.ascontiguousarray(X), y)
    assert seen[0] and seen[-1]
    np.testing.assert_array_equal(a.draws_, b.draws_)


def test_sample_weight_validation(cancer):
    X, y = cancer
    with pytest.raises(ValueError, match="(?i)negative"):
        BayesianLogisticRegression(**FAST).fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="non-zero|sums to zero"):
        BayesianLogisticRegression(**FAST).fit(X, y, sample_weight=np.zeros(len(y)))
    ones = BayesianLogisticRegression(**FAST).fit(X, y, sample_weight=np.ones(len(y)))
    none = BayesianLogisticRegression(**FAST).fit(X, y)
    np.testing.assert_array_equal(ones.draws_, none.draws_)


@pytest.mark.parametrize("Est", [BayesianLogisticRegression, BayesianMLPClassifier])
def test_class_weight_is_a_row_weight(cancer, Est):
    X, y = cancer
    kw = dict(FAST, n_draws=20) if Est is BayesianMLPClassifier else FAST
    if Est is BayesianMLPClassifier:
        kw["hidden_layer_sizes"] = (4,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = Est(class_weight={0: 3.0, 1: 1.0}, **kw).fit(X, y)
        b = Est(**kw).fit(X, y, sample_weight=np.where(y == 0, 3.0, 1.0))
    np.testing.assert_array_equal(a.draws_, b.draws_)
    # "balanced": n_samples / (n_classes * count of the row's class), as scikit-learn
    counts = np.bincount(y)
    expected = len(y) / (2.0 * counts[y])
    balanced = Est(class_weight="balanced", **kw).fit(X, y)
    by_weight = Est(**kw).fit(X, y, sample_weight=expected)
    np.testing.assert_allclose(balanced.draws_, by_weight.draws_, rtol=1e-12)


def test_linear_predictive_closed_form_matches_the_draws(diabetes):
    X, y = diabetes
    reg = BayesianLinearRegression(**FAST).fit(X, y)
    mean, std = reg.predict(X, return_std=True)
    draws = reg.sample_posterior()
    means = draws["coef"] @ X.T + draws["intercept"][:, None]
    np.testing.assert_allclose(mean, means.mean(0), rtol=1e-10)
    np.testing.assert_allclose(std, np.sqrt(means.var(0) + np.mean(draws["noise_std"] ** 2)),
                               rtol=1e-8)
    assert reg.score(X, y) > 0.45  # unscaled y (sd 77): normalize_y keeps the prior sensible
    assert 50 < reg.noise_std_ < 60 and abs(reg.intercept_ - y.mean()) < 10
    samples = reg.sample_y(X[:3], n_samples=4000, random_state=0)
    assert np.all(np.abs(samples.mean(1) - mean[:3]) < 5 * std[:3] / np.sqrt(4000) + 1)


def test_predict_proba_uses_evenly_spaced_draws(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(n_predict_draws=50, **FAST).fit(X, y)
    draws = clf._pooled_draws()
    pick = draws[np.linspace(0, len(draws) - 1, 50).round().astype(int)]
    np.testing.assert_allclose(clf.predict_proba(X),
                               clf.model_.predict_output(pick, X).mean(0), rtol=1e-9)
    full = clf.set_params(n_predict_draws=10_000).predict_proba(X)
    np.testing.assert_allclose(full, clf.model_.predict_output(draws, X).mean(0), rtol=1e-9)


def test_decision_function_is_the_posterior_mean_logit(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(**FAST).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0])
    assert np.mean((clf.decision_function(X) > 0) == (clf.predict(X) == 1)) > 0.99


def test_feature_names_in_summary_and_arviz(cancer):
    pd = pytest.importorskip("pandas")
    X, y = cancer
    names = [f"f{i}" for i in range(X.shape[1])]
    clf = BayesianLogisticRegression(**FAST).fit(pd.DataFrame(X, columns=names), y)
    assert "coef[0,f3]" in str(clf.summary(max_rows=100))
    pytest.importorskip("arviz")
    idata = clf.to_inference_data()
    assert idata.posterior["coef"].dims[-1] == "feature"
    assert list(idata.posterior["feature"].values) == names


def test_pointwise_log_likelihood_and_loo(diabetes):
    az = pytest.importorskip("arviz")
    X, y = diabetes
    reg = BayesianLinearRegression(**FAST).fit(X, y)
    ll = reg.log_likelihood(X, y)
    draws = reg.sample_posterior()
    mu = draws["coef"] @ X.T + draws["intercept"][:, None]
    sd = draws["noise_std"][:, None]
    manual = -0.5 * ((y - mu) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(ll.reshape(-1, len(y)), manual, rtol=1e-9, atol=1e-9)
    idata = reg.to_inference_data(X, y)
    loo, waic = az.loo(idata), az.waic(idata)
    lppd = np.sum(np.log(np.mean(np.exp(ll.reshape(-1, len(y))), axis=0)))
    assert np.isfinite(loo.elpd_loo) and loo.elpd_loo < lppd < loo.elpd_loo + 30
    assert 5 < loo.p_loo < 25 and abs(waic.elpd_waic - loo.elpd_loo) < 5
    other = BayesianLinearRegression(prior_scale=0.01, **FAST).fit(X, y)
    table = az.compare({"default": idata, "tight": other.to_inference_data(X, y)})
    assert table.index[0] == "default"


class _WorkerData(Exception):
    """Raised inside a joblib worker to carry how it holds the rows back to the parent."""


def _report_worker_data(plan, ids, *args):
    """Stand-in for the chain runner of ``sample``: report the worker's rows, then stop."""
    X = plan.posterior.X
    parts = {"data": X.data, "indices": X.indices} if sp.issparse(X) else {"X": X}
    raise _WorkerData({k: type(v).__name__ for k, v in parts.items()})


@pytest.mark.parametrize("sparse", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_parallel_chains_get_X_memory_mapped_not_pickled(monkeypatch, sparse):
    # joblib's loky backend replaces arrays above 1 MB by a memory-mapped file written once per
    # fit, which every worker maps; a copy pickled into each task would arrive as an ndarray
    import skbayes_sg.fitting._fit as fit_module

    rng = np.random.default_rng(0)
    if sparse:  # data 3.2 MB and indices 1.6 MB
        X = sp.random(20_000, 2_000, density=0.01, format="csr", random_state=0)
    else:  # 3.2 MB
        X = rng.normal(size=(20_000, 20))
    y = (np.asarray(X[:, 0].todense()).ravel() if sparse else X[:, 0]) > 0
    monkeypatch.setattr(fit_module, "_run_group", _report_worker_data)
    clf = BayesianLogisticRegression(n_jobs=2, n_warmup=10, n_draws=10, random_state=0)
    clf._fit_config = FitConfig(parallel_min_seconds=0.0)  # workers, however short the chains
    with pytest.raises(_WorkerData) as info:
        clf.fit(X, y)
    held = info.value.args[0]
    assert held == ({"data": "memmap", "indices": "memmap"} if sparse else {"X": "memmap"})


@pytest.mark.parametrize("y", [
    np.array([3, 1, 3, 7, 1]), np.array([0.0, 1.0, 1.0, 0.0]), np.array([-1, 1, 1], np.int8),
    np.array([2**40, 5, 2**40]), np.array([0.5, 1.5, 0.5]), np.array(["b", "a", "b"]),
    np.array([1e300, -1e300, 0.0]), np.array([4, 2, 9], np.uint16),
    np.array([-100, 100, 7], np.int8), np.array([2**63 + 5, 2**63 + 7], np.uint64),
    np.array([0, 1, 1, 0], np.int8), np.array([-1, 0, 0], np.int16), np.array([6, 5], np.uint8),
    np.array([2**63 + 5, 2**63 + 6], np.uint64), np.array([-128, 127, 0], np.int8),
])
def test_target_encoding_matches_numpy_unique(y):
    # oracle: np.unique; the O(n) path takes integral numeric targets of a modest range
    from skbayes_sg.estimators._classifier import _integral_codes

    classes, codes = np.unique(y, return_inverse=True)
    found = _integral_codes(y)
    if found is not None:
        assert found[0].dtype == classes.dtype
        np.testing.assert_array_equal(found[0], classes)
        np.testing.assert_array_equal(found[1], codes)
    fast = (y.dtype.kind in "iuf" and np.ptp(y.astype(float)) < 1024 and np.all(y % 1 == 0)
            and y.max() < 2**63)
    assert (found is not None) == fast
