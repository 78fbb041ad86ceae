"""The step-size and batch-size rules of `estimators/_tuning.py` against the closed forms."""

import numpy as np
import pytest

from skbayes_sg.estimators._tuning import auto_batch_size, auto_step_size
from skbayes_sg.samplers import SAMPLERS

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
