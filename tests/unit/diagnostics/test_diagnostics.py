"""Tests of skbayes_sg.diagnostics against oracles with Monte-Carlo tolerances."""

import warnings

import numpy as np
import pytest
from scipy.signal import lfilter

from skbayes_sg.diagnostics import (
    autocorrelation,
    effective_sample_size,
    format_table,
    gaussian_kl,
    integrated_time,
    kernel_stein_discrepancy,
    split_rhat,
    summarize,
)


def ar1(rng, rho, n_chains, n_draws, n_params=1):
    """Stationary AR(1) chains ``x_t = rho x_{t-1} + e_t``, shape (chains, draws, params)."""
    e = rng.standard_normal((n_chains, n_draws, n_params))
    e[:, 0] /= np.sqrt(1.0 - rho**2)  # start in the stationary law
    return lfilter([1.0], [1.0, -rho], e, axis=1)


@pytest.fixture
def iid():
    return np.random.default_rng(0).standard_normal((4, 1000, 3))


def test_autocorrelation_matches_direct_sum():
    x = np.random.default_rng(1).standard_normal(50)
    xc = x - x.mean()
    direct = np.array([xc[: 50 - t] @ xc[t:] for t in range(50)]) / (xc @ xc)
    assert np.allclose(autocorrelation(x), direct, atol=1e-12)
    batched = autocorrelation(np.stack([x, 2 * x + 1]), axis=1)
    assert np.allclose(batched, direct[None, :], atol=1e-12)


def test_mean_autocovariance_is_the_chains_mean_of_direct_sums():
    # the ESS averages the chains' spectra before one inverse FFT per parameter
    from skbayes_sg.diagnostics._autocorr import mean_autocovariance

    x = np.random.default_rng(3).standard_normal((3, 37, 2)) + [0.0, 5.0]
    xc = x - x.mean(axis=1, keepdims=True)
    direct = np.array([[[xc[c, : 37 - t, j] @ xc[c, t:, j] / 37 for j in range(2)]
                        for t in range(37)] for c in range(3)]).mean(axis=0)
    assert np.allclose(mean_autocovariance(x), direct, atol=1e-12)


def test_ar1_autocorrelation_and_integrated_time():
    rho = 0.9
    x = ar1(np.random.default_rng(2), rho, 4, 5000)
    acf = autocorrelation(x[..., 0], axis=1).mean(axis=0)
    assert np.allclose(acf[:4], rho ** np.arange(4), atol=0.05)
    tau = integrated_time(x)  # exact value (1 + rho) / (1 - rho) = 19
    assert 0.75 * 19 < tau < 1.25 * 19


def test_iid_bulk_ess_and_rhat(iid):
    ess = effective_sample_size(iid)
    assert ess.shape == (3,)
    assert np.all((0.8 * 4000 < ess) & (ess < 1.25 * 4000))
    for method in ("tail", "basic"):
        assert np.all(effective_sample_size(iid, method=method) > 0.7 * 4000)
    assert np.all(split_rhat(iid) < 1.01)


def test_two_dimensional_input_gives_scalars(iid):
    assert isinstance(effective_sample_size(iid[..., 0]), float)
    assert isinstance(split_rhat(iid[..., 0]), float)
    assert effective_sample_size(iid[..., 0]) == effective_sample_size(iid)[0]


@pytest.mark.parametrize("method", ["bulk", "basic"])
def test_ar1_ess(method):
    rho, n = 0.9, 4 * 5000
    x = ar1(np.random.default_rng(3), rho, 4, 5000, 2)
    expected = n * (1 - rho) / (1 + rho)
    ess = effective_sample_size(x, method=method)
    assert np.all(np.abs(ess / expected - 1) < 0.25)


