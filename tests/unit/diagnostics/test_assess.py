"""``assess``: the verdict's columns, quantiles and judgement against numpy and the
public diagnostics.
"""

import numpy as np

from skbayes_sg.diagnostics import ESS_PER_CHAIN, RHAT_MAX, assess


def test_assess_columns_are_the_public_diagnostics():
    # oracle: split_rhat and effective_sample_size called one by one (assess shares their rank
    # normalisation); constant and non-finite columns stay NaN, several column blocks included
    from skbayes_sg.diagnostics import effective_sample_size, split_rhat

    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 201, 3700)).cumsum(axis=1)  # 3 blocks of 1,739 columns
    x[:, :, 5] = 2.0
    x[1, 7, 9] = np.nan
    a = assess(x)
    np.testing.assert_array_equal(a.rhat, split_rhat(x))
    np.testing.assert_array_equal(a.ess_bulk, effective_sample_size(x))
    np.testing.assert_array_equal(a.ess_tail, effective_sample_size(x, method="tail"))
    assert np.isnan(a.rhat[[5, 9]]).all() and np.isfinite(np.delete(a.rhat, [5, 9])).all()
    # even chains (no middle draw dropped): the tail quantiles and the median come off the bulk
    # sort; ties and a two-valued column included (tail: up to the FFT's rounding of other blocks)
    y = rng.normal(size=(4, 300, 6)).cumsum(axis=1)
    y[..., 0], y[..., 1] = np.round(y[..., 0]), y[..., 1] > 0
    b = assess(y)
    np.testing.assert_array_equal(b.rhat, split_rhat(y))
    np.testing.assert_array_equal(b.ess_bulk, effective_sample_size(y))
    np.testing.assert_allclose(b.ess_tail, effective_sample_size(y, method="tail"), rtol=1e-12)


def test_median_and_quantiles_read_off_the_sort_are_numpys():
    from skbayes_sg.diagnostics._ess import sorted_median, sorted_quantile

    rng = np.random.default_rng(2)
    for n in (1, 2, 7, 400, 4001):
        x = rng.normal(size=(5, n))
        x[0] = np.round(x[0])  # ties
        x[1] = 1.0 + np.spacing(1.0) * rng.integers(0, 3, n)  # neighbours one rounding apart
        s = np.sort(x, axis=1)
        assert np.array_equal(sorted_median(s), np.median(x, axis=1))
        for q in (0.0, 0.05, 0.5, 0.95, 1.0, 1 / 3):
            assert np.array_equal(sorted_quantile(s, q), np.quantile(x, q, axis=1))


def test_assess_judges_rhat_and_ess():
    rng = np.random.default_rng(0)
    good = assess(rng.normal(size=(4, 500, 3)))
    assert good.converged and good.rhat.max() < RHAT_MAX
    assert good.ess_bulk.min() > 4 * ESS_PER_CHAIN
    shifted = rng.normal(size=(4, 500, 3)) + np.arange(4)[:, None, None]
    bad = assess(shifted, hint=" HINT")
    assert not bad.converged and bad.problems[0].startswith(f"R-hat above {RHAT_MAX} for 3")
    assert bad.problems[0].endswith(" HINT") and bad.problems[-1].startswith("Run longer")
    # the ESS threshold is per chain: 800 independent draws pass as 2 chains of 400 (ESS ~800 >=
    # 200) but not as 8 chains of 50 (ESS ~400 < 800)
    two = assess(rng.normal(size=(2, 400, 2)))
    assert "ESS below" not in " ".join(two.problems)
    few = assess(rng.normal(size=(8, 50, 2)))
    assert not few.converged and "bulk ESS below 800" in " ".join(few.problems)
    short = assess(rng.normal(size=(2, 3, 2)))
    assert np.isnan(short.rhat).all() and "undefined" in short.problems[0]
