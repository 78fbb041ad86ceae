"""Statistical and protocol tests of the samplers on Gaussian targets.

Every sampler runs with the exact gradient of ``U = (theta - mu)^T S^-1
(theta - mu) / 2`` (emcee-style tests), given by a tiny gradient estimator
(:class:`GaussianTarget`).  Moments are checked in coordinates whitened by
the true ``S`` (``z = chol(S)^-1 (theta - mu)``, so the target is ``N(0, I)``)
against Monte-Carlo standard errors ``sd / sqrt(ESS)`` (the package's
multi-chain ESS; batch means if the diagnostics do not import).  The SG
samplers' known discretisation bias enters the tolerance only through the 5%
that the accurate step (``auto_step_size``, the ``step_size="auto"`` rule of
``estimators/_rules.py``)
promises; SGLD and SGHMC are further checked against their exact stationary
covariance (``stationary_variance``), where the tolerance is Monte-Carlo error
alone.  With injected gradient noise, ``stationary_variance`` is the oracle of
every SG sampler (SGNHT's is the thermostat's mean-field fixed point); pSGLD
runs at its default decay=0.999, which removes the bias decay=0.99 has
without the Gamma term.
"""

import copy

import numpy as np
import pytest
from sklearn.base import clone

from skbayes_sg.fitting._rules import auto_step_size
from skbayes_sg.models import Laplace
from skbayes_sg.samplers import (
    HMC,
    PSGLD,
    SAMPLERS,
    SGHMC,
    SGLD,
    SGNHT,
    dense,
    diagonal,
    from_laplace,
    identity,
)
from skbayes_sg.samplers._base import SUBTRACTED_SHARE

from support.targets import (
    GaussianTarget,
    NoisyIsotropic,
    chain_rngs,
    gaussian,
    mc_se,
    noisy_isotropic,
    run_kernel,
)


N_SE = 4.0  # Monte-Carlo standard errors allowed
AUTO_TOL = 0.05  # stationary-variance error that the accurate step promises
SG_NAMES = ["sgld", "psgld", "sghmc", "aboba", "sgnht"]
EXACT_ORACLE = {"sgld", "sghmc", "aboba"}  # linear recursions: stationary_variance is exact


# the registry's samplers, and SGHMC with its symmetric splitting
MAKE = {**SAMPLERS, "aboba": lambda: SGHMC(integrator="aboba")}


def _whitened_moments(draws, mu, S):
    """Means and second moments E[z_i z_j] of whitened draws, with standard errors."""
    L = np.linalg.cholesky(S)
    z = np.linalg.solve(L, (draws - mu).reshape(-1, len(mu)).T).T.reshape(draws.shape)
    p = len(mu)
    prods = (z[..., :, None] * z[..., None, :]).reshape(z.shape[:2] + (p * p,))
    se = mc_se(np.concatenate([z, prods], axis=2))
    second = prods.mean(axis=(0, 1)).reshape(p, p)
    return z.mean(axis=(0, 1)), se[:p], second, se[p:].reshape(p, p)


def _predicted_second(sampler, h, precond_S, S):
    """Exact stationary E[z z^T] of SGLD/SGHMC (whitened by S) with preconditioner M."""
    Lm = np.linalg.cholesky(precond_S)
    lam, V = np.linalg.eigh(Lm.T @ np.linalg.inv(S) @ Lm)  # curvatures in u = Lm^-1 theta
    cov_u = V @ np.diag([sampler.stationary_variance(h, lj, 0.0) for lj in lam]) @ V.T
    Ls = np.linalg.cholesky(S)
    W = np.linalg.solve(Ls, Lm)
    return W @ cov_u @ W.T


def _sampler_on_gaussian(name, preconditioned):
    """Sampler, target and step-size inputs for the dense(S) or identity() case."""
    sampler = MAKE[name]()
    p = 4
    if preconditioned:
        mu, S = gaussian(p, 30.0, seed=1)
        precond, M = dense(S), S
    else:
        mu, S = gaussian(p, 3.0, seed=2)
        precond, M = identity(), np.eye(p)
    lam = np.linalg.eigvalsh(np.linalg.cholesky(M).T @ np.linalg.inv(S) @ np.linalg.cholesky(M))
    return sampler, mu, S, precond, M, lam


