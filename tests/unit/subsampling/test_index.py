"""Index samplers: distinct uniform rows, block refills, weighted draws, adaptive sizes."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from skbayes_sg.subsampling import AdaptiveSizeIndex, AllRows, UniformIndex, WeightedIndex

from skbayes_sg.subsampling._index import uniform_subsets

from support.problems import rngs_for

# (n, b) for each path of ``uniform_subsets``: whole-row redraw (b^2 <= 2n),
# repeated-entry redraw (b <= n/2), partial Fisher-Yates (b > n/2).
PATHS = {"row_redraw": (12, 2), "repeat_redraw": (12, 5), "fisher_yates": (12, 8)}


@pytest.mark.parametrize("path", PATHS)
def test_uniform_subsets_are_uniform_over_all_subsets(path):
    n, b = PATHS[path]
    idx = uniform_subsets(np.random.default_rng(0), n, b, 100_000)
    assert idx.shape == (100_000, b) and idx.min() >= 0 and idx.max() < n
    srt = np.sort(idx, axis=1)
    assert not (srt[:, 1:] == srt[:, :-1]).any()  # without replacement
    code = {c: k for k, c in enumerate(combinations(range(n), b))}
    counts = np.bincount([code[tuple(r)] for r in srt], minlength=len(code))
    expected = idx.shape[0] / len(code)
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, len(code) - 1) > 1e-4


@pytest.mark.parametrize("n, b", [(100_000, 1600), (5_000, 2_400), (3_000, 2_000)])
def test_uniform_subsets_large_rows_have_uniform_inclusion(n, b):
    sets = 400
    idx = uniform_subsets(np.random.default_rng(1), n, b, sets)
    srt = np.sort(idx, axis=1)
    assert not (srt[:, 1:] == srt[:, :-1]).any()
    counts = np.bincount(idx.ravel(), minlength=n)
    p = b / n  # each row includes each element with probability b/n, rows independent
    z = (counts - sets * p) / np.sqrt(sets * p * (1 - p))
    assert abs(z.mean()) < 0.05 and 0.9 < z.std() < 1.1


def test_uniform_index_blocks_are_reproducible_and_scaled():
    sampler = UniformIndex(1_000_000, 1600)
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    state = sampler.init(rngs, 2)
    idx, weight, state = sampler.draw(rngs, None, state)
    assert idx.shape == (2, 1600) and weight is None and sampler.scale == 1_000_000 / 1600
    assert not sampler.ragged
    again = sampler.init([np.random.default_rng(s) for s in (1, 2)], 2)[0][0]
    np.testing.assert_array_equal(again, idx)


@pytest.mark.parametrize("make", [lambda: UniformIndex(50, 4),
                                  lambda: WeightedIndex(np.linspace(1, 2, 50), 4)],
                         ids=["uniform", "weighted"])
def test_block_refill_continues_each_chains_stream(make):
    """Blocks of 3 steps: refills come from each chain's own stream, whatever C is."""
    def run(C):
        sampler = make()
        sampler.n_block = 3
        rngs = rngs_for(C)
        state, out = sampler.init(rngs, C), []
        for _ in range(10):
            idx, w, state = sampler.draw(rngs, None, state)
            out.append((idx[0].copy(), None if w is None else w[0].copy()))
        return out

    one, three = run(1), run(3)
    for (i1, w1), (i3, w3) in zip(one, three):
        np.testing.assert_array_equal(i1, i3)
        if w1 is not None:
            np.testing.assert_array_equal(w1, w3)
    assert len({tuple(i) for i, _ in one}) == 10  # fresh rows after every refill


