"""Uniform minibatch index drawing: distinct rows, uniform over subsets, every code path."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from skbayes_sg.subsampling._index import UniformIndex, uniform_subsets

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
    idx, weight, scale, state = sampler.draw(rngs, state)
    assert idx.shape == (2, 1600) and weight is None and scale == 1_000_000 / 1600
    again = sampler.init([np.random.default_rng(s) for s in (1, 2)], 2)[0][0]
    np.testing.assert_array_equal(again, idx)
