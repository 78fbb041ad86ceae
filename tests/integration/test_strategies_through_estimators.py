"""Every subsampling strategy through the three estimators: fits, grid searches over its
parameters, its errors.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, make_blobs
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.subsampling import (
    EWSG,
    SUBSAMPLING,
    SVRG,
    Adaptive,
    Compressed,
    Preferential,
    PreferentialCV,
    Stratified,
)

from support.settings import SUBSAMPLED


STRATEGIES = {"preferential": Preferential(), "preferential_cv": PreferentialCV(),
              "adaptive": Adaptive()}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_preferential_through_estimators(strategy, cancer):
    X, y = cancer
    assert SUBSAMPLING[strategy] is type(STRATEGIES[strategy])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = BayesianLogisticRegression(subsampling=strategy, **SUBSAMPLED).fit(X, y)
        assert clf.score(X, y) > 0.95
        Xr = X[:, :5]
        reg = BayesianLinearRegression(subsampling=strategy, sampler="sgld", **SUBSAMPLED).fit(
            Xr, Xr @ np.arange(5.0) + np.random.default_rng(0).normal(size=len(Xr)))
        assert reg.score(Xr, Xr @ np.arange(5.0)) > 0.9
        Xb, yb = make_blobs(n_samples=300, centers=3, n_features=4, random_state=0)
        mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=strategy,
                                    n_warmup=200, n_draws=30, random_state=0).fit(Xb, yb)
        assert mlp.score(Xb, yb) > 0.9
    p = clf.preprocessing_["subsampling_weights"]
    assert p.shape == (X.shape[0],) and np.all(p > 0) and abs(p.sum() - 1) < 1e-12
    assert clf.preprocessing_["preferential_uniform_mix"] == 0.1
    per_step = clf.diagnostics_["grad_evals_per_step"]
    if strategy == "adaptive":
        assert 1 <= per_step <= clf.preprocessing_["adaptive_n_max"]
        assert 1 <= mlp.diagnostics_["grad_evals_per_step"] / 2 <= 1000
    else:
        assert per_step == 100 and mlp.diagnostics_["grad_evals_per_step"] == 100 * (
            2 if strategy == "preferential_cv" else 1)


def test_grid_search_over_uniform_mix(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(subsampling=PreferentialCV(), **SUBSAMPLED)
    grid = GridSearchCV(est, {"subsampling__uniform_mix": [0.05, 0.5]}, cv=2).fit(X, y)
    assert grid.best_params_["subsampling__uniform_mix"] in (0.05, 0.5)
    assert grid.best_estimator_.preprocessing_["preferential_uniform_mix"] in (0.05, 0.5)
    assert est.subsampling.uniform_mix == 0.1  # the original object is untouched
    assert Adaptive().get_params() == {"uniform_mix": 0.1, "n_min": 1, "n_max": None,
                                       "V0": None, "n_pilot": 1000}
    assert Preferential().get_params() == {"uniform_mix": 0.1, "correction": "plain",
                                           "shared_minibatch": False}


@pytest.mark.parametrize("strategy, sampler", [("svrg", "sghmc"), ("svrg", "sgld"),
                                               ("ewsg", "sghmc"), ("ewsg", "sgnht")])
def test_svrg_ewsg_through_estimators(strategy, sampler, cancer):
    X, y = cancer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = BayesianLogisticRegression(subsampling=strategy, sampler=sampler,
                                         **SUBSAMPLED).fit(X, y)
        assert clf.score(X, y) > 0.95
        Xr = X[:, :5]
        reg = BayesianLinearRegression(subsampling=strategy, sampler=sampler, **SUBSAMPLED).fit(
            Xr, Xr @ np.arange(5.0) + np.random.default_rng(0).normal(size=len(Xr)))
        assert reg.score(Xr, Xr @ np.arange(5.0)) > 0.9
        Xb, yb = make_blobs(n_samples=300, centers=3, n_features=4, random_state=0)
        mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=strategy,
                                    sampler=sampler, n_warmup=200, n_draws=30,
                                    random_state=0).fit(Xb, yb)
        assert mlp.score(Xb, yb) > 0.9
    d, pre, n_steps = clf.diagnostics_, clf.preprocessing_, 200
    if strategy == "svrg":
        N, b = X.shape[0], d["batch_size"]
        tau = max(1, N // (10 * b))  # n1 = min(N, 100 b) = N: the exact anchor
        assert pre["anchor_batch_size"] == pre["svrg_n1"] == N
        assert pre["anchor_update_every"] == tau
        # per chain: a refresh of N rows every tau steps, 2b rows on the other steps
        refreshes = -(-n_steps // tau)
        assert d["sampling_grad_evals"] == 2 * (refreshes * N + (n_steps - refreshes) * 2 * b)
    else:
        assert pre["ewsg_evals_per_step"] == 200
        assert d["sampling_grad_evals"] == 2 * n_steps * 200


def test_grid_search_over_svrg_params(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(subsampling=SVRG(), **SUBSAMPLED)
    grid = GridSearchCV(est, {"subsampling__n1": [150, 250],
                              "subsampling__update_every": [2, 5]}, cv=2).fit(X, y)
    assert grid.best_params_["subsampling__n1"] in (150, 250)
    assert grid.best_estimator_.preprocessing_["anchor_batch_size"] in (150, 250)
    assert est.subsampling.n1 is None  # the original object is untouched
    grid = GridSearchCV(BayesianLogisticRegression(subsampling=EWSG(), **SUBSAMPLED),
                        {"subsampling__n_index_steps": [1, 3]}, cv=2).fit(X, y)
    assert grid.best_score_ > 0.9


@pytest.mark.parametrize("sub", ["stratified", Stratified(n_clusters=5, features="x")],
                         ids=["string", "object"])
def test_stratified_through_all_estimators(sub, cancer):
    X, y = cancer
    Xd, yd = load_diabetes(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [BayesianLogisticRegression(subsampling=sub, **SUBSAMPLED).fit(X, y),
                BayesianLinearRegression(subsampling=sub, **SUBSAMPLED).fit(
                    StandardScaler().fit_transform(Xd), (yd - yd.mean()) / yd.std()),
                BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=sub,
                                      **SUBSAMPLED).fit(X, y)]
    k = 20 if isinstance(sub, str) else 5
    for est, n_rows in zip(fits, [X.shape[0], Xd.shape[0], X.shape[0]]):
        pre = est.preprocessing_
        assert pre["n_strata"] == k and pre["batch_allocation"].sum() == 100
        assert pre["strata_sizes"].sum() == n_rows
        assert {"kmeans_seconds", "kmeans_inertia", "kmeans_iterations"} <= set(pre)
        assert np.isfinite(est.draws_).all()


def test_grid_search_n_clusters_and_samplers(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(subsampling=Stratified(), sampler="sgld", **SUBSAMPLED)
    grid = GridSearchCV(est, {"subsampling__n_clusters": [2, 8]}, cv=2).fit(X, y)
    assert grid.best_params_["subsampling__n_clusters"] in (2, 8)
    assert grid.best_estimator_.preprocessing_["n_strata"] in (2, 8)
    assert est.subsampling.n_clusters == 20
    with pytest.raises(ValueError, match="exact full-data gradient"):
        BayesianLogisticRegression(sampler="hmc", subsampling="stratified", **SUBSAMPLED).fit(X, y)
    for sampler in ["psgld", "sgnht"]:
        BayesianLogisticRegression(sampler=sampler, subsampling="stratified",
                                   **SUBSAMPLED).fit(X, y)
    svrg = BayesianLogisticRegression(subsampling=Stratified(correction="svrg"),
                                      **SUBSAMPLED).fit(X, y)
    assert svrg.preprocessing_["anchor_batch_size"] == X.shape[0]


def test_compressed_through_estimators(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(sampler="hmc", subsampling="compressed",
                                     **SUBSAMPLED).fit(X, y)
    pre = clf.preprocessing_
    assert pre["n_centroids"] == math.ceil(0.1 * X.shape[0])
    assert pre["compression_ratio"] == pre["n_centroids"] / X.shape[0]
    assert pre["compression_radius"] > 0 and "compression_seconds" in pre
    assert clf.score(X, y) > 0.9
    mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=Compressed(
        radius=0.3, inner="stratified"), **SUBSAMPLED).fit(X, y)
    assert mlp.preprocessing_["compression_ratio"] < 1 and mlp.preprocessing_["n_strata"] >= 1
    seq = [BayesianLogisticRegression(sampler="hmc", subsampling=Compressed(
        radius=0.3, clustering="sequential"), **{**SUBSAMPLED, "random_state": seed}).fit(X, y)
        for seed in (0, 0, 1)]
    assert seq[0].preprocessing_["compression_radius"] <= 0.3
    assert seq[0].preprocessing_["n_centroids"] == seq[1].preprocessing_["n_centroids"]
    np.testing.assert_array_equal(seq[0].draws_, seq[1].draws_)
    assert seq[0].score(X, y) > 0.9 and seq[2].score(X, y) > 0.9
    with pytest.raises(ValueError, match="exact full-data gradient"):
        BayesianLogisticRegression(sampler="hmc", subsampling=Compressed(inner="uniform"),
                                   **SUBSAMPLED).fit(X, y)
    with pytest.raises(ValueError, match="inner must be"):
        BayesianLogisticRegression(subsampling=Compressed(inner="compressed"),
                                   **SUBSAMPLED).fit(X, y)


def test_one_sample_fit_and_bad_hyperparameters():
    X, y = np.array([[0.5, -1.0]]), np.array([1.3])
    for sub in ["stratified", Stratified(correction="cv"), "compressed"]:
        BayesianLinearRegression(subsampling=sub, **SUBSAMPLED).fit(X, y)
    with pytest.raises(ValueError, match="n_clusters"):
        BayesianLinearRegression(subsampling=Stratified(n_clusters=0), **SUBSAMPLED).fit(X, y)
    with pytest.raises(ValueError, match="radius"):
        BayesianLinearRegression(subsampling=Compressed(radius=-1.0), **SUBSAMPLED).fit(X, y)
