"""Sparse X (CSR): mode, Laplace and low-rank covariances against the dense twin (to 1e-8).
"""

import numpy as np
import pytest

from skbayes_sg.models import Laplace
from skbayes_sg.preprocessing import (
    find_mode,
    full_hessian,
    laplace_at,
    lbfgs_mode,
    lowrank_covariance,
)
from skbayes_sg.samplers import from_laplace

from support.oracles import assert_close_dense
from support.problems import sparse_twins


GLMS = ("binary", "softmax", "linear_fixed", "linear_inferred")


@pytest.mark.parametrize("name", GLMS)
def test_mode_and_laplace_match_the_dense_twin(name):
    dense, sparse, rng = sparse_twins(name, n=300, weighted=True)
    md = find_mode(dense, np.random.default_rng(1))
    ms = find_mode(sparse, np.random.default_rng(1))
    assert_close_dense(ms.theta, md.theta, 1e-8)
    assert_close_dense(ms.hessian, md.hessian, 1e-8)
    assert_close_dense(lbfgs_mode(sparse)[0], lbfgs_mode(dense)[0], 1e-8)
    for kind in ("auto", "diagonal"):
        ld, ls = laplace_at(dense, md.theta, kind)[0], laplace_at(sparse, md.theta, kind)[0]
        assert ld.kind == ls.kind
        assert_close_dense(ls.covariance, ld.covariance)


@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed"])
def test_lowrank_of_full_rank_is_the_inverse_hessian(name):
    dense, sparse, _ = sparse_twins(name, weighted=True)
    mode = find_mode(dense, np.random.default_rng(0)).theta
    exact = laplace_at(dense, mode, "laplace")[0]
    diag = 1.0 / laplace_at(sparse, mode, "diagonal")[0].covariance
    cov, evals = lowrank_covariance(sparse, mode, diag, rank=dense.model.n_params)
    lap = Laplace(mode, cov)
    assert lap.kind == "lowrank" and evals > 0
    assert_close_dense(cov.apply(np.eye(mode.size)), exact.covariance, 1e-8)
    assert_close_dense(lap.variances, exact.variances, 1e-8)


def test_lowrank_preconditioner_is_consistent():
    """``L L^T = Sigma``, ``to_u = L^T``, ``inv = L^{-1}``, draws have covariance ``Sigma``."""
    _, sparse, rng = sparse_twins("binary", d=40, n=60)
    mode = 0.1 * rng.normal(size=41)
    lap = laplace_at(sparse, mode, "diagonal")[0]
    cov = lowrank_covariance(sparse, mode, 1.0 / lap.covariance, rank=5)[0]
    lap = Laplace(mode, cov)
    pre, eye = from_laplace(lap), np.eye(41)
    Lt = pre.from_u(eye)  # rows L e_j: L^T
    Sigma = cov.apply(eye)
    assert_close_dense(Lt.T @ Lt, Sigma)
    assert_close_dense(pre.to_u(eye), Lt.T)
    assert_close_dense(pre.inv(pre.from_u(eye)), eye)
    assert_close_dense(pre.apply(eye), Sigma)
    draws = lap.draws(np.random.default_rng(0), 40_000) - mode
    np.testing.assert_allclose(draws.var(0), lap.variances, rtol=0.05)
    H = full_hessian(sparse, mode)  # the low rank removes the top whitened curvatures
    s = 1.0 / np.sqrt(np.diag(H))
    diag_top = np.linalg.eigvalsh(H * s * s[:, None])
    lr_top = np.linalg.eigvalsh(Lt @ H @ Lt.T)
    # 2.77 -> 1.83 here (a flat spectrum: the range finder's subspace is not exactly the top 5)
    assert lr_top[-1] < 0.75 * diag_top[-1] and lr_top[-1] <= 1.1 * diag_top[-6]


def test_laplace_on_many_parameters_is_lowrank():
    # above 1,000 parameters and not wide (p < 2 N): low rank plus diagonal ("laplace") or
    # diagonal ("auto"); 601 parameters are cheap enough for a dense Laplace
    _, sparse, _ = sparse_twins("binary", d=1200, n=700, density=0.02)
    lap, evals = laplace_at(sparse, np.zeros(1201), "laplace")
    assert lap.kind == "lowrank" and lap.covariance.basis.shape == (1201, 20)
    assert laplace_at(sparse, np.zeros(1201), "auto")[0].kind == "diagonal"
    assert evals > sparse.n_rows
    _, small, _ = sparse_twins("binary", d=600, n=200, density=0.02)
    assert laplace_at(small, np.zeros(601), "auto")[0].kind == "dense"
