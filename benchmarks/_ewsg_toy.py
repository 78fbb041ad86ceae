"""Seed 002 §5.1's Gaussian toy for EWSG: shared by ``bench_ewsg.py`` and ``tests/test_ewsg.py``.

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

from skbayes_sg.samplers import SGHMC, SGLD, ewsg_energy, identity, run_chains

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


# Step grid of the benchmark table: per sampler, steps around CASES' (uniform ratio ~1.1-1.5)
TABLE_STEPS = {"sghmc": (5e-4, 1e-3, 2e-3), "sgld": (1e-4, 2e-4, 3e-4)}


def _negated_energy(*args):
    return -ewsg_energy(*args)


def old_sign(sampler):
    """``sampler`` picking EWSG's candidates with ``P(m) ∝ exp(-E_m)``: the sign this library
    used before (a subclass declaring the negated ``index_energy``; nothing is patched)."""
    cls = type(sampler)
    negated = type(f"OldSign{cls.__name__}", (cls,),
                   {"index_energy": staticmethod(_negated_energy)})
    return negated(**sampler.get_params())


def toy_table(n_chains=N_CHAINS, steps=TABLE_STEPS):
    """Rows ``{sampler, h, uniform, ewsg, ewsg_old_sign, exact_theory, uniform_theory}``.

    ``ewsg_old_sign`` runs the selection with the energies negated (the sign
    this library used before; the paper's Theorem 2 has ``+``).  The theory
    columns are the samplers' closed-form stationary variances (exact
    gradient, and uniform's minibatch noise ``nu = N^2 / b`` per coordinate).
    """
    rows = []
    for name, (sampler, _) in CASES.items():
        for h in steps[name]:
            row = {"sampler": name, "h": h}
            row["uniform"] = variance_ratio(sampler, ToyMinibatches(M * B0), h, n_chains)[0]
            row["ewsg"] = variance_ratio(sampler, ToyMinibatches(B0, M), h, n_chains)[0]
            row["ewsg_old_sign"] = variance_ratio(old_sign(sampler), ToyMinibatches(B0, M), h,
                                                  n_chains)[0]
            nu = np.var(DATA, axis=0).mean() * N * N / (M * B0)
            row["exact_theory"] = N * sampler.stationary_variance(h, N, 0.0)
            row["uniform_theory"] = N * sampler.stationary_variance(h, N, nu)
            rows.append(row)
    return rows
