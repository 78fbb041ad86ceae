"""The step- and batch-size rules (``fitting/_rules.py``) and the tuning's measurements
(``fitting/_tuning.py``) against the closed forms; ``batch_size='auto'`` through the estimators.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.fitting import FitConfig
from skbayes_sg.fitting._rules import auto_batch_size, auto_step_size
from skbayes_sg.samplers import SAMPLERS
from skbayes_sg.samplers._base import SUBTRACTED_SHARE
from skbayes_sg.utils import ConvergenceWarning


AUTO_TOL = 0.05
SG_NAMES = ["sgld", "psgld", "sghmc", "sgnht"]


@pytest.mark.parametrize("name", SG_NAMES)
def test_auto_step_size_bounds_stationary_variance(name):
    # The rule checks lam_max and lam_min only; the error must hold in between.
    sampler = SAMPLERS[name]()
    for nu in (0.0, 1.0, 10.0):
        h = auto_step_size(sampler, 4.0, nu, lam_min=0.5) / sampler.step_scale(4.0, nu, 1)
        for lam in np.linspace(0.5, 4.0, 15):
            assert abs(lam * sampler.stationary_variance(h, lam, nu) - 1.0) <= AUTO_TOL + 1e-12


@pytest.mark.parametrize("name", SG_NAMES)
def test_auto_batch_size_doubles_only_while_noise_binds_the_step(name):
    sampler = SAMPLERS[name]()

    def whitened(nu):
        return auto_step_size(sampler, 2.0, nu, lam_min=0.5) / sampler.step_scale(2.0, nu, 1)

    h0 = whitened(0.0)
    assert auto_batch_size(sampler, 2.0, 0.0, 100, 1600, lam_min=0.5) == 100  # noise-free
    for nu in (0.1, 3.0, 30.0, 1e4):
        b = auto_batch_size(sampler, 2.0, nu, 100, 1600, lam_min=0.5)
        assert b in (100, 200, 400, 800, 1600)
        if b < 1600:  # reached: at least half the noise-free step, and b/2 did not
            assert whitened(nu * 100 / b) >= 0.5 * h0
        if b > 100:
            assert whitened(nu * 100 / (b // 2)) < 0.5 * h0
    assert auto_batch_size(sampler, 2.0, 1e4, 100, 1600, lam_min=0.5) == 1600  # capped
    assert auto_batch_size(sampler, 2.0, 1e4, 100, 300, lam_min=0.5) in (100, 300)


@pytest.mark.parametrize("name", SG_NAMES)
def test_stationary_variance_on_a_grid_equals_the_pointwise_closed_form(name):
    # the rule scans its grid in one call; SGHMC's batched 3 x 3 Lyapunov solve is checked
    # against scipy's discrete Lyapunov solver, and stability against the eigenvalues
    from scipy.linalg import solve_discrete_lyapunov

    sampler, grid = SAMPLERS[name](), np.geomspace(1e-6, 5.0, 120)
    for lam, nu in ((1.0, 0.0), (3.0, 5.0), (0.01, 1e4)):
        on_grid = sampler.stationary_variance(grid, lam, nu)
        pointwise = np.array([sampler.stationary_variance(h, lam, nu) for h in grid])
        assert isinstance(sampler.stationary_variance(0.1, lam, nu), float)
        np.testing.assert_array_equal(np.isfinite(on_grid), np.isfinite(pointwise))
        np.testing.assert_allclose(on_grid, pointwise, rtol=1e-12)
        if name != "sghmc":
            continue
        for h, v in zip(grid, on_grid):
            A = np.array([[1 - h * h * lam, h * (1 - h)], [-h * lam, 1 - h]])
            stable = np.max(np.abs(np.linalg.eigvals(A))) < 1.0
            assert stable == np.isfinite(v)
            if stable:
                Q = (2 * h + h * h * nu) * np.array([[h * h, h], [h, 1.0]])
                np.testing.assert_allclose(v, solve_discrete_lyapunov(A, Q)[0, 0], rtol=1e-10)


def test_curvature_pilot_of_a_glm_is_not_inflated_by_a_small_subsample():
    from types import SimpleNamespace

    # a subsample's Hessian scaled to N has a larger top eigenvalue than the full one (about
    # (1 + sqrt(p / m))^2 whitened); the step-size rule caps the step at 0.5 / lam_max, so a GLM
    # pilots on at least 2 p rows (all of them here) and the estimate is the full-data one
    from skbayes_sg.models import GaussianPrior, LogisticModel, MLPModel, Posterior
    from skbayes_sg.preprocessing import find_mode, full_hessian, laplace_at, power_curvature
    from skbayes_sg.preprocessing._pilot import pilot_rows
    from skbayes_sg.preprocessing._laplace import whitened_curvature
    from skbayes_sg.samplers import diagonal

    rng = np.random.default_rng(0)
    K, d, n = 12, 100, 2400
    X = rng.normal(size=(n, d))
    y = rng.integers(0, K, size=n)
    model = LogisticModel(d, K)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    assert pilot_rows(post) == n  # 2 p = 2424 >= n
    mlp = MLPModel((d, 8, 2), "relu")
    assert pilot_rows(Posterior(mlp, GaussianPrior(np.ones(mlp.n_params)), X, y % 2)) == 2048
    wide = SimpleNamespace(model=SimpleNamespace(is_glm=True, n_params=2**18), n_rows=800_000)
    assert pilot_rows(wide) == 65_536  # 40 m row evaluations: at most 2.6 million
    mode = find_mode(post, rng).theta
    lap, _ = laplace_at(post, mode, "diagonal")
    precond = diagonal(lap.variances)
    exact, exact_min = whitened_curvature(full_hessian(post, mode), precond)
    lam, none, evals = power_curvature(post, mode, precond, np.random.default_rng(1), n_iter=40)
    assert evals == 80 * n and none is None
    assert 0.9 * exact < lam <= 1.001 * exact
    _, lowest, evals = power_curvature(post, mode, precond, np.random.default_rng(1), n_iter=40,
                                       lowest=True)
    assert evals == 160 * n
    assert exact_min <= lowest < exact_min + 0.2 * (exact - exact_min)  # from above
    small, _, _ = power_curvature(post, mode, precond, np.random.default_rng(1), n_iter=40,
                                  n_rows=300)
    assert small > 1.2 * exact  # the inflation this avoids


def test_a_subsample_laplace_gets_its_curvature_from_another_subsample():
    # A Laplace of a subsample Hessian whitens that Hessian to I exactly; the step rule must see
    # the spread of the exact one (oracle), about sqrt(2) times wider from a second subsample
    from skbayes_sg.fitting._tuning import measure_curvature
    from skbayes_sg.models import GaussianPrior, LogisticModel, Posterior
    from skbayes_sg.preprocessing import ModeConfig, find_mode, full_hessian, laplace_at
    from skbayes_sg.preprocessing._laplace import whitened_curvature
    from skbayes_sg.samplers import from_laplace

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 9)) * rng.uniform(0.3, 3.0, size=9)
    y = np.where(X @ np.ones(9) / 3 + rng.logistic(size=20_000) > 0, 1.0, -1.0)
    model = LogisticModel(9, 2)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    mode = find_mode(post, rng, config=ModeConfig(warm_rows=1000, hessian_rows_per_param=10))
    assert mode.hessian_rows == 1000
    lap, _ = laplace_at(post, mode.theta, "auto", mode.hessian, mode.hessian_rows)
    precond = from_laplace(lap)
    lam_max, lam_min = whitened_curvature(full_hessian(post, mode.theta), precond)
    assert lam_max - lam_min > 0.1  # a subsample's error, not an exact Laplace
    est_max, est_min, evals = measure_curvature(post, lap, precond, np.random.default_rng(1))
    assert evals == 2000
    assert est_max > 1 + 0.7 * (lam_max - 1) and est_min < 1 - 0.7 * (1 - lam_min)
    assert est_max < 1 + 3 * (lam_max - 1) and est_min > 1 - 3 * (1 - lam_min)


def test_gradient_noise_error_is_the_size_of_the_estimates_error():
    # an estimator with white noise of variance 4 on 2,000 coordinates: across coordinates the
    # estimated variances scatter by their estimation error sigma, and half the difference of
    # the two half-samples' estimates has mean sqrt(2 / pi) sigma
    from skbayes_sg.preprocessing import gradient_noise
    from skbayes_sg.samplers import identity

    class White:
        exact = False

        def init(self, rngs, theta):
            return None

        def estimate(self, rngs, theta, state):
            noise = np.stack([2.0 * rng.standard_normal(theta.shape[1]) for rng in rngs])
            return theta + noise, state, len(rngs)

    rngs = np.random.default_rng(0).spawn(16)
    noise, evals = gradient_noise(White(), rngs, np.zeros((16, 2000)), identity(), n_estimates=8)
    assert evals == 16 * 8 and np.mean(noise.variance) == pytest.approx(4.0, rel=0.01)
    sigma = np.std(noise.variance)
    assert np.mean(noise.error) == pytest.approx(np.sqrt(2 / np.pi) * sigma, rel=0.1)
    assert noise.level() == pytest.approx(np.quantile(noise.variance, 0.95))
    assert noise.bounds() == (noise.level(), noise.level())
    high, low = noise.bounds(noise.variance)  # all of it subtracted: the error is what is left
    assert high == pytest.approx(np.quantile(noise.error, 0.95)) and low == -high
    np.testing.assert_array_equal(noise.scaled(0.5).error, 0.5 * noise.error)


@pytest.mark.parametrize("name", ["sgld", "sghmc"])
def test_subtracted_noise_allows_a_larger_accurate_step(name):
    from skbayes_sg.fitting._rules import best_step, step_rule, variance_error
    from skbayes_sg.preprocessing import GradientNoise

    sampler, lam_max, lam_min = SAMPLERS[name](), 2.0, 0.5
    rng = np.random.default_rng(0)
    noise = GradientNoise(rng.uniform(3.0, 5.0, 50), rng.uniform(0.0, 0.4, 50))
    plain = auto_step_size(sampler, lam_max, noise.level(), lam_min=lam_min)
    rule = step_rule(sampler, noise, subtract=True)
    assert rule["nu"] == pytest.approx(np.quantile(noise.error, 0.95), rel=0.1)
    assert rule["nu_low"] < 0
    h = auto_step_size(sampler, lam_max, lam_min=lam_min, **rule)
    assert h > 2 * plain and best_step(sampler, lam_max, noise, lam_min=lam_min,
                                       subtract=True) == (h, rule)
    # the correction stays within its share of the injected noise at all but 1% of the
    # coordinates ...
    share = SUBTRACTED_SHARE * sampler.subtractable_noise(h)
    assert np.quantile(noise.variance, 0.99) <= share + 1e-12
    # ... and the error holds for what is left, of either sign, between the curvatures
    for lam in np.linspace(lam_min, lam_max, 9):
        for nu in (rule["nu"], rule["nu_low"]):
            assert abs(lam * sampler.stationary_variance(h, lam, nu) - 1.0) <= AUTO_TOL + 1e-12
    assert variance_error(sampler, h, lam_max, rule["nu"], lam_min=lam_min,
                          nu_low=rule["nu_low"]) <= AUTO_TOL + 1e-12
    # the batch rule sees the same: a smaller batch reaches half the noise-free step (noise
    # three times as large: at ten times both rules end at the cap, 1600)
    big = GradientNoise(noise.variance * 3, noise.error * 3)
    b_sub = auto_batch_size(sampler, lam_max, big, 100, 1600, lam_min=lam_min, subtract=True)
    assert b_sub < auto_batch_size(sampler, lam_max, big, 100, 1600, lam_min=lam_min)
    # where the noise is so uneven that subtracting it does not pay, the plain rule stays
    uneven = GradientNoise(np.r_[np.full(97, 0.01), np.full(3, 1e3)], np.full(100, 0.005))
    assert best_step(sampler, lam_max, uneven, lam_min=lam_min, subtract=True)[1] == \
        step_rule(sampler, uneven)


def test_auto_friction_follows_the_smallest_curvature():
    from skbayes_sg import BayesianLogisticRegression
    from skbayes_sg.fitting._rules import auto_friction

    assert auto_friction(None) == 1.0 and auto_friction(1.3) == 1.0
    assert auto_friction(0.49) == pytest.approx(0.7) and auto_friction(0.01) == 0.5
    # correlated features under a diagonal preconditioner leave small whitened curvatures;
    # sampler="auto" takes its friction from the smallest, "sghmc" keeps 1
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8)) + 2.0 * rng.normal(size=(3000, 1))
    y = (X @ rng.normal(size=8) + rng.logistic(size=3000) > 0).astype(int)
    fast = dict(n_warmup=20, n_draws=20, n_chains=2, max_doublings=0, random_state=0,
                preconditioner="diagonal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = BayesianLogisticRegression(**fast).fit(X, y).diagnostics_
        given = BayesianLogisticRegression(sampler="sghmc", **fast).fit(X, y).diagnostics_
    assert auto["sampler"] == "sghmc" and 0.5 <= auto["friction"] < 0.95
    assert auto["friction"] == pytest.approx(auto_friction(auto["curvature_min"]))
    assert given["friction"] == 1.0
    assert auto["integrator"] == given["integrator"] == "euler"  # 3,000 rows: see below


def test_auto_sampler_splits_from_10000_rows_without_ewsg():
    # sampler="auto" runs SGHMC's ABOBA splitting where the measured noise is subtracted (from
    # 10,000 rows), Euler on smaller data and with EWSG; a named "sghmc" is Chen et al.'s Euler
    from skbayes_sg import BayesianLogisticRegression

    rng = np.random.default_rng(1)
    X = rng.normal(size=(12_000, 5))
    y = (X @ rng.normal(size=5) + rng.logistic(size=12_000) > 0).astype(int)
    fast = dict(n_warmup=20, n_draws=20, n_chains=2, max_doublings=0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = {"auto": BayesianLogisticRegression(**fast).fit(X, y),
                "small": BayesianLogisticRegression(**fast).fit(X[:9_000], y[:9_000]),
                "ewsg": BayesianLogisticRegression(subsampling="ewsg", **fast).fit(X, y),
                "named": BayesianLogisticRegression(sampler="sghmc", **fast).fit(X, y)}
    d = {k: r.diagnostics_ for k, r in runs.items()}
    assert {k: v["integrator"] for k, v in d.items()} == {
        "auto": "aboba", "small": "euler", "ewsg": "euler", "named": "euler"}
    # the splitting's automatic step is its cap (not Euler's 5% error) when the noise is small
    assert d["auto"]["step_size"] > 1.3 * d["named"]["step_size"]
    assert d["auto"]["variance_error"] <= 0.05


def test_auto_subsampling_builds_the_curvature_weights_only_where_they_can_pay():
    # subsampling="auto" is preferential_cv unless one pass over the rows costs at least the base
    # run at the smallest automatic batch (here 2 chains x 50 steps x 100 rows = 10,000 < N)
    # and uniform control variates need no larger batch.  Oracles: the explicit strategies
    import warnings

    from skbayes_sg import BayesianLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20_000, 5))
    y = (X @ np.ones(5) / 2 + rng.logistic(size=20_000) > 0).astype(int)
    outliers = X.copy()
    outliers[:200] *= 30  # a few rows dominate uniform rows' noise
    y2 = (outliers @ np.ones(5) / 2 + rng.logistic(size=20_000) > 0).astype(int)
    kw = dict(n_chains=2, n_warmup=10, n_draws=40, random_state=0, max_doublings=0)

    def fit(X, y, **extra):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return BayesianLogisticRegression(**{**kw, **extra}).fit(X, y)

    plain = fit(X, y)
    assert BayesianLogisticRegression().get_params()["subsampling"] == "auto"
    assert plain.diagnostics_["subsampling"] == "control_variates"
    assert plain.diagnostics_["batch_size"] == 100
    assert "subsampling_weights" not in plain.preprocessing_
    np.testing.assert_array_equal(plain.draws_, fit(X, y, subsampling="control_variates").draws_)
    # uniform rows would need 16x the batch: the weights pay, and run
    assert fit(outliers, y2, subsampling="control_variates").diagnostics_["batch_size"] > 100
    heavy = fit(outliers, y2)
    assert heavy.diagnostics_["subsampling"] == "preferential_cv"
    assert heavy.diagnostics_["batch_size"] == 100
    explicit = fit(outliers, y2, subsampling="preferential_cv")
    np.testing.assert_array_equal(heavy.draws_, explicit.draws_)
    assert heavy.diagnostics_["n_grad_evals"] > explicit.diagnostics_["n_grad_evals"]
    # below the threshold (2 x 150 x 100 = 30,000 rows > N) it is preferential_cv as before
    small = dict(n_warmup=50, n_draws=100)
    np.testing.assert_array_equal(fit(X, y, **small).draws_,
                                  fit(X, y, subsampling="preferential_cv", **small).draws_)


def test_auto_batch_grows_only_when_the_noise_binds_the_step(noisy_logistic):
    X, y = noisy_logistic
    fast = dict(n_warmup=50, n_draws=50, n_chains=2, random_state=0)
    noisy = BayesianLogisticRegression(subsampling="uniform", **fast)
    with pytest.warns(ConvergenceWarning):
        d = noisy.fit(X, y).diagnostics_
    assert noisy.batch_size == "auto" and d["batch_size"] == 1600  # capped
    assert d["grad_evals_per_step"] == pytest.approx(1600)
    fixed = clone(noisy).set_params(batch_size=100)
    with pytest.warns(ConvergenceWarning):
        d100 = fixed.fit(X, y).diagnostics_
    assert d100["batch_size"] == 100 and d100["step_size"] < d["step_size"] / 8
    # control variates: the noise at 100 rows already allows the near noise-free step
    cv = BayesianLogisticRegression(subsampling="control_variates", **fast).fit(X, y)
    assert cv.diagnostics_["batch_size"] == 100
    # a numeric step keeps the starting batch; an exact gradient does not grow one (it reports
    # every row)
    for kw, b in (({"step_size": 1e-4}, 100), ({"sampler": "hmc", "subsampling": "full"}, 3000)):
        est = BayesianLogisticRegression(subsampling="uniform", **fast).set_params(**kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert est.fit(X[:3000], y[:3000]).diagnostics_["batch_size"] == b


def test_auto_batch_is_capped_by_the_number_of_rows(noisy_logistic):
    X, y = noisy_logistic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = BayesianLogisticRegression(subsampling="uniform", n_warmup=50, n_draws=50,
                                         n_chains=2, random_state=0, sampler="sghmc")
        est.fit(X[:700], y[:700])
        assert 100 < est.diagnostics_["batch_size"] <= 700
        # sampler="auto" with a named strategy: the strategy runs, whatever batch it reaches
        est.set_params(sampler="auto").fit(X[:700], y[:700])
        assert est.diagnostics_["batch_size"] == 700 and est.diagnostics_["sampler"] == "sghmc"
        assert est.diagnostics_["subsampling"] == "uniform"
        # subsampling="full": every row each step is the batch reported (it said 100)
        est.set_params(subsampling="full", batch_size=50).fit(X[:700], y[:700])
    assert est.diagnostics_["batch_size"] == est.preprocessing_["batch_size"] == 700


def _network_curvature_case(loc, act, seed=0, n=300, hidden=6):
    """A small network away from a mode, its preconditioner, and the top positive eigenvalue of
    its whitened Hessian from the explicit Hessian (columns of central differences)."""
    from skbayes_sg.models import GaussianPrior, MLPModel, Posterior
    from skbayes_sg.samplers import diagonal

    rng = np.random.default_rng(seed)
    X = rng.normal(loc=loc, size=(n, 3))
    y = (X[:, 0] * X[:, 1] > loc * loc).astype(int) + (X[:, 2] > loc + 1)
    model = MLPModel((3, hidden, 3), act)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    theta = model.init_position(rng)
    scale = 1.0 / np.sqrt(model.hessian_diag(theta, X) + post.prior.precision)
    eps = 1e-9  # crosses almost no ReLU kink
    H = np.stack([(post.full_grad((theta + eps * e)[None])[0]
                   - post.full_grad((theta - eps * e)[None])[0]) / (2 * eps)
                  for e in np.eye(model.n_params)])
    A = 0.5 * (H + H.T) * scale[:, None] * scale[None, :]
    return post, theta, diagonal(scale**2), np.linalg.eigvalsh(A)


def test_curvature_of_a_network_is_its_largest_positive_eigenvalue():
    # away from a mode a network's Hessian is indefinite: with unstandardized inputs its
    # dominant eigenvalue here is negative, and the power iteration's Rayleigh quotient went
    # to 1e-12 (a step as if the posterior were flat); the largest positive one limits the step
    from skbayes_sg.preprocessing import power_curvature

    post, theta, precond, eig = _network_curvature_case(10.0, "tanh")
    assert abs(eig[0]) > eig[-1] > 0  # the dominant eigenvalue is negative
    for seed in range(3):
        lam, _, evals = power_curvature(post, theta, precond, np.random.default_rng(seed),
                                        n_iter=60)
        assert 0.95 * eig[-1] < lam <= 1.0001 * eig[-1]
        assert evals == 2 * 120 * 300  # the shifted iterations are counted


def test_curvature_of_a_relu_network_is_stable():
    # differences of a ReLU network's gradient jump where a unit crosses zero: at the old step
    # of 1e-4 the estimate varied 7x between seeds on cadata (0 to 760 where the truth is
    # about 110); the kinked models' step of 1e-8 rarely crosses one
    from skbayes_sg.preprocessing import power_curvature

    post, theta, precond, eig = _network_curvature_case(0.0, "relu", seed=1, n=2000, hidden=32)
    lams = [power_curvature(post, theta, precond, np.random.default_rng(s), n_iter=60)[0]
            for s in range(5)]
    np.testing.assert_allclose(lams, eig[-1], rtol=0.05)


def test_the_splitting_step_cap_falls_with_the_measured_misfit():
    # aboba_step_cap: the integrator's 0.75 up to shape_misfit_full, then 0.75 sqrt(full / m),
    # so that h^2 times the misfit stays where it was at the full cap
    from skbayes_sg.fitting import DEFAULT_CONFIG
    from skbayes_sg.fitting._plan import aboba_step_cap
    from skbayes_sg.samplers import SGHMC

    full = DEFAULT_CONFIG.shape_misfit_full
    assert aboba_step_cap(None, DEFAULT_CONFIG) is None
    assert aboba_step_cap(full, DEFAULT_CONFIG) is None
    for m in (2 * full, 4 * full):
        cap = aboba_step_cap(m, DEFAULT_CONFIG)
        assert cap ** 2 * m == pytest.approx(0.75 ** 2 * full)
    sampler = SGHMC(integrator="aboba", step_cap=0.3)
    assert sampler.max_step == 0.3 and SGHMC(integrator="aboba", step_cap=2.0).max_step == 0.75
    with pytest.raises(ValueError, match="step_cap"):
        SGHMC(step_cap=0.0).validate()


def test_a_measurably_skewed_posterior_gets_a_smaller_step_at_the_same_batch():
    # a 10-class softmax with a class of 12 rows among 12,000 (misfit above shape_misfit_full):
    # sampler="auto" probes it (its (2p + 1) N evaluations are within shape_max_evals), caps
    # the splitting's step, and sizes the batch as without the cap (oracle: the uncapped fit)
    from skbayes_sg import BayesianLogisticRegression

    rng = np.random.default_rng(3)
    X = rng.normal(size=(12_000, 4))
    y = np.minimum((rng.random(12_000) * 10).astype(int), 8)
    y[:12] = 9
    X[:12] += 1.5
    fast = dict(n_warmup=20, n_draws=20, n_chains=2, max_doublings=0, random_state=0)
    fits = {}
    for name, config in (("capped", FitConfig()),
                         ("uncapped", FitConfig(shape_misfit_full=np.inf))):
        est = BayesianLogisticRegression(**fast)
        est._fit_config = config
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[name] = est.fit(X, y)
    misfit = fits["capped"].preprocessing_["gaussian_misfit"]
    d, u = fits["capped"].diagnostics_, fits["uncapped"].diagnostics_
    assert FitConfig().shape_misfit_full < misfit <= FitConfig().shape_misfit_max
    assert d["integrator"] == u["integrator"] == "aboba"
    assert d["batch_size"] == u["batch_size"]
    assert d["step_size"] <= 0.75 * np.sqrt(FitConfig().shape_misfit_full / misfit) + 1e-12
    assert d["step_size"] < u["step_size"]
