"""float32 data: minibatch gradients in float32, the same posterior as float64.

Oracles: the float64 gradient on the same rows (float32 rounding only, relative ~1e-6), the
Monte-Carlo error of two independent fits (their ESS), and bit-identical draws whether the noise
blocks are drawn in line or in the worker thread.
"""

import numpy as np
import pytest

from skbayes_sg.fitting import FitConfig
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.models import Posterior
from skbayes_sg.samplers import SGLD, identity, run_chains
from skbayes_sg.samplers import _run
from skbayes_sg.samplers._base import chain_block, chain_normals
from skbayes_sg.subsampling import ControlVariates, Uniform

MODELS = ("binary", "softmax", "linear_fixed", "linear_inferred", "mlp")


def _twin_posteriors(make_problem, name):
    """The same problem with float32 rows and with those rows exactly in float64."""
    posterior, laplace, _ = make_problem(name, n=300)
    X32 = posterior.X.astype(np.float32)
    p32 = Posterior(posterior.model, posterior.prior, X32, posterior.y)
    p64 = Posterior(posterior.model, posterior.prior, X32.astype(np.float64), posterior.y)
    return p32, p64, laplace


@pytest.mark.parametrize("strategy", [Uniform(), ControlVariates()], ids=["uniform", "cv"])
@pytest.mark.parametrize("name", MODELS)
def test_float32_minibatch_gradient_matches_float64(name, strategy, make_problem, rngs_for):
    p32, p64, laplace = _twin_posteriors(make_problem, name)
    est32, est64 = (strategy.build(p, laplace, batch_size=20, rng=np.random.default_rng(0))
                    for p in (p32, p64))
    assert est32.compute_dtype is np.float32 and est64.compute_dtype is None
    theta = laplace.mode + 0.3 * np.random.default_rng(1).normal(size=(3, laplace.mode.size))
    r32, r64 = rngs_for(3), rngs_for(3)
    s32, s64 = est32.init(r32, theta), est64.init(r64, theta)
    for _ in range(3):
        g32, s32, n32 = est32.estimate(r32, theta, s32)
        g64, s64, n64 = est64.estimate(r64, theta, s64)
        assert g32.dtype == np.float64 and n32 == n64
        scale = np.abs(g64).max()
        np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("name", MODELS)
def test_models_compute_in_float32_only_when_both_are(name, make_problem):
    posterior, laplace, _ = make_problem(name, n=50)
    model, X = posterior.model, posterior.X
    theta = np.tile(laplace.mode, (2, 1))
    g32 = model.grad_sum(theta.astype(np.float32), X.astype(np.float32), posterior.y)
    assert g32.dtype == np.float32
    for t, x in [(theta, X.astype(np.float32)), (theta.astype(np.float32), X)]:
        assert model.grad_sum(t, x, posterior.y).dtype == np.float64  # full passes stay float64
    np.testing.assert_allclose(g32, model.grad_sum(theta, X, posterior.y), rtol=1e-4,
                               atol=1e-5 * np.abs(g32).max())


