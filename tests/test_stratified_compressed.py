"""``stratified`` (CP-SG-MCMC, methods.md §3) and ``compressed`` (methods.md §10).

Monte-Carlo checks use fixed seeds and tolerances of 5 standard errors per
coordinate; each unbiasedness test also shows that a deliberately biased
variant (every row weighted ``N/b`` instead of ``n_j/b_j``) fails the check.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.models import GaussianLinearModel, GaussianPrior, Laplace, Posterior
from skbayes_sg.preprocessing import RowView, allocate_batch, compress, kmeans_strata
from skbayes_sg.subsampling import Compressed, Stratified, StratifiedIndex, SVRGAnchor
from skbayes_sg.utils import ApproximationWarning

MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]
FAST = dict(n_warmup=60, n_draws=40, n_chains=2, batch_size=100, random_state=0)


@pytest.fixture
def problem(make_problem):
    """``problem(name, n=200, weighted=False)``: two blobs of rows, so strata differ."""
    def make(name, n=200, weighted=False):
        return make_problem(name, n=n, weighted=weighted, layout="blobs")
    return make


def _linear_diabetes(diabetes_problem):
    X, y, s, (mean, cov) = diabetes_problem
    pb = Posterior(GaussianLinearModel(X.shape[1], False, noise_std=s),
                   GaussianPrior(np.ones(X.shape[1])), X, y)
    return pb, Laplace(mean, cov), s, mean, cov


def _compressed_exact(small, s):
    """Precision and mean of the (Gaussian) compressed posterior."""
    prec = (small.X.T * small.weight) @ small.X / s**2 + np.eye(small.X.shape[1])
    return prec, np.linalg.solve(prec, (small.X.T * small.weight) @ small.y / s**2)


# --------------------------------------------------------------------------- stratified
@pytest.mark.parametrize("correction", ["plain", "cv"])
@pytest.mark.parametrize("name, weighted", [(m, False) for m in MODELS] + [("mlp", True)])
def test_stratified_unbiased(name, weighted, correction, problem, estimates, within_5se):
    pb, lap, rng = problem(name, weighted=weighted)
    theta = np.tile(0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    strategy = Stratified(n_clusters=4, correction=correction)
    est = strategy.build(pb, lap, batch_size=12, rng=np.random.default_rng(1))
    assert est.index.b == 12 and est.outputs["n_strata"] == 4
    exact = pb.full_grad(theta[:1])[0]
    assert within_5se(estimates(est, theta, 40)[0], exact)
    biased = strategy.build(pb, lap, batch_size=12, rng=np.random.default_rng(1))
    biased.index.weight_row[:] = pb.n_rows / 12  # ignores the strata
    assert not within_5se(estimates(biased, theta, 40)[0], exact)


def test_stratified_index_draws_within_strata_independently(rngs_for):
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


def test_strata_moments_and_batch_smaller_than_k(problem, estimates, within_5se):
    pb, lap, rng = problem("softmax", n=300)
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


# --------------------------------------------------------------------------- compressed
@pytest.mark.parametrize("method", ["bisect", "sequential"])
def test_compress_radius_contract(method, problem):
    pb, _, rng = problem("softmax", n=400)
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


@pytest.mark.parametrize("inner", ["uniform", Stratified(n_clusters=3, correction="cv")],
                         ids=["uniform", "stratified-cv"])
@pytest.mark.parametrize("name", MODELS)
def test_compressed_inner_minibatches_unbiased_for_compressed_potential(name, inner, problem,
                                                                        estimates, within_5se):
    pb, lap, rng = problem(name)
    est = Compressed(radius=0.3, inner=inner).build(pb, lap, batch_size=10, rng=rng)
    small = est.posterior
    assert not est.exact and est.n_data == pb.n_rows and small.n_rows < pb.n_rows
    theta = np.tile(0.5 * rng.normal(size=pb.model.n_params), (128, 1))
    assert within_5se(estimates(est, theta, 30)[0], small.full_grad(theta[:1])[0])


# --------------------------------------------------------------------------- exact posteriors
def test_stratified_sgld_well_conditioned(well_conditioned_problem, fit_exact_linear,
                                          check_exact):
    X, y, s, (mean, cov) = well_conditioned_problem
    reg = fit_exact_linear(X, y, s, sampler="sgld", subsampling="stratified",
                           preconditioner=None, n_warmup=2000, n_draws=20_000, thin=5,
                           batch_size=100)
    check_exact(reg, mean, cov)


@pytest.mark.parametrize("problem_name", ["diabetes_problem", "correlated_problem"])
def test_stratified_cv_ill_conditioned_defaults(problem_name, request, fit_exact_linear,
                                                check_exact):
    X, y, s, (mean, cov) = request.getfixturevalue(problem_name)
    check_exact(fit_exact_linear(X, y, s, subsampling=Stratified(correction="cv")), mean, cov)


@pytest.mark.parametrize("kw", [{"sampler": "hmc"}, {}], ids=["hmc", "default-sampler"])
def test_compressed_radius_zero_is_exact(kw, diabetes_problem, fit_exact_linear, check_exact):
    X, y, s, (mean, cov) = diabetes_problem
    reg = fit_exact_linear(X, y, s, subsampling=Compressed(radius=0.0), **kw)
    pre = reg.preprocessing_
    assert pre["n_centroids"] == X.shape[0] and pre["compression_ratio"] == 1.0
    check_exact(reg, mean, cov)


# --------------------------------------------------------------------------- estimators
@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X)[::2], y[::2]


@pytest.mark.parametrize("sub", ["stratified", Stratified(n_clusters=5, features="x")],
                         ids=["string", "object"])
def test_stratified_through_all_estimators(sub, cancer):
    X, y = cancer
    Xd, yd = load_diabetes(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [BayesianLogisticRegression(subsampling=sub, **FAST).fit(X, y),
                BayesianLinearRegression(subsampling=sub, **FAST).fit(
                    StandardScaler().fit_transform(Xd), (yd - yd.mean()) / yd.std()),
                BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=sub, **FAST).fit(X, y)]
    k = 20 if isinstance(sub, str) else 5
    for est, n_rows in zip(fits, [X.shape[0], Xd.shape[0], X.shape[0]]):
        pre = est.preprocessing_
        assert pre["n_strata"] == k and pre["batch_allocation"].sum() == 100
        assert pre["strata_sizes"].sum() == n_rows
        assert {"kmeans_seconds", "kmeans_inertia", "kmeans_iterations"} <= set(pre)
        assert np.isfinite(est.draws_).all()


def test_grid_search_n_clusters_and_samplers(cancer):
    X, y = cancer
    est = BayesianLogisticRegression(subsampling=Stratified(), sampler="sgld", **FAST)
    grid = GridSearchCV(est, {"subsampling__n_clusters": [2, 8]}, cv=2).fit(X, y)
    assert grid.best_params_["subsampling__n_clusters"] in (2, 8)
    assert grid.best_estimator_.preprocessing_["n_strata"] in (2, 8)
    assert est.subsampling.n_clusters == 20
    with pytest.raises(ValueError, match="exact full-data gradient"):
        BayesianLogisticRegression(sampler="hmc", subsampling="stratified", **FAST).fit(X, y)
    for sampler in ["psgld", "sgnht"]:
        BayesianLogisticRegression(sampler=sampler, subsampling="stratified", **FAST).fit(X, y)
    svrg = BayesianLogisticRegression(subsampling=Stratified(correction="svrg"), **FAST).fit(X, y)
    assert svrg.preprocessing_["anchor_batch_size"] == X.shape[0]


def test_compressed_through_estimators(cancer):
    X, y = cancer
    clf = BayesianLogisticRegression(sampler="hmc", subsampling="compressed", **FAST).fit(X, y)
    pre = clf.preprocessing_
    assert pre["n_centroids"] == math.ceil(0.1 * X.shape[0])
    assert pre["compression_ratio"] == pre["n_centroids"] / X.shape[0]
    assert pre["compression_radius"] > 0 and "compression_seconds" in pre
    assert clf.score(X, y) > 0.9
    mlp = BayesianMLPClassifier(hidden_layer_sizes=(8,), subsampling=Compressed(
        radius=0.3, inner="stratified"), **FAST).fit(X, y)
    assert mlp.preprocessing_["compression_ratio"] < 1 and mlp.preprocessing_["n_strata"] >= 1
    seq = [BayesianLogisticRegression(sampler="hmc", subsampling=Compressed(
        radius=0.3, clustering="sequential"), **{**FAST, "random_state": seed}).fit(X, y)
        for seed in (0, 0, 1)]
    assert seq[0].preprocessing_["compression_radius"] <= 0.3
    assert seq[0].preprocessing_["n_centroids"] == seq[1].preprocessing_["n_centroids"]
    np.testing.assert_array_equal(seq[0].draws_, seq[1].draws_)
    assert seq[0].score(X, y) > 0.9 and seq[2].score(X, y) > 0.9
    with pytest.raises(ValueError, match="exact full-data gradient"):
        BayesianLogisticRegression(sampler="hmc", subsampling=Compressed(inner="uniform"),
                                   **FAST).fit(X, y)
    with pytest.raises(ValueError, match="inner must be"):
        BayesianLogisticRegression(subsampling=Compressed(inner="compressed"), **FAST).fit(X, y)


def test_one_sample_fit_and_bad_hyperparameters():
    X, y = np.array([[0.5, -1.0]]), np.array([1.3])
    for sub in ["stratified", Stratified(correction="cv"), "compressed"]:
        BayesianLinearRegression(subsampling=sub, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="n_clusters"):
        BayesianLinearRegression(subsampling=Stratified(n_clusters=0), **FAST).fit(X, y)
    with pytest.raises(ValueError, match="radius"):
        BayesianLinearRegression(subsampling=Compressed(radius=-1.0), **FAST).fit(X, y)
