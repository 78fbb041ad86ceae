"""The fit engine (skbayes_sg.fitting): its records, its phases, where chains run."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.fitting import FitConfig
from skbayes_sg.subsampling import ControlVariates

SHORT = dict(n_warmup=50, n_draws=50, n_chains=4, random_state=0, max_doublings=0)
PHASES = {"mode", "laplace", "curvature", "strategy", "tuning", "starts", "sampling", "verdict"}


def _workers(est, n_jobs, min_seconds):
    est = est.set_params(n_jobs=n_jobs)
    est._fit_config = FitConfig(parallel_min_seconds=min_seconds)
    return est


@pytest.mark.parametrize("make, n_classes, subsampling", [
    (BayesianLogisticRegression, 2, "auto"),
    (BayesianLogisticRegression, 4, "auto"),
    (BayesianLogisticRegression, 2, ControlVariates(shared_minibatch=True)),
])
def test_draws_do_not_depend_on_n_jobs(make, n_classes, subsampling):
    # chains in 1 or 2 worker groups, shared minibatches included (every group draws chain
    # 0's rows from its own copy of that stream): the same draws, bit for bit
    X, y = make_classification(12_000, 5, n_informative=4, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    serial = make(subsampling=subsampling, **SHORT).fit(X, y)
    parallel = _workers(make(subsampling=subsampling, **SHORT), 2, 0.0).fit(X, y)
    assert parallel.diagnostics_["worker_groups"] == 2
    assert serial.diagnostics_["worker_groups"] == 1
    np.testing.assert_array_equal(parallel.draws_, serial.draws_)


def test_short_sampling_stays_in_process_whatever_n_jobs():
    # workers cost about a second to start; a fit predicted to sample in less than
    # parallel_min_seconds runs its chains here (same draws, as above)
    X, y = make_classification(2000, 5, random_state=0)
    est = _workers(BayesianLogisticRegression(**SHORT), 2, 1e9).fit(X, y)
    assert est.diagnostics_["worker_groups"] == 1
    est = _workers(BayesianLogisticRegression(**SHORT), 2, 0.0).fit(X, y)
    assert est.diagnostics_["worker_groups"] == 2


def test_phases_account_for_the_fit():
    # every phase is reported with its seconds and evaluations, and they add up to the totals
    X, y = make_classification(20_000, 5, random_state=0)
    d = BayesianLogisticRegression(**SHORT).fit(X, y).diagnostics_
    assert set(d["phases"]) == PHASES
    evals = {k: v["grad_evals"] for k, v in d["phases"].items()}
    assert sum(evals[k] for k in PHASES - {"sampling", "verdict"}) == \
        d["preprocessing_grad_evals"]
    assert evals["sampling"] == d["sampling_grad_evals"] and evals["mode"] > 0
    seconds = sum(v["seconds"] for k, v in d["phases"].items() if k not in ("sampling",
                                                                           "verdict"))
    assert seconds == pytest.approx(d["preprocessing_seconds"], rel=0.2, abs=0.05)
    assert d["phases"]["sampling"]["seconds"] == d["sampling_seconds"]


def test_a_config_changes_the_engine_without_patching():
    # the engine's thresholds are a frozen record the estimator hands it
    X, y = make_classification(20_000, 5, random_state=0)
    est = BayesianLogisticRegression(**SHORT)
    default = est.fit(X, y).diagnostics_["integrator"]
    est._fit_config = FitConfig(subtract_min_rows=10**9)  # never "large": the Euler scheme
    assert (default, est.fit(X, y).diagnostics_["integrator"]) == ("aboba", "euler")
    with pytest.raises(Exception):
        FitConfig().auto_batch = 3  # frozen


@pytest.mark.parametrize("make", [BayesianLinearRegression, BayesianLogisticRegression])
def test_a_failed_refit_leaves_the_fitted_estimator_as_it_was(make):
    # fit is atomic: the new state is built aside; a fit that raises changes nothing
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = X @ rng.normal(size=5) + rng.normal(size=400)
    y = y if make is BayesianLinearRegression else (y > 0).astype(int)
    est = make(random_state=0, n_draws=100).fit(X, y)
    before = {k: v for k, v in vars(est).items() if k.endswith("_")}
    pred = est.predict(X[:5])
    bad = y * 1000 + 5 if make is BayesianLinearRegression else np.where(y, "b", "a")
    with pytest.raises(ValueError):
        est.set_params(step_size=1e6).fit(X[:, :3], bad)
    assert {k: v for k, v in vars(est).items() if k.endswith("_")}.keys() == before.keys()
    assert all(vars(est)[k] is v for k, v in before.items())
    np.testing.assert_array_equal(est.predict(X[:5]), pred)


def test_an_interrupted_first_fit_leaves_the_estimator_unfitted(monkeypatch):
    # Ctrl-C during a first fit: check_is_fitted still says unfitted (no half state)
    from sklearn.exceptions import NotFittedError

    from skbayes_sg.fitting import _prepare

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_prepare, "tune", interrupt)
    X, y = make_classification(300, 4, random_state=0)
    est = BayesianLogisticRegression(**SHORT)
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_an_explicit_subsampling_is_honoured_by_the_automatic_sampler():
    # small data where sampler="auto" alone switches to HMC on the full gradient
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    d = BayesianLogisticRegression(subsampling="stratified", **SHORT).fit(X, y).diagnostics_
    assert d["subsampling"] == "stratified" and d["sampler"] != "hmc"
    d = BayesianLogisticRegression(**SHORT).fit(X, y).diagnostics_
    assert (d["subsampling"], d["sampler"]) == ("full", "hmc")


def test_a_surrogate_posterior_is_sampled_in_its_own_geometry():
    # compressed samples the centroids' posterior, whose mode and curvature differ from the
    # full data's: its chains are preconditioned, sized and started on its own Laplace (the
    # full-data Laplace left them mixing slowly: R-hat 1.21 and ESS 14 after the first run on
    # 10^5 x 50 rows, and three doublings at a pass over the centroids per step)
    from skbayes_sg.preprocessing import find_mode

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 8)).astype(np.float32)
    y = (X @ rng.normal(size=8) * 0.3 + rng.logistic(size=20_000) > 0).astype(int)
    est = BayesianLogisticRegression(subsampling="compressed", n_warmup=300, n_draws=300,
                                     n_chains=4, random_state=0, max_doublings=0).fit(X, y)
    d = est.diagnostics_
    assert "surrogate" in d["phases"] and d["phases"]["surrogate"]["grad_evals"] > 0
    assert np.nanmax(d["rhat"]) < 1.02
    ratio = est.preprocessing_["compression_ratio"]
    assert 0.05 < ratio < 0.2
    # the draws centre on the centroid posterior's mode (oracle: its own mode search)
    small = est.mode_
    full = find_mode(_posterior(est, X, y), np.random.default_rng(0)).theta
    pooled = est.draws_.reshape(-1, est.draws_.shape[-1]).mean(0)
    sd = est.draws_.reshape(-1, est.draws_.shape[-1]).std(0)
    assert np.max(np.abs(pooled - small) / sd) < 0.3
    assert np.max(np.abs(small - full) / sd) > 0.3  # a different posterior indeed


def _posterior(est, X, y):
    from skbayes_sg.models import Posterior

    return Posterior(est.model_, est.prior_, X, np.where(y == 1, 1.0, -1.0))
