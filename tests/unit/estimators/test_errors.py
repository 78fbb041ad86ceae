"""Bad input gets a clear error."""

import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.utils import DivergenceError

from support.settings import QUICK


rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
y_bin = (X[:, 0] > 0).astype(int)
y_reg = X @ [1.0, 2.0, 3.0]


@pytest.mark.parametrize("Est", [BayesianLogisticRegression, BayesianMLPClassifier])
def test_classifier_target_errors(Est):
    with pytest.raises(ValueError, match="class"):
        Est(**QUICK).fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="Unknown label type"):
        Est(**QUICK).fit(X, rng.normal(size=60))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_inf(bad):
    Xb = X.copy()
    Xb[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        BayesianLogisticRegression(**QUICK).fit(Xb, y_bin)
    yb = y_reg.copy()
    yb[0] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        BayesianLinearRegression(**QUICK).fit(X, yb)


def test_length_mismatch_and_feature_count():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        BayesianLinearRegression(**QUICK).fit(X, y_reg[:-1])
    reg = BayesianLinearRegression(**QUICK).fit(X, y_reg)
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


def test_sparse_is_a_type_error_for_the_mlp():
    # the GLM estimators take sparse X (tests/test_sparse.py); the MLP does not
    with pytest.raises(TypeError, match="dense"):
        BayesianMLPClassifier(**QUICK).fit(sp.csr_matrix(X), y_bin)


def test_divergence_is_reported_not_nan():
    from skbayes_sg.utils import DivergenceError

    with pytest.raises(DivergenceError, match="step_size"):
        BayesianLinearRegression(sampler="sghmc", step_size=50.0, subsampling="uniform",
                                 preconditioner=None, **QUICK).fit(X * 100, y_reg * 100)


@pytest.mark.parametrize("n_warmup", [50, 0])
def test_auto_step_retries_a_divergence(monkeypatch, n_warmup):
    # Unstandardized inputs (~100) make a ReLU network's curvature vary far
    # beyond the pilot's estimate; an automatic step 30x too large (the rule
    # patched) diverges -- in warm-up, or while sampling without one -- is
    # quartered until it is stable, and the fit completes with finite draws
    # and the retries on record.  Unpatched, this fit retries once; 30x needs
    # more quarterings, each recorded.  A user-set step is not retried.
    from skbayes_sg.fitting import _rules

    rule = _rules.auto_step_size
    monkeypatch.setattr(_rules, "auto_step_size", lambda *a, **k: 30.0 * rule(*a, **k))
    rs = np.random.RandomState(0)
    Xb, yb = rs.normal(loc=100, size=(100, 2)), rs.randint(0, 2, 100)
    kw = dict(hidden_layer_sizes=(8,), n_warmup=n_warmup, n_draws=20, thin=2, random_state=0)
    est = BayesianMLPClassifier(**kw).fit(Xb, yb)
    d = est.diagnostics_
    assert d["step_size_retries"] >= 2
    assert d["step_size"] == pytest.approx(d["auto_step_size"] / 4 ** d["step_size_retries"])
    assert np.isfinite(est.draws_).all()
    with pytest.raises(DivergenceError):
        BayesianMLPClassifier(**kw, step_size=0.05).fit(Xb, yb)


@pytest.mark.parametrize("kw, name", [
    ({"sampler": "sghmc_obj", "friction": -1.0}, "friction"),
    ({"sampler": "psgld_obj", "decay": 2.0}, "decay"),
    ({"subsampling": "stratified_obj", "n_clusters": 0}, "n_clusters"),
    ({"subsampling": "svrg_obj", "n1": -3}, "n1"),
])
def test_nested_hyperparameters_are_checked_before_any_data_pass(monkeypatch, kw, name):
    from skbayes_sg.fitting import _prepare
    from skbayes_sg.samplers import PSGLD, SGHMC
    from skbayes_sg.subsampling import SVRG, Stratified

    def no_data_pass(*args, **kwargs):
        raise AssertionError("the mode search ran before validation")

    monkeypatch.setattr(_prepare, "find_mode", no_data_pass)
    make = {"sghmc_obj": SGHMC, "psgld_obj": PSGLD, "stratified_obj": Stratified,
            "svrg_obj": SVRG}
    slot, key = next(iter(kw.items()))
    obj = make[key](**{name: kw[name]})
    X, y = np.random.default_rng(0).normal(size=(40, 3)), np.arange(40) % 2
    with pytest.raises(ValueError, match=name):
        BayesianLogisticRegression(**{slot: obj}).fit(X, y)


def _hyperparameter_classes():
    from skbayes_sg.samplers import SAMPLERS
    from skbayes_sg.subsampling import CORRECTIONS, SUBSAMPLING

    classes = {**{f"sampler:{k}": v for k, v in SAMPLERS.items()},
               **{f"subsampling:{k}": v for k, v in SUBSAMPLING.items()},
               **{f"correction:{k}": v for k, v in CORRECTIONS.items()}}
    return [(cls, name) for cls in classes.values() for name in cls._get_param_names()]


@pytest.mark.parametrize("cls, name", _hyperparameter_classes(),
                         ids=lambda v: getattr(v, "__name__", v))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1, -0.5])
