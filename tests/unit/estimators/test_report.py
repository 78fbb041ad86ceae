"""summary(), stein_discrepancy() and to_inference_data() of the fitted estimators."""

import copy
import sys

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.diagnostics import RHAT_MAX, kernel_stein_discrepancy, summarize

COLUMNS = ["mean", "sd", "q5", "q50", "q95", "ess_bulk", "ess_tail", "rhat"]


@pytest.fixture(scope="module")
def logistic(cancer):
    """A long, good fit: 4 chains x 1000 draws after 500 warm-up steps."""
    return BayesianLogisticRegression(random_state=0).fit(*cancer)


@pytest.fixture(scope="module")
def linear():
    X, y = load_diabetes(return_X_y=True)
    X, y = StandardScaler().fit_transform(X), (y - y.mean()) / y.std()
    return BayesianLinearRegression(n_draws=300, random_state=0).fit(X, y), X, y


def test_summary_groups_columns_and_shapes(logistic):
    report = logistic.summary()
    assert list(report.groups) == ["coef", "intercept"]
    for name, shape in [("coef", logistic.coef_.shape), ("intercept", logistic.intercept_.shape)]:
        assert list(report[name]) == COLUMNS
        assert all(v.shape == shape for v in report[name].values())
    np.testing.assert_allclose(report["coef"]["mean"], logistic.coef_)
    assert np.all(report["coef"]["q5"] < report["coef"]["q95"])
    assert report.cost["n_grad_evals"] == logistic.diagnostics_["n_grad_evals"]
    assert set(report.to_dict()) == {"groups", "cost", "warnings"}


def test_summary_matches_diagnostics_summarize(logistic):
    report = logistic.summary(quantiles=(0.1, 0.9))
    expected = summarize(logistic.draws_[:, :, :30], quantiles=(0.1, 0.9))
    for key in ["mean", "sd", "q10", "q90", "ess_bulk", "ess_tail", "rhat"]:
        np.testing.assert_allclose(report["coef"][key].ravel(), expected[key])


def test_large_groups_reuse_fit_diagnostics(logistic):
    reusing = copy.copy(logistic)
    reusing._summary_reuse_above = 5  # force the fast path for coef
    report = reusing.summary()
    expected = summarize(logistic.draws_[:, :, :30])
    for key in ["mean", "sd", "q5", "q95", "ess_bulk", "ess_tail", "rhat"]:
        np.testing.assert_allclose(report["coef"][key].ravel(), expected[key])
    text = str(report)
    assert "coef (1, 30): 30 parameters, the 5 with the highest R-hat" not in text  # <= max_rows
    assert "the 5 with the highest R-hat" in logistic.summary(max_rows=10).group_table("coef")


def test_summary_text(logistic):
    text = str(logistic.summary())
    for piece in ["BayesianLogisticRegression: 4 chains x 1000 draws, 31 parameters",
                  "coef (1, 30)", "coef[0,29]", "intercept (1,)", "ess_bulk", "rhat",
                  "cost:", "gradient evaluations", "data passes"]:
        assert piece in text
    assert repr(logistic.summary()) == text


def test_linear_summary_has_noise_on_natural_scale(linear):
    est, _, _ = linear
    report = est.summary()
    assert list(report.groups) == ["coef", "intercept", "noise_std"]
    assert report["coef"]["mean"].shape == (10,) and report["noise_std"]["mean"].shape == ()
    # both are the posterior mean E[noise_std] (not exp E[log noise_std])
    np.testing.assert_allclose(report["noise_std"]["mean"], est.noise_std_, rtol=1e-12)
    assert "noise_std" in str(report)


def test_warnings_in_plain_words_for_bad_chains(linear):
    _, X, y = linear
    bad = BayesianLinearRegression(step_size=1e-4, n_warmup=0, n_draws=20, n_chains=2,
                                   random_state=0)
    with pytest.warns(Warning):
        bad.fit(X, y)
    report = bad.summary()
    assert not report.converged
    text = str(report)
    assert "warnings:" in text and "Run longer" in text
    assert any(w.startswith(f"R-hat above {RHAT_MAX} for") and "of 12 parameters" in w
               for w in report.warnings)
    assert any(w.startswith("bulk ESS below 200") for w in report.warnings)  # 100 per chain


