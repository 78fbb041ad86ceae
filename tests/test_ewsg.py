"""EWSG in the sampler layer: the seed-002 §5.1 Gaussian toy and the SGLD variant.

The toy (equations lost in our copy of the paper, so restated here): ``N =
100`` points ``x_i ~ N(0, I_2)`` (fixed seed), ``f_i(theta) = ||theta -
x_i||^2 / 2``, no prior, so the target is ``N(mean(x), I / N)``.  Many chains
start from the target and run together; the figure is the pooled second
moment of the kept draws about the target mean, over ``1 / N`` (the variance
ratio, 1 when exact).  Uniform subsampling with ``b = M b0`` rows and EWSG
with ``M`` candidates of ``b0`` rows cost the same ``M b0`` gradient
evaluations per step.  Monte-Carlo error: ``n`` quasi-independent squared
coordinates give a ratio with sd ``ratio * sqrt(2 / n)``.
"""

import numpy as np
import pytest

from skbayes_sg.samplers import SGHMC, SGLD, diagonal, identity, run_chains
from skbayes_sg.samplers import _ewsg

N, M, B0 = 100, 2, 1
DATA = np.random.default_rng(2020).standard_normal((N, 2))
N_CHAINS, N_WARMUP, N_DRAWS, THIN = 3000, 600, 8, 200
N_SD = 4.0
# Curvature N = 100, so critical damping is gamma = 20; gamma = 10 (the paper's
# range) is underdamped yet stable, and relaxes the variance in ~100 steps at
# h = 1e-3.  Step sizes: uniform's variance ratio is about 1.25 at both.
CASES = {"sghmc": (SGHMC(friction=10.0), 1e-3), "sgld": (SGLD(), 2e-4)}


class ToyMinibatches:
    """``M`` uniform minibatch estimates (``b`` rows, with replacement) of ``∇U`` per step.

    ``g = N (theta - mean of the minibatch's x_i)``.  Each chain draws its
    indices from its own index stream, ``block`` steps at a time.
    """

    exact, n_data = False, N

    def __init__(self, batch_size, n_candidates=1, block=256):
        self.b, self.n_candidates, self.block = batch_size, n_candidates, block

    def init(self, index_rngs, theta):
        return None, 0

    def candidates(self, index_rngs, theta, state):
        means, t = state
        if means is None or t == len(means):
            shape = (self.block, self.n_candidates, self.b)
            idx = np.stack([rng.integers(N, size=shape) for rng in index_rngs], axis=2)
            means, t = DATA[idx].mean(axis=3), 0  # (block, M, C, 2)
        return N * (theta - means[t]), (means, t + 1), theta.shape[0] * self.n_candidates * self.b

    def estimate(self, index_rngs, theta, state):
        G, state, n = self.candidates(index_rngs, theta, state)
        return G[0], state, n


def variance_ratio(sampler, estimator, h, n_chains=N_CHAINS, seed=0):
    """``(ratio, n_grad_evals)`` of the toy, chains started from the target."""
    mean = DATA.mean(axis=0)
    theta0 = mean + np.random.default_rng(seed).standard_normal((n_chains, 2)) / np.sqrt(N)
    trace = run_chains(sampler, estimator, theta0,
                       [np.random.default_rng([seed, 1, c]) for c in range(n_chains)],
                       [np.random.default_rng([seed, 2, c]) for c in range(n_chains)],
                       step_size=h, precond=identity(), n_warmup=N_WARMUP, n_draws=N_DRAWS,
                       thin=THIN)
    return N * np.mean((trace.draws - mean) ** 2), trace.n_grad_evals


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