def test_every_hyperparameter_rejects_nan_inf_and_negatives(cls, name, bad):
    # the audit: no sampler / strategy / correction parameter takes a non-finite or negative
    # value, and the error names the parameter and the class the user built
    with pytest.raises(ValueError, match=f"'{name}' parameter of {cls.__name__}"):
        cls(**{name: bad}).validate()


def _zero_and_out_of_range():
    from skbayes_sg.samplers import HMC, PSGLD, SGHMC, SGNHT
    from skbayes_sg.subsampling import (EWSG, SVRG, Adaptive, Compressed, Preferential,
                                        PreferentialCV, Stratified, SVRGAnchor)

    return [
        (SGHMC, "friction", 0.0), (SGNHT, "diffusion", 0.0), (PSGLD, "decay", 1.0),
        (PSGLD, "decay", 2.0), (PSGLD, "eps", 0.0), (HMC, "trajectory_length", 0.0),
        (HMC, "target_accept", 0.0), (HMC, "target_accept", 1.0), (HMC, "target_accept", 1.5),
        (HMC, "max_leapfrog", 0), (HMC, "max_leapfrog", 2.5),
        (Stratified, "n_clusters", 0), (Stratified, "n_clusters", 2.5),
        (Stratified, "max_iter", 0), (Stratified, "features", "z"),
        (Stratified, "correction", "magic"), (Preferential, "uniform_mix", 0.0),
        (Preferential, "uniform_mix", 1.5), (PreferentialCV, "uniform_mix", 0.0),
        (Adaptive, "n_min", 0), (Adaptive, "n_max", 0), (Adaptive, "n_pilot", 19),
        (Adaptive, "V0", 0.0), (Compressed, "target_ratio", 0.0),
        (Compressed, "target_ratio", 1.5), (Compressed, "clustering", "kmeans"),
        (EWSG, "n_index_steps", 0), (SVRG, "n1", 0), (SVRG, "update_every", 0),
        (SVRGAnchor, "n1", 0), (SVRGAnchor, "update_every", 2.5),
    ]


@pytest.mark.parametrize("cls, name, bad", _zero_and_out_of_range(),
                         ids=lambda v: getattr(v, "__name__", repr(v)))
def test_hyperparameters_reject_zero_and_out_of_range(cls, name, bad):
    with pytest.raises(ValueError, match=f"'{name}' parameter of {cls.__name__}"):
        cls(**{name: bad}).validate()


def test_cross_parameter_checks_name_the_parameters():
    from skbayes_sg.subsampling import Adaptive, Compressed, Stratified, SVRGAnchor

    with pytest.raises(ValueError, match="n_max=2 is smaller than n_min=5"):
        Adaptive(n_min=5, n_max=2).validate()
    with pytest.raises(ValueError, match="set radius"):
        Compressed(clustering="sequential").validate()
    with pytest.raises(ValueError, match="inner"):
        Compressed(inner="compressed").validate()
    with pytest.raises(ValueError, match="'n1' parameter of SVRGAnchor"):
        Stratified(correction=SVRGAnchor(n1=0)).validate()


