"""float32 rows: minibatch gradients in float32 against float64 on the same rows (float32
rounding only, relative ~1e-6).
"""

import numpy as np
import pytest

from skbayes_sg.models import Posterior
from skbayes_sg.subsampling import ControlVariates, Uniform

from support.problems import make_problem, rngs_for


MODELS = ("binary", "softmax", "linear_fixed", "linear_inferred", "mlp")


def _twin_posteriors(name):
    """The same problem with float32 rows and with those rows exactly in float64."""
    posterior, laplace, _ = make_problem(name, n=300)
    X32 = posterior.X.astype(np.float32)
    p32 = Posterior(posterior.model, posterior.prior, X32, posterior.y)
    p64 = Posterior(posterior.model, posterior.prior, X32.astype(np.float64), posterior.y)
    return p32, p64, laplace


@pytest.mark.parametrize("strategy", [Uniform(), ControlVariates()], ids=["uniform", "cv"])
@pytest.mark.parametrize("name", MODELS)
def test_float32_minibatch_gradient_matches_float64(name, strategy):
    p32, p64, laplace = _twin_posteriors(name)
    est32, est64 = (strategy.build(p, laplace, batch_size=20, rng=np.random.default_rng(0))
                    for p in (p32, p64))
    assert est32.compute_dtype is np.float32 and est64.compute_dtype is None
    theta = laplace.mode + 0.3 * np.random.default_rng(1).normal(size=(3, laplace.mode.size))
    r32, r64 = rngs_for(3), rngs_for(3)
    s32, s64 = est32.init(r32, theta), est64.init(r64, theta)
    for _ in range(3):
        g32, s32, n32 = est32.estimate(r32, theta, s32)
        g64, s64, n64 = est64.estimate(r64, theta, s64)
        assert g32.dtype == np.float64 and n32 == n64
        scale = np.abs(g64).max()
        np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("name", MODELS)
def test_exact_gradient_kick_is_the_gradient_in_float32(name):
    import scipy.sparse as sp

    from skbayes_sg.subsampling import ExactGradient

    posterior, laplace, _ = make_problem(name, n=300)
    exact = ExactGradient(posterior)
    kick = exact.kick()
    assert kick is not exact and kick.kick() is kick and kick.exact
    theta = laplace.mode + 0.3 * np.random.default_rng(1).normal(size=(3, laplace.mode.size))
    g, _, n = exact.estimate(None, theta, None)
    g32, _, n32 = kick.estimate(None, theta, None)
    assert g32.dtype == np.float64 and n32 == n
    np.testing.assert_allclose(g32, g, rtol=0, atol=1e-5 * np.abs(g).max())
    np.testing.assert_array_equal(kick.potential(theta), exact.potential(theta))  # float64
    # rows already float32, or sparse: the kick is the gradient itself
    for X in (posterior.X.astype(np.float32), sp.csr_matrix(posterior.X)):
        other = ExactGradient(Posterior(posterior.model, posterior.prior, X, posterior.y))
        assert other.kick() is other
