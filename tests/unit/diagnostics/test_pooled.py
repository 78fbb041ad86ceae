"""The pooled predictive's Monte-Carlo error against draws with a known error."""

import numpy as np
import pytest

from skbayes_sg.diagnostics import pooled_error


def _draws(rng, C, D, rows, modes_sd, within_sd, shape=()):
    """Chains whose means sit at ``modes_sd``-spread modes, with iid ``within_sd`` draws."""
    modes = rng.normal(0.0, modes_sd, size=(C, 1, rows, *shape))
    return modes + rng.normal(0.0, within_sd, size=(C, D, rows, *shape))


@pytest.mark.parametrize("modes_sd", [0.0, 0.05])
def test_gaussian_error_and_modes_share_match_the_construction(modes_sd):
    rng = np.random.default_rng(0)
    C, D, rows, within_sd = 8, 400, 300, 0.5
    scale = np.full(rows, 2.0)
    values = _draws(rng, C, D, rows, modes_sd, within_sd)
    var = modes_sd**2 + within_sd**2 / D  # the pooled mean's variance times C
    truth = np.sqrt(var / C) / (np.sqrt(2 * np.pi) * 2.0)
    got = pooled_error(values, scale=scale, tolerance=1.0)
    # the between-chain variance (C - 1 = 7 degrees of freedom) is floored at the within one:
    # conservative where the modes do not spread (the floor binds for about half the rows)
    assert truth * (0.95 if modes_sd else 1.0) <= got.error <= truth * (1.05 if modes_sd else 1.2)
    assert got.modes_share == pytest.approx(modes_sd**2 / var, abs=0.08)
    assert got.doublings == 0.0


def test_class_probabilities_are_measured_in_total_variation():
    rng = np.random.default_rng(1)
    C, D, rows, K, sd = 4, 500, 200, 3, 0.1
    values = _draws(rng, C, D, rows, 0.0, sd, shape=(K,))
    truth = 0.5 * K * sd / np.sqrt(C * D)
    # conservative by the floor on the between-chain variance (3 degrees of freedom here)
    assert truth <= pooled_error(values, tolerance=1.0).error <= 1.3 * truth


def test_doublings_halve_the_within_variance_and_never_the_modes():
    rng = np.random.default_rng(2)
    values = _draws(rng, 4, 200, 100, 0.0, 1.0)
    scale = np.ones(100)
    err = pooled_error(values, scale=scale, tolerance=1.0).error
    # with no mode spread the error falls by sqrt(2) per doubling
    need = pooled_error(values, scale=scale, tolerance=err / 3.0)
    assert need.doublings == np.ceil(np.log2(9.0)) and not need.error <= need.tolerance
    moded = _draws(rng, 4, 200, 100, 0.5, 1.0)
    stuck = pooled_error(moded, scale=scale, tolerance=0.01)
    assert stuck.doublings == np.inf and stuck.modes_share > 0.9


def test_one_chain_and_constant_quantities():
    rng = np.random.default_rng(3)
    one = pooled_error(_draws(rng, 1, 300, 50, 0.0, 1.0), scale=np.ones(50), tolerance=1.0)
    assert one.modes_share == 0.0 and one.error > 0
    const = pooled_error(np.ones((2, 50, 10, 3)) / 3.0, tolerance=0.02)
    assert const.error < 1e-12 and const.doublings == 0.0


def test_the_noise_sd_adds_its_total_variation():
    # constant means: only the noise sd's error counts, 2 phi(1) se(log sigma) times the
    # noise's share of each row's variance
    rng = np.random.default_rng(4)
    C, D, rows = 6, 300, 40
    means = np.zeros((C, D, rows))
    log_noise = rng.normal(0.0, 0.05, size=(C, 1)) + rng.normal(0.0, 0.2, size=(C, D))
    sigma2 = np.exp(2 * log_noise.mean())
    scale = np.sqrt(sigma2 * np.linspace(1.0, 4.0, rows))  # the noise's share: 1 down to 1/4
    got = pooled_error(means, scale=scale, log_noise=log_noise, tolerance=1.0)
    var = 0.05**2 + 0.2**2 / D  # per chain mean of log sigma: modes plus its own error
    phi1 = np.exp(-0.5) / np.sqrt(2 * np.pi)
    truth = 2 * phi1 * np.sqrt(var / C) * np.mean(sigma2 / scale**2)
    assert truth * 0.6 <= got.error <= truth * 1.5  # 5 degrees of freedom between the chains
    assert got.modes_share > 0.8


def test_a_non_finite_predictive_sd_is_an_infinite_error():
    values = np.zeros((2, 10, 3))
    got = pooled_error(values, scale=np.array([1.0, np.inf, 1.0]), tolerance=0.02)
    assert got.error == np.inf and not got.error <= got.tolerance
