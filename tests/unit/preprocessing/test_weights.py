"""Per-row weights for the preferential strategies: curvature, gradient norms, Lipschitz
constants (methods.md §5-7).

Oracles: explicit per-row Hessians and gradients.
"""

from dataclasses import dataclass, replace

import numpy as np
import pytest

from skbayes_sg.models import Laplace, Posterior
from skbayes_sg.preprocessing import (
    curvature_weights,
    gradient_norm_weights,
    laplace_at,
    lipschitz_constants,
    mix_uniform,
)
from skbayes_sg.subsampling import PreferentialCV


MODELS = ["binary", "softmax", "linear_fixed", "linear_inferred", "mlp"]


@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
@pytest.mark.parametrize("kind", ["auto", "diagonal"])
def test_curvature_weights_match_explicit_hessians(name, kind, heavy_problem):
    pb, lap, _ = heavy_problem(name, n=40)
    lap = laplace_at(pb, lap.mode, kind)[0]
    S = lap.covariance if lap.dense else np.diag(lap.covariance)
    exact = []
    for i in range(pb.n_rows):
        H = pb.model.hessian(lap.mode, pb.X[i:i + 1], pb.y[i:i + 1])
        exact.append(np.sqrt(np.trace(H @ S @ H)))
    p, evals = curvature_weights(pb, lap, uniform_mix=0.1)
    np.testing.assert_allclose(p, mix_uniform(np.array(exact), None, 0.1), rtol=1e-9)
    assert evals == pb.n_rows


@pytest.mark.parametrize("name", ["binary", "linear_fixed"])
@pytest.mark.parametrize("weighted", [False, True])
def test_curvature_pass_shares_the_control_variate_anchor(name, weighted, heavy_problem):
    # the weights' pass computes the anchor at the mode too: the strategy's data carries it at
    # no cost, equal to the anchor's own pass (oracle: anchor_terms on a fresh posterior)
    from skbayes_sg.preprocessing import anchor_terms, curvature_weights_and_anchor

    pb, lap, _ = heavy_problem(name, n=60, weighted=weighted)
    lap = laplace_at(pb, lap.mode, "auto")[0]
    _, evals, (G, r, point) = curvature_weights_and_anchor(pb, lap, anchor=True)
    G0, r0 = anchor_terms(replace(pb), lap.mode)
    assert evals == pb.n_rows and point is lap.mode
    data = PreferentialCV().preprocess(pb, lap, rng=np.random.default_rng(0))
    assert data.n_grad_evals == pb.n_rows and data.anchor.point is lap.mode
    np.testing.assert_allclose(G, G0, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r, r0, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["binary", "softmax"])
def test_anchor_responses_are_written_chunk_by_chunk(name, heavy_problem):
    # several chunks, written in place: every row's response (oracle: model.response on all
    # rows), row-contiguous, in the minibatch precision (float32 for float32 X)
    from skbayes_sg.preprocessing import anchor_terms
    from skbayes_sg.utils import row_chunks

    @dataclass(frozen=True, eq=False)
    class SmallChunks(Posterior):  # chunks of 16 rows
        def chunks(self, width=1):
            return row_chunks(self.n_rows, rows=16)

    pb, lap, _ = heavy_problem(name, n=70)
    pb = SmallChunks(pb.model, pb.prior, pb.X, pb.y, pb.weight)
    assert len(list(pb.chunks())) == 5
    for X, tol in ((pb.X, 1e-12), (pb.X.astype(np.float32), 1e-5)):
        post = replace(pb, X=X)
        G, r = anchor_terms(post, lap.mode)
        exact = pb.model.response(lap.mode[None], pb.X, pb.y)[0]
        assert r.dtype == X.dtype and r.flags.c_contiguous and r.shape == exact.shape
        np.testing.assert_allclose(r, exact, rtol=0, atol=tol * np.abs(exact).max())


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("intercept", [True, False])
def test_quadratic_rows_from_the_triangular_factor(dtype, tol, intercept):
    # oracle: x~' S x~ and ||x~||^2 with x~ = [x, 1] formed explicitly, in float64
    from skbayes_sg.preprocessing._weights import _dense_quadratic_rows, _triangular_factor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 7)) * rng.uniform(0.1, 10.0, size=7)
    d1 = 8 if intercept else 7
    A = rng.normal(size=(d1, d1))
    S = A @ A.T + 0.1 * np.eye(d1)
    X1 = np.column_stack([X, np.ones(300)]) if intercept else X
    tri = _triangular_factor(np.linalg.cholesky(S), 7, dtype)
    q, sq = _dense_quadratic_rows(X.astype(dtype), *tri)
    np.testing.assert_allclose(q, np.einsum("ij,jk,ik->i", X1, S, X1), rtol=tol * 10)
    np.testing.assert_allclose(sq, (X1 * X1).sum(1), rtol=tol)


@pytest.mark.parametrize("name", MODELS)
def test_gradient_norm_weights_and_lipschitz(name, heavy_problem):
    pb, lap, _ = heavy_problem(name, n=40, weighted=True)
    norms = np.linalg.norm(pb.model.per_example_grad(lap.mode, pb.X, pb.y), axis=1)
    p, _ = gradient_norm_weights(pb, lap, uniform_mix=0.2)
    np.testing.assert_allclose(p, mix_uniform(norms * pb.weight, pb.weight, 0.2), rtol=1e-9)
    if name == "mlp":
        with pytest.raises(ValueError, match="No Lipschitz constants"):
            lipschitz_constants(pb, lap)
        return
    L = lipschitz_constants(pb, lap) / pb.weight
    for i in range(0, 40, 7):  # L_i bounds the curvature at the mode (equal for linear)
        H = pb.model.hessian(lap.mode, pb.X[i:i + 1], pb.y[i:i + 1])
        top = np.abs(np.linalg.eigvalsh(H)).max()
        assert top <= L[i] * (1 + 1e-12)
        if pb.model.is_regression:
            np.testing.assert_allclose(top, L[i], rtol=1e-10)


@pytest.mark.parametrize("name", ["binary", "softmax"])
def test_weights_positive_for_confident_points(name, heavy_problem):
    """``s(1-s)`` and the responses underflow to 0; the floor keeps ``p_i > 0``."""
    pb, lap, _ = heavy_problem(name, n=100)
    X = pb.X.copy()
    X[:10] *= 1e4  # margins ~1e4: curvature exactly 0 in float64
    pb = replace(pb, X=X)
    lap = Laplace(np.linspace(-1.0, 2.0, pb.model.n_params), lap.covariance)
    c = pb.model.curvature(lap.mode, X[:10])
    assert np.any(c == 0.0) if name == "binary" else np.any(c.max(axis=1) == 1.0)
    for p, _ in (curvature_weights(pb, lap, 0.05), gradient_norm_weights(pb, lap, 0.05)):
        assert np.all(p >= 0.05 / 100 * (1 - 1e-12)) and abs(p.sum() - 1) < 1e-12
    with pytest.raises(ValueError, match="uniform_mix"):
        mix_uniform(np.ones(3), None, 0.0)
