"""Rare events through the estimators: the shape probe keeps the Euler scheme where a handful of
positive rows give the intercept an exponential tail, and the Metropolis audit warns about draws
every chain has wrong."""

import warnings

import numpy as np
import pytest

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.fitting import FitConfig
from skbayes_sg.utils import ApproximationWarning

FIT = dict(n_warmup=300, n_draws=500, n_chains=4, random_state=0)


def _rare(n=5000, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.zeros(n, dtype=int)
    y[rng.integers(n)] = 1  # one positive row
    return X, y


def _fit(X, y, config=None, **kw):
    est = BayesianLogisticRegression(**FIT, **kw)
    if config is not None:
        est._fit_config = config
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [w for w in caught if issubclass(w.category, UserWarning)]


def test_one_positive_row_keeps_the_euler_scheme_and_is_accurate():
    # ABOBA from 5,000 rows here (as from 10,000 by default): the probe sees the intercept's
    # exponential tail (misfit ~0.95) and keeps Euler, whose draws match exact HMC
    X, y = _rare()
    large = FitConfig(subtract_min_rows=5000)
    est, _ = _fit(X, y, large)
    d = est.diagnostics_
    assert d["integrator"] == "euler" and est.preprocessing_["gaussian_misfit"] > 0.5
    ref, _ = _fit(X, y, sampler="hmc", subsampling="full")
    D, R = est.draws_.reshape(-1, 4), ref.draws_.reshape(-1, 4)
    ratio, z = D.std(0) / R.std(0), (D.mean(0) - R.mean(0)) / R.std(0)
    assert np.all((ratio > 0.8) & (ratio < 1.25)), ratio
    assert np.all(np.abs(z) < 0.3), z
    # without the probe the same rows run ABOBA at its step cap: a deep excursion of the
    # intercept (sd 22x the exact one, measured); the misfit-scaled cap is off too
    unprobed, caught = _fit(X, y, FitConfig(subtract_min_rows=5000, shape_misfit_max=np.inf,
                                            shape_misfit_full=np.inf))
    assert unprobed.diagnostics_["integrator"] == "aboba"
    assert unprobed.draws_[..., -1].std() > 5 * R[:, -1].std()
    # ... which the tail check sees: draws far beyond what a log-concave posterior allows
    tail = unprobed.diagnostics_["tail_check"]
    assert not tail["passed"] and tail["excess"] > 2 * tail["bound"]
    assert any("deep excursion" in str(w.message) for w in caught)
    assert est.diagnostics_["tail_check"]["passed"]


def test_the_audit_warns_about_a_shared_bias():
    # a user step 3x too wide for uniform minibatches on an exactly Gaussian posterior: every
    # chain is too wide alike (R-hat passes); exact steps from the draws pull them in
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=400)
    est = BayesianLinearRegression(noise_std=1.0, sampler="sgld", subsampling="uniform",
                                   step_size=0.5, **FIT)
    est._fit_config = FitConfig(audit=True)
    with pytest.warns(ApproximationWarning, match="Exact Metropolis steps"):
        est.fit(X, y)
    audit = est.diagnostics_["audit"]
    assert not audit["passed"] and min(audit["var_shift"]) < -0.3
    assert est.diagnostics_["phases"]["audit"]["grad_evals"] == audit["grad_evals"]
