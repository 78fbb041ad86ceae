"""Sparse X (CSR) in the models: every model function against its dense twin (to 1e-10).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skbayes_sg.models import ChainRows, Posterior

from support.oracles import assert_close_dense
from support.problems import sparse_twins


D, N = 7, 120
GLMS = ("binary", "softmax", "linear_fixed", "linear_inferred")


@pytest.mark.parametrize("name", GLMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_model_functions_match_the_dense_twin(name, weighted):
    dense, sparse, rng = sparse_twins(name, weighted=weighted)
    model, y, w = dense.model, dense.y, dense.weight
    theta = 0.3 * rng.normal(size=(4, model.n_params))
    Xd, Xs = dense.X, sparse.X
    assert_close_dense(model.nll(theta, Xs, y), model.nll(theta, Xd, y))
    assert_close_dense(model.grad_sum(theta, Xs, y, w), model.grad_sum(theta, Xd, y, w))
    assert_close_dense(model.per_example_grad(theta[0], Xs, y),
                       model.per_example_grad(theta[0], Xd, y))
    assert_close_dense(model.hessian(theta[0], Xs, y, w), model.hessian(theta[0], Xd, y, w))
    assert_close_dense(model.hessian_diag(theta[0], Xs, y, w),
                       model.hessian_diag(theta[0], Xd, y, w))
    assert_close_dense(model.predict_output(theta, Xs), model.predict_output(theta, Xd))
    if model.is_glm:
        r = model.response(theta, Xd, y)
        assert_close_dense(model.response(theta, Xs, y), r)
        assert_close_dense(model.grad_from_response(r, Xs, w), model.grad_from_response(r, Xd, w))
        assert_close_dense(model.curvature(theta[0], Xs, y), model.curvature(theta[0], Xd, y))
        V = rng.normal(size=(3, model.n_params))
        assert_close_dense(model.hessian_vector(theta[0], Xs, y, V, w),
                           V @ model.hessian(theta[0], Xd, y, w))


@pytest.mark.parametrize("name", GLMS)
def test_gathered_minibatches_match_the_dense_twin(name):
    dense, sparse, rng = sparse_twins(name)
    model = dense.model
    theta = 0.3 * rng.normal(size=(4, model.n_params))
    idx = rng.integers(0, N, size=(4, 9))
    (Xd, yd), (Xs, ys) = dense.rows(idx), sparse.rows(idx)
    assert isinstance(Xs, ChainRows) and Xs.shape == Xd.shape
    w = rng.random(idx.shape)
    assert_close_dense(model.nll(theta, Xs, ys), model.nll(theta, Xd, yd))
    assert_close_dense(model.grad_sum(theta, Xs, ys, w), model.grad_sum(theta, Xd, yd, w))
    assert_close_dense(model.grad_sum(theta, Xs, ys), model.grad_sum(theta, Xd, yd))
    if model.is_glm:
        r = model.response(theta, Xd, yd)
        assert_close_dense(model.response(theta, Xs, ys), r)
        assert_close_dense(model.grad_from_response(r, Xs, w), model.grad_from_response(r, Xd, w))
    rows = idx[0]  # a ragged chain: 1-D rows, shared CSR
    assert_close_dense(model.grad_sum(theta[:1], *sparse.rows(rows)),
          model.grad_sum(theta[:1], *dense.rows(rows)))


def test_float32_and_empty_rows():
    dense, _, rng = sparse_twins("softmax")
    X = dense.X.astype(np.float32)
    X[::5] = 0.0  # rows without a stored entry
    Xs = sp.csr_matrix(X)
    Xs.eliminate_zeros()
    model, theta = dense.model, rng.normal(size=(2, dense.model.n_params))
    assert_close_dense(model.grad_sum(theta, Xs, dense.y), model.grad_sum(theta, X, dense.y), 1e-6)
    idx = np.arange(20).reshape(2, 10)
    sparse = Posterior(model, dense.prior, Xs, dense.y)
    assert_close_dense(model.nll(theta, *sparse.rows(idx)),
                       model.nll(theta, X[idx], dense.y[idx]), 1e-6)
