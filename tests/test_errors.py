"""Bad input gets a clear error."""

import sys
import warnings

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


# --------------------------------------------------- sampler x subsampling: one message per case

def _combination_cases():
    from skbayes_sg.samplers import HMC, PSGLD, SGHMC
    from skbayes_sg.subsampling import EWSG, Compressed

    return {
        "exact gradient": (
            HMC(), Compressed(inner="uniform"),
            r"sampler='hmc' needs the exact full-data gradient and potential, but "
            r"subsampling=Compressed\(inner='uniform'\) gives a stochastic estimate\. Use "
            r"subsampling in \['compressed', 'full'\] .*stochastic-gradient sampler in "
            r"\['psgld', 'sghmc', 'sgld', 'sgnht'\]"),
        "integrator cannot couple": (
            SGHMC(integrator="aboba"), EWSG(),
            r"subsampling='ewsg' gives candidate gradients .* Euler kernel's energies; "
            r"sampler=SGHMC\(integrator='aboba'\) cannot\. Use integrator in \['euler'\]"),
        "sampler cannot couple": (
            PSGLD(), Compressed(inner="ewsg"),
            r"subsampling=Compressed\(inner='ewsg'\) gives candidate gradients .*; "
            r"sampler='psgld' cannot\. Use sampler in \['sghmc', 'sgld', 'sgnht'\] "
            r"\('sghmc' with integrator in \['euler'\]\)"),
    }


@pytest.mark.parametrize("case", list(_combination_cases()))
def test_each_incompatible_combination_has_its_own_message(case, no_data_pass):
    # the one check (skbayes_sg.fitting.check_combination) says what is wrong and what works,
    # and fit raises it before any pass over the data
    from skbayes_sg.fitting import check_combination

    sampler, strategy, message = _combination_cases()[case]
    with pytest.raises(ValueError, match=message):
        check_combination(sampler, strategy)
    with pytest.raises(ValueError, match=message):
        BayesianLogisticRegression(sampler=sampler, subsampling=strategy).fit(X, y_bin)


def test_compatible_combinations_pass_the_check():
    from skbayes_sg.fitting import check_combination
    from skbayes_sg.samplers import HMC, SGHMC, SGLD, SGNHT
    from skbayes_sg.subsampling import EWSG, Compressed, Full, Uniform

    for sampler, strategy in [(HMC(), Full()), (HMC(), Compressed()), (SGHMC(), EWSG()),
                              (SGNHT(), EWSG()), (SGLD(), Compressed(inner="ewsg")),
                              (SGHMC(integrator="aboba"), Uniform())]:
        check_combination(sampler, strategy)


def test_sparse_is_a_type_error_for_the_mlp():
    # the GLM estimators take sparse X (tests/test_sparse.py); the MLP does not
    with pytest.raises(TypeError, match="dense"):
        BayesianMLPClassifier(**FAST).fit(sp.csr_matrix(X), y_bin)


def test_divergence_is_reported_not_nan():
    from skbayes_sg.utils import DivergenceError

    with pytest.raises(DivergenceError, match="step_size"):
        BayesianLinearRegression(sampler="sghmc", step_size=50.0, subsampling="uniform",
                                 preconditioner=None, **FAST).fit(X * 100, y_reg * 100)


@pytest.mark.parametrize("n_warmup", [50, 0])
def test_auto_step_retries_a_divergence(monkeypatch, n_warmup):
    # Unstandardized inputs (~100) make a ReLU network's curvature vary far
    # beyond the pilot's estimate; an automatic step 30x too large (the rule
    # patched) diverges -- in warm-up, or while sampling without one -- is
    # quartered until it is stable, and the fit completes with finite draws
    # and the retries on record.  A user-set step is not retried.
    from skbayes_sg.fitting import _rules

    rule = _rules.auto_step_size
    monkeypatch.setattr(_rules, "auto_step_size", lambda *a, **k: 30.0 * rule(*a, **k))
    rs = np.random.RandomState(0)
    Xb, yb = rs.normal(loc=100, size=(100, 2)), rs.randint(0, 2, 100)
    kw = dict(hidden_layer_sizes=(8,), n_warmup=n_warmup, n_draws=20, thin=2, random_state=0)
    est = BayesianMLPClassifier(**kw).fit(Xb, yb)
    assert est.diagnostics_["step_size_retries"] >= 1
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


