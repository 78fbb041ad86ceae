"""Compression of the rows (methods.md §10): the radius contract, the sequential algorithm,
and the compressed posterior against the exact one.
"""

import warnings

import numpy as np
import pytest

from skbayes_sg import BayesianLinearRegression
from skbayes_sg.models import GaussianLinearModel, GaussianPrior, Laplace, Posterior
from skbayes_sg.preprocessing import RowView, compress
from skbayes_sg.subsampling import Compressed
from skbayes_sg.utils import ApproximationWarning


def _linear_diabetes(diabetes_problem):
    X, y, s, (mean, cov) = diabetes_problem
    pb = Posterior(GaussianLinearModel(X.shape[1], False, noise_std=s),
                   GaussianPrior(np.ones(X.shape[1])), X, y)
    return pb, Laplace(mean, cov), s, mean, cov


def _compressed_exact(small, s):
    """Precision and mean of the (Gaussian) compressed posterior."""
    prec = (small.X.T * small.weight) @ small.X / s**2 + np.eye(small.X.shape[1])
    return prec, np.linalg.solve(prec, (small.X.T * small.weight) @ small.y / s**2)


# --------------------------------------------------------------------------- compressed
@pytest.mark.parametrize("method", ["bisect", "sequential"])
def test_compress_radius_contract(method, blobs_problem):
    pb, _, rng = blobs_problem("softmax", n=400)
    X = np.vstack([pb.X, pb.X[:10]])  # duplicates
    y = np.concatenate([pb.y, pb.y[:10]])
    counts = []
    for radius in [0.0, 0.2, 0.5, 1.0, 2.0, 4.0]:
        comp = compress(RowView(X), groups=y, radius=radius, method=method,
                        rng=np.random.default_rng(3))
        assert comp.counts.sum() == X.shape[0] and np.all(comp.radii <= radius + 1e-12)
        for j in rng.choice(comp.counts.size, 5):
            rows = comp.labels == j
            assert np.all(y[rows] == comp.groups[j]) and rows.sum() == comp.counts[j]
            np.testing.assert_allclose(X[rows].mean(0), comp.centroids[j])
            assert np.linalg.norm(X[rows] - comp.centroids[j], axis=1).max() <= radius + 1e-12
        counts.append(comp.counts.size)
    assert counts[0] == (400 if method == "bisect" else 410)  # duplicates merge in "bisect"
    assert np.all(np.diff(counts) <= 0) and counts[-1] < 40
    if method == "bisect":
        assert compress(RowView(X), groups=y, n_clusters=57).counts.size == 57
    else:
        with pytest.raises(ValueError, match="radius for method='sequential'"):
            compress(RowView(X), groups=y, n_clusters=57, method=method)
    w = rng.integers(1, 4, size=X.shape[0]).astype(float)
    comp = compress(RowView(X), groups=y, weight=w, radius=1.0, chunk=100, method=method,
                    rng=np.random.default_rng(3))
    assert comp.counts.sum() == w.sum() and np.all(comp.radii <= 1.0 + 1e-12)
    for j in range(comp.counts.size):
        rows = comp.labels == j
        np.testing.assert_allclose(np.average(X[rows], axis=0, weights=w[rows]),
                                   comp.centroids[j])
        assert comp.counts[j] == pytest.approx(w[rows].sum())


def _algorithm_1(Z, delta, order):
    """Seed 003's Algorithm 1 written out literally (brute-force nearest neighbour, lists)."""
    clusters, of = [], {}
    for i in order:
        earlier = [k for k in of if np.linalg.norm(Z[i] - Z[k]) <= 2 * delta]
        if earlier:
            k = min(earlier, key=lambda k: (np.linalg.norm(Z[i] - Z[k]), k))
            S = clusters[of[k]] + [i]
            if np.linalg.norm(Z[S] - Z[S].mean(0), axis=1).max() <= delta:
                clusters[of[k]], of[i] = S, of[k]
                continue
        clusters.append([i])
        of[i] = len(clusters) - 1
    return clusters


