"""Mode finding: damped Newton agrees with L-BFGS within a few dozen data passes.

(On real data L-BFGS needs 250-560 passes: benchmarks/results/exact_posterior.md
and the notes; these toy problems have D = 3 features, where it is quick too.)
"""

import numpy as np
import pytest

from skbayes_sg.models import Posterior
from skbayes_sg.preprocessing import _mode, find_mode, full_hessian
from skbayes_sg.preprocessing._mode import lbfgs_mode
from skbayes_sg.preprocessing._newton import newton_mode

D = 3


@pytest.fixture
def problem(toy_model, toy_prior):
    """``problem(name, weighted, n=400)``: a Posterior with anisotropic features."""
    def make(name, weighted, n=400, seed=0):
        rng, model = np.random.default_rng(seed), toy_model(name)
        X = rng.normal(size=(n, D)) * rng.uniform(0.3, 3.0, size=(1, D))
        if name.startswith("linear"):
            y = X @ rng.normal(size=D) + 0.5 * rng.normal(size=n)
        elif name == "binary":
            y = np.where(X @ np.ones(D) + rng.logistic(size=n) > 0, 1.0, -1.0)
        else:
            y = rng.integers(0, 3, size=n)
        w = rng.integers(1, 4, size=n).astype(float) if weighted else None
        return Posterior(model, toy_prior(name, model), X, y, w)

    return make


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["binary", "softmax", "linear_fixed", "linear_inferred"])
def test_newton_matches_lbfgs(problem, name, weighted):
    pb = problem(name, weighted)
    theta_n, evals_n, H_n = newton_mode(pb)
    theta_l, evals_l = lbfgs_mode(pb)
    assert theta_n is not None
    # distance in posterior-sd units (Laplace metric at the mode)
    H = full_hessian(pb, theta_l)
    d = theta_n - theta_l
    assert d @ H @ d < 1e-6
    assert np.abs(pb.full_grad(theta_n[None])[0]).max() < 1e-6 * pb.n_rows
    assert evals_n <= 40 * pb.n_rows
    assert np.allclose(H_n, full_hessian(pb, theta_n))  # reused by the Laplace step


def test_find_mode_uses_newton_for_dense_glms(problem):
    pb = problem("softmax", False)
    theta, evals, H = find_mode(pb, np.random.default_rng(0))
    assert np.allclose(theta, newton_mode(pb)[0])
    assert evals == newton_mode(pb)[1]
    assert H is not None


@pytest.mark.parametrize("name, weighted", [("binary", False), ("binary", True),
                                           ("softmax", False), ("linear_inferred", True)])
def test_large_data_newton_starts_from_a_subsample_mode(problem, monkeypatch, name, weighted):
    # with N >= 4 x _WARM_ROWS, Newton first solves a scaled subsample; the
    # full-data iterations then start close and the mode is the same
    pb = problem(name, weighted, n=4000)
    cold = newton_mode(pb)
    monkeypatch.setattr(_mode, "_WARM_ROWS", 500)
    warm = find_mode(pb, np.random.default_rng(0))
    d = warm.theta - cold.theta
    assert d @ cold.hessian @ d < 1e-8
    if name == "binary":  # a mode far from 0 (the toy softmax labels are noise)
        assert warm.n_grad_evals < cold.n_grad_evals  # subsample passes cost 500 rows
    monkeypatch.setattr(_mode, "_WARM_ROWS", 1001)  # N < 4 x m: no warm start
    assert np.allclose(find_mode(pb, np.random.default_rng(0)).theta, cold.theta)


def test_newton_gives_up_on_a_broken_hessian(problem):
    # the MLP has no exact Hessian, so find_mode never calls Newton for it; a
    # Hessian that is NaN makes every shift fail and Newton returns None
    pb = problem("binary", False)

    class Flat:
        n_params = pb.model.n_params

        def hessian(self, theta, X, y, w=None):
            return np.full((self.n_params, self.n_params), np.nan)

        def __getattr__(self, name):
            return getattr(pb.model, name)

    bad = Posterior(Flat(), pb.prior, pb.X, pb.y)
    theta, evals, H = newton_mode(bad)
    assert theta is None and evals > 0 and H is None
