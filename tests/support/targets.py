"""Gaussian targets with exact (or noisy) gradients for the sampler tests, and their loop.

A target is a tiny gradient estimator: ``init``, ``estimate`` (and ``candidates``), so a kernel
runs on it exactly as on a posterior's minibatches.
"""

import numpy as np

from skbayes_sg.diagnostics import effective_sample_size
from skbayes_sg.samplers import identity


class GaussianTarget:
    """Exact gradient estimator of ``N(mu, S)``; ``M`` identical candidates when asked."""

    exact, n_data = True, 1.0

    def __init__(self, mu, S, n_candidates=1):
        self.mu, self.P, self.n_candidates = mu, np.linalg.inv(S), n_candidates

    def init(self, index_rngs, theta):
        return None

    def estimate(self, index_rngs, theta, est_state):
        return (theta - self.mu) @ self.P, est_state, 1

    def candidates(self, index_rngs, theta, est_state):
        g, est_state, n = self.estimate(index_rngs, theta, est_state)
        return np.stack([g] * self.n_candidates), est_state, n * self.n_candidates

    def potential(self, theta):
        d = theta - self.mu
        return 0.5 * np.einsum("cp,pq,cq->c", d, self.P, d)

    def kick(self):
        return self


class NoisyIsotropic:
    """``U = lam |theta|^2 / 2`` with gradient noise of variance ``nu`` (one shared stream)."""

    exact, n_data, n_candidates = False, 1.0, 1

    def __init__(self, lam, nu, seed):
        self.lam, self.sd, self.seed = lam, np.sqrt(nu), seed

    def init(self, index_rngs, theta):
        return np.random.default_rng([self.seed, 99])

    def estimate(self, index_rngs, theta, rng):
        return self.lam * theta + self.sd * rng.standard_normal(theta.shape), rng, 1


def gaussian(p, cond, seed):
    """Mean and covariance with eigenvalues geomspace(1, cond), randomly rotated."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((p, p)))
    S = Q @ np.diag(np.geomspace(1.0, cond, p)) @ Q.T
    return rng.normal(0.0, 2.0, p), 0.5 * (S + S.T)


def chain_rngs(n_chains, seed=0):
    """One generator per chain (the kernel's noise)."""
    return [np.random.default_rng([seed, c]) for c in range(n_chains)]


def run_kernel(kernel, estimator, theta0, rngs, n_warmup, n_draws, block=512):
    """The estimator layer's loop in miniature; returns draws (C, n_draws, p) and state."""
    state = kernel.init(theta0, rngs)
    index_rngs = tuple(np.random.default_rng([7, c]) for c in range(len(rngs)))
    est_state = estimator.init(index_rngs, theta0)
    draws = np.empty((theta0.shape[0], n_draws, theta0.shape[1]))
    for n_steps, keep in ((n_warmup, False), (n_draws, True)):
        done = 0
        while done < n_steps:
            n = min(block, n_steps - done)
            randoms = kernel.draw_block(rngs, n, theta0.shape[1])
            for t in range(n):
                state, est_state, _ = kernel.step(index_rngs, state, est_state, randoms[t])
                if keep:
                    draws[:, done + t] = state.position
            done += n
        if not keep:
            state = kernel.end_warmup(state)
    return draws, state


def mc_se(x):
    """Monte-Carlo standard errors of the pooled means of ``x`` (C, n, k) -> (k,)."""
    return x.std(axis=(0, 1)) / np.sqrt(effective_sample_size(x, method="basic"))


def noisy_isotropic(sampler, h, lam, nu, n_chains=64, n_draws=10000, seed=0, p=8):
    """``lam E[theta_j^2]`` and its standard error with gradient noise of variance nu.

    ``U = lam |theta|^2 / 2`` in ``p`` dimensions: each coordinate is the 1-D
    problem of ``stationary_variance``, and SGNHT's shared thermostat is close to
    its mean-field fixed point, as it is for a real posterior.
    """
    target = NoisyIsotropic(lam, nu, seed)
    kernel = sampler.build_kernel(target, h, identity())
    theta0 = np.random.default_rng(seed).standard_normal((n_chains, p)) / np.sqrt(lam)
    draws, _ = run_kernel(kernel, target, theta0, chain_rngs(n_chains, seed), 2000, n_draws)
    assert np.isfinite(draws).all()
    sq = lam * np.mean(draws**2, axis=2, keepdims=True)  # coordinates share SGNHT's thermostat
    return sq.mean(), mc_se(sq)[0]
