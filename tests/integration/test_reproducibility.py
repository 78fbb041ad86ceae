"""The same ``random_state`` gives the same draws, whatever ``n_jobs`` and the number of chains.
"""

import numpy as np
import pytest

from skbayes_sg.fitting import FitConfig
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.subsampling import ControlVariates


def test_same_random_state_same_draws_and_first_chain_rows_unchanged(correlated_problem):
    X, y, s, _ = correlated_problem
    kw = dict(noise_std=s, random_state=3, n_warmup=100, n_draws=200,
              subsampling=ControlVariates(shared_minibatch=True))
    a = BayesianLinearRegression(**kw).fit(X, y).draws_
    b = BayesianLinearRegression(**kw).fit(X, y).draws_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[0], a[1])  # the chains still differ (their own noise)


@pytest.mark.parametrize("sampler", [pytest.param("sgld", marks=pytest.mark.slow), "sghmc", "hmc"])
def test_same_random_state_same_draws_any_n_jobs(sampler, cancer):
    X, y = cancer
    sub = "full" if sampler == "hmc" else "control_variates"
    kw = dict(sampler=sampler, subsampling=sub, n_warmup=50, n_draws=30, n_chains=4,
              random_state=3)
    a = BayesianLogisticRegression(n_jobs=1, **kw).fit(X, y).draws_
    b = BayesianLogisticRegression(n_jobs=1, **kw).fit(X, y).draws_
    c = BayesianLogisticRegression(n_jobs=2, **kw)
    c._fit_config = FitConfig(parallel_min_seconds=0.0)  # workers, however short the chains
    c = c.fit(X, y).draws_
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
