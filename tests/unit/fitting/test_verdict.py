"""The verdict of ``fit``: one standard, run until converged, no silent failure."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_sg.fitting import FitConfig
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.utils import ApproximationWarning, ConvergenceWarning, DivergenceError


def _fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, [w for w in caught if issubclass(w.category, (ApproximationWarning,
                                                              ConvergenceWarning))]


@pytest.fixture(scope="module")
def small_logistic():
    return make_classification(400, 5, random_state=0)


@pytest.mark.parametrize("sampler, step", [("sgld", 5.0), ("psgld", 0.5), ("sghmc", 1.0)])
def test_user_steps_predicted_to_bias_the_variance_warn(small_logistic, sampler, step):
    # the cases: all gave sds 1.4-90x too wide with "no warnings"
    X, y = small_logistic
    est = BayesianLogisticRegression(sampler=sampler, step_size=step, n_warmup=100, n_draws=100,
                                     n_chains=2, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, y)
        except DivergenceError:  # loud too; the step warning came first
            pass
    messages = [str(w.message) for w in caught if f"step_size={step:g} " in str(w.message)]
    assert messages and "step_size='auto'" in messages[0]
    assert all(w.filename == __file__ for w in caught)  # the user's line


def test_auto_step_does_not_warn_about_its_bias(small_logistic):
    X, y = small_logistic
    est, caught = _fit(BayesianLogisticRegression(sampler="sghmc", random_state=0), X, y)
    assert est.diagnostics_["variance_error"] <= 0.05 + 1e-12
    assert not [w for w in caught if "step_size=" in str(w.message)]
    assert est.diagnostics_["converged"] and not caught


@pytest.mark.parametrize("step", [0.3, 0.8])
def test_predicted_variance_error_matches_the_gaussian_oracle(step):
    # exact gradient on a Gaussian posterior: the closed form is exact, up to Monte-Carlo error
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = X @ np.array([1.0, -0.5, 0.2]) + rng.normal(size=300)
    reg = BayesianLinearRegression(noise_std=1.0, fit_intercept=False, normalize_y=False,
                                   sampler="sgld", subsampling="full", step_size=step,
                                   n_warmup=200, n_draws=4000, n_chains=4, max_doublings=0,
                                   random_state=0)
    reg, _ = _fit(reg, X, y)
    cov = np.linalg.inv(X.T @ X + np.eye(3))
    ratio = reg.sample_posterior()["coef"].var(axis=0) / np.diag(cov)
    predicted = 1.0 + reg.diagnostics_["variance_error"]  # SGLD over-disperses
    ess = reg.diagnostics_["ess"]
    # the variance of a sample variance is ~2 var^2 / ESS
    assert np.all(np.abs(ratio - predicted) < 5 * predicted * np.sqrt(2.0 / ess))


def test_sampling_is_extended_until_the_standard_is_met():
    # a slow sampler (a tiny step, as large minibatch noise needs) on a small problem: the
    # first 200 draws per chain fail the standard, doublings fix it; memory stays at n_draws
    X, y = make_classification(2000, 4, random_state=1)
    kw = dict(sampler="sgld", subsampling="uniform", batch_size=10, step_size=5e-4,
              n_warmup=200, n_draws=200, n_chains=2, random_state=0)
    short, _ = _fit(BayesianLogisticRegression(max_doublings=0, **kw), X, y)
    assert not short.diagnostics_["converged"]
    long, _ = _fit(BayesianLogisticRegression(max_doublings=4, **kw), X, y)
    d = long.diagnostics_
    assert d["n_doublings"] >= 1 and long.draws_.shape == short.draws_.shape
    assert d["sampling_steps"] == 200 * 2 ** d["n_doublings"]
    assert np.nanmax(d["rhat"]) < np.nanmax(short.diagnostics_["rhat"])
    again = BayesianLogisticRegression(max_doublings=4, n_jobs=2, **kw)
    again._fit_config = FitConfig(parallel_min_seconds=0.0)  # in workers, however short
    again, _ = _fit(again, X, y)
    np.testing.assert_allclose(again.draws_, long.draws_, rtol=1e-9)  # reproducible, n_jobs-free


@pytest.mark.parametrize("n", [1, 2, 5, 6])
def test_extension_thins_old_and_new_draws_in_place(n):
    # every second of the 2n draws, in order, written over the old ones (no 2n-draw temporary)
    from skbayes_sg.fitting._extend import _thin_pair

    rng = np.random.default_rng(n)
    old, new = rng.normal(size=(3, n, 4)), rng.normal(size=(3, n, 4))
    expected = np.concatenate([old, new], axis=1)[:, 1::2]
    out = _thin_pair(old, new)
    assert out is old
    np.testing.assert_array_equal(out, expected)


def test_doublings_needed_extrapolates_the_fall_of_rhat():
    from skbayes_sg.diagnostics import Assessment
    from skbayes_sg.fitting._extend import doublings_needed

    def verdict(r):
        return Assessment(np.array([1.0, r, np.nan]), np.ones(3), np.ones(3), ("x",))

    # mixing chains halve R^2 - 1 per doubling: from 1.04 about 2 more doublings reach 1.01
    assert doublings_needed(verdict(1.0794), verdict(1.04)) == pytest.approx(2.0, abs=0.05)
    assert doublings_needed(verdict(1.5), verdict(1.005)) == 0.0  # passes
    # near 1.01 noise can hide the fall: the halving is assumed, so a mixing run goes on
    assert doublings_needed(verdict(1.013), verdict(1.015)) < 1
    # a transient fading faster than the halving is credited with its own rate
    assert doublings_needed(verdict(2.6), verdict(1.3)) < 2
    # a stall far from 1.01: even halving from here needs more than a budget of 8x
    assert doublings_needed(verdict(2.5), verdict(2.4)) > 7
    # chains stuck apart (infinite R-hat, before and after): never worth another doubling
    assert doublings_needed(verdict(np.inf), verdict(np.inf)) == np.inf


def test_a_stalled_run_stops_before_the_budget_and_says_why(small_logistic):
    # a tiny user step: the chains barely leave their dispersed starts, so one doubling hardly
    # lowers R-hat and the rule stops instead of spending 8x the sampling to warn anyway
    X, y = small_logistic
    est, caught = _fit(BayesianLogisticRegression(sampler="sgld", step_size=1e-6, n_warmup=10,
                                                  n_draws=200, n_chains=2, random_state=0),
                       X, y)
    d = est.diagnostics_
    assert d["n_doublings"] == 1 and d["doublings_needed"] > 3
    assert any("stopped early" in str(w.message) for w in caught)
    # the judgements before a doubling stopped at R-hat; the verdict kept is the whole one
    from skbayes_sg.diagnostics import assess
    whole = assess(est.draws_)
    assert np.all(np.isfinite(d["ess"])) and d["convergence_problems"] == whole.problems
    np.testing.assert_array_equal(d["ess"], whole.ess_bulk)


def test_summary_and_fit_give_one_verdict(small_logistic):
    X, y = small_logistic
    est, caught = _fit(BayesianLogisticRegression(sampler="sghmc", n_warmup=20, n_draws=30,
                                                  n_chains=2, random_state=0), X, y)
    problems = est.diagnostics_["convergence_problems"]
    assert problems and not est.diagnostics_["converged"]
    assert est.summary().warnings[:len(problems)] == list(problems)
    assert any("ESS below 200" in str(w.message) for w in caught)  # 100 per chain


def test_exact_gradient_runs_metropolis_hmc(small_logistic):
    X, y = small_logistic
    est, _ = _fit(BayesianLogisticRegression(random_state=0, n_draws=200), X[:90], y[:90])
    assert est.diagnostics_["sampler"] == "hmc" and est.diagnostics_["batch_size"] == 90
    assert np.all(est.diagnostics_["accept_rate"] > 0.5)


def test_small_data_runs_the_textbook_scheme(cancer):
    # breast cancer (569 rows): SGHMC with the measured noise subtracted took a batch of 200 at
    # a large step, and this far-from-Gaussian posterior then had tail excursions (sd ratios up
    # to 1.43 against NUTS in the calibration benchmark, seeds 5 and 12); below 10,000 rows
    # nothing is subtracted (the textbook scheme, or Metropolis HMC once the batch reaches N)
    X, y = cancer
    for seed in (0, 5, 12):
        est, _ = _fit(BayesianLogisticRegression(random_state=seed, n_warmup=50, n_draws=50,
                                                 max_doublings=0), X, y)
        d = est.diagnostics_
        assert d["gradient_noise_left"] is None
        assert d["friction"] is None or d["friction"] == pytest.approx(1.0)  # exact Laplace
    big = np.tile(X, (18, 1)) + 0.01 * np.random.default_rng(0).normal(size=(18 * len(y), 30))
    est = BayesianLogisticRegression(random_state=0, n_warmup=50, n_draws=50, max_doublings=0)
    # at the full cap (its misfit, 0.19, would lower the cap until the noise no longer binds)
    est._fit_config = FitConfig(shape_misfit_full=np.inf)
    est, _ = _fit(est, big, np.tile(y, 18))
    assert est.diagnostics_["gradient_noise_left"] is not None  # 10,242 rows: subtracted


def test_softmax_is_judged_on_its_identified_quantities():
    # class-centred coefficients / intercepts and their class means: an invertible view of the
    # draws, so the verdict loses nothing and a slow contrast cannot hide behind the class sums
    from sklearn.datasets import load_iris

    from skbayes_sg.estimators._logistic import _identified

    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    est, _ = _fit(BayesianLogisticRegression(random_state=0, n_warmup=100, n_draws=200), X, y)
    d, model = est.diagnostics_, est.model_
    q = _identified(model, est.draws_)  # (C, D, K d + d + K + 1)
    assert q.shape[-1] == 3 * 4 + 4 + 3 + 1 and d["identified_rhat"].shape == (q.shape[-1],)
    K, dd = 3, 4
    coef = q[..., :K * dd].reshape(*q.shape[:2], K, dd) + q[..., None, K * dd:K * dd + dd]
    named = model.unpack(est.draws_.reshape(-1, model.n_params))
    np.testing.assert_allclose(coef.reshape(-1, K, dd), named["coef"], atol=1e-12)
    assert d["rhat"].shape == (model.n_params,)  # raw diagnostics kept
    binary, _ = _fit(BayesianLogisticRegression(random_state=0, n_warmup=50, n_draws=50),
                     X, (y > 0).astype(int))
    assert "identified_rhat" not in binary.diagnostics_
    # without intercepts: the centred coefficients only (summary() raised KeyError 'intercept')
    plain, _ = _fit(BayesianLogisticRegression(random_state=0, n_warmup=50, n_draws=50,
                                               fit_intercept=False), X, y)
    groups = plain.summary().groups
    assert "coef_centred" in groups and not {"intercept", "intercept_centred"} & set(groups)


def test_a_pooled_projection_past_the_budget_stops_without_slack():
    # a pooled verdict's projection assumes the chains' own error halves per doubling, which
    # drifting chains do not deliver: it stops as soon as the doublings left cannot suffice,
    # while R-hat's noisy extrapolation keeps one doubling of slack
    from types import SimpleNamespace

    from skbayes_sg.diagnostics import PooledError
    from skbayes_sg.fitting._extend import _give_up

    def pooled(k, off=None):
        return SimpleNamespace(pooled=PooledError(0.03, 0.3, k, 0.02), off_data=off)

    assert _give_up(pooled(3.0), None, 3) == (False, 3.0)
    assert _give_up(pooled(4.0), None, 3) == (True, 4.0)
    assert _give_up(pooled(np.inf), None, 3)[0]
    # off the data: a failing part that no doubling meets (a modes' spread) stops the run, since
    # the verdict fails whatever the training rows' part does; a met part asks for none
    unmet = PooledError(0.05, 0.9, np.inf, 0.02)
    assert _give_up(pooled(2.0, unmet), None, 3) == (True, np.inf)
    met = PooledError(0.01, 0.9, 0.0, 0.02)
    assert _give_up(pooled(2.0, met), None, 3) == (False, 2.0)
    assert _give_up(SimpleNamespace(pooled=met, off_data=PooledError(0.03, 0.1, 2.0, 0.02)),
                    None, 3) == (False, 2.0)
    rhat = SimpleNamespace(pooled=None, rhat=np.array([1.05]))
    assert _give_up(rhat, None, 3) == (False, None)  # one judgement: no rate yet
    before = SimpleNamespace(pooled=None, rhat=np.array([1.1]))
    stop, projected = _give_up(rhat, before, 2)
    assert 2.0 < projected <= 3.0 and not stop  # up to one more than left: R-hat's slack


def test_the_exact_route_aims_at_acceptance_065_from_256_parameters():
    # Beskos et al. (2013): 0.651 is optimal as the dimension grows; a longer step means fewer
    # leapfrogs a transition, while the Metropolis test keeps the chain exact
    from types import SimpleNamespace

    from skbayes_sg.fitting._plan import exact_sampler

    def posterior(p):
        return SimpleNamespace(model=SimpleNamespace(n_params=p))

    assert exact_sampler(posterior(255)).target_accept == 0.8
    assert exact_sampler(posterior(650)).target_accept == 0.65
    assert exact_sampler(posterior(650)).name == "hmc"
