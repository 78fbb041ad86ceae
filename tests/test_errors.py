"""Bad input gets a clear error."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from skbayes_sg.utils import DivergenceError

from skbayes_sg import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianMLPClassifier,
)

FAST = dict(n_warmup=20, n_draws=20, n_chains=1, random_state=0)
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
y_bin = (X[:, 0] > 0).astype(int)
y_reg = X @ [1.0, 2.0, 3.0]


@pytest.mark.parametrize("Est", [BayesianLogisticRegression, BayesianMLPClassifier])
def test_classifier_target_errors(Est):
    with pytest.raises(ValueError, match="class"):
        Est(**FAST).fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="Unknown label type"):
        Est(**FAST).fit(X, rng.normal(size=60))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_inf(bad):
    Xb = X.copy()
    Xb[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        BayesianLogisticRegression(**FAST).fit(Xb, y_bin)
    yb = y_reg.copy()
    yb[0] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        BayesianLinearRegression(**FAST).fit(X, yb)


def test_length_mismatch_and_feature_count():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        BayesianLinearRegression(**FAST).fit(X, y_reg[:-1])
    reg = BayesianLinearRegression(**FAST).fit(X, y_reg)
    with pytest.raises(ValueError, match="3 features"):
        reg.predict(X[:, :2])


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        BayesianLogisticRegression().predict(X)
    with pytest.raises(NotFittedError):
        BayesianLinearRegression().sample_posterior()


@pytest.mark.parametrize("params, match", [
    ({"prior_scale": -1.0}, "prior_scale"),
    ({"batch_size": 0}, "batch_size"),
    ({"sampler": "nuts"}, "sampler"),
    ({"subsampling": "magic"}, "subsampling"),
    ({"n_draws": 0}, "n_draws"),
    ({"step_size": -0.1}, "step_size"),
])
def test_invalid_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        BayesianLogisticRegression(**params).fit(X, y_bin)


def test_hmc_with_subsampled_gradient_is_refused():
    with pytest.raises(ValueError, match="exact full-data gradient.*full"):
        BayesianLogisticRegression(sampler="hmc", subsampling="uniform").fit(X, y_bin)


def test_sparse_is_a_type_error_for_the_mlp():
    # the GLM estimators take sparse X (tests/test_sparse.py); the MLP does not
    with pytest.raises(TypeError, match="dense"):
        BayesianMLPClassifier(**FAST).fit(sp.csr_matrix(X), y_bin)


def test_divergence_is_reported_not_nan():
    from skbayes_sg.utils import DivergenceError

    with pytest.raises(DivergenceError, match="step_size"):
        BayesianLinearRegression(step_size=50.0, subsampling="uniform",
                                 preconditioner=None, **FAST).fit(X * 100, y_reg * 100)


def test_auto_step_retries_a_diverging_warmup(monkeypatch):
    # Unstandardized inputs (~100) make a ReLU network's curvature vary far
    # beyond the pilot's estimate; an automatic step 30x too large (the rule
    # patched) diverges in warm-up, is quartered until it is stable, and the
    # fit completes with finite draws and the retries on record.
    from skbayes_sg.estimators import _tuning

    rule = _tuning.auto_step_size
    monkeypatch.setattr(_tuning, "auto_step_size", lambda *a, **k: 30.0 * rule(*a, **k))
    rs = np.random.RandomState(0)
    Xb, yb = rs.normal(loc=100, size=(100, 2)), rs.randint(0, 2, 100)
    est = BayesianMLPClassifier(hidden_layer_sizes=(8,), n_warmup=50, n_draws=20, thin=2,
                                random_state=0).fit(Xb, yb)
    assert est.diagnostics_["step_size_retries"] >= 1
    assert np.isfinite(est.draws_).all()
    with pytest.raises(DivergenceError):
        BayesianMLPClassifier(hidden_layer_sizes=(8,), n_warmup=50, n_draws=20, thin=2,
                              random_state=0, step_size=0.05).fit(Xb, yb)


@pytest.mark.parametrize("kw, name", [
    ({"sampler": "sghmc_obj", "friction": -1.0}, "friction"),
    ({"sampler": "psgld_obj", "decay": 2.0}, "decay"),
    ({"subsampling": "stratified_obj", "n_clusters": 0}, "n_clusters"),
    ({"subsampling": "svrg_obj", "n1": -3}, "n1"),
])
def test_nested_hyperparameters_are_checked_before_any_data_pass(monkeypatch, kw, name):
    from skbayes_sg.estimators import _fit
    from skbayes_sg.samplers import PSGLD, SGHMC
    from skbayes_sg.subsampling import SVRG, Stratified

    def no_data_pass(*args, **kwargs):
        raise AssertionError("the mode search ran before validation")

    monkeypatch.setattr(_fit, "find_mode", no_data_pass)
    make = {"sghmc_obj": SGHMC, "psgld_obj": PSGLD, "stratified_obj": Stratified,
            "svrg_obj": SVRG}
    slot, key = next(iter(kw.items()))
    obj = make[key](**{name: kw[name]})
    X, y = np.random.default_rng(0).normal(size=(40, 3)), np.arange(40) % 2
    with pytest.raises(ValueError, match=name):
        BayesianLogisticRegression(**{slot: obj}).fit(X, y)