@pytest.mark.parametrize("preconditioned", [True, False], ids=["dense", "identity"])
@pytest.mark.parametrize("name", ["sgld", "psgld", "sghmc", "aboba", "sgnht",
                                  pytest.param("hmc", marks=pytest.mark.slow)])
def test_gaussian_moments(name, preconditioned):
    sampler, mu, S, precond, M, lam = _sampler_on_gaussian(name, preconditioned)
    target = GaussianTarget(mu, S)
    p, C = len(mu), 4
    if name == "hmc":
        h = 0.5
        if not preconditioned:
            sampler.set_params(trajectory_length=1.5 * np.sqrt(lam.max() / lam.min()))
    else:
        h = auto_step_size(sampler, lam.max(), 0.0, lam_min=lam.min(), tol=AUTO_TOL)
    kernel = sampler.build_kernel(target, h, precond)
    L = np.linalg.cholesky(S)
    theta0 = mu + np.random.default_rng(3).standard_normal((C, p)) @ L.T
    draws, _ = run_kernel(kernel, target, theta0, chain_rngs(C), 2000, 18000)
    assert np.isfinite(draws).all()
    mean, mean_se, second, second_se = _whitened_moments(draws, mu, S)
    np.testing.assert_array_less(np.abs(mean), N_SE * mean_se)
    bias = 0.0 if name == "hmc" else AUTO_TOL
    np.testing.assert_array_less(np.abs(second - np.eye(p)), bias + N_SE * second_se)
    if name in EXACT_ORACLE:
        predicted = _predicted_second(sampler, h, M, S)
        assert np.max(np.abs(predicted - np.eye(p))) <= AUTO_TOL
        np.testing.assert_array_less(np.abs(second - predicted), N_SE * second_se)


# Fixed steps (times 1/lam) inside stability but far outside the 5% accuracy:
# SGLD and SGHMC inflate the variance by ~40%, SGNHT under-disperses by ~11%.
LARGE_STEP = {"sgld": 0.5, "psgld": 0.5, "sghmc": 0.4, "aboba": 0.4, "sgnht": 0.3}


@pytest.mark.parametrize("name", SG_NAMES)
def test_gradient_noise_accurate_vs_fixed_step(name):
    # U = lam |theta|^2 / 2 in 8 dimensions, gradient noise of variance nu.
    sampler, lam, nu = MAKE[name](), 2.0, 4.0
    var, se = noisy_isotropic(sampler, auto_step_size(sampler, lam, nu, tol=AUTO_TOL), lam, nu)
    assert abs(var - 1.0) <= AUTO_TOL + N_SE * se
    h_big = LARGE_STEP[name] / lam
    oracle = lam * sampler.stationary_variance(h_big, lam, nu)  # pSGLD: in SGLD units
    h_big *= sampler.step_scale(lam, nu, 1.0)
    var_big, se_big = noisy_isotropic(sampler, h_big, lam, nu, n_draws=4000)
    assert abs(var_big - 1.0) > AUTO_TOL + N_SE * se_big
    if name != "psgld":  # pSGLD's oracle is SGLD's at the typical G: approximate
        assert abs(var_big - oracle) <= N_SE * se_big


