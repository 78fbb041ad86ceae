"""Where the chains start (``init``), and the MLP's over-dispersed starts and verdict in
function space: budget, warning text, starts in the background.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification

from skbayes_sg import BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.diagnostics import ESS_PER_CHAIN
from skbayes_sg.diagnostics import PooledError
from skbayes_sg.estimators._mlp_base import _pooled_warning
from skbayes_sg.models import GaussianPrior, MLPModel, Posterior
from skbayes_sg.preprocessing._mode import adam_batch, adam_mode, adam_starts
from skbayes_sg.utils import ConvergenceWarning


SHORT = dict(hidden_layer_sizes=(4,), n_warmup=0, n_draws=10, thin=1, max_doublings=0)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=120, centers=3, cluster_std=2.0, random_state=0)
    return (X - X.mean(0)) / X.std(0), y


def _posterior(X, y):
    model = MLPModel((X.shape[1], 4, 3))
    return Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y.astype(np.intp))


def _fit(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return BayesianMLPClassifier(**{**SHORT, "random_state": 0, **kw}).fit(X, y)


def _noisy_labels():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    return X, (X[:, 0] + rng.normal(size=150) > 0).astype(int)


NOISY = dict(hidden_layer_sizes=(4,), n_warmup=50, n_draws=40, thin=1, n_chains=1,
             max_doublings=3, random_state=0)


def test_a_network_run_shorter_than_the_ess_rule_is_extended():
    # the pooled verdict asks for no ESS per chain: 40 draws (< 2 * ESS_PER_CHAIN) are doubled
    assert NOISY["n_draws"] < 2 * ESS_PER_CHAIN
    # (a seed whose chain meets the tolerance, on the training rows and off the data, after
    # its doublings: 3 here, up to 6 on other seeds)
    est = BayesianMLPClassifier(**{**NOISY, "random_state": 4, "max_doublings": 6}).fit(
        *_noisy_labels())
    d = est.diagnostics_
    assert d["n_doublings"] >= 1 and d["converged"]
    assert max(d["pooled_error"], d["off_data_error"]) <= d["pooled_error_tolerance"]
    assert d["sampling_steps"] == 40 * 2 ** d["n_doublings"]


def _diverging_extensions(monkeypatch, times):
    """Fault injection: the first ``times`` extension tries (runs without warm-up) diverge;
    returns the list their steps are recorded in."""
    from skbayes_sg.fitting import _fit
    from skbayes_sg.utils import DivergenceError

    real, steps = _fit.sample, []

    def sample(plan, noise, index, step, **kwargs):
        if kwargs["n_warmup"] == 0:
            steps.append(step)
            if len(steps) <= times:
                raise DivergenceError("Chain 0 diverged during sampling (step 3).")
        return real(plan, noise, index, step, **kwargs)

    monkeypatch.setattr(_fit, "sample", sample)
    return steps


def test_a_diverging_extension_runs_again_with_a_smaller_step(monkeypatch):
    steps = _diverging_extensions(monkeypatch, 1)
    est = BayesianMLPClassifier(**{**NOISY, "random_state": 1}).fit(*_noisy_labels())
    d = est.diagnostics_
    assert d["n_doublings"] >= 1 and "extension_diverged" not in d
    assert d["step_size_retries"] == 1 and steps[1] == pytest.approx(steps[0] / 4)


def test_a_diverging_extension_keeps_the_draws_so_far(monkeypatch):
    steps = _diverging_extensions(monkeypatch, np.inf)
    with pytest.warns(ConvergenceWarning, match="a longer run diverged"):
        est = BayesianMLPClassifier(**NOISY).fit(*_noisy_labels())
    d = est.diagnostics_
    assert d["n_doublings"] == 0 and d["sampling_steps"] == 40 and not d["converged"]
    assert "diverged" in d["extension_diverged"] and np.all(np.isfinite(est.draws_))
    assert len(steps) == 4 and steps[-1] == pytest.approx(steps[0] / 4**3)  # 3 retries
    steps.clear()  # a user-set step is not retried
    with pytest.warns(ConvergenceWarning, match="a longer run diverged"):
        BayesianMLPClassifier(**{**NOISY, "step_size": est.diagnostics_["step_size"]}).fit(
            *_noisy_labels())
    assert len(steps) == 1


def test_adam_starts_are_separate_optima(blobs):
    post = _posterior(*blobs)
    rngs = np.random.default_rng(0).spawn(2)
    thetas, evals = adam_starts(post, rngs)
    inits = [post.model.init_position(r) for r in np.random.default_rng(0).spawn(2)]
    assert thetas.shape == (2, post.model.n_params)
    assert evals == 2 * adam_mode(post, np.random.default_rng(1))[1]
    # each run descends from its own initialisation, and they end in different places
    assert np.all(post.potential(thetas) < post.potential(np.array(inits)))
    assert np.linalg.norm(thetas[0] - thetas[1]) > 0.5 * np.linalg.norm(thetas[0])


def test_float32_adam_reaches_the_float64_optimum(blobs):
    """float32 X runs Adam in float32 (moments and iterate too), the optimum returned in float64.

    From the same initialisation and minibatch order the two runs end at the same potential
    within 1% (float32 rounding, not a different optimiser), and at nearby weights.
    """
    X, y = blobs
    post64, post32 = _posterior(X, y), _posterior(X.astype(np.float32), y)
    theta64, evals64 = adam_mode(post64, np.random.default_rng(3))
    theta32, evals32 = adam_mode(post32, np.random.default_rng(3))
    assert theta32.dtype == np.float64 and evals32 == evals64
    u64, u32 = post64.potential(np.array([theta64, theta32]))
    start = post64.potential(post64.model.init_position(np.random.default_rng(3))[None])[0]
    assert abs(u32 - u64) < 0.01 * abs(u64) and u64 < start
    assert np.linalg.norm(theta32 - theta64) < 0.01 * np.linalg.norm(theta64)


def test_adam_batch_rule():
    # small data keep 128 rows at 1e-3; an epoch keeps at least 100 steps; lr grows with b
    assert adam_batch(60) == (60, 1e-3) and adam_batch(25_599) == (128, 1e-3)
    assert adam_batch(25_600) == (256, 2e-3) and adam_batch(60_000) == (512, 4e-3)


def test_larger_adam_batch_descends_as_far():
    """On 30,000 rows the automatic 256 rows at 2e-3 end lower than 128 rows at 1e-3, from the
    same start and for as many rows seen (half the updates): the rule trades no accuracy."""
    X, y = make_classification(n_samples=30_000, n_features=20, n_informative=10, n_classes=3,
                               random_state=0)
    model = MLPModel((20, 16, 3))
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X.astype(np.float32),
                     y.astype(np.intp))
    for seed in (0, 1):
        auto, small = (adam_mode(post, np.random.default_rng(seed), **kw)
                       for kw in ({}, {"batch_size": 128, "lr": 1e-3}))
        assert auto[1] == small[1]
        assert post.potential(np.array([auto[0]]))[0] < post.potential(np.array([small[0]]))[0]


def test_adam_on_small_data_makes_up_for_its_capped_epochs():
    """Below 7,680 rows 50 epochs are fewer than 3000 steps of 128 rows: the rate grows in
    proportion (at most 5x), so Adam ends lower than at 1e-3 in the same steps."""
    from sklearn.datasets import make_regression

    from skbayes_sg.models import MLPRegressionModel
    from skbayes_sg.models._priors import NoisePrior

    X, y = make_regression(n_samples=1000, n_features=8, noise=10.0, random_state=0)
    model = MLPRegressionModel((8, 16, 1), "tanh")
    prior = NoisePrior(model.prior_precision(1.0), a=1.0, b=0.01)
    post = Posterior(model, prior, (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std())
    for seed in (0, 1):
        auto, plain = (adam_mode(post, np.random.default_rng(seed), **kw)
                       for kw in ({}, {"lr": 1e-3}))
        assert auto[1] == plain[1] == 50 * 7 * 128  # 50 epochs of 7 steps
        assert post.potential(auto[0][None])[0] < post.potential(plain[0][None])[0]


def test_chains_start_in_different_modes(blobs):
    X, y = blobs
    spread = {}
    for init in ("laplace", "mode"):
        first = _fit(X, y, init=init, n_chains=3).draws_[:, 0]
        spread[init] = np.linalg.norm(first[1:] - first[0], axis=1).min()
    assert spread["laplace"] > 20 * spread["mode"]


def test_extra_adam_runs_are_counted(blobs):
    X, y = blobs
    one = _fit(X, y, n_chains=1).diagnostics_["preprocessing_grad_evals"]
    three = _fit(X, y, n_chains=3).diagnostics_["preprocessing_grad_evals"]
    per_run = adam_mode(_posterior(X, y), np.random.default_rng(0))[1]
    assert three - one == 2 * per_run


def test_pooled_warning_advice_follows_the_modes_share():
    info = {"sampling_steps": 4000, "n_doublings": 1}
    met = PooledError(0.01, 0.5, 0.0, 0.02)
    modes = _pooled_warning(PooledError(0.04, 0.8, np.inf, 0.02), met, info, 2, 3)
    lines = modes.split("\n")
    assert len(lines) == 3 and "0.04 on the data > 0.02" in lines[0]
    assert "4,000 steps" in lines[0] and "off the data" not in modes
    assert "different modes are expected" in lines[1] and "80%" in lines[1]
    assert lines[2] == "Increase n_chains to about 8."  # 2 * (0.04/0.02)^2
    own = _pooled_warning(PooledError(0.03, 0.1, 2.0, 0.02), met, info, 2, 3)
    assert own.split("\n")[2].startswith("Increase max_doublings (ran 1 of 3)")
    # failing off the data too: both errors, the advice of the part needing more doublings,
    # and an exact sampler for the uncertainty off the data
    both = _pooled_warning(PooledError(0.03, 0.1, 2.0, 0.02), PooledError(0.05, 0.9, np.inf, 0.02),
                           info, 2, 3).split("\n")
    assert len(both) == 3 and "0.03 on the data, 0.05 off it" in both[0]
    assert "10%, 90% of the error" in both[1]
    assert both[2].startswith("Increase n_chains") and "sampler='hmc'" in both[2]


def test_warning_speaks_of_the_pooled_predictive(blobs):
    X, y = blobs
    with pytest.warns(ConvergenceWarning) as record:
        est = BayesianMLPClassifier(**SHORT, random_state=0, n_chains=2).fit(X, y)
    message = str(record[0].message)
    assert f"Monte-Carlo error {est.diagnostics_['pooled_error']:.3g} on the data" in message
    assert "different modes are expected" in message


def test_starts_do_not_depend_on_running_in_the_background(blobs):
    # the extra Adam runs overlap the preprocessing in a worker thread when BLAS may use two
    # threads, and run in line otherwise: the same starts, hence the same draws, either way
    from threadpoolctl import threadpool_limits

    X, y = blobs
    with threadpool_limits(2, user_api="blas"):
        background = _fit(X, y, n_chains=3).draws_
    with threadpool_limits(1, user_api="blas"):
        inline = _fit(X, y, n_chains=3).draws_
    np.testing.assert_array_equal(background, inline)


def test_a_failed_fit_waits_for_the_background_starts(blobs, monkeypatch):
    # the extra Adam runs run in a worker thread; an error later in the preprocessing must not
    # leave them running (they would outlive the fit's one-thread BLAS limit)
    import threading

    from threadpoolctl import threadpool_limits

    import skbayes_sg.fitting._prepare as fit_module

    def fail(*args, **kwargs):
        raise RuntimeError("tuning failed")

    monkeypatch.setattr(fit_module, "tune", fail)
    X, y = blobs
    before = set(threading.enumerate())  # pools other tests left idle are not this fit's
    with threadpool_limits(2, user_api="blas"), pytest.raises(RuntimeError, match="tuning"):
        _fit(X, y, n_chains=3)
    assert not [t for t in set(threading.enumerate()) - before
                if t.name.startswith("ThreadPoolExecutor")]


@pytest.mark.parametrize("init", ["mode", "zeros", "prior", "laplace"])
def test_init_sets_where_the_chains_start(cancer, init):
    # a negligible step keeps the first stored draw at the start point
    X, y = cancer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = BayesianLogisticRegression(sampler="sgld", step_size=1e-12, n_warmup=0,
                                         n_draws=4, init=init, random_state=0).fit(X, y)
    first = clf.draws_[:, 0]
    if init == "mode":
        np.testing.assert_allclose(first, np.tile(clf.mode_, (4, 1)), atol=1e-5)
    elif init == "zeros":
        np.testing.assert_allclose(first, 0.0, atol=1e-5)
    else:  # random starts: distinct chains; prior draws have the prior's scale
        assert np.all(np.std(first, axis=0) > 0)
        if init == "prior":
            sd = 1.0 / np.sqrt(clf.prior_.precision)
            assert 0.5 < np.mean(np.abs(first) / sd) / np.sqrt(2 / np.pi) < 1.5