def test_single_chain_is_split():
    x = ar1(np.random.default_rng(4), 0.5, 1, 4000)[0, :, 0]
    assert 0.7 * 4000 / 3 < effective_sample_size(x) < 1.3 * 4000 / 3
    assert split_rhat(x) < 1.02
    drift = x + np.linspace(0, 3, x.size)  # a trend: the two halves disagree
    assert split_rhat(drift) > 1.1


def test_shifted_means_give_large_rhat(iid):
    shifted = iid + np.array([0.0, 0.0, 0.0, 1.5])[:, None, None]
    assert np.all(split_rhat(shifted) > 1.1)


def test_an_early_assessment_stops_at_a_failing_rhat(iid):
    # oracle: the full assessment. A failing R-hat leaves its block's ESS NaN (the verdict and
    # the R-hat unchanged); a passing one is the full assessment itself
    from functools import partial

    from skbayes_sg.diagnostics import assess, convergence_problems
    from skbayes_sg.diagnostics._assess import _statistics
    from skbayes_sg.diagnostics._ess import _by_columns

    shifted = iid + np.array([0.0, 0.0, 0.0, 1.5])[:, None, None] * [0, 0, 1]  # the last only
    full = assess(shifted)
    early = assess(shifted, early=True)  # one block: every ESS NaN
    assert np.isnan(early.ess_bulk).all() and not early.converged
    np.testing.assert_array_equal(early.rhat, full.rhat)
    # blocks of two columns: only the failing column's block stops
    rhat, bulk, tail = _by_columns(shifted, partial(_statistics, early=True), n_out=3,
                                   block_elements=4 * 1000 * 2)
    np.testing.assert_array_equal(rhat, full.rhat)
    assert full.rhat[2] > 1.1 and not full.converged
    assert np.isnan(bulk[2]) and np.isnan(tail[2])
    np.testing.assert_array_equal(bulk[:2], full.ess_bulk[:2])  # the passing block
    np.testing.assert_array_equal(tail[:2], full.ess_tail[:2])
    problems = convergence_problems(rhat, bulk, tail, 4, n_draws=1000)
    assert problems[0] == full.problems[0] == early.problems[0]  # the R-hat sentence
    for a, b in zip(assess(iid, early=True), assess(iid)):
        np.testing.assert_array_equal(a, b) if isinstance(a, np.ndarray) else a == b


def test_different_variances_caught_by_folded_rhat(iid):
    scaled = iid * np.array([1.0, 1.0, 1.0, 3.0])[:, None, None]
    assert np.all(split_rhat(scaled, method="bulk") < 1.02)
    assert np.all(split_rhat(scaled, method="folded") > 1.05)
    assert np.all(split_rhat(scaled) > 1.05)


def test_constant_and_stuck_parameters_do_not_warn(iid):
    x = iid.copy()
    x[..., 1] = 2.5  # constant parameter
    x[..., 2] = np.arange(4)[:, None]  # each chain stuck at its own value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("bulk", "tail", "basic"):
            ess = effective_sample_size(x, method=method)
            assert np.isfinite(ess[0]) and np.isnan(ess[1])
        rhat = split_rhat(x)
        summary = summarize(x)
        table = format_table(summary)
    assert np.isfinite(rhat[0]) and np.isnan(rhat[1]) and rhat[2] == np.inf
    assert "nan" in table


def test_bad_input_raises(iid):
    with pytest.raises(ValueError, match="method"):
        effective_sample_size(iid, method="nope")
    with pytest.raises(ValueError, match="4 draws"):
        split_rhat(iid[:, :3])
    with pytest.raises(ValueError, match="shape"):
        effective_sample_size(np.zeros((2, 5, 3, 1)))


def _ksd_brute(x, s, c=1.0, beta=-0.5):
    """Per-coordinate IMQ Stein kernel summed over all pairs, directly (small n)."""
    r = x[:, None, :] - x[None, :, :]
    u = c**2 + (r**2).sum(-1, keepdims=True)
    k0 = (s[:, None] * s[None, :] * u**beta
          + 2 * beta * r * u ** (beta - 1) * (s[None] - s[:, None])
          - 2 * beta * u ** (beta - 1) - 4 * beta * (beta - 1) * r**2 * u ** (beta - 2))
    return np.sqrt(k0.sum((0, 1))) / len(x)


