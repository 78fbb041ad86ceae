"""SGHMC's integrators (Euler, ABOBA): the registry, their parameters, and their stationary
variance against Monte Carlo on Gaussian targets.
"""

import dataclasses

import numpy as np
import pytest
from sklearn.base import clone

from skbayes_sg.fitting._rules import auto_step_size
from skbayes_sg.samplers import INTEGRATORS, SGHMC, SGNHT, identity
from skbayes_sg.samplers._base import SUBTRACTED_SHARE

from support.targets import chain_rngs, noisy_isotropic, run_kernel


N_SE = 4.0  # Monte-Carlo standard errors allowed


def test_integrator_registry_declares_each_integrator():
    # the registry's objects are immutable and carry what SGHMC used to switch on by name
    assert list(INTEGRATORS) == ["euler", "aboba"]
    assert {k: (v.max_step, v.couples_index) for k, v in INTEGRATORS.items()} == {
        "euler": (0.5, True), "aboba": (0.75, False)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        INTEGRATORS["euler"].max_step = 1.0
    with pytest.raises(TypeError):
        INTEGRATORS["new"] = INTEGRATORS["euler"]
    options = SGHMC._parameter_constraints["integrator"][0].options
    assert options == set(INTEGRATORS)
    for name, integrator in INTEGRATORS.items():
        sampler = SGHMC(friction=0.7, integrator=name)
        assert sampler.max_step == integrator.max_step
        assert sampler.couples_index == integrator.couples_index
        assert sampler.subtractable_noise(0.3) == integrator.subtractable_noise(0.3, 0.7)
    assert SGHMC(friction=0.7).subtractable_noise(0.2) == pytest.approx(7.0)  # 2 gamma / h
    assert SGNHT().max_step == 0.5 and SGNHT().couples_index  # SGNHT runs the Euler kernel
    with pytest.raises(ValueError, match="'integrator' parameter of SGHMC"):
        SGHMC(integrator="leapfrog").validate()


def test_sghmc_integrator_get_set_params_and_clone():
    sampler = SGHMC(friction=0.4, integrator="aboba")
    assert sampler.get_params() == {"friction": 0.4, "integrator": "aboba", "step_cap": None}
    twin = clone(sampler)
    assert twin.get_params() == sampler.get_params() and twin.max_step == 0.75
    assert sampler.set_params(integrator="euler") is sampler and sampler.max_step == 0.5
    assert twin.integrator == "aboba" and not twin.couples_index
    capped = clone(twin).set_params(step_cap=0.3)  # a cap below the integrator's
    assert capped.max_step == 0.3 and twin.max_step == 0.75


def test_grid_search_over_the_integrator():
    from sklearn.datasets import make_blobs
    from sklearn.model_selection import GridSearchCV

    from skbayes_sg import BayesianLogisticRegression

    X, y = make_blobs(120, 3, centers=2, random_state=0)
    est = BayesianLogisticRegression(sampler=SGHMC(), n_draws=100, random_state=0)
    grid = GridSearchCV(est, {"sampler__integrator": ["euler", "aboba"]}, cv=2).fit(X, y)
    assert [p["sampler__integrator"] for p in grid.cv_results_["params"]] == ["euler", "aboba"]
    assert grid.best_estimator_.sampler.integrator == grid.best_params_["sampler__integrator"]
    assert est.sampler.integrator == "euler"  # the original object is untouched


@pytest.mark.parametrize("nu", [0.0, 4.0])
@pytest.mark.parametrize("name", list(INTEGRATORS))
def test_every_integrator_matches_its_stationary_variance(name, nu):
    # 1-D U = lam u^2 / 2 at a step far from the 5% accuracy, with and without gradient noise:
    # a long simulation gives each registered integrator's closed-form variance
    sampler, lam, h = SGHMC(friction=0.8, integrator=name), 2.0, 0.35
    oracle = lam * sampler.stationary_variance(h, lam, nu)
    var, se = noisy_isotropic(sampler, h, lam, nu, n_chains=256, n_draws=6000, p=1)
    assert abs(var - oracle) <= N_SE * se
    if not (nu == 0.0 and name == "aboba"):  # ABOBA is exact without noise; else biased
        assert abs(oracle - 1.0) > 2.0 * N_SE * se  # so the check tells the oracle from 1


def test_aboba_position_variance_is_exact_at_every_stable_step():
    # the splitting's stationary theta-variance on a Gaussian is 1/lam for h^2 lam < 4 (no
    # gradient noise); Euler SGHMC's error grows with h, and both are unstable beyond
    aboba, euler, lam = SGHMC(integrator="aboba"), SGHMC(), 1.7
    h = np.linspace(0.05, 1.5, 30)
    np.testing.assert_allclose(lam * aboba.stationary_variance(h, lam, 0.0), 1.0, rtol=1e-9)
    assert lam * euler.stationary_variance(0.5, lam, 0.0) > 1.05
    assert aboba.stationary_variance(2.0 / np.sqrt(lam) + 1e-3, lam, 0.0) == np.inf


def test_aboba_noise_cap_and_larger_auto_step():
    aboba = SGHMC(friction=0.9, integrator="aboba")
    for top in (0.05, 0.8, 30.0):
        h = aboba.subtraction_cap(top)
        np.testing.assert_allclose(SUBTRACTED_SHARE * aboba.subtractable_noise(h), top, rtol=1e-9)
    assert aboba.subtraction_cap(0.0) == np.inf
    # little gradient noise: the splitting's automatic step reaches its cap, Euler's stops at
    # its 5% error
    h_aboba, h_euler = (auto_step_size(s, 1.0, 0.05, lam_min=0.9)
                        for s in (aboba, SGHMC(friction=0.9)))
    assert h_aboba == pytest.approx(aboba.max_step, rel=0.02) and h_euler < 0.6 * h_aboba


class SkewedTarget:
    """Exact gradient of the skewed, log-concave ``U(u) = u^2/2 + e^u - u`` in each coordinate."""

    exact, n_data, n_candidates = True, 1.0, 1

    def init(self, index_rngs, theta):
        return None

    def estimate(self, index_rngs, theta, est_state):
        return theta + np.expm1(theta), est_state, 1


def test_aboba_second_order_bias_at_its_step_cap():
    # oracle: quadrature of U(u) = u^2/2 + e^u - u (skewness about -0.5). At ABOBA's automatic
    # step cap (0.75, in units of the curvature 2 at the mode) the splitting's bias is second
    # order: the sd within 1.5% and the mean within 0.06 sd, where Euler at the same step
    # inflates the sd by more than 10%
    from scipy.integrate import quad

    dens = lambda x: np.exp(-(0.5 * x * x + np.exp(x) - x))  # noqa: E731
    Z = quad(dens, -12, 6)[0]
    mean = quad(lambda x: x * dens(x), -12, 6)[0] / Z
    sd = np.sqrt(quad(lambda x: (x - mean) ** 2 * dens(x), -12, 6)[0] / Z)
    h = SGHMC(integrator="aboba").max_step / np.sqrt(2.0)  # whitened by the mode's curvature 2
    theta0 = np.random.default_rng(0).normal(0.0, sd, (256, 8))
    moments = {}
    for name, sampler in {"aboba": SGHMC(integrator="aboba"), "euler": SGHMC()}.items():
        kernel = sampler.build_kernel(SkewedTarget(), h, identity())
        draws, _ = run_kernel(kernel, SkewedTarget(), theta0, chain_rngs(256), 500, 2000)
        moments[name] = (draws.mean(), draws.std())
    m, s = moments["aboba"]
    assert abs(m - mean) < 0.06 * sd and abs(s / sd - 1.0) < 0.015
    assert moments["euler"][1] / sd > 1.10
