"""The records and helpers every layer shares: Posterior, Laplace, streams, chunks, assess."""

import numpy as np
import pytest

from skbayes_sg.diagnostics import ESS_PER_CHAIN, RHAT_MAX, assess
from skbayes_sg.models import Laplace
from skbayes_sg.utils import make_streams, row_chunks


@pytest.mark.parametrize("name", ["binary", "softmax", "linear_inferred", "mlp"])
def test_posterior_sums_match_one_call(make_problem, name):
    pb, _, rng = make_problem(name, n=50, weighted=True)
    theta = 0.3 * rng.normal(size=(2, pb.model.n_params))
    X = pb.X.astype(float)
    grad = pb.prior.grad(theta) + pb.model.grad_sum(theta, X, pb.y, pb.weight)
    np.testing.assert_allclose(pb.full_grad(theta), grad, rtol=1e-12)
    pot = pb.prior.value(theta) + pb.model.nll(theta, X, pb.y) @ pb.weight
    np.testing.assert_allclose(pb.potential(theta), pot, rtol=1e-12)


def test_subset_keeps_the_data_size(make_problem):
    pb, _, _ = make_problem("binary", n=40, weighted=True)
    sub = pb.subset(np.arange(0, 40, 4))
    assert sub.n_rows == 10 and np.isclose(sub.n_data, pb.n_data)
    assert pb.merge_weight(np.array([[0, 1]]), None).shape == (1, 2)


@pytest.mark.parametrize("dense", [True, False])
def test_laplace_draws_have_its_moments(dense):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 3))
    cov = A @ A.T + np.eye(3) if dense else np.array([0.5, 2.0, 1.0])
    lap = Laplace(np.array([1.0, -1.0, 0.0]), cov)
    x = lap.draws(rng, 100_000)
    np.testing.assert_allclose(x.mean(0), lap.mode, atol=0.03)
    np.testing.assert_allclose(np.cov(x.T), cov if dense else np.diag(cov), atol=0.05)
    np.testing.assert_allclose(lap.variances, np.diag(cov) if dense else cov)


def test_streams_are_named_and_reproducible():
    a, b = make_streams(7, 3), make_streams(7, 3)
    assert a.child("mode").random() == b.child("mode").random()
    # a consumer's draws do not depend on which other consumers exist or ran
    b.child("some new consumer").random(100)
    assert a.child("init").random() == b.child("init").random()
    assert a.noise[2].random() == b.noise[2].random()
    values = {a.child(n).random() for n in ("mode", "init", "pilot", "strategy")}
    values |= {a.noise[0].random(), a.index[0].random(), a.retry(1)[0][0].random()}
    assert len(values) == 7  # all distinct streams
    assert make_streams(7, 5).noise[1].random() == make_streams(7, 2).noise[1].random()


def test_row_chunks_cover_in_order():
    parts = list(row_chunks(10_001, width=2000))
    assert parts[0] == slice(0, 2097) and parts[-1].stop == 10_001
    assert sum(s.stop - s.start for s in parts) == 10_001


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