def _refused_cases():
    from skbayes_sg.samplers import HMC, PSGLD, SGHMC, SGNHT
    from skbayes_sg.subsampling import Stratified, SVRGAnchor

    lg, mlp = BayesianLogisticRegression, BayesianMLPClassifier
    return [
        (lg, {"sampler": SGHMC(friction=-1)}, "'friction' parameter of SGHMC"),
        (lg, {"sampler": PSGLD(decay=2)}, "'decay' parameter of PSGLD"),
        (lg, {"sampler": SGNHT(diffusion=-1)}, "'diffusion' parameter of SGNHT"),
        (lg, {"sampler": SGHMC(friction=np.nan)}, "'friction' parameter of SGHMC"),
        (lg, {"sampler": HMC(target_accept=1.5), "subsampling": "full"}, "'target_accept'"),
        (lg, {"sampler": HMC(max_leapfrog=0), "subsampling": "full"}, "'max_leapfrog'"),
        (lg, {"subsampling": Stratified(correction=SVRGAnchor(n1=0))}, "'n1'"),
        (lg, {"n_jobs": 0}, "'n_jobs' parameter"),
        (lg, {"prior_scale": 1e-300}, r"'prior_scale' .* range \[1e-150, 1e\+150\]"),
        (lg, {"prior_scale": 1e300}, r"'prior_scale' .* range \[1e-150, 1e\+150\]"),
        (BayesianLinearRegression, {"prior_scale": 1e-300}, "'prior_scale'"),
        (BayesianLinearRegression, {"noise_std": 1e-300}, "'noise_std'"),
        (BayesianLinearRegression, {"noise_std": 1e300}, "'noise_std'"),
        (mlp, {"prior_scale": 1e-300}, "'prior_scale'"),
        (mlp, {"preconditioner": "laplace"}, "'preconditioner' parameter of BayesianMLP"),
        (mlp, {"hidden_layer_sizes": (2.5,)}, "hidden_layer_sizes must be positive integers"),
        (mlp, {"hidden_layer_sizes": ("4",)}, "hidden_layer_sizes must be positive integers"),
        (mlp, {"hidden_layer_sizes": (4, 0)}, "hidden_layer_sizes must be positive integers"),
    ]


@pytest.mark.parametrize("Est, params, match", _refused_cases(),
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_bad_parameters_are_refused_before_any_data_pass(no_data_pass, Est, params, match):
    y = y_reg if Est is BayesianLinearRegression else y_bin
    with pytest.raises(ValueError, match=match):
        Est(**params).fit(X, y)


@pytest.mark.parametrize("n_jobs", [None, 1, -1])
def test_n_jobs_accepts_scikit_learn_values(n_jobs):
    est = BayesianLogisticRegression(n_jobs=n_jobs, **{**QUICK, "n_chains": 2})
    assert np.isfinite(est.fit(X, y_bin).draws_).all()


def _warning_params(Est):
    """A fit short enough to warn (no chain extension where the estimator has one)."""
    params = dict(n_warmup=10, n_draws=10, n_chains=2, random_state=0)
    if "max_doublings" in Est().get_params():
        params["max_doublings"] = 0
    return params


def test_warnings_point_at_the_users_line():
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    est = BayesianLogisticRegression(**_warning_params(BayesianLogisticRegression))
    for call in (lambda: est.fit(X, y_bin),
                 lambda: make_pipeline(StandardScaler(), est).fit(X, y_bin),
                 lambda: cross_val_score(est, X, y_bin, cv=2)):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            call()
        ours = [r for r in rec if r.category.__module__.startswith(("skbayes_sg", "sklearn"))]
        assert ours, "the short fit should warn"
        assert {r.filename for r in ours} == {__file__}


def test_warn_user_skips_every_library_frame():
    import types

    from skbayes_sg.utils import warn_user

    inner = types.ModuleType("skbayes_sg._fake_inner")
    exec("def deep(warn):\n    warn('x', UserWarning)\n", inner.__dict__)
    outer = types.ModuleType("sklearn._fake_outer")
    exec("def call(f, warn):\n    f(warn)\n", outer.__dict__)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        outer.call(inner.deep, warn_user); line = sys._getframe().f_lineno  # noqa: E702
    assert [(r.filename, r.lineno) for r in rec] == [(__file__, line)]


def test_divergence_message_says_where_the_step_came_from(monkeypatch):
    from skbayes_sg.fitting import _rules

    rs = np.random.RandomState(0)
    Xb, yb = rs.normal(loc=100, size=(100, 2)), rs.randint(0, 2, 100)
    kw = dict(hidden_layer_sizes=(8,), n_warmup=50, n_draws=20, thin=2, random_state=0)
    with pytest.raises(DivergenceError, match="set by hand: step_size='auto'") as err:
        BayesianMLPClassifier(step_size=0.05, **kw).fit(Xb, yb)
    rule = _rules.auto_step_size
    monkeypatch.setattr(_rules, "auto_step_size", lambda *a, **k: 1e6 * rule(*a, **k))
    with pytest.raises(DivergenceError, match="automatic one") as err:
        BayesianMLPClassifier(**kw).fit(Xb, yb)
    assert "divided by 4 3 time(s)" in str(err.value)
    assert "or step_size='auto'" not in str(err.value)
