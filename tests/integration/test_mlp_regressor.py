"""BayesianMLPRegressor: the scikit-learn ecosystem, output shapes, normalize_y and oracles."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianMLPRegressor, ConvergenceWarning

SMALL = dict(hidden_layer_sizes=(8,), n_warmup=100, n_draws=40, thin=2, n_chains=2, random_state=0)
SIGMA = 0.1


def _true(X):
    return np.sin(2.0 * X[:, 0])


def _sine(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(n, 1))
    return X, _true(X) + SIGMA * rng.normal(size=n)


def _fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains: the draws suffice
        return BayesianMLPRegressor(**params).fit(X, y)


@pytest.fixture(scope="module")
def sine_fit():
    """The 1-D sine problem with known noise, fitted with the default sampling settings."""
    X, y = _sine()
    return X, y, _fit(X, y, hidden_layer_sizes=(16,), activation="tanh", random_state=0)


def test_noise_and_mean_recover_the_truth(sine_fit):
    X, _, reg = sine_fit
    assert abs(reg.noise_std_ - SIGMA) < 0.3 * SIGMA
    grid = np.linspace(-1.9, 1.9, 60)[:, None]
    mean, std = reg.predict(grid, return_std=True)
    assert np.sqrt(np.mean((mean - _true(grid)) ** 2)) < 0.05
    # the predictive sd holds the noise and little more where the data are dense
    assert np.all(std > 0.9 * reg.noise_std_) and np.median(std) < 2.0 * SIGMA
    assert reg.score(X, _true(X)) > 0.95


def _sd_ratio(reg):
    inside = reg.predict(np.linspace(-1.5, 1.5, 20)[:, None], return_std=True)[1]
    outside = reg.predict(np.array([[-6.0], [6.0]]), return_std=True)[1]
    return outside.min() / inside.max()


def test_predictive_sd_grows_away_from_the_data(sine_fit):
    # the default gives 1.6-4.8 over random_state 0-3
    assert _sd_ratio(sine_fit[-1]) > 1.5


@pytest.mark.xfail(strict=True, reason="known limitation: SG chains preconditioned at the mode "
                   "under-explore the directions the data leave free "
                   "(docs/user_guide/limitations.md)")
def test_predictive_sd_away_from_the_data_is_the_reference_one(sine_fit):
    # NumPyro NUTS on the same potential (8 chains x 1,000 draws, 2026-11-29): sd 1.18 and
    # 1.27 at -6 and 6, 0.10 inside, a ratio of about 12; the library's exact HMC gives 12.5
    assert _sd_ratio(sine_fit[-1]) > 6.0


def test_a_predictive_under_explored_off_the_data_warns():
    # away from the training rows the chains disagree, and their predictive sds are half the
    # reference's (bench_mlp_reference's sine problem): the verdict's second judgement, on the
    # judged rows moved 1.5 times as far from their mean, fails where no doubling helps (the
    # modes' spread), so the run is not extended and the warning names an exact sampler
    X, y = _sine()
    with pytest.warns(ConvergenceWarning, match="off the data") as record:
        reg = BayesianMLPRegressor(hidden_layer_sizes=(16,), activation="tanh",
                                   random_state=1).fit(X, y)
    d = reg.diagnostics_
    assert d["off_data_error"] > d["pooled_error_tolerance"] and not d["converged"]
    assert d["n_doublings"] == 0 and d["doublings_needed"] == np.inf
    assert any(p.startswith("Off the data") for p in d["convergence_problems"])
    message = str(record[0].message)
    assert "sampler='hmc'" in message and len(message.splitlines()) == 3


def test_sample_y_matches_the_predictive_moments(sine_fit):
    *_, reg = sine_fit
    grid = np.array([[-1.0], [0.3], [4.0]])
    mean, std = reg.predict(grid, return_std=True)
    samples = reg.sample_y(grid, n_samples=4000, random_state=0)
    assert samples.shape == (3, 4000)
    se = std / np.sqrt(4000)
    # predict averages n_predict_draws evenly spaced draws: their Monte-Carlo error too
    mc = std / np.sqrt(reg.n_predict_draws)
    assert np.all(np.abs(samples.mean(axis=1) - mean) < 4 * se + 3 * mc)
    assert np.allclose(samples.std(axis=1), std, rtol=0.15)


def test_shapes_of_the_outputs():
    X, y = _sine(n=80)
    X = np.column_stack([X, np.cos(X)])
    reg = _fit(X, y, **SMALL)
    assert reg.predict(X[:5]).shape == (5,)
    mean, std = reg.predict(X[:5], return_std=True)
    assert mean.shape == std.shape == (5,) and np.all(std > 0)
    assert reg.sample_y(X[:5], n_samples=3, random_state=0).shape == (5, 3)
    assert reg.sample_y(X[:5]).shape == (5, 1)
    draws = reg.sample_posterior()
    n = 2 * SMALL["n_draws"]
    assert {k: v.shape for k, v in draws.items()} == {
        "coef_0": (n, 2, 8), "intercept_0": (n, 8), "coef_1": (n, 8, 1), "intercept_1": (n, 1),
        "noise_std": (n,)}
    assert sample_shape(reg.sample_posterior(7, random_state=0)) == 7
    assert [w.shape for w in reg.coefs_] == [(2, 8), (8, 1)]
    assert [b.shape for b in reg.intercepts_] == [(8,), (1,)]
    assert isinstance(reg.noise_std_, float) and reg.noise_std_ > 0
    assert reg.draws_.shape == (2, SMALL["n_draws"], 2 * 8 + 8 + 8 + 1 + 1)
    assert "predictive_rhat" in reg.diagnostics_
    assert sorted(reg.summary().groups) == ["coef_0", "coef_1", "intercept_0", "intercept_1",
                                            "noise_std"]


def sample_shape(draws):
    (size,) = {v.shape[0] for v in draws.values()}
    return size


def test_normalize_y_answers_in_y_units():
    X, y = _sine(n=150)
    small, big = _fit(X, y, **SMALL), _fit(X, 1000.0 * y + 5.0, **SMALL)
    assert big.y_scale_ == pytest.approx(1000.0 * small.y_scale_)
    grid = np.linspace(-2, 2, 15)[:, None]
    (m1, s1), (m2, s2) = small.predict(grid, return_std=True), big.predict(grid, return_std=True)
    # the same fitted targets up to rounding: equal within the Monte-Carlo error
    mc = s1 / np.sqrt(small.n_predict_draws)
    assert np.all(np.abs(m2 - (1000.0 * m1 + 5.0)) < 1000.0 * 3 * mc)
    assert np.allclose(s2, 1000.0 * s1, rtol=0.2)
    assert big.noise_std_ == pytest.approx(1000.0 * small.noise_std_, rel=0.2)
    named = big.sample_posterior()
    assert np.allclose(named["noise_std"].mean(), big.noise_std_)
    # sample_posterior is in y's units: its networks, averaged, are predict's mean (all draws)
    assert big.n_predict_draws >= named["noise_std"].size
    hidden = np.maximum(np.einsum("nd,sdh->snh", grid, named["coef_0"])
                        + named["intercept_0"][:, None, :], 0.0)
    outputs = np.einsum("snh,sho->sn", hidden, named["coef_1"]) + named["intercept_1"]
    np.testing.assert_allclose(outputs.mean(axis=0), m2, rtol=1e-9)
    raw = _fit(X, 1000.0 * y + 5.0, normalize_y=False, **SMALL)
    assert raw.y_mean_ == 0.0 and raw.y_scale_ == 1.0


def test_pipeline_clone_and_pickle():
    X, y = _sine(n=100)
    pipe = make_pipeline(StandardScaler(), BayesianMLPRegressor(**SMALL))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pipe.fit(X, y)
    assert pipe.predict(X[:4]).shape == (4,)
    reg = pipe[-1]
    fresh = clone(reg)
    assert fresh.get_params() == reg.get_params() and not hasattr(fresh, "draws_")
    again = pickle.loads(pickle.dumps(reg))
    Xs = pipe[0].transform(X[:6])
    np.testing.assert_array_equal(again.predict(Xs), reg.predict(Xs))
    np.testing.assert_array_equal(again.sample_y(Xs, 3, random_state=1),
                                  reg.sample_y(Xs, 3, random_state=1))
    # a refit with the same seed gives the same draws
    np.testing.assert_array_equal(_fit(Xs, y[:6], **SMALL).draws_,
                                  _fit(Xs, y[:6], **SMALL).draws_)


def test_bad_parameters_raise():
    X, y = _sine(n=30)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        BayesianMLPRegressor(hidden_layer_sizes=(0,)).fit(X, y)
    with pytest.raises(ValueError, match="normalize_y"):
        BayesianMLPRegressor(normalize_y="yes").fit(X, y)


def test_verdict_is_the_pooled_error_of_the_gaussian_predictive():
    from skbayes_sg.diagnostics import pooled_error
    from skbayes_sg.estimators._mlp_base import judged_rows

    X, y = _sine(n=150)
    with pytest.warns(ConvergenceWarning) as record:
        reg = BayesianMLPRegressor(**dict(SMALL, n_warmup=10, n_draws=10, max_doublings=0)).fit(
            X, 1000.0 * y)
    rows = judged_rows(X.shape[0])
    assert reg.diagnostics_["predictive_rhat"].shape == rows.shape
    C, D, p = reg.draws_.shape
    flat = reg.draws_.reshape(C * D, p)
    means = reg.model_.predict_output(flat, X[rows])
    sigma = reg.model_.unpack(flat)["noise_std"]
    sd = np.sqrt(means.var(axis=0) + np.mean(sigma**2))
    # in units of the predictive sd (the same for y and 1000 y), the noise sd's error included
    expected = pooled_error(means.reshape(C, D, -1), scale=sd, tolerance=0.02,
                            log_noise=np.log(sigma).reshape(C, D)).error
    means_only = pooled_error(means.reshape(C, D, -1), scale=sd, tolerance=0.02).error
    assert reg.diagnostics_["pooled_error"] == pytest.approx(expected, rel=1e-12)
    assert expected > means_only
    # off the data: the same rows moved 1.5 times as far from their mean
    X_off = 1.5 * X[rows] - 0.5 * X[rows].mean(axis=0)
    m_off = reg.model_.predict_output(flat, X_off)
    sd_off = np.sqrt(m_off.var(axis=0) + np.mean(sigma**2))
    off = pooled_error(m_off.reshape(C, D, -1), scale=sd_off, tolerance=0.02,
                       log_noise=np.log(sigma).reshape(C, D)).error
    assert reg.diagnostics_["off_data_error"] == pytest.approx(off, rel=1e-12)
    assert f"Monte-Carlo error {expected:.3g} on the data" in str(record[0].message)