def test_mlp_summary_and_stein():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), n_warmup=0, n_draws=10, thin=1,
                                random_state=0)
    with pytest.warns(Warning, match="Pooled predictive Monte-Carlo error"):
        mlp.fit(X, y)
    report = mlp.summary()
    assert list(report.groups) == ["coef_0", "intercept_0", "coef_1", "intercept_1"]
    assert report["coef_0"]["rhat"].shape == (4, 8)
    # the verdict is the pooled predictive's Monte-Carlo error on training rows
    error = mlp.diagnostics_["pooled_error"]
    assert error > mlp.diagnostics_["pooled_error_tolerance"]
    assert f"Monte-Carlo error is {error:.3g}" in " ".join(report.warnings)
    assert mlp.diagnostics_["predictive_rhat"].shape == (100,)  # 100 of iris' 150 rows
    assert np.isfinite(mlp.stein_discrepancy(X, y, n_draws=30))


def test_stein_discrepancy_lower_for_good_draws_than_shifted(logistic, cancer):
    X, y = cancer
    ksd = logistic.stein_discrepancy(X, y, n_draws=300, random_state=0)
    theta = logistic.draws_.reshape(-1, logistic.draws_.shape[-1])
    theta = theta[np.random.default_rng(0).choice(theta.shape[0], 300, replace=False)]
    shifted = theta + 3.0 * theta.std(axis=0)
    t = np.where(y == 1, 1.0, -1.0)
    scores = -(logistic.model_.grad_sum(shifted, X, t) + logistic.prior_.grad(shifted))
    assert np.isfinite(ksd) and ksd > 0
    assert ksd < kernel_stein_discrepancy(shifted, scores) / 3


def test_stein_discrepancy_uses_labels_and_regression_targets(logistic, cancer, linear):
    X, y = cancer
    labels = np.array(["benign", "malignant"])
    named = BayesianLogisticRegression(n_warmup=50, n_draws=50, n_chains=2, random_state=0)
    coded = BayesianLogisticRegression(n_warmup=50, n_draws=50, n_chains=2, random_state=0)
    with pytest.warns(Warning):
        named.fit(X, labels[y])
        coded.fit(X, y)
    assert named.stein_discrepancy(X, labels[y], 100) == coded.stein_discrepancy(X, y, 100)
    with pytest.raises(ValueError, match="not seen in fit"):
        named.stein_discrepancy(X, np.where(y == 1, "other", "benign"))
    est, Xl, yl = linear
    assert np.isfinite(est.stein_discrepancy(Xl, yl, n_draws=200))


def test_methods_need_a_fitted_estimator():
    est = BayesianLogisticRegression()
    for call in [est.summary, lambda: est.stein_discrepancy([[0.0]], [0]),
                 est.to_inference_data]:
        with pytest.raises(NotFittedError):
            call()


def test_to_inference_data(logistic, linear):
    pytest.importorskip("arviz")
    idata = logistic.to_inference_data()
    C, D, _ = logistic.draws_.shape
    assert idata.posterior["coef"].shape == (C, D, 1, 30)
    assert idata.posterior["coef"].dims[:2] == ("chain", "draw")
    assert idata.posterior["intercept"].shape == (C, D, 1)
    assert idata.sample_stats["step_size"].shape == (C, D)
    post = linear[0].to_inference_data().posterior
    assert set(post.data_vars) == {"coef", "intercept", "noise_std"}
    np.testing.assert_allclose(post["noise_std"].values.mean(), linear[0].noise_std_, rtol=1e-2)


def test_to_inference_data_without_arviz(logistic, monkeypatch):
    monkeypatch.setitem(sys.modules, "arviz", None)  # makes `import arviz` fail
    with pytest.raises(ImportError, match="to_inference_data needs ArviZ: pip install arviz"):
        logistic.to_inference_data()
