"""EWSG in the sampler layer: the candidate pick and its energy formula, the seed-002 §5.1
Gaussian toy (``benchmarks/_ewsg_toy.py``, which states it) at equal cost against uniform
subsampling, and the SGLD variant by hand.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

from skbayes_sg.samplers import (
    SAMPLERS,
    SGHMC,
    SGLD,
    SGNHT,
    diagonal,
    identity,
    metropolis_pick,
    run_chains,
)

from support.targets import GaussianTarget, chain_rngs

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from _ewsg_toy import (B0, CASES, M, N_CHAINS, N_DRAWS, N_SD, N_WARMUP, THIN,  # noqa: E402
                       ToyMinibatches, old_sign, variance_ratio)


# the registry's samplers, and SGHMC with its symmetric splitting
MAKE = {**SAMPLERS, "aboba": lambda: SGHMC(integrator="aboba")}


@pytest.mark.parametrize("name", ["sgld", "sghmc", "sgnht"])
def test_ewsg_with_identical_candidates_is_the_plain_chain(name):
    # All energies equal, so the pick changes nothing; the uniforms follow each
    # block's normals, so one block (100 steps) leaves the normals untouched.
    mu, S = np.array([1.0, -2.0, 0.5]), np.diag([1.0, 4.0, 9.0])
    runs = {}
    for k in (1, 3):
        trace = run_chains(MAKE[name](), GaussianTarget(mu, S, n_candidates=k),
                           mu + np.ones((2, 3)), chain_rngs(2, seed=3), chain_rngs(2, seed=4),
                           step_size=0.2, precond=diagonal(np.diag(S)), n_warmup=0,
                           n_draws=100)
        runs[k] = trace
    np.testing.assert_array_equal(runs[3].draws, runs[1].draws)
    assert runs[3].n_grad_evals == 3 * runs[1].n_grad_evals == 3 * 100


class ShiftedCandidates(GaussianTarget):
    """Candidate ``m`` is the exact gradient plus ``shifts[m]``."""

    def __init__(self, mu, S, shifts):
        super().__init__(mu, S, n_candidates=len(shifts))
        self.shifts = np.asarray(shifts, dtype=float)

    def candidates(self, index_rngs, theta, est_state):
        g, est_state, n = self.estimate(index_rngs, theta, est_state)
        return g + self.shifts[:, None, :], est_state, n * len(self.shifts)


def test_ewsg_step_matches_the_energy_formula():
    # One SGNHT step by hand: E_m = |h z r + h L^T g_m|^2 / (4 A h), pick, update.
    mu, sd, h, A = np.zeros(3), np.array([1.0, 2.0, 0.5]), 0.3, 0.7
    target = ShiftedCandidates(mu, np.diag(sd**2), [[0, 0, 0], [3, -1, 2], [-1, 1, 0.5]])
    kernel = SGNHT(diffusion=A).build_kernel(target, h, diagonal(sd**2))
    rngs = chain_rngs(8, seed=1)
    theta = np.random.default_rng(2).standard_normal((8, 3))
    state = kernel.init(theta, rngs)
    noise, u = kernel.draw_block(rngs, 1, 3)[0]
    new, _, n = kernel.step((), state, None, (noise, u))
    r, z = state.momentum, state.friction
    gu = (theta / sd**2 + target.shifts[:, None, :]) * sd  # L^T g_m, (M, C, p)
    energy = np.sum((h * z * r + h * gu) ** 2, axis=2) / (4 * A * h)
    m = np.zeros(8, dtype=int)
    for c in range(8):
        for k in (1, 2):
            if np.log(u[c, k - 1]) < energy[k, c] - energy[m[c], c]:
                m[c] = k
    assert n == 3 and len(set(m)) > 1
    r_new = (1 - h * z) * r - h * gu[m, np.arange(8)] + noise
    np.testing.assert_allclose(new.momentum, r_new)
    np.testing.assert_allclose(new.position, theta + h * sd * r_new)
    np.testing.assert_allclose(new.friction, z + h * (np.mean(r_new**2, 1, keepdims=True) - 1))


def test_metropolis_pick_follows_the_acceptance_rule():
    # Accept m when log u < E_m - E_cur (P(m) ∝ exp(+E_m)).  Chain 0 moves up to
    # 1, then rejects 2 (drop 1.5 > -log 0.5); chain 1 rejects 1, accepts 2;
    # chain 2 rejects both downhill moves (drops 2 and 3), just.
    energy = np.array([[0.0, 3.0, 2.0], [1.0, 1.0, 0.0], [-0.5, 4.0, -1.0]])  # (M, C)
    u = np.array([[0.5, 0.5], [0.5, 0.5], [np.exp(-1.9), np.exp(-2.9)]])  # (C, M-1)
    np.testing.assert_array_equal(metropolis_pick(energy, u), [1, 2, 0])
    u[2] = np.exp(-2.1), np.exp(-0.9)  # chain 2: accept 1 (drop 2), reject 2 (drop 1)
    np.testing.assert_array_equal(metropolis_pick(energy, u), [1, 2, 1])


@pytest.mark.parametrize("name", ["psgld", "hmc", "aboba"])
def test_ewsg_needs_a_fixed_metric_gaussian_kernel(name):
    target = GaussianTarget(np.zeros(2), np.eye(2), n_candidates=2)
    with pytest.raises(ValueError, match="cannot run on .* n_candidates=2"):
        MAKE[name]().build_kernel(target, 0.1, identity())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sghmc", "sgld"])
def test_ewsg_beats_uniform_at_equal_cost_and_the_old_sign_does_not(name):
    sampler, h = CASES[name]
    uniform, n_uniform = variance_ratio(sampler, ToyMinibatches(M * B0), h)
    ewsg, n_ewsg = variance_ratio(sampler, ToyMinibatches(B0, M), h)
    old, _ = variance_ratio(old_sign(sampler), ToyMinibatches(B0, M), h)  # P(m) ∝ exp(-E_m)
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