# ----------------------------------------------------------------- issue 14, item 6
# Every hyperparameter is checked before any pass over the data, with an error naming it.

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


@pytest.fixture
def no_data_pass(monkeypatch):
    """Make the first pass over the data (the mode search) fail the test."""
    from skbayes_sg.fitting import _prepare

    def find_mode(*args, **kwargs):
        raise AssertionError("the mode search ran before the parameters were checked")

    monkeypatch.setattr(_prepare, "find_mode", find_mode)


def _item6_cases():
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


@pytest.mark.parametrize("Est, params, match", _item6_cases(),
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_item6_parameters_are_refused_before_any_data_pass(no_data_pass, Est, params, match):
    y = y_reg if Est is BayesianLinearRegression else y_bin
    with pytest.raises(ValueError, match=match):
        Est(**params).fit(X, y)


@pytest.mark.parametrize("n_jobs", [None, 1, -1])
def test_n_jobs_accepts_scikit_learn_values(n_jobs):
    est = BayesianLogisticRegression(n_jobs=n_jobs, **{**FAST, "n_chains": 2})
    assert np.isfinite(est.fit(X, y_bin).draws_).all()


# ----------------------------------------------------------------- extreme prior scales

def _exact_linear(X, y, noise_std, prior_scale):
    """Conjugate posterior of ``y = X w + e`` (no intercept): mean and sds."""
    prec = X.T @ X / noise_std**2 + np.eye(X.shape[1]) / prior_scale**2
    cov = np.linalg.inv(prec)
    return cov @ X.T @ y / noise_std**2, np.sqrt(np.diag(cov))


@pytest.mark.parametrize("prior_scale", [1e-150, 1e150])
def test_extreme_prior_scales_sample_the_exact_posterior(prior_scale):
    # both ends of the valid range: the prior-dominated posterior (sd ~ 1e-150) and the
    # likelihood-dominated one (least squares) against the closed form
    rs = np.random.default_rng(1)
    Xe = rs.normal(size=(200, 3))
    ye = Xe @ [1.0, -2.0, 0.5] + rs.normal(size=200)
    reg = BayesianLinearRegression(prior_scale=prior_scale, noise_std=1.0, fit_intercept=False,
                                   normalize_y=False, n_warmup=300, n_draws=300,
                                   random_state=0).fit(Xe, ye)
    mean, sd = _exact_linear(Xe, ye, 1.0, prior_scale)
    coef = reg.sample_posterior()["coef"]
    ess = np.min(reg.diagnostics_["ess"])
    assert np.all(np.abs(coef.mean(0) - mean) / sd < 5 / np.sqrt(ess))
    assert np.all(np.abs(coef.std(0) / sd - 1) < 5 / np.sqrt(2 * ess))


@pytest.mark.parametrize("prior_scale", [1e-150, 1e150])
def test_extreme_prior_scales_logistic_mode(prior_scale):
    # 1e150: the mode is the maximum-likelihood fit; 1e-150: the prior pins it to ~0
    from sklearn.linear_model import LogisticRegression

    rs = np.random.default_rng(2)
    Xl = rs.normal(size=(300, 3))
    yl = (Xl @ [1.0, -1.0, 0.5] + rs.logistic(size=300) > 0).astype(int)
    est = BayesianLogisticRegression(prior_scale=prior_scale, **FAST).fit(Xl, yl)
    assert np.isfinite(est.draws_).all()
    coef = est.model_.unpack(est.mode_[None, :])["coef"].ravel()
    if prior_scale > 1:
        mle = LogisticRegression(penalty=None, tol=1e-12, max_iter=1000).fit(Xl, yl)
        np.testing.assert_allclose(coef, mle.coef_.ravel(), rtol=1e-4)
    else:
        assert np.all(np.abs(coef) < 1e-148)


# ----------------------------------------------------------------- finite predictions

BIG = np.finfo(float).max
EXTREME = np.array([[1e308, 0.0, 0.0], [-1e308, 0.0, 0.0], [1e308, -1e308, 0.0],
                    [BIG, BIG, -BIG], [0.5, 0.0, 1e300]])


def _check_probabilities(clf, rows):
    proba = clf.predict_proba(rows)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(rows), clf.classes_[np.argmax(proba, axis=1)])
    return proba


