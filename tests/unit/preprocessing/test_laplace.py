"""Laplace approximations: wide (Woodbury), Kronecker, block, coupled intercepts, Hessian rows.

Oracles: the dense inverse Hessian, the consistency of each factor's products, and the spectrum
of the whitened exact Hessian (how well each approximation preconditions).
"""

import numpy as np
import pytest

from skbayes_sg.models import GaussianLinearModel, GaussianPrior, LogisticModel, Posterior
from skbayes_sg.preprocessing import ModeConfig, find_mode, laplace_at
from skbayes_sg.preprocessing._laplace import full_hessian, laplace_kind

from support.problems import softmax_posterior


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


def test_block_laplace_inverts_its_schur_precision_and_conditions_better_than_kronecker():
    # G - U S^-1 U^T: the exact class blocks D_k (+ prior), the off-diagonal blocks replaced by
    # the Schur term with the likelihood's null space (a constant added to every class)
    from scipy.linalg import block_diag
    from scipy.special import softmax

    from skbayes_sg.preprocessing._blocks import block_covariance
    from skbayes_sg.preprocessing._coupled import coupled_covariance
    from skbayes_sg.preprocessing._kronecker import softmax_layout

    K, d, n = 10, 20, 3000
    post, mode = softmax_posterior(K, d, n)
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


def test_large_softmax_gets_the_block_laplace_while_it_is_affordable():
    from skbayes_sg.preprocessing._blocks import BLOCK_FLOATS, block_fits

    big = _laplace_problem(LogisticModel(100, 100), 5000, 100)  # 10,100 parameters
    assert laplace_kind(big, "auto") == laplace_kind(big, "laplace") == "block"
    assert block_fits(5000, 100, 101)
    assert not block_fits(5000, 100, 101, flops=1e9)  # n K d1^2 = 5.2e9 multiply-adds
    assert not block_fits(5000, 100, 101, floats=1e5)  # K d1^2 = 1.02e6 floats per factor
    # K d1^2 = 100 x 201^2 = 4.04e6 floats per factor: above BLOCK_FLOATS, so Kronecker
    wider = _laplace_problem(LogisticModel(200, 100), 200, 200)
    assert 100 * 201**2 > BLOCK_FLOATS and laplace_kind(wider, "auto") == "kronecker"


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


@pytest.mark.slow
def test_coupled_intercepts_are_exact_and_condition_better_than_kronecker():
    # K-FAC drops the intercept-weight coupling sum_i S_i (x) x_i: the intercept contrasts come
    # out several times too narrow, and intercept-heavy directions too wide.  Keeping the
    # intercept rows exact (Schur complement, the weights' regression on them by conjugate
    # gradients) gives the intercepts their exact marginal covariance and a better spectrum.
    from skbayes_sg.models import KroneckerCovariance
    from skbayes_sg.preprocessing import _coupled
    from skbayes_sg.preprocessing._coupled import coupled_covariance
    from skbayes_sg.preprocessing._kronecker import kronecker_covariance

    K, d, n = 10, 20, 3000
    post, mode = softmax_posterior(K, d, n)
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
    # beyond coupling_flops the coupling runs on a fixed uniform subsample, scaled: nearly the same
    sub, sub_evals = coupled_covariance(
        post, mode, config=ModeConfig(coupling_flops=1.0, coupling_min_rows=1000))
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