@pytest.mark.parametrize("name", ["sgld", "sghmc", "aboba"])
def test_noise_correction_leaves_the_exact_gradient_scheme(name):
    # U = lam |theta|^2 / 2 with gradient noise of variance nu (nine tenths of what may be
    # subtracted) at a step where it inflates the variance by a further ~18%: subtracting the
    # measured nu from the injected noise gives the stationary variance of the noise-free scheme
    # (the closed form at nu = 0)
    sampler, lam, h = MAKE[name](), 2.0, 0.1
    nu = 0.9 * SUBTRACTED_SHARE * sampler.subtractable_noise(h)
    target = NoisyIsotropic(lam, nu, 0)
    kernel = sampler.build_kernel(target, h, identity(), noise_correction=np.full(8, nu))
    theta0 = np.random.default_rng(0).standard_normal((64, 8)) / np.sqrt(lam)
    draws, _ = run_kernel(kernel, target, theta0, chain_rngs(64), 2000, 6000)
    sq = lam * np.mean(draws**2, axis=2, keepdims=True)
    var, se = sq.mean(), mc_se(sq)[0]
    exact, noisy = (lam * sampler.stationary_variance(h, lam, n) for n in (0.0, nu))
    assert noisy - exact > 0.15
    assert abs(var - exact) <= N_SE * se