def test_all_rows_and_weighted_draws():
    idx, w, _ = AllRows(7).draw(None, None, AllRows(7).init(None, 2))
    assert idx.shape == (2, 7) and w is None and np.all(idx == np.arange(7))
    p = np.random.default_rng(0).exponential(size=300)
    p[::7] = 1e-9  # near-zero weights are drawn rarely but reweighted correctly
    sampler = WeightedIndex(p, 5)
    rng = np.random.default_rng(3)
    u = np.random.default_rng(3).random(200_000)
    draws = sampler.sample(rng, 200_000)
    np.testing.assert_array_equal(draws, np.searchsorted(np.cumsum(p), u * p.sum(), "right"))
    idx, w, _ = sampler.draw(rngs_for(2), None, sampler.init(rngs_for(2), 2))
    np.testing.assert_allclose(w, p.sum() / p[idx] / 5)


@pytest.mark.parametrize("kind", ["gamma", "sparse", "equal", "one"])
def test_guide_table_bounds_the_searchsorted_one(kind):
    # oracle: searchsorted of the bucket edges j * step; the guide is a lower bound within one
    # bucket of it, and the draws from it are searchsorted's; chunks of 7 rows cross many
    # buckets, equal weights put cdf values on the edges (up to rounding), one row is one bucket
    from skbayes_sg.subsampling._weighted import WeightedIndex, _guide

    rng = np.random.default_rng(3)
    n = 1 if kind == "one" else 1000
    p = {"gamma": rng.gamma(0.3, size=n), "equal": np.ones(n), "one": np.ones(1),
         "sparse": rng.gamma(2.0, size=n) * (rng.random(n) < 0.1) + 1e-6}[kind]
    cdf = np.cumsum(p)
    step = (cdf[-1] / n) * (1.0 - 1e-12)
    exact = np.searchsorted(cdf, np.arange(n) * step, side="right")
    below = np.searchsorted(cdf, np.maximum(np.arange(n) - 1, 0) * step, side="right")
    for chunk in (7, 1 << 20):
        guide = _guide(cdf, step, chunk=chunk)
        assert np.all(guide <= exact) and np.all(guide >= below)
    u = np.random.default_rng(4).random(50_000)
    u[:n] = np.arange(n) / n  # on the bucket edges
    draws = WeightedIndex(p, 1).sample(_Replay(u), u.size)
    np.testing.assert_array_equal(draws, np.minimum(np.searchsorted(cdf, u * cdf[-1], "right"),
                                                    n - 1))


class _Replay:
    """A Generator stand-in whose ``random(size)`` returns given uniforms."""

    def __init__(self, u):
        self.u = u

    def random(self, size):
        return self.u.copy().reshape(size)


def test_adaptive_size_index_is_ragged_and_sized_by_distance():
    p, mode = np.full(40, 1 / 40), np.zeros(2)
    sampler = AdaptiveSizeIndex(p, 10, mode, rate=4.0, n_min=2, n_max=30)
    sampler.n_block = 50  # force buffer refills
    theta = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0], [10.0, 0.0]])
    np.testing.assert_array_equal(sampler.sizes(theta), [2, 4, 20, 30])
    rngs = rngs_for(4)
    state = sampler.init(rngs, 4)
    for _ in range(20):
        idx, w, state = sampler.draw(rngs, theta, state)
        assert sampler.ragged and [len(i) for i in idx] == [2, 4, 20, 30]
        for rows, wc in zip(idx, w):
            np.testing.assert_allclose(wc, 40.0 / rows.size)  # 1 / (n_c p_i)


def test_blocks_grow_from_eight_steps_so_short_runs_draw_few_indices():
    sampler = UniformIndex(100_000, 200)
    assert sampler.n_block == 1000
    assert [sampler.block_steps(k) for k in range(9)] == [8, 16, 32, 64, 128, 256, 512, 1000,
                                                          1000]
    rngs = rngs_for(2)
    state = sampler.init(rngs, 2)
    assert state[0].shape == (8, 2, 200)  # a pilot of 8 estimates draws 8 steps
    sizes = []
    for _ in range(8 + 16 + 1):
        _, _, state = sampler.draw(rngs, None, state)
        sizes.append(state[0].shape[0])
    assert sizes[0] == 8 and sizes[8] == 16 and sizes[-1] == 32