@pytest.mark.parametrize("n_classes", [2, 3])
def test_glm_probabilities_are_the_limit_along_the_ray(n_classes):
    # Far along x the logits are |x| (x_hat . w_k) + b_k: each draw puts all its mass on
    # argmax_k x_hat . w_k (for two classes: on class 1 iff x_hat . w > 0), so the predictive
    # probability is the fraction of draws that pick each class.
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.4, 0.4] if n_classes == 3 else [0.0])
    clf = BayesianLogisticRegression(n_predict_draws=10_000, **FAST).fit(X, y)
    proba = _check_probabilities(clf, EXTREME)
    W = clf.sample_posterior()["coef"]                           # (S, K or 1, d)
    x_hat = EXTREME / np.max(np.abs(EXTREME), axis=1, keepdims=True)
    scores = np.einsum("skd,nd->snk", W, x_hat)
    if n_classes == 2:
        expected = np.mean(scores[..., 0] > 0, axis=0)
        np.testing.assert_allclose(proba[:, 1], expected, atol=1e-12)
    else:
        picks = np.argmax(scores, axis=2)                        # (S, n)
        expected = np.stack([np.mean(picks == k, axis=0) for k in range(3)], axis=1)
        np.testing.assert_allclose(proba, expected, atol=1e-12)
    # ordinary rows are computed as before, whatever rows they come with (to rounding: BLAS
    # may pick another kernel for another number of rows)
    both = clf.predict_proba(np.vstack([X[:5], EXTREME]))
    np.testing.assert_allclose(both[:5], clf.predict_proba(X[:5]), rtol=1e-13, atol=0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_mlp_probabilities_are_finite_and_at_their_limit(n_classes):
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.4, 0.4] if n_classes == 3 else [0.0])
    clf = BayesianMLPClassifier(hidden_layer_sizes=(5,), n_warmup=50, n_draws=10, thin=2,
                                random_state=0).fit(X, y)
    proba = _check_probabilities(clf, EXTREME[:4])
    # the limit: the same probabilities 1e250 times closer in (still saturated) -- a ReLU
    # network is positively homogeneous far out, so the softmax no longer changes
    np.testing.assert_allclose(clf.predict_proba(EXTREME[:4] * 1e-250), proba, atol=1e-9)


def _exact_output(x, coef, intercept):
    """``x . coef + intercept`` in exact rational arithmetic, as the nearest float (or +-inf)."""
    from fractions import Fraction

    value = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, coef))
    value += Fraction(float(intercept))
    try:
        return float(value)
    except OverflowError:
        return np.inf if value > 0 else -np.inf


