"""The ``Posterior`` record (row sums, subsets) and the ``Laplace`` record's draws.
"""

import numpy as np
import pytest

from skbayes_sg.models import Laplace

from support.problems import make_problem


@pytest.mark.parametrize("name", ["binary", "softmax", "linear_inferred", "mlp"])
def test_posterior_sums_match_one_call(name):
    pb, _, rng = make_problem(name, n=50, weighted=True)
    theta = 0.3 * rng.normal(size=(2, pb.model.n_params))
    X = pb.X.astype(float)
    grad = pb.prior.grad(theta) + pb.model.grad_sum(theta, X, pb.y, pb.weight)
    np.testing.assert_allclose(pb.full_grad(theta), grad, rtol=1e-12)
    pot = pb.prior.value(theta) + pb.model.nll(theta, X, pb.y) @ pb.weight
    np.testing.assert_allclose(pb.potential(theta), pot, rtol=1e-12)


def test_subset_keeps_the_data_size():
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