@pytest.mark.parametrize("name", ["sgld", "sghmc", "aboba"])
def test_noise_correction_removes_at_most_its_share_of_the_injected_noise(name):
    sampler, h, p = MAKE[name](), 0.1, 20000
    correction = np.where(np.arange(p) < p // 2, 1e9, 0.0)  # far beyond what can be removed
    kernel = sampler.build_kernel(NoisyIsotropic(1.0, 0.0, 0), h, identity(),
                                  noise_correction=correction)
    block = kernel.draw_block(chain_rngs(2), 4, p)  # SGHMC: (noise, EWSG uniforms) per step
    noise = np.asarray([step[0] for step in block] if name == "sghmc" else block)
    # sqrt(h) xi; sqrt(2 gamma h) xi; sqrt(1 - a^2) xi, a = e^{-gamma h}
    injected = {"sgld": h, "sghmc": 2.0 * h, "aboba": 1.0 - np.exp(-2.0 * h)}[name]
    sd = noise.reshape(-1, 2, p // 2).std(axis=(0, 2))  # corrected half, untouched half
    np.testing.assert_allclose(sd**2, [(1 - SUBTRACTED_SHARE) * injected, injected], rtol=0.03)


class CorrelatedNoise(NoisyIsotropic):
    """``U = lam |theta|^2 / 2`` whose gradient noise is one shared normal in every coordinate:
    variance ``nu`` per coordinate, none in the directions orthogonal to ``(1, ..., 1)``."""

    def estimate(self, index_rngs, theta, rng):
        shared = rng.standard_normal((theta.shape[0], 1))
        return self.lam * theta + self.sd * shared, rng, 1


@pytest.mark.parametrize("name", ["sgld", "aboba"])
def test_a_diagonal_correction_of_correlated_noise_costs_at_most_its_share(name):
    # the pilot measures a variance per coordinate; correlated noise has none orthogonal to
    # (1, 1), where the correction then removes injected noise that nothing replaces: the
    # variance there falls by the subtracted share and no more (oracle: the closed form of
    # the noise-free scheme), while along (1, 1) the noise is replaced exactly
    sampler, lam, h = MAKE[name](), 1.0, 0.1
    nu = 10 * SUBTRACTED_SHARE * sampler.subtractable_noise(h)  # measured: far beyond the cap
    target = CorrelatedNoise(lam, nu, 0)
    kernel = sampler.build_kernel(target, h, identity(), noise_correction=np.full(2, nu))
    theta0 = np.random.default_rng(1).standard_normal((64, 2))
    draws, _ = run_kernel(kernel, target, theta0, chain_rngs(64), 2000, 6000)
    across = lam * ((draws[..., 0] - draws[..., 1]) ** 2 / 2)[..., None]
    exact = lam * sampler.stationary_variance(h, lam, 0.0)
    var, se = across.mean(), mc_se(across)[0]
    assert abs(var - (1 - SUBTRACTED_SHARE) * exact) <= N_SE * se


@pytest.mark.parametrize("name", ["psgld", "sgnht"])
def test_noise_correction_needs_sgld_or_sghmc(name):
    with pytest.raises(ValueError, match="noise_correction needs sampler='sgld' or 'sghmc'"):
        MAKE[name]().build_kernel(NoisyIsotropic(1.0, 1.0, 0), 0.1, identity(),
                                      noise_correction=np.ones(2))


@pytest.mark.parametrize("target_accept", [0.65, 0.8, 0.95])
@pytest.mark.parametrize("preconditioned", [True, False], ids=["dense", "identity"])
def test_hmc_acceptance_after_adaptation(target_accept, preconditioned):
    # Dimensions where a trajectory has a few leapfrog steps (see HMC Notes).
    p = 20 if preconditioned else 10
    mu, S = gaussian(p, 30.0, seed=4)
    target = GaussianTarget(mu, S)
    length = 1.5 if preconditioned else 1.5 * np.sqrt(30.0)
    sampler = HMC(trajectory_length=length, target_accept=target_accept)
    kernel = sampler.build_kernel(target, 0.1, dense(S) if preconditioned else identity())
    _, state = run_kernel(kernel, target, np.tile(mu, (4, 1)), chain_rngs(4), 1000, 2000)
    info = kernel.info(state)
    assert np.all(np.abs(info["accept_rate"] - target_accept) <= 0.1)
    assert np.all(info["n_divergent"] == 0)
    assert not state.adapting and state.n_steps == 2000
    np.testing.assert_array_equal(kernel.step_size(state), np.exp(state.log_step_bar))
    assert 1.0 <= info["n_leapfrog"] <= 100.0


@pytest.mark.parametrize("name", SG_NAMES + ["hmc"])
def test_step_does_not_mutate_state(name):
    mu, S = gaussian(3, 10.0, seed=5)
    target = GaussianTarget(mu, S)
    kernel = MAKE[name]().build_kernel(target, 0.3, dense(S))
    rngs = chain_rngs(4)
    state = start = kernel.init(np.tile(mu, (4, 1)), rngs)
    randoms = kernel.draw_block(rngs, 6, 3)
    for t in range(6):
        before, r_before = copy.deepcopy(state), copy.deepcopy(randoms[t])
        new, _, n_evals = kernel.step((), state, None, randoms[t])
        for old, kept in zip(state, before):
            np.testing.assert_array_equal(old, kept)
        for old, kept in zip(randoms[t], r_before):
            np.testing.assert_array_equal(old, kept)
        assert n_evals >= 1
        state = new
    assert not np.array_equal(state.position, start.position)


@pytest.mark.parametrize("preconditioned, step", [(False, 10.0), (True, 1e4)])
def test_hmc_divergent_transitions_are_rejected(preconditioned, step):
    # a dense factor whitens the final momentum by a triangular solve, which must not see the
    # non-finite momenta of an overflowing trajectory (step 1e4: they reach inf and NaN)
    target = GaussianTarget(np.zeros(2), np.eye(2))
    precond = dense(np.array([[1.0, 0.3], [0.3, 0.5]])) if preconditioned else identity()
    kernel = HMC(trajectory_length=1e3 * step).build_kernel(target, step, precond)
    theta0 = np.ones((2, 2))
    with np.errstate(all="ignore"):
        draws, state = run_kernel(kernel, target, theta0, chain_rngs(2), 0, 20)
    info = kernel.info(state)
    np.testing.assert_array_equal(info["n_divergent"], [20, 20])
    np.testing.assert_array_equal(info["accept_rate"], [0.0, 0.0])
    np.testing.assert_array_equal(draws, np.broadcast_to(theta0[:, None], draws.shape))
    assert np.isfinite(state.gradient).all() and np.isfinite(state.potential).all()
    assert info["n_leapfrog"] == 100.0
    np.testing.assert_allclose(kernel.step_size(state), [step, step])


def test_hmc_needs_exact_estimator():
    # build_kernel's guard for estimators built outside fit (fit's messages: test_errors.py)
    with pytest.raises(ValueError, match=r"HMC\(\) cannot run on .* \(exact=False"):
        HMC().build_kernel(NoisyIsotropic(1.0, 1.0, 0), 0.1, identity())


@pytest.mark.parametrize("name", SG_NAMES + ["hmc"])
def test_chain_independent_of_other_chains(name):
    # Chain 0 alone and chain 0 among 4 consume the same random numbers, so the
    # trajectories are bit-identical.  Element-wise algebra (diagonal) only: a
    # dense matrix product may round differently for 1 row and for 4 (BLAS).
    mu, S = np.array([1.0, -2.0, 0.5]), np.diag([1.0, 4.0, 9.0])
    target = GaussianTarget(mu, S)
    kernel = MAKE[name]().build_kernel(target, 0.2, diagonal(np.diag(S)))
    theta0 = mu + np.random.default_rng(7).standard_normal((4, 3))
    together, _ = run_kernel(kernel, target, theta0, chain_rngs(4, seed=8), 150, 150, block=64)
    alone, _ = run_kernel(kernel, target, theta0[:1], chain_rngs(1, seed=8), 150, 150, block=64)
    np.testing.assert_array_equal(alone[0], together[0])
    assert not np.array_equal(together[0], together[1])


@pytest.mark.parametrize("sampler, param", [
    (SGHMC(friction=-1.0), "friction"), (SGHMC(friction=float("nan")), "friction"),
    (PSGLD(decay=2.0), "decay"), (PSGLD(eps=0.0), "eps"), (SGNHT(diffusion=-1.0), "diffusion"),
    (HMC(target_accept=1.5), "target_accept"), (HMC(max_leapfrog=0), "max_leapfrog"),
    (HMC(trajectory_length=np.inf), "trajectory_length")])
def test_validate_names_the_bad_parameter(sampler, param):
    with pytest.raises(ValueError, match=param):
        sampler.validate()
    with pytest.raises(ValueError, match=param):  # build_kernel validates too
        sampler.build_kernel(GaussianTarget(np.zeros(2), np.eye(2)), 0.1, identity())


def test_preconditioners_share_one_interface():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 3))
    cov, g = A @ A.T + np.eye(3), rng.standard_normal((4, 3))
    for precond, M in [(identity(), np.eye(3)), (diagonal(np.diag(cov)), np.diag(np.diag(cov))),
                       (dense(cov), cov), (from_laplace(Laplace(np.zeros(3), cov)), cov),
                       (from_laplace(Laplace(np.zeros(3), np.diag(cov))), np.diag(np.diag(cov)))]:
        np.testing.assert_allclose(precond.apply(np.eye(3)), M)
        np.testing.assert_allclose(precond.from_u(precond.to_u(g)), g @ M)
        np.testing.assert_allclose(precond.inv(precond.from_u(g)), g)
    assert [p.kind for p in (identity(), diagonal([1.0]), dense(cov))] == [
        "identity", "diagonal", "dense"]


