"""The fit engine (skbayes_sg.fitting): its records, its phases, where chains run."""

import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.fitting import FitConfig

SHORT = dict(n_warmup=50, n_draws=50, n_chains=4, random_state=0, max_doublings=0)
PHASES = {"mode", "laplace", "curvature", "strategy", "tuning", "starts", "sampling", "verdict",
          "shape", "tail"}  # the Gaussian probe before ABOBA (6 parameters); the tail check


def test_phases_account_for_the_fit():
    # every phase is reported with its seconds and evaluations, and they add up to the totals
    X, y = make_classification(20_000, 5, random_state=0)
    d = BayesianLogisticRegression(**SHORT).fit(X, y).diagnostics_
    assert set(d["phases"]) == PHASES
    evals = {k: v["grad_evals"] for k, v in d["phases"].items()}
    assert evals["shape"] == 13 * 20_000  # mode and +-2.5 sd on each of the 6 whitened axes
    assert evals["tail"] == 5 * 20_000  # the mode and the 4 farthest draws
    assert sum(evals[k] for k in PHASES - {"sampling", "verdict", "tail"}) == \
        d["preprocessing_grad_evals"]
    assert evals["sampling"] == d["sampling_grad_evals"] and evals["mode"] > 0
    seconds = sum(v["seconds"] for k, v in d["phases"].items()
                  if k not in ("sampling", "verdict", "tail"))  # tail: after sampling
    assert seconds == pytest.approx(d["preprocessing_seconds"], rel=0.2, abs=0.05)
    assert d["phases"]["sampling"]["seconds"] == d["sampling_seconds"]


def test_a_config_changes_the_engine_without_patching():
    # the engine's thresholds are a frozen record the estimator hands it
    X, y = make_classification(20_000, 5, random_state=0)
    est = BayesianLogisticRegression(**SHORT)
    default = est.fit(X, y).diagnostics_["integrator"]
    est._fit_config = FitConfig(subtract_min_rows=10**9)  # never "large": the Euler scheme
    assert (default, est.fit(X, y).diagnostics_["integrator"]) == ("aboba", "euler")
    with pytest.raises(dataclasses.FrozenInstanceError):
        FitConfig().auto_batch = 3


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
