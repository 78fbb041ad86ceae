"""``stratified`` (CP-SG-MCMC, methods.md §3).

Monte-Carlo checks use fixed seeds and tolerances of 5 standard errors per
coordinate; each unbiasedness test also shows that a deliberately biased
variant (every row weighted ``N/b`` instead of ``n_j/b_j``) fails the check.
"""

import numpy as np
import pytest

from skbayes_sg.preprocessing import RowView, allocate_batch, kmeans_strata
from skbayes_sg.subsampling import Compressed, Stratified, StratifiedIndex, SVRGAnchor

from support.oracles import within_5se
from support.problems import estimates, rngs_for


MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]


# --------------------------------------------------------------------------- stratified
@pytest.mark.parametrize("correction", ["plain", "cv"])
@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("mlp", True)])
def test_stratified_unbiased(name, weighted, correction, blobs_problem):
    pb, lap, rng = blobs_problem(name, weighted=weighted)
    theta = np.tile(0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    strategy = Stratified(n_clusters=4, correction=correction)
    est = strategy.build(pb, lap, batch_size=12, rng=np.random.default_rng(1))
    assert est.index.b == 12 and est.outputs["n_strata"] == 4
    exact = pb.full_grad(theta[:1])[0]
    assert within_5se(estimates(est, theta, 40)[0], exact)
    biased = strategy.build(pb, lap, batch_size=12, rng=np.random.default_rng(1))
    biased.index.weight_row[:] = pb.n_rows / 12  # ignores the strata
    assert not within_5se(estimates(biased, theta, 40)[0], exact)


def test_stratified_index_draws_within_strata_independently():
    labels = np.repeat([0, 1, 2], [7, 30, 13])[np.random.default_rng(0).permutation(50)]
    alloc = np.array([2, 5, 13])  # the last stratum is taken whole every step
    index = StratifiedIndex(labels, alloc)
    index.n_block = 3  # force refills
    rngs = rngs_for(2)
    state, seen = index.init(rngs, 2), []
    for _ in range(2000):
        idx, w, state = index.draw(rngs, None, state)
        seen.append(idx)
    seen = np.stack(seen)  # (T, C, b)
    assert index.scale == 1.0 and w.shape == (2, 20)
    np.testing.assert_allclose(w[0], np.repeat([7 / 2, 30 / 5, 1.0], alloc))
    for j, cols in enumerate(np.split(np.arange(20), np.cumsum(alloc)[:-1])):
        block = seen[:, :, cols]
        assert np.all(labels[block] == j)
        assert np.all(np.diff(np.sort(block, axis=-1), axis=-1) > 0)  # no repeats
        freq = np.bincount(block.ravel(), minlength=50)[labels == j] / (2 * 2000)
        np.testing.assert_allclose(freq, alloc[j] / np.sum(labels == j), atol=0.05)
    assert (seen[:, 0] != seen[:, 1]).any() and (seen[1:] != seen[:-1]).any()


def test_allocation_rule():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(1, 12))
        n = rng.integers(1, 60, size=k)
        v = rng.exponential(size=k) * (rng.random(k) > 0.2)  # some zero-variance strata
        b = int(rng.integers(k, n.sum() + 1))
        alloc = allocate_batch(n, np.sqrt(v), b)
        assert alloc.sum() == b and np.all((alloc >= 1) & (alloc <= n))
        free = (v > 0) & (alloc > 1) & (alloc < n)
        if free.sum() >= 2:  # unclipped strata share one ratio b_j / (n_j sqrt v_j)
            ratio = (alloc[free] + np.array([[-1], [1]])) / (n[free] * np.sqrt(v[free]))
            assert ratio[1].min() >= ratio[0].max() - 1e-12
    np.testing.assert_array_equal(allocate_batch([100, 100, 100], [1, 2, 1], 40), [10, 20, 10])
    np.testing.assert_array_equal(allocate_batch([5, 5], [0, 0], 6), [3, 3])
    np.testing.assert_array_equal(allocate_batch([50, 2, 50], [1, 100, 0], 30), [27, 2, 1])
    with pytest.raises(ValueError, match="n_strata <= batch_size"):
        allocate_batch([5, 5, 5], [1, 1, 1], 2)


def test_strata_moments_and_batch_smaller_than_k(blobs_problem):
    pb, lap, rng = blobs_problem("softmax", n=300)
    strata, info = kmeans_strata(RowView(pb.X), 9, groups=pb.y, max_iter=3, rng=rng)
    assert strata.sizes.sum() == 300 and info["kmeans_iterations"] <= 3
    for j in range(strata.sizes.size):
        Z = pb.X[strata.labels == j]
        assert np.unique(pb.y[strata.labels == j]).size == 1  # within one class
        np.testing.assert_allclose(Z.mean(0), strata.means[j])
        np.testing.assert_allclose(((Z - Z.mean(0)) ** 2).sum(1).mean(), strata.variances[j])
    est = Stratified(n_clusters=20).build(pb, lap, batch_size=5, rng=rng)  # k -> b = 5
    assert est.outputs["n_strata"] == 5 and est.outputs["batch_allocation"].sum() == 5
    est = Stratified(n_clusters=20).build(pb, lap, batch_size=2, rng=rng)  # 3 classes > b: merge
    assert list(est.outputs["batch_allocation"]) == [1, 1]
    assert est.outputs["strata_sizes"].sum() == 300
    assert {"kmeans_seconds", "kmeans_inertia", "kmeans_iterations"} <= set(est.outputs)
    theta = np.tile(rng.normal(size=pb.model.n_params), (64, 1))
    assert within_5se(estimates(est, theta, 60)[0], pb.full_grad(theta[:1])[0])


@pytest.mark.parametrize("strategy, bad, param", [
    (Stratified, {"n_clusters": 0}, "n_clusters"),
    (Stratified, {"max_iter": 1.5}, "max_iter"),
    (Stratified, {"features": "z"}, "features"),
    (Stratified, {"correction": "exact"}, "correction"),
    (Stratified, {"correction": SVRGAnchor(update_every=0)}, "update_every"),
    (Compressed, {"radius": -1.0}, "radius"),
    (Compressed, {"target_ratio": 0.0}, "target_ratio"),
    (Compressed, {"n_refine": -1}, "n_refine"),
    (Compressed, {"clustering": "lsh"}, "clustering"),
    (Compressed, {"clustering": "sequential"}, "radius"),
    (Compressed, {"inner": "compressed"}, "inner"),
    (Compressed, {"inner": Stratified(n_clusters=0)}, "n_clusters"),
])
def test_validate_names_the_bad_parameter(strategy, bad, param):
    with pytest.raises(ValueError, match=param):
        strategy(**bad).validate()
    strategy().validate()