def test_params_protocol_and_clone():
    sampler = SGHMC(friction=0.3)
    params = {"friction": 0.3, "integrator": "euler", "step_cap": None}
    assert sampler.get_params() == params
    twin = clone(sampler)
    assert twin is not sampler and twin.get_params() == params
    assert sampler.set_params(friction=0.7) is sampler and sampler.friction == 0.7
    assert twin.friction == 0.3
    with pytest.raises(ValueError, match="friction"):
        sampler.set_params(gamma=1.0)
    assert HMC().get_params() == {"max_leapfrog": 100, "target_accept": 0.8,
                                  "trajectory_length": 1.5}
    assert repr(clone(HMC(target_accept=0.9))) == "HMC(target_accept=0.9)"
    assert {k: type(v()) for k, v in SAMPLERS.items()} == {
        "sgld": SGLD, "psgld": PSGLD, "sghmc": SGHMC, "sgnht": SGNHT, "hmc": HMC}
    assert HMC.needs_exact_gradient and not SGLD.needs_exact_gradient
    assert HMC.adapts_step_size and not SGHMC.adapts_step_size
    assert {k for k, v in SAMPLERS.items() if v().couples_index} == {"sgld", "sghmc", "sgnht"}
    assert not SGHMC(integrator="aboba").couples_index
