"""Behaviour of the estimators inside the scikit-learn ecosystem: pipelines, grid searches,
clone and pickle, shapes, determinism.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, make_blobs
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.samplers import SGHMC
from skbayes_sg.utils import ConvergenceWarning

from support.settings import FAST


def test_pipeline_and_cross_val_score(cancer):
    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), BayesianLogisticRegression(**FAST))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.93


def test_grid_search_prior_scale_and_sampler(cancer):
    X, y = cancer
    grid = GridSearchCV(BayesianLogisticRegression(**FAST),
                        {"prior_scale": [0.1, 1.0], "sampler": ["sgld", "sghmc", "sgnht"]},
                        cv=2)
    grid.fit(X, y)
    assert set(grid.best_params_) == {"prior_scale", "sampler"}
    assert grid.best_score_ > 0.9


def test_grid_search_sampler_object_params(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(sampler=SGHMC(), **FAST)
    grid = GridSearchCV(est, {"sampler__friction": [0.5, 2.0]}, cv=2).fit(X, y)
    assert grid.best_params_["sampler__friction"] in (0.5, 2.0)
    assert est.sampler.friction == 1.0  # the original object is untouched


def test_clone_and_pickle_round_trip(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(**FAST).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clf.predict_proba(X), again.predict_proba(X))
    fresh = clone(clf)
    assert not hasattr(fresh, "draws_")
    assert fresh.get_params() == clf.get_params()


def test_string_labels_and_multiclass():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = make_pipeline(StandardScaler(), BayesianLogisticRegression(**FAST)).fit(X, names)
    pred = clf.predict(X)
    assert pred.dtype.kind == "U" and (pred == names).mean() > 0.9
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    est = clf[-1]
    assert est.coef_.shape == (3, 4) and est.intercept_.shape == (3,)
    draws = est.sample_posterior(7, random_state=1)
    assert draws["coef"].shape == (7, 3, 4) and draws["intercept"].shape == (7, 3)


def test_binary_shapes(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(**FAST).fit(X, y)
    assert clf.coef_.shape == (1, X.shape[1]) and clf.intercept_.shape == (1,)
    assert clf.predict_proba(X).shape == (X.shape[0], 2)
    assert clf.sample_posterior()["coef"].shape == (200, 1, X.shape[1])
    assert clf.sample_posterior(500, random_state=0)["coef"].shape == (500, 1, X.shape[1])
    for key in ("ess", "rhat", "step_size", "n_grad_evals", "data_passes",
                "preprocessing_seconds", "sampling_seconds"):
        assert key in clf.diagnostics_


def test_regressor_predict_std_and_sample_y():
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y = (y - y.mean()) / y.std()
    reg = BayesianLinearRegression(**FAST).fit(X, y)
    mean, std = reg.predict(X[:5], return_std=True)
    assert mean.shape == std.shape == (5,)
    # predictive sd >= the noise sd and close to it for this amount of data
    assert np.all(std > 0.9 * reg.noise_std_) and np.all(std < 1.5 * reg.noise_std_)
    ys = reg.sample_y(X[:5], n_samples=400, random_state=0)
    assert ys.shape == (5, 400)
    np.testing.assert_allclose(ys.std(1), std, rtol=0.2)
    np.testing.assert_allclose(ys.mean(1), mean, atol=4 * std.max() / 20)
    draws = reg.sample_posterior(3, random_state=0)
    assert draws["coef"].shape == (3, 10) and draws["intercept"].shape == (3,)
    assert draws["noise_std"].shape == (3,)
    assert reg.score(X, y) > 0.45


def test_predict_is_deterministic(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(**FAST).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), clf.predict_proba(X))


def test_mlp_digits_like_blobs():
    X, y = make_blobs(n_samples=300, centers=3, n_features=5, random_state=0)
    clf = BayesianMLPClassifier(hidden_layer_sizes=(10,), n_warmup=200, n_draws=30,
                                random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.95
    assert [c.shape for c in clf.coefs_] == [(5, 10), (10, 3)]
    draws = clf.sample_posterior(4, random_state=0)
    assert draws["coef_0"].shape == (4, 5, 10) and draws["intercept_1"].shape == (4, 3)


def test_float32_input_stays_float32(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(**FAST).fit(X.astype(np.float32), y)
    assert clf.predict_proba(X.astype(np.float32)).shape == (X.shape[0], 2)


def test_too_few_draws_warns_and_reports_nan(cancer):
    X, y = cancer
    with pytest.warns(ConvergenceWarning, match="undefined .fewer than 4 draws per chain"):
        clf = BayesianLogisticRegression(n_warmup=50, n_draws=2, n_chains=2,
                                         random_state=0).fit(X, y)
    assert np.isnan(clf.diagnostics_["rhat"]).all() and np.isnan(clf.diagnostics_["ess"]).all()
    assert clf.predict_proba(X[:3]).shape == (3, 2)
    assert "coef" in str(clf.summary())


def test_inferred_noise_std_is_posterior_mean_of_sigma():
    X, y = load_diabetes(return_X_y=True)
    X, y = StandardScaler().fit_transform(X), (y - y.mean()) / y.std()
    reg = BayesianLinearRegression(n_draws=200, random_state=0).fit(X, y)
    sigma = reg.sample_posterior()["noise_std"]
    assert reg.noise_std_ == pytest.approx(sigma.mean(), rel=1e-12)


def test_noise_dominated_fit_says_what_to_do():
    # heavy-tailed features: a few rows dominate, so minibatches of 10 are very noisy
    rng = np.random.default_rng(0)
    X = rng.standard_t(1.5, size=(5000, 5))
    X = (X - X.mean(0)) / X.std(0)
    y = (X[:, 0] + rng.logistic(size=5000) > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="increase batch_size"):
        BayesianLogisticRegression(subsampling="control_variates", batch_size=10,
                                   n_warmup=100, n_draws=100, random_state=0).fit(X, y)