def _glm_data(kind, seed=0, n=3000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    z = X @ np.array([1.0, -1.0, 0.5, 0.0])
    if kind == "binary":
        return X, (z + rng.logistic(size=n) > 0).astype(int)
    if kind == "softmax":
        return X, np.digitize(z + rng.logistic(size=n), [-1.0, 1.0])
    return X, z + rng.normal(size=n)


@pytest.mark.parametrize("kind", ["binary", "softmax", "regression"])
def test_float32_fit_agrees_with_float64_within_monte_carlo_error(kind):
    """Two independent default fits (different seeds) on the same values, float32 and float64.

    Posterior means must agree within 5 combined Monte-Carlo standard errors (``sd / sqrt(ESS)``
    from each fit's own ESS), posterior sds within 5 standard errors of an sd ratio
    (``sqrt(1 / (2 ESS_32) + 1 / (2 ESS_64))``).
    """
    X32, y = _glm_data(kind)
    Est = BayesianLinearRegression if kind == "regression" else BayesianLogisticRegression
    fits = [Est(random_state=seed).fit(X, y)
            for seed, X in [(0, X32), (1, X32.astype(np.float64))]]
    stats = []
    for est in fits:
        draws = est.sample_posterior()
        flat = np.concatenate([draws["coef"].reshape(len(draws["coef"]), -1),
                               np.reshape(draws["intercept"], (len(draws["coef"]), -1))], axis=1)
        ess = np.asarray(est.diagnostics_["ess"], dtype=float)[:flat.shape[1]]
        stats.append((flat.mean(0), flat.std(0), ess))
    (m32, s32, e32), (m64, s64, e64) = stats
    assert np.all(np.abs(m32 - m64) <= 5 * np.sqrt(s32**2 / e32 + s64**2 / e64))
    assert np.all(np.abs(s32 / s64 - 1) <= 5 * np.sqrt(0.5 / e32 + 0.5 / e64))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_float32_fit_is_reproducible_and_independent_of_n_jobs():
    X32, y = _glm_data("binary", n=500)
    kw = dict(random_state=3, n_chains=4, n_warmup=100, n_draws=200, step_size=0.2)

    def draws(**extra):
        est = BayesianLogisticRegression(**kw, **extra)
        est._fit_config = FitConfig(parallel_min_seconds=0.0)  # workers even for short chains
        return est.fit(X32, y).sample_posterior()["coef"]

    a, b, c = draws(), draws(), draws(n_jobs=2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_noise_blocks_in_worker_thread_give_identical_draws(make_problem, monkeypatch):
    """Blocks drawn ahead in the worker thread are exactly the in-line blocks, in order."""
    posterior, laplace, _ = make_problem("mlp", n=200)
    est = Uniform().build(posterior, laplace, batch_size=20, rng=np.random.default_rng(0))
    p = posterior.model.n_params
    monkeypatch.setattr(_run, "_BLOCK_ELEMENTS", 16 * 2 * p)  # 16 steps per block: many blocks

    def run(threshold):
        monkeypatch.setattr(_run, "_BACKGROUND", threshold)
        rngs = [[np.random.default_rng([s, c]) for c in range(2)] for s in (1, 2)]
        return run_chains(SGLD(), est, np.tile(laplace.mode, (2, 1)), *rngs, step_size=1e-3,
                          precond=identity(), n_warmup=40, n_draws=100, thin=2).draws

    inline, background = run(1 << 40), run(0)
    assert inline.shape == (2, 100, p) and not np.array_equal(inline[:, 0], inline[:, -1])
    np.testing.assert_array_equal(inline, background)


def test_float32_box_muller_normals_are_standard_normal():
    """Moments within 5 Monte-Carlo standard errors; a chain's draws do not depend on the others.

    For ``n`` i.i.d. N(0, 1): ``se(mean) = 1/sqrt(n)``, ``se(var) = sqrt(2/n)``,
    ``se(E z^4) = sqrt(96/n)``; the lag-1 correlation along the stream ``1/sqrt(n)``.
    """
    rngs = [np.random.default_rng([7, c]) for c in range(3)]
    z = chain_normals(rngs, 2001, 101, np.float32)  # odd sizes: the Box-Muller pair split
    assert z.dtype == np.float32 and z.shape == (2001, 3, 101) and np.isfinite(z).all()
    for c in range(3):
        x = z[:, c].ravel().astype(np.float64)
        n = x.size
        assert abs(x.mean()) < 5 / np.sqrt(n)
        assert abs(x.var() - 1) < 5 * np.sqrt(2 / n)
        assert abs((x**4).mean() - 3) < 5 * np.sqrt(96 / n)
        assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 5 / np.sqrt(n)
    alone = chain_normals([np.random.default_rng([7, 1])], 2001, 101, np.float32)
    np.testing.assert_array_equal(alone[:, 0], z[:, 1])
    split = [chain_normals(rngs_c, n, 101, np.float32)
             for rngs_c in [[np.random.default_rng([7, 1])]] for n in (1500, 501)]
    np.testing.assert_array_equal(np.concatenate(split)[:, 0], z[:, 1])  # blocks of any size
    f64 = chain_normals([np.random.default_rng(3)], 5, 4)  # float64: the ziggurat, unchanged
    np.testing.assert_array_equal(f64, chain_block([np.random.default_rng(3)], 5, 4))