def test_regressor_predictions_never_nan():
    # coefficients ~ (3, -3, 0.5): at [1e308, 1e308, 0] each product overflows (inf - inf = nan
    # in the plain sum) but the prediction ~1e308 (w0 + w1) is representable
    y = X @ [3.0, -3.0, 0.5] + np.random.default_rng(3).normal(size=60)
    reg = BayesianLinearRegression(noise_std=1.0, **{**FAST, "n_chains": 2}).fit(X, y)
    rows = np.vstack([EXTREME, [[1e308, 1e308, 0.0]]])
    mean, std = reg.predict(rows, return_std=True)
    assert not np.isnan(mean).any() and not np.isnan(std).any()
    assert np.all(std > 0)
    expected = [_exact_output(x, reg.coef_, reg.intercept_) for x in rows]
    np.testing.assert_allclose(mean, expected, rtol=1e-8)
    assert np.isfinite(mean[-1])
    # std at x = s x_hat: s times the sd of x_hat . w over the draws (the noise, 1, and the
    # intercept's share, 1/s, are negligible at s = 1e308)
    s, coef = 1e308, reg.sample_posterior()["coef"]
    np.testing.assert_allclose(std[-1], s * np.std(coef @ (rows[-1] / s)), rtol=1e-6)
    assert not np.isnan(reg.sample_y(rows, 5, random_state=0)).any()


# ----------------------------------------------------------------- the scale of y

def test_a_huge_y_is_standardized_without_overflow():
    # normalize_y makes the fit equivariant in y's scale: y and 1e190 y give the same chains;
    # with one value of 1e200, np.std(y) overflows and must not reach the model
    y1 = y_reg.copy()
    y1[0] = 1e10
    y2 = y1 * 1e190
    kw = {**FAST, "n_chains": 2}
    reg1 = BayesianLinearRegression(**kw).fit(X, y1)
    reg2 = BayesianLinearRegression(**kw).fit(X, y2)
    assert np.isfinite(reg2.y_scale_) and np.isfinite(reg2.coef_).all()
    np.testing.assert_allclose(reg2.coef_, 1e190 * reg1.coef_, rtol=1e-6)
    np.testing.assert_allclose(reg2.y_scale_, 1e190 * reg1.y_scale_, rtol=1e-12)
    with pytest.raises(ValueError, match="normalize_y=True"):
        BayesianLinearRegression(normalize_y=False, **kw).fit(X, y2)


def test_location_scale_oracle():
    from skbayes_sg.utils import location_scale, standardize

    y = np.array([1.0, -2.0, 4.0, 0.5])
    for c in (1.0, 1e300, 1e-300):
        mean, scale = location_scale(y * c)
        np.testing.assert_allclose([mean, scale], [np.mean(y) * c, np.std(y) * c], rtol=1e-14)
        np.testing.assert_allclose(standardize(y * c, mean, scale),
                                   (y - y.mean()) / y.std(), rtol=1e-13)
    assert location_scale(np.array([3.0, 3.0])) == (3.0, 1.0)
    assert location_scale(y, center=False) == (0.0, np.std(y))
    z = standardize(np.array([BIG, -BIG]), *location_scale(np.array([BIG, -BIG])))
    np.testing.assert_allclose(z, [1.0, -1.0])


# ----------------------------------------------------------------- messages and warnings

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


@pytest.mark.parametrize("n_classes", [2, 3])
def test_decision_function_never_nan(n_classes):
    # coefficients of both signs above 1: at [BIG, BIG] the two products overflow with opposite
    # signs (inf - inf, or one inf first) although the score is finite; exact rationals decide
    y = np.digitize(X[:, 0] - X[:, 1], [-0.4, 0.4] if n_classes == 3 else [0.0])
    clf = BayesianLogisticRegression(**FAST).fit(X * 5, y)
    rows = np.vstack([EXTREME, [[BIG, BIG, 0.0], [BIG, -BIG, 1.0], [-BIG, BIG, 0.0]]])
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.isfinite(rows @ clf.coef_.T).all()  # the plain product overflows
    scores = clf.decision_function(rows).reshape(len(rows), -1)
    assert not np.isnan(scores).any()
    for k in range(scores.shape[1]):
        expected = [_exact_output(x, clf.coef_[k], clf.intercept_[k]) for x in rows]
        np.testing.assert_allclose(scores[:, k], expected, rtol=1e-8)
