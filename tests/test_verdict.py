"""Issue 14: the verdict of ``fit`` -- one standard, run until converged, no silent failure."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_sg.fitting import FitConfig
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.models import GaussianLinearModel, GaussianPrior, LogisticModel, Posterior
from skbayes_sg.preprocessing import find_mode, laplace_at
from skbayes_sg.preprocessing._laplace import full_hessian, laplace_kind
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
    est, _ = _fit(BayesianLogisticRegression(random_state=0, n_warmup=50, n_draws=50,
                                             max_doublings=0), big, np.tile(y, 18))
    assert est.diagnostics_["gradient_noise_left"] is not None  # 10,242 rows: subtracted


def _laplace_problem(model, n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if model.is_regression:
        y = X[:, :3].sum(1) + rng.normal(size=n)
    else:
        y = rng.integers(0, model.n_classes, size=n).astype(float)
    prior = GaussianPrior(model.prior_precision(1.0, 1.0))
    return Posterior(model, prior, X, y)


def test_wide_laplace_is_the_exact_inverse_hessian():
    # p >> N: low rank plus prior through the Woodbury identity, exact (not an approximation)
    post = _laplace_problem(GaussianLinearModel(600, False, noise_std=0.5), 30, 600)
    assert laplace_kind(post, "auto") == "wide"
    mode = find_mode(post, np.random.default_rng(0)).theta
    lap, _ = laplace_at(post, mode, "auto")
    exact = np.linalg.inv(full_hessian(post, mode))
    np.testing.assert_allclose(lap.variances, np.diag(exact), rtol=1e-6)
    z = np.random.default_rng(0).standard_normal((3, 600))
    np.testing.assert_allclose(lap.covariance.apply(z), z @ exact, rtol=1e-5, atol=1e-8)


def test_multiclass_gets_a_dense_laplace_above_500_parameters():
    # digits-sized softmax: 10 classes x 64 features + intercepts = 650 parameters
    post = _laplace_problem(LogisticModel(64, 10), 1797, 64)
    assert post.model.n_params == 650 and laplace_kind(post, "auto") == "dense"
    big = _laplace_problem(LogisticModel(100, 100), 5000, 100)  # 10,100 parameters
    assert laplace_kind(big, "auto") != "dense"


def test_wide_linear_regression_matches_the_exact_posterior(check_exact, fit_exact_linear):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 600))
    y = X @ (0.1 * rng.normal(size=600)) + 0.5 * rng.normal(size=30)
    prec = X.T @ X / 0.25 + np.eye(600)
    cov = np.linalg.inv(prec)
    reg = fit_exact_linear(X, y, 0.5, n_warmup=200, n_draws=1000, n_chains=2)
    check_exact(reg, cov @ X.T @ y / 0.25, cov)


def _consistent_factor(cov):
    """``L`` (columns ``L e_j``) of a structured covariance, after checking that its products
    agree: ``apply = L L^T``, ``variances = diag(L L^T)``, ``factor_t_rows = L``, and
    ``inverse_rows`` inverts ``factor_rows``."""
    eye = np.eye(cov.variances.size)
    L = cov.factor_rows(eye).T
    np.testing.assert_allclose(cov.apply(eye), L @ L.T, atol=1e-12)
    np.testing.assert_allclose(cov.variances, np.diag(L @ L.T), rtol=1e-10)
    np.testing.assert_allclose(cov.factor_t_rows(eye), L, atol=1e-12)
    np.testing.assert_allclose(cov.inverse_rows(cov.factor_rows(eye)), eye, atol=1e-10)
    return L


def test_kronecker_laplace_is_a_consistent_factor_close_to_the_exact_one():
    from scipy.special import softmax

    from skbayes_sg.preprocessing._kronecker import kronecker_covariance

    rng = np.random.default_rng(0)
    K, d, n = 4, 5, 3000
    X = rng.normal(size=(n, d))
    P = softmax(X @ rng.normal(size=(K, d)).T, axis=1)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1).astype(float)
    model = LogisticModel(d, K)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    mode = find_mode(post, rng).theta
    cov, _, _ = kronecker_covariance(post, mode)
    L = _consistent_factor(cov)
    exact = np.linalg.inv(full_hessian(post, mode))
    np.testing.assert_allclose(cov.variances, np.diag(exact), rtol=0.05)  # K-FAC: approximate
    # as a preconditioner: the whitened exact covariance is well conditioned
    W = np.linalg.solve(L, np.linalg.solve(L, exact).T)
    w = np.linalg.eigvalsh(0.5 * (W + W.T))
    assert 0.3 < w.min() and w.max() < 10


def _softmax_posterior(K, d, n, seed=0, scale=2.0):
    from scipy.special import softmax

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    P = softmax(X @ (scale * rng.normal(size=(K, d)) / np.sqrt(d)).T, axis=1)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    model = LogisticModel(d, K)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    return post, find_mode(post, rng).theta


def test_block_laplace_inverts_its_schur_precision_and_conditions_better_than_kronecker():
    # G - U S^-1 U^T: the exact class blocks D_k (+ prior), the off-diagonal blocks replaced by
    # the Schur term with the likelihood's null space (a constant added to every class)
    from scipy.linalg import block_diag
    from scipy.special import softmax

    from skbayes_sg.preprocessing._blocks import block_covariance
    from skbayes_sg.preprocessing._coupled import coupled_covariance
    from skbayes_sg.preprocessing._kronecker import softmax_layout

    K, d, n = 10, 20, 3000
    post, mode = _softmax_posterior(K, d, n)
    cov, evals = block_covariance(post, mode)
    assert evals == n and cov.kind == "block"
    eye = np.eye(mode.size)
    L = _consistent_factor(cov)
    np.testing.assert_allclose(cov.factor_rows(eye[3]), L[:, 3], atol=1e-12)  # a vector
    blocks = eye[:6].reshape(2, 3, -1)  # SGLD draws its noise in (steps, chains, p) blocks
    np.testing.assert_allclose(cov.factor_rows(blocks), L[:, :6].T.reshape(2, 3, -1), atol=1e-12)
    order, prior_sd, _ = softmax_layout(post)
    named = post.model.unpack(mode)
    X1 = np.hstack([post.X, np.ones((n, 1))])
    c = softmax(post.X @ named["coef"].T + named["intercept"], axis=1)
    c *= 1.0 - c
    D = np.stack([X1.T @ (X1 * c[:, [k]]) for k in range(K)])
    P = np.diag(prior_sd**-2.0)
    U = D.reshape(-1, d + 1)
    precision = block_diag(*(D + P)) - U @ np.linalg.solve(D.sum(0) + P, U.T)
    Sigma = (L @ L.T)[np.ix_(order, order)]  # class-major
    np.testing.assert_allclose(Sigma @ precision, np.eye(mode.size), atol=1e-8)
    H = full_hessian(post, mode)
    kron = coupled_covariance(post, mode)[0]
    spectra = {name: np.linalg.eigvalsh(F.T @ H @ F) for name, F in
               [("block", L), ("kronecker", kron.factor_rows(eye).T)]}
    assert 0.6 < spectra["block"].min() and spectra["block"].max() < 1.5
    kappa = {name: w.max() / w.min() for name, w in spectra.items()}
    assert kappa["block"] < 0.6 * kappa["kronecker"]


def test_large_softmax_gets_the_block_laplace_while_it_is_affordable(monkeypatch):
    from skbayes_sg.preprocessing import _blocks

    big = _laplace_problem(LogisticModel(100, 100), 5000, 100)  # 10,100 parameters
    assert laplace_kind(big, "auto") == laplace_kind(big, "laplace") == "block"
    monkeypatch.setattr(_blocks, "BLOCK_FLOPS", 1e9)  # n K d1^2 = 5.2e9 multiply-adds
    assert laplace_kind(big, "auto") == "kronecker"
    monkeypatch.undo()
    monkeypatch.setattr(_blocks, "BLOCK_FLOATS", 1e5)  # K d1^2 = 1.02e6 floats per factor
    assert laplace_kind(big, "auto") == "kronecker"


def test_hessian_rows_are_exact_and_chunked_by_their_widest_temporary(monkeypatch):
    # V -> V H against the dense Hessian; a softmax chunk holds l x K directional predictors per
    # row, so its rows are bounded by that width (sized by l alone, 198 directions of a
    # 100-class model on 5,000 rows peaked at 2.5 GB)
    from skbayes_sg.preprocessing._lowrank import hessian_rows

    rng, K, d, n = np.random.default_rng(0), 5, 4, 300
    model = LogisticModel(d, K)
    post = Posterior(model, GaussianPrior(model.prior_precision(1.0)), rng.normal(size=(n, d)),
                     rng.integers(0, K, size=n), rng.uniform(0.5, 2.0, size=n))
    theta, V = rng.normal(size=model.n_params), rng.normal(size=(7, model.n_params))
    exact, widths, chunks = V @ full_hessian(post, theta), [], Posterior.chunks
    monkeypatch.setattr(Posterior, "chunks", lambda self, width=1: widths.append(width)
                        or chunks(self, width))
    np.testing.assert_allclose(hessian_rows(post, theta)(V), exact, rtol=1e-10, atol=1e-10)
    assert widths == [7 * K]


def test_coupled_intercepts_are_exact_and_condition_better_than_kronecker(monkeypatch):
    # K-FAC drops the intercept-weight coupling sum_i S_i (x) x_i: the intercept contrasts come
    # out several times too narrow, and intercept-heavy directions too wide.  Keeping the
    # intercept rows exact (Schur complement, the weights' regression on them by conjugate
    # gradients) gives the intercepts their exact marginal covariance and a better spectrum.
    from skbayes_sg.models import KroneckerCovariance
    from skbayes_sg.preprocessing import _coupled
    from skbayes_sg.preprocessing._coupled import coupled_covariance
    from skbayes_sg.preprocessing._kronecker import kronecker_covariance

    K, d, n = 10, 20, 3000
    post, mode = _softmax_posterior(K, d, n)
    model, H = post.model, full_hessian(post, mode)
    base, _, gram = kronecker_covariance(post, mode)  # the Gram pass made (and counted) once
    cov, evals = coupled_covariance(post, mode, gram)
    iterations = (evals / n - 1) / K
    assert iterations == int(iterations) and 1 <= iterations <= _coupled._CG_MAX_ITER
    L = _consistent_factor(cov)
    idx = model.unpack(np.arange(mode.size))["intercept"]
    exact = np.linalg.inv(H)[np.ix_(idx, idx)]

    def marginal(F):
        return (F @ F.T)[np.ix_(idx, idx)]

    ratios = np.linalg.eigvals(np.linalg.solve(marginal(L), exact)).real
    assert np.all(np.abs(ratios - 1) < 1e-2)  # CG stops at residuals 1e-2: S errs at their square
    before = np.linalg.eigvals(np.linalg.solve(marginal(base.factor_rows(np.eye(mode.size)).T),
                                               exact)).real
    assert before.max() > 2.0  # the defect
    spectra = {name: np.linalg.eigvalsh(F.T @ H @ F) for name, F in
               [("kronecker", base.factor_rows(np.eye(mode.size)).T), ("coupled", L)]}
    assert spectra["coupled"].min() > 2 * spectra["kronecker"].min()
    assert spectra["coupled"].max() < 0.9 * spectra["kronecker"].max()
    assert 0.35 < spectra["coupled"].min() and spectra["coupled"].max() < 2.5
    # beyond COUPLING_FLOPS the coupling runs on a fixed uniform subsample, scaled: nearly the same
    monkeypatch.setattr(_coupled, "COUPLING_FLOPS", 1.0)
    monkeypatch.setattr(_coupled, "_MIN_ROWS", 1000)
    sub, sub_evals = coupled_covariance(post, mode)
    assert sub_evals % 1000 == 0 and sub_evals < evals / 2
    w = np.linalg.eigvalsh(sub.factor_rows(np.eye(mode.size)) @ H @ sub.factor_rows(
        np.eye(mode.size)).T)
    assert w.max() / w.min() < 1.5 * spectra["coupled"].max() / spectra["coupled"].min()
    # uncentred features (mnist's pixels): the factor works in centred coordinates, so shifting
    # X changes neither its conditioning nor the intercepts' accuracy (the class mean of the
    # intercepts, prior-only, is left alone: a shifted one had a whitened curvature of 15 on mnist)
    X = post.X + 3.0 * np.random.default_rng(1).random(d)
    shifted = Posterior(model, post.prior, X, post.y)
    s_mode = find_mode(shifted, np.random.default_rng(0)).theta
    H = full_hessian(shifted, s_mode)
    Ls = _consistent_factor(coupled_covariance(shifted, s_mode)[0])
    w = np.linalg.eigvalsh(Ls.T @ H @ Ls)
    assert w.max() / w.min() < 1.1 * spectra["coupled"].max() / spectra["coupled"].min()
    # and in those coordinates the marginal of the centred intercepts b' = b + E W x_bar is
    # close to exact (the conjugate gradients stop after _CG_MAX_ITER = 5 iterations here)
    J = np.zeros((K, mode.size))
    J[np.arange(K), idx] = 1.0
    wi = model.unpack(np.arange(mode.size))["coef"]  # (K, d) flat indices
    for k in range(K):
        for c in range(K):
            J[k, wi[c]] += (float(k == c) - 1.0 / K) * X.mean(axis=0)
    ratios = np.linalg.eigvals(np.linalg.solve(J @ Ls @ Ls.T @ J.T,
                                               J @ np.linalg.solve(H, J.T))).real
    assert np.all(np.abs(ratios - 1) < 0.1)
    # without intercepts there is nothing to couple: the Kronecker factor itself
    plain = LogisticModel(d, K, fit_intercept=False)
    post0 = Posterior(plain, GaussianPrior(plain.prior_precision(1.0)), post.X, post.y)
    mode0 = find_mode(post0, np.random.default_rng(0)).theta
    assert isinstance(coupled_covariance(post0, mode0)[0], KroneckerCovariance)


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


def test_softmax_anchor_responses_are_stored_row_major():
    # every step gathers b rows of them: column-major (as the chunks give them) cost 3.3 ms per
    # step against 0.5 ms on 6,400 rows of a 100-class model
    from skbayes_sg.preprocessing import anchor_terms

    post, mode = _softmax_posterior(6, 4, 20_000)  # three row chunks
    G, responses = anchor_terms(post, mode)
    assert responses.shape == (20_000, 6) and responses.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(G, post.full_grad(mode[None])[0] - post.prior.grad(mode[None])[0],
                               rtol=1e-8, atol=1e-8)
