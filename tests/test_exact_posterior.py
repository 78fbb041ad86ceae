"""BayesianLinearRegression draws against the exact conjugate posterior.

Tolerance (issue contract): every coordinate's posterior-mean error below 0.2
posterior sds and every sd ratio in [0.8, 1.25].  With >= 1000 effective
draws the Monte-Carlo error of the mean is ~0.03 sd and of the sd ratio ~2%,
so the bounds test the sampler's bias, not luck.
"""

import numpy as np
import pytest

from conftest import posterior_errors
from skbayes_sg import BayesianLinearRegression


def _fit(X, y, s, **kw):
    reg = BayesianLinearRegression(noise_std=s, fit_intercept=False, prior_scale=1.0,
                                   random_state=0, **kw)
    return reg.fit(X, y)


def _check(reg, mean, cov):
    z, ratio = posterior_errors(reg.sample_posterior()["coef"], mean, cov)
    assert z < 0.2, f"posterior-mean error {z:.3f} sd"
    assert np.all((ratio > 0.8) & (ratio < 1.25)), f"sd ratios {np.round(ratio, 3)}"
    return z, ratio


@pytest.mark.parametrize("problem", ["diabetes_problem", "correlated_problem"])
@pytest.mark.parametrize("kw", [{}, {"sampler": "hmc", "subsampling": "full"}],
                         ids=["defaults", "hmc-full"])
def test_ill_conditioned_defaults(problem, kw, request):
    X, y, s, (mean, cov) = request.getfixturevalue(problem)
    reg = _fit(X, y, s, **kw)
    _check(reg, mean, cov)
    assert np.isfinite(reg.diagnostics_["ess"]).all()


# Long chains without preconditioning or control variates: the dynamics alone
# must be right.  uniform minibatches of 100 out of 2000 rows (gradient noise
# ~14x the curvature, so the auto step is small); 4 chains of 20,000 draws
# thinned by 5 after 2000 warm-up steps (102,000 steps per chain).
@pytest.mark.parametrize("sampler", ["sgld", "sghmc", "sgnht"])
def test_sg_samplers_well_conditioned(sampler, well_conditioned_problem):
    X, y, s, (mean, cov) = well_conditioned_problem
    reg = _fit(X, y, s, sampler=sampler, subsampling="uniform", preconditioner=None,
               n_warmup=2000, n_draws=20_000, thin=5)
    _check(reg, mean, cov)