@pytest.mark.parametrize("delta", [0.05, 0.3, 0.8])
def test_sequential_is_algorithm_1(delta):
    rng = np.random.default_rng(7)
    Z = np.vstack([rng.normal(size=(60, 3)) * 0.3, rng.normal(size=(60, 3)) * 0.3 + 2.0])
    comp = compress(RowView(Z), radius=delta, method="sequential", rng=np.random.default_rng(1))
    order = np.random.default_rng(1).permutation(Z.shape[0])
    expected = {frozenset(S) for S in _algorithm_1(Z, delta, order)}
    got = {frozenset(np.flatnonzero(comp.labels == j)) for j in range(comp.counts.size)}
    assert got == expected and comp.n_rounds == 1
    again = compress(RowView(Z), radius=delta, method="sequential", rng=np.random.default_rng(1))
    np.testing.assert_array_equal(again.labels, comp.labels)  # deterministic given rng
    other = compress(RowView(Z), radius=delta, method="sequential", rng=np.random.default_rng(2))
    assert other.counts.sum() == Z.shape[0] and np.all(other.radii <= delta + 1e-12)


@pytest.mark.parametrize("clustering", ["bisect", "sequential"])
def test_compressed_kl_shrinks_with_radius(clustering, diabetes_problem):
    # exact linear case: the compressed posterior is Gaussian, KL(p || p~) in closed form
    pb, lap, s, mean, cov = _linear_diabetes(diabetes_problem)
    kls, ratios = [], []
    for radius in [0.0, 0.02, 0.05, 0.1, 0.2, 0.5]:
        est = Compressed(radius=radius, clustering=clustering).build(
            pb, lap, batch_size=50, rng=np.random.default_rng(0))
        prec, m = _compressed_exact(est.posterior, s)
        d = m - mean
        kl = 0.5 * (np.trace(prec @ cov) + d @ prec @ d - pb.X.shape[1]
                    - np.linalg.slogdet(prec)[1] - np.linalg.slogdet(cov)[1])
        kls.append(kl), ratios.append(est.outputs["compression_ratio"])
        assert est.exact and est.outputs["compression_radius"] <= radius + 1e-12
        assert est.posterior.weight.sum() == pb.n_rows
    assert kls[0] < 1e-8 and ratios[0] == 1.0 and kls[1] < 1e-6 and kls[-1] > 1.0
    assert np.all(np.diff(kls) >= 0) and np.all(np.diff(ratios) <= 0) and ratios[-1] < 0.6


def test_compression_shift_is_the_exact_mode_shift_for_fixed_noise_linear(diabetes_problem):
    # quadratic potential: one Newton step from the full-data mode lands on the compressed mode
    pb, lap, s, mean, cov = _linear_diabetes(diabetes_problem)
    shifts = []
    for radius in [0.0, 0.1, 0.2, 0.5]:
        est = Compressed(radius=radius).build(pb, lap, batch_size=50,
                                              rng=np.random.default_rng(0))
        d = _compressed_exact(est.posterior, s)[1] - mean
        exact = np.max(np.abs(d) / np.sqrt(np.diag(cov)))
        shift = est.outputs["compression_shift"]
        assert shift == pytest.approx(exact, rel=1e-8, abs=1e-10)
        assert bool(est.warnings) == (shift > 0.3)
        shifts.append(shift)
    assert shifts[0] < 1e-10 and shifts[-1] > 1.0 and np.all(np.diff(shifts) > 0)


def test_coarse_compression_warns_and_exact_compression_does_not(diabetes_problem):
    X, y, s, _ = diabetes_problem
    kw = dict(noise_std=s, sampler="hmc", n_warmup=100, n_draws=100, random_state=0)
    with pytest.warns(ApproximationWarning, match="smaller radius"):
        coarse = BayesianLinearRegression(subsampling=Compressed(radius=0.5), **kw).fit(X, y)
    assert coarse.preprocessing_["compression_shift"] > 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exact = BayesianLinearRegression(subsampling=Compressed(radius=0.0), **kw).fit(X, y)
    assert exact.preprocessing_["compression_shift"] < 1e-8
    assert not [w for w in caught if issubclass(w.category, ApproximationWarning)]
