"""EWSG in the sampler layer: the seed-002 §5.1 Gaussian toy (``benchmarks/_ewsg_toy.py``,
which states it) at equal cost against uniform subsampling, and the SGLD variant by hand.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from skbayes_sg.samplers import SGLD, _ewsg, diagonal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from _ewsg_toy import (B0, CASES, M, N_CHAINS, N_DRAWS, N_SD, N_WARMUP, THIN,  # noqa: E402
                       ToyMinibatches, variance_ratio)


@pytest.mark.parametrize("name", ["sghmc", "sgld"])
def test_ewsg_beats_uniform_at_equal_cost_and_the_old_sign_does_not(name, monkeypatch):
    sampler, h = CASES[name]
    uniform, n_uniform = variance_ratio(sampler, ToyMinibatches(M * B0), h)
    ewsg, n_ewsg = variance_ratio(sampler, ToyMinibatches(B0, M), h)
    energy = _ewsg.ewsg_energy  # the old rule: P(m) ∝ exp(-E_m)
    monkeypatch.setattr(_ewsg, "ewsg_energy", lambda *args: -energy(*args))
    old, _ = variance_ratio(sampler, ToyMinibatches(B0, M), h)
    rel_sd = np.sqrt(2.0 / (N_CHAINS * N_DRAWS * 2))
    assert n_uniform == n_ewsg == N_CHAINS * M * B0 * (N_WARMUP + N_DRAWS * THIN)
    assert uniform > 1.2 + N_SD * rel_sd * uniform
    assert abs(ewsg - 1.0) < abs(uniform - 1.0) - N_SD * rel_sd * np.hypot(uniform, ewsg)
    assert old > uniform + N_SD * rel_sd * np.hypot(uniform, old)


class ShiftedIdentity:
    """``U = ||theta||^2 / 2``; candidate ``m`` is the gradient plus ``shifts[m]``."""

    exact, n_data = False, 1

    def __init__(self, shifts):
        self.shifts = np.asarray(shifts, dtype=float)
        self.n_candidates = len(self.shifts)

    def init(self, index_rngs, theta):
        return None

    def candidates(self, index_rngs, theta, state):
        return theta + self.shifts[:, None, :], state, self.n_candidates


def test_sgld_ewsg_steps_match_the_energy_formula():
    # Two SGLD steps by hand: E_m = ||x + (h/2) L^T g_m||^2 / (2 h), x the last
    # whitened move (0 first); accept m when log u < E_m - E_cur.
    sd, h, C = np.array([1.0, 2.0, 0.5]), 1.0, 16
    target = ShiftedIdentity([[3, -1, 2], [-1, 1, 0.5], [0, 0, 0]])
    kernel = SGLD().build_kernel(target, h, diagonal(sd**2))
    rngs = [np.random.default_rng([5, c]) for c in range(C)]
    theta = np.random.default_rng(6).standard_normal((C, 3))
    state, x, picks = kernel.init(theta, rngs), np.zeros((C, 3)), []
    for noise, u in kernel.draw_block(rngs, 2, 3):
        state, _, n = kernel.step((), state, None, (noise, u))
        gu = (theta + target.shifts[:, None, :]) * sd  # L^T g_m, (M, C, p)
        energy = np.sum((x + 0.5 * h * gu) ** 2, axis=2) / (2 * h)
        m = np.zeros(C, dtype=int)
        for k in (1, 2):
            accept = np.log(u[:, k - 1]) < energy[k] - energy[m, np.arange(C)]
            m[accept] = k
        new = theta - 0.5 * h * sd * gu[m, np.arange(C)] + noise
        np.testing.assert_allclose(state.position, new)
        x, theta = (new - theta) / sd, new
        np.testing.assert_allclose(state.increment, x)
        picks.append(m)
        assert n == 3
    assert len(set(np.concatenate(picks))) == 3
