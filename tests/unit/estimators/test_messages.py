"""What a person reads: the library's own warning classes, every warning in at most three short
lines, ``verbose`` true to what ran, advice that names a number the user can reproduce, and
small surprises (dtypes, labels, float32 draws)."""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.preprocessing import StandardScaler

import skbayes_sg
from skbayes_sg import (ApproximationWarning, BayesianLinearRegression,
                        BayesianLogisticRegression, BayesianMLPClassifier, ConvergenceWarning,
                        SkbayesSGWarning)
from skbayes_sg.models import GaussianPrior, LogisticModel, Posterior
from skbayes_sg.preprocessing._mode import lbfgs_mode
from skbayes_sg.subsampling import Compressed, Uniform

SHORT = dict(n_warmup=20, n_draws=30, n_chains=2, max_doublings=0, random_state=0)


def _caught(fit):
    """The library's warnings emitted by ``fit()``, every one recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, SkbayesSGWarning)]


@pytest.fixture(scope="module")
def small():
    return make_classification(400, 5, random_state=0)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=120, centers=3, cluster_std=2.0, random_state=0)
    return (X - X.mean(0)) / X.std(0), y


# ---------------------------------------------------------------- 1. the library's own classes

def test_warning_classes_are_the_librarys_own():
    assert issubclass(ConvergenceWarning, SkbayesSGWarning)
    assert issubclass(ApproximationWarning, SkbayesSGWarning)
    assert issubclass(SkbayesSGWarning, UserWarning)
    assert not issubclass(ConvergenceWarning, SklearnConvergenceWarning)
    assert skbayes_sg.ConvergenceWarning is skbayes_sg.utils.ConvergenceWarning
    assert {"ConvergenceWarning", "ApproximationWarning", "SkbayesSGWarning"} <= set(dir(skbayes_sg))


def test_filtering_sklearns_convergence_warning_leaves_the_librarys(small):
    X, y = small
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", SklearnConvergenceWarning)  # as for MLPClassifier
        BayesianLogisticRegression(sampler="sghmc", **SHORT).fit(X, y)
    assert [w for w in caught if w.category is ConvergenceWarning]
    # and the library's base class silences all of the library's warnings at once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", SkbayesSGWarning)
        BayesianLogisticRegression(sampler="sghmc", **SHORT).fit(X, y)
    assert not [w for w in caught if issubclass(w.category, SkbayesSGWarning)]


# ------------------------------------------------------------ 2. every warning, three lines

def _mode_search(cancer):
    X, y = cancer
    model = LogisticModel(X.shape[1], 2)
    lbfgs_mode(Posterior(model, GaussianPrior(model.prior_precision(1.0, 10.0)), X, y),
               max_iter=1)


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def _well_conditioned():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 20)) * 2.0 / np.sqrt(2000)
    return X, X @ rng.normal(size=20) + rng.normal(size=2000)


# (case, fit, the category and a phrase every such warning must carry)
CASES = {
    "too few draws": (lambda d: BayesianLogisticRegression(
        n_warmup=50, n_draws=2, n_chains=2, random_state=0).fit(*d["cancer"]),
        ConvergenceWarning, "undefined (fewer than 4 draws per chain"),
    "short run": (lambda d: BayesianLogisticRegression(sampler="sghmc", **SHORT).fit(*d["small"]),
                  ConvergenceWarning, "R-hat above 1.01"),
    "stalled run": (lambda d: BayesianLogisticRegression(
        sampler="sgld", step_size=1e-6, n_warmup=10, n_draws=200, n_chains=2,
        random_state=0).fit(*d["small"]), ConvergenceWarning, "stopped early"),
    "user step": (lambda d: BayesianLogisticRegression(step_size=1.0, **SHORT).fit(*d["cancer"]),
                  ApproximationWarning, "step_size='auto' gives"),
    "minibatch noise": (lambda d: BayesianLogisticRegression(
        subsampling="uniform", batch_size=100, **SHORT).fit(*d["noisy"]),
        ConvergenceWarning, "increase batch_size"),
    "mlp": (lambda d: BayesianMLPClassifier(
        hidden_layer_sizes=(4,), n_warmup=0, n_draws=10, thin=1, max_doublings=0,
        random_state=0).fit(*d["blobs"]), ConvergenceWarning, "Pooled predictive Monte-Carlo"),
    "softmax": (lambda d: BayesianLogisticRegression(**SHORT).fit(*d["blobs"]),
                ConvergenceWarning, "identified R-hat"),
    "compressed": (lambda d: BayesianLinearRegression(
        subsampling=Compressed(radius=0.5), noise_std=1.0, sampler="hmc",
        **SHORT).fit(*_diabetes()), ApproximationWarning, "smaller radius"),
    "shared plain": (lambda d: BayesianLinearRegression(
        subsampling=Uniform(shared_minibatch=True), sampler="sgld", preconditioner=None,
        batch_size=100, noise_std=1.0, **SHORT).fit(*_well_conditioned()),
        ApproximationWarning, "not independent"),
    "mode search": (lambda d: _mode_search(d["cancer"]), ConvergenceWarning, "prior_scale"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_warning_is_three_short_lines(case, cancer, small, noisy_logistic, blobs):
    fit, category, phrase = CASES[case]
    data = {"cancer": cancer, "small": small, "noisy": noisy_logistic, "blobs": blobs}
    caught = _caught(lambda: fit(data))
    assert [w for w in caught if w.category is category and phrase in str(w.message)], \
        [str(w.message) for w in caught]
    for w in caught:
        text = str(w.message)
        assert len(text) <= 300 and text.count("\n") <= 2, text
        assert max(len(line) for line in text.split("\n")) <= 110, text


def test_convergence_warning_keeps_the_figures_and_summary_the_details(small):
    X, y = small
    est = BayesianLogisticRegression(sampler="sghmc", **SHORT)
    text = str(next(w.message for w in _caught(lambda: est.fit(X, y))
                    if w.category is ConvergenceWarning))
    d = est.diagnostics_
    assert f"max {np.nanmax(d['rhat']):.3f}" in text  # the verdict's largest R-hat
    ess_min = np.nanmin(np.minimum(d["ess"], d["ess_tail"]))
    assert f"ESS below 200 (min {ess_min:.0f})" in text
    assert re.search(r"Run about [\d.]+x longer: increase n_draws", text)
    # the full sentences stay in diagnostics_ and summary()
    assert len(" ".join(d["convergence_problems"])) > len(text)
    assert est.summary().warnings[:len(d["convergence_problems"])] == list(
        d["convergence_problems"])


def test_noise_advice_names_the_step_that_ran(noisy_logistic):
    X, y = noisy_logistic
    est = BayesianLogisticRegression(subsampling="uniform", batch_size=100, **SHORT)
    text = str(next(w.message for w in _caught(lambda: est.fit(X, y))
                    if w.category is ConvergenceWarning))
    assert f"forced a step of {est.diagnostics_['step_size']:.2g}" in text
    assert "subsampling='preferential_cv'" in text  # uniform was named: the better strategy


# ------------------------------------------------- 4. advice that names a reproducible number

@pytest.mark.parametrize("data, params", [
    ("cancer", dict(step_size=1.0)),                                          # sampler="auto"
    ("small", dict(sampler="sgld", step_size=5.0, n_warmup=0)),              # a named sampler
    ("noisy_logistic", dict(sampler="sghmc", subsampling="control_variates", batch_size=100,
                   step_size=0.9)),                                           # noise subtracted
])
def test_step_advice_is_what_auto_runs(data, params, request):
    X, y = request.getfixturevalue(data)
    kw = {**SHORT, "n_draws": 4, **params}
    est = BayesianLogisticRegression(**kw)
    texts = [str(w.message) for w in _caught(lambda: _fit_or_diverge(est, X, y))
             if w.category is ApproximationWarning]
    found = re.search(r"step_size='auto' gives ([\d.e+-]+) for sampler='(\w+)'.*, "
                      r"batch_size=(\d+) here", texts[0])
    step, sampler, batch = float(found[1]), found[2], int(found[3])
    auto = BayesianLogisticRegression(**{**kw, "step_size": "auto", "sampler": sampler,
                                         "batch_size": batch})
    _caught(lambda: auto.fit(X, y))
    assert auto.diagnostics_["step_size"] == pytest.approx(step, rel=5e-3)


def _fit_or_diverge(est, X, y):
    from skbayes_sg import DivergenceError
    try:
        est.fit(X, y)
    except DivergenceError:  # a step that unstable may diverge; the warning came first
        pass


# ------------------------------------------------------------------ 3. verbose true to what ran

def _verbose_fit(est, X, y, capsys):
    capsys.readouterr()
    _caught(lambda: est.fit(X, y))
    return capsys.readouterr().out.splitlines()


def test_verbose_names_the_sampler_gradient_and_step_that_ran(cancer, capsys):
    X, y = cancer
    est = BayesianLogisticRegression(n_warmup=50, n_draws=50, n_chains=2, random_state=0,
                                     verbose=1)
    lines = _verbose_fit(est, X, y, capsys)
    d = est.diagnostics_
    assert d["sampler"] == "hmc" and d["subsampling"] == "full"  # what "auto" ran here
    first = next(line for line in lines if "preprocessing done" in line)
    assert "of hmc on the full gradient, step adapted from " in first
    assert f"step {d['step_size']:.3g};" in lines[-1]  # the adapted step, at the end
    sgd = BayesianLogisticRegression(sampler="sghmc", subsampling="control_variates",
                                     batch_size=64, n_warmup=50, n_draws=50, n_chains=2,
                                     random_state=0, verbose=1)
    lines = _verbose_fit(sgd, X, y, capsys)
    d = sgd.diagnostics_
    assert (f"of sghmc on control_variates minibatches of 64, step {d['step_size']:.3g}"
            in lines[0])


def test_verbose_reports_the_rhat_the_verdict_used(blobs, capsys):
    X, y = blobs
    mlp = BayesianMLPClassifier(hidden_layer_sizes=(4,), n_warmup=200, n_draws=100, thin=1,
                                max_doublings=0, random_state=0, verbose=1)
    last = _verbose_fit(mlp, X, y, capsys)[-1]
    d = mlp.diagnostics_
    # the raw weights' figures differ (so the line cannot be right by accident)
    assert np.nanmax(d["predictive_rhat"]) < np.nanmax(d["rhat"]) - 0.1
    assert f"predictive R-hat max {np.nanmax(d['predictive_rhat']):.3f}" in last
    assert f"predictive bulk ESS min {np.nanmin(d['predictive_ess']):.0f}" in last
    assert f"pooled predictive Monte-Carlo error {d['pooled_error']:.3g}" in last
    assert last.endswith(("not converged; see summary()", ": converged; see summary()"))


# ------------------------------------------------------------------------- 5. small surprises

FIT = dict(sampler="sghmc", n_warmup=50, n_draws=50, n_chains=2, random_state=0)


@pytest.mark.parametrize("Est, kw", [(BayesianLogisticRegression, FIT),
                                     (BayesianMLPClassifier, dict(hidden_layer_sizes=(4,),
                                                                  n_warmup=20, n_draws=20,
                                                                  random_state=0))])
def test_predict_proba_has_the_dtype_of_x_as_scikit_learns(Est, kw, blobs):
    from sklearn.linear_model import LogisticRegression
    X, y = blobs
    X32 = X.astype(np.float32)
    est = Est(**kw)
    _caught(lambda: est.fit(X, y))
    assert LogisticRegression().fit(X32, y).predict_proba(X32).dtype == np.float32  # the oracle
    p32, p64 = est.predict_proba(X32), est.predict_proba(X)
    assert p32.dtype == np.float32 and p64.dtype == np.float64
    np.testing.assert_allclose(p32, p64, atol=1e-5)
    log32 = est.predict_log_proba(X32)
    assert log32.dtype == np.float32 and np.all(np.isfinite(log32))


def test_multiclass_centred_rows_carry_the_feature_names(blobs):
    pd = pytest.importorskip("pandas")
    X, y = blobs
    frame = pd.DataFrame(X, columns=["width", "height"])
    est = BayesianLogisticRegression(**FIT)
    _caught(lambda: est.fit(frame, y))
    text = est.summary().group_table("coef_centred")
    assert "coef_centred[0,width]" in text and "coef_centred[2,height]" in text
    assert "coef[1,height]" in est.summary().group_table("coef")
    pytest.importorskip("arviz")
    idata = est.to_inference_data()
    assert list(idata.posterior["coef_centred"].coords["feature"].values) == ["width", "height"]


def test_exported_log_likelihood_is_exact_where_loo_is_nan(cancer):
    """ArviZ's PSIS gives a NaN elpd_loo on a row whose log-likelihood is constant to ~1e-12
    over the draws (documented in diagnostics.md); the log-likelihood itself is right."""
    X, y = cancer
    est = BayesianLogisticRegression(**{**FIT, "n_draws": 200})
    _caught(lambda: est.fit(X, y))
    ll = est.log_likelihood(X, y)
    draws = est.sample_posterior()  # pooled, chain-major: the order of log_likelihood
    z = X @ draws["coef"][:, 0].T + draws["intercept"][:, 0]  # (n, S): logit of class 1
    t = np.where(y == 1, 1.0, -1.0)[:, None]
    exact = -np.logaddexp(0.0, -t * z).T  # log sigmoid(t z), accurate where it is ~ -1e-47
    np.testing.assert_allclose(ll.reshape(-1, X.shape[0]), exact, rtol=1e-9, atol=0)
    assert np.all(ll < 0) and np.abs(ll).max(axis=(0, 1)).min() < 1e-10  # near-certain rows
    # the workaround diagnostics.md gives: such rows' elpd_i is their log mean likelihood
    az = pytest.importorskip("arviz")
    from scipy.special import logsumexp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(est.to_inference_data(X, y), pointwise=True)
    flat = ll.reshape(-1, X.shape[0])
    elpd_i = np.where(np.isnan(loo.loo_i), logsumexp(flat, axis=0) - np.log(len(flat)),
                      loo.loo_i)
    assert np.all(np.isfinite(elpd_i)) and elpd_i.sum() < 0


def test_float32_draws_halve_memory_and_keep_predictions(cancer):
    X, y = cancer
    d64 = BayesianLogisticRegression(**FIT)
    d32 = BayesianLogisticRegression(**FIT, draws_dtype="float32")
    _caught(lambda: (d64.fit(X, y), d32.fit(X, y)))
    assert d32.draws_.dtype == np.float32 and d64.draws_.dtype == np.float64
    assert d32.draws_.nbytes * 2 == d64.draws_.nbytes
    np.testing.assert_array_equal(d32.draws_, d64.draws_.astype(np.float32))  # same chains
    np.testing.assert_array_equal(d32.coef_, d64.coef_)  # summaries from the float64 draws
    np.testing.assert_allclose(d32.predict_proba(X), d64.predict_proba(X), atol=1e-6)
    reg64 = BayesianLinearRegression(**FIT)
    reg32 = BayesianLinearRegression(**FIT, draws_dtype="float32")
    _caught(lambda: (reg64.fit(X, X[:, 0] + y), reg32.fit(X, X[:, 0] + y)))
    for a, b in zip(reg32.predict(X, return_std=True), reg64.predict(X, return_std=True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="draws_dtype"):
        BayesianLogisticRegression(draws_dtype="float16").fit(X, y)
