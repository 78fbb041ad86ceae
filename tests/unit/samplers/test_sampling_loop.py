"""The sampling loop ``run_chains``: noise blocks drawn in a worker thread, float32 normals.

Oracles: the in-line blocks (bit-identical draws) and the moments of a standard normal.
"""

import numpy as np

from skbayes_sg.samplers import SGLD, identity, run_chains
from skbayes_sg.samplers._base import chain_block, chain_normals
from skbayes_sg.subsampling import Uniform

from support.problems import make_problem


def test_noise_blocks_in_worker_thread_give_identical_draws():
    """Blocks drawn ahead in the worker thread are exactly the in-line blocks, in order."""
    posterior, laplace, _ = make_problem("mlp", n=200)
    est = Uniform().build(posterior, laplace, batch_size=20, rng=np.random.default_rng(0))
    p = posterior.model.n_params

    def run(threshold):  # 16 steps per block: many blocks
        rngs = [[np.random.default_rng([s, c]) for c in range(2)] for s in (1, 2)]
        return run_chains(SGLD(), est, np.tile(laplace.mode, (2, 1)), *rngs, step_size=1e-3,
                          precond=identity(), n_warmup=40, n_draws=100, thin=2,
                          block_elements=16 * 2 * p, background=threshold).draws

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
