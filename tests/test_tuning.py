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