def test_ksd_blocked_matches_brute_force():
    rng = np.random.default_rng(5)
    x = rng.normal(3.0, 2.0, size=(60, 3))
    s = rng.standard_normal((60, 3))
    for beta in (-0.5, -0.3):
        w = _ksd_brute(x, s, c=1.5, beta=beta)
        got = kernel_stein_discrepancy(x, s, c=1.5, beta=beta, block_size=7)
        assert got == pytest.approx(w.sum(), rel=1e-10)
        l2 = kernel_stein_discrepancy(x, s, c=1.5, beta=beta, norm="l2")
        assert l2 == pytest.approx(np.sqrt(w @ w), rel=1e-10)


def test_ksd_prefers_exact_draws_and_shrinks_with_n():
    rng = np.random.default_rng(6)
    z = rng.standard_normal((1600, 2))
    exact = kernel_stein_discrepancy(z[:400], -z[:400])
    shifted = kernel_stein_discrepancy(z[:400] + 0.5, -(z[:400] + 0.5))
    wide = kernel_stein_discrepancy(1.5 * z[:400], -1.5 * z[:400])
    assert exact < 0.5 * shifted and exact < 0.5 * wide
    by_n = [kernel_stein_discrepancy(z[:n], -z[:n]) for n in (100, 400, 1600)]
    assert by_n[0] > by_n[1] > by_n[2]


def test_gaussian_kl():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    mean = rng.standard_normal(3)
    assert gaussian_kl(mean, cov, mean, cov) == pytest.approx(0.0, abs=1e-12)
    m1, s1, m2, s2 = 0.3, 0.7, -1.0, 1.9
    exact = np.log(s2 / s1) + (s1**2 + (m1 - m2) ** 2) / (2 * s2**2) - 0.5
    assert gaussian_kl(m1, s1**2, m2, s2**2) == pytest.approx(exact, rel=1e-12)
    diag = gaussian_kl([m1, 0.0], [s1**2, 1.0], [m2, 0.0], np.diag([s2**2, 1.0]))
    assert diag == pytest.approx(exact, rel=1e-12)
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_kl(mean, -cov, mean, cov)


def test_summarize_and_format_table(iid):
    summary = summarize(iid, names=["a", "b", "c"])
    assert list(summary) == ["name", "mean", "sd", "q5", "q50", "q95",
                             "ess_bulk", "ess_tail", "rhat"]
    assert all(np.shape(v) == (3,) for v in summary.values())
    assert np.allclose(summary["mean"], iid.reshape(-1, 3).mean(0))
    assert np.all(summary["q5"] < summary["q50"]) and np.all(summary["q50"] < summary["q95"])
    lines = format_table(summary).splitlines()
    assert len(lines) == 4 and lines[1].startswith("a ")
    assert len({len(line) for line in lines}) == 1  # aligned
    one = summarize(iid[..., 0], quantiles=(0.025,))
    assert "q2.5" in one and one["mean"].shape == (1,)


def test_matches_arviz():
    az = pytest.importorskip("arviz")
    rng = np.random.default_rng(8)
    x = np.concatenate([ar1(rng, r, 4, 301) for r in (0.0, 0.6, 0.95)], axis=2)
    data = az.convert_to_dataset(x)
    for ours, theirs in (("bulk", "bulk"), ("tail", "tail"), ("basic", "mean")):
        ref = az.ess(data, method=theirs)["x"].values
        assert np.allclose(effective_sample_size(x, method=ours), ref, rtol=1e-6, atol=0)
    ref = az.rhat(data, method="rank")["x"].values
    assert np.allclose(split_rhat(x), ref, rtol=1e-6, atol=0)
