"""HMC from ``_LARGE`` parameters on: gradients of the moving chains only, a float32 dense ``M``,
the estimator's ``kick()`` field.

The shortcuts must leave the chain exact (a fixed kick field keeps the leapfrog reversible and
volume-preserving) and a chain's trajectory independent of the chains it runs with.
"""

import numpy as np
import pytest

from skbayes_sg.samplers import HMC, dense, diagonal
from skbayes_sg.samplers._hmc import _LARGE

from support.targets import GaussianTarget, chain_rngs, gaussian, mc_se, run_kernel

P = _LARGE + 44


class _Counting(GaussianTarget):
    """Records the number of chains of every gradient evaluation."""

    def __init__(self, mu, S):
        super().__init__(mu, S)
        self.rows = []

    def estimate(self, index_rngs, theta, est_state):
        self.rows.append(theta.shape[0])
        return super().estimate(index_rngs, theta, est_state)


@pytest.mark.slow
def test_large_hmc_moments_match_the_target():
    mu, S = gaussian(P, 10.0, seed=11)
    target = GaussianTarget(mu, S)
    kernel = HMC().build_kernel(target, 0.3, dense(S))  # float32 M: P >= _LARGE
    L = np.linalg.cholesky(S)
    theta0 = mu + np.random.default_rng(2).standard_normal((4, P)) @ L.T
    draws, state = run_kernel(kernel, target, theta0, chain_rngs(4, seed=3), 200, 1500)
    assert np.isfinite(draws).all()
    assert np.mean(kernel.info(state)["accept_rate"]) > 0.5
    z = np.linalg.solve(L, (draws - mu).reshape(-1, P).T).T.reshape(draws.shape)
    se = mc_se(np.concatenate([z, z**2], axis=2))
    np.testing.assert_array_less(np.abs(z.mean(axis=(0, 1))), 5.0 * se[:P])
    np.testing.assert_array_less(np.abs((z**2).mean(axis=(0, 1)) - 1.0), 5.0 * se[P:])


def test_large_hmc_chain_independent_of_other_chains():
    # chains whose jittered trajectories end early stop being evaluated; chain 0's path must be
    # the one it takes alone (to BLAS rounding: the gradient's product has 1 row or several)
    mu, S = gaussian(P, 4.0, seed=5)
    target = _Counting(mu, S)
    kernel = HMC(trajectory_length=1.0).build_kernel(target, 0.2, diagonal(np.diag(S)))
    theta0 = mu + np.random.default_rng(7).standard_normal((4, P))
    together, _ = run_kernel(kernel, target, theta0, chain_rngs(4, seed=8), 0, 20)
    assert min(target.rows) < 4 == max(target.rows)  # the jittered ends were skipped
    alone, _ = run_kernel(kernel, target, theta0[:1], chain_rngs(1, seed=8), 0, 20)
    np.testing.assert_allclose(alone[0], together[0], rtol=1e-9, atol=1e-9)
    assert not np.allclose(together[0], together[1])


class _WrongKick(GaussianTarget):
    """Kicks with a deterministic field that is not the target's gradient (1.1 g + sin)."""

    def kick(self):
        outer = self

        class Kick:
            def estimate(self, index_rngs, theta, est_state):
                g, est_state, n = outer.estimate(index_rngs, theta, est_state)
                return 1.1 * g + 0.1 * np.sin(theta), est_state, n

        return Kick()


@pytest.mark.slow
def test_a_deterministic_kick_field_leaves_the_target_exact():
    # what makes float32 rows in the kicks safe: the Metropolis test on the true potential
    # corrects any fixed field, at some cost in acceptance
    mu, S = gaussian(P, 4.0, seed=13)
    target = _WrongKick(mu, S)
    kernel = HMC().build_kernel(target, 0.2, diagonal(np.diag(S)))
    L = np.linalg.cholesky(S)
    theta0 = mu + np.random.default_rng(4).standard_normal((4, P)) @ L.T
    draws, state = run_kernel(kernel, target, theta0, chain_rngs(4, seed=6), 200, 1500)
    rate = np.mean(kernel.info(state)["accept_rate"])
    assert 0.05 < rate < 0.95
    z = np.linalg.solve(L, (draws - mu).reshape(-1, P).T).T.reshape(draws.shape)
    np.testing.assert_array_less(np.abs(z.mean(axis=(0, 1))), 5.0 * mc_se(z))
    # the field 1.1 g alone keeps N(mu, S / 1.1): variances of 0.91 (its slower-mixing second
    # moments make per-coordinate Monte-Carlo errors unreliable, so their mean is checked)
    assert abs((z**2).mean() - 1.0) < 0.03
