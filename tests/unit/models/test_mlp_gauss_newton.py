"""The networks' Gauss-Newton products against an explicit ``sum_i w_i J_i^T H_i J_i``."""

import numpy as np
import pytest
from scipy.special import softmax

from skbayes_sg.models import MLPModel, MLPRegressionModel


def _explicit(model, theta, X, w):
    """``G (p, p)`` from the outputs' Jacobian by central differences (smooth in theta)."""
    def out(t):
        return model._forward(t[None], X)[1][0]

    eps = 1e-6
    J = np.stack([(out(theta + eps * e) - out(theta - eps * e)) / (2 * eps)
                  for e in np.eye(model.n_params)], axis=-1)  # (b, K, p)
    z = out(theta)
    if getattr(model, "is_regression", False):
        H = np.full((X.shape[0], 1, 1), np.exp(-2.0 * theta[-1]))
    else:
        H = np.stack([np.diag(q) - np.outer(q, q) for q in softmax(z, axis=-1)])
    G = np.einsum("i,ikp,ikl,ilq->pq", w, J, H, J)
    if getattr(model, "is_regression", False):
        G[-1, -1] = 2.0 * w.sum()
    return G


@pytest.mark.parametrize("act", ["tanh", "relu"])
@pytest.mark.parametrize("model", [MLPModel((3, 4, 5, 3)), MLPRegressionModel((3, 6, 1))],
                         ids=["classifier", "regressor"])
def test_products_equal_the_explicit_gauss_newton_matrix(model, act):
    from dataclasses import replace

    model = replace(model, activation=act)
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(9, 3)), rng.uniform(0.5, 2.0, size=9)
    y = rng.integers(0, 3, size=9) if model.layer_units[-1] > 1 else rng.normal(size=9)
    theta = model.init_position(rng)
    G = _explicit(model, theta, X, w)
    V = rng.normal(size=(4, model.n_params))
    got = model.gauss_newton_product(theta, X, y, V, w)
    np.testing.assert_allclose(got, V @ G, rtol=1e-7, atol=1e-7 * np.abs(V @ G).max())
    assert np.linalg.eigvalsh(G).min() > -1e-8  # positive semi-definite
    # its diagonal is the Fisher diagonal the preconditioner uses
    diag = np.diag(model.gauss_newton_product(theta, X, y, np.eye(model.n_params), w))
    np.testing.assert_allclose(diag, model.hessian_diag(theta, X, y, w), rtol=1e-10)
