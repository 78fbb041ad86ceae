"""Many parameters: the largest R-hat of chains that mix (multiple testing).

With thousands of parameters the R-hat half of the standard needs far more effective draws per
chain than its ESS half (:func:`~skbayes_sg.diagnostics.ess_for_rhat`); the advice of a failed
assessment says how much longer to run.  Oracles: independent and AR(1) Gaussian chains, whose
ESS per chain is ``n (1 - rho) / (1 + rho)``.
"""

import numpy as np
import pytest

from skbayes_sg.diagnostics import RHAT_MAX, assess, split_rhat
from skbayes_sg.diagnostics._assess import ess_for_rhat


def ar1(rho, n_chains=4, n_draws=1000, n_params=2000, seed=0):
    """Stationary AR(1) chains with unit variance."""
    rng = np.random.default_rng(seed)
    x = np.empty((n_chains, n_draws, n_params))
    x[:, 0] = rng.standard_normal((n_chains, n_params))
    noise = np.sqrt(1.0 - rho**2) * rng.standard_normal((n_chains, n_draws, n_params))
    for t in range(1, n_draws):
        x[:, t] = rho * x[:, t - 1] + noise[:, t]
    return x


def rho_for(ess_per_chain, n_draws=1000):
    r = ess_per_chain / n_draws
    return (1.0 - r) / (1.0 + r)


def test_ess_for_rhat_grows_with_the_number_of_quantities():
    needs = [ess_for_rhat(p, 4, 1000) for p in (1, 100, 10_000)]
    assert needs == sorted(needs)
    assert 150 < needs[0] < 220 and 440 < needs[-1] < 520  # 1,000 draws cannot reach 10^4 * 0.1
    assert ess_for_rhat(10, 1, 3) == np.inf


@pytest.mark.parametrize("seed", [0, 1])
def test_mixing_chains_pass_above_the_predicted_ess_and_fail_well_below(seed):
    p = 2000
    need = ess_for_rhat(p, 4, 1000)
    assert np.nanmax(split_rhat(ar1(rho_for(1.25 * need), n_params=p, seed=seed))) <= RHAT_MAX
    # a typical ESS well above 100 per chain, yet R-hat fails: the multiple-testing floor
    low = assess(ar1(rho_for(need / 3), n_params=p, seed=seed))
    assert np.median(low.ess_bulk) >= 4 * 120 and np.nanmax(low.rhat) > RHAT_MAX


def test_advice_gives_a_factor_that_suffices():
    p = 2000
    need = ess_for_rhat(p, 4, 1000)
    short = assess(ar1(rho_for(need / 3), n_params=p, seed=3))
    advice = short.problems[-1]
    assert advice.startswith("Run longer, about ")
    factor = float(advice.split("about ")[1].split("x")[0])
    assert 2.0 < factor < 5.0
    # chains run `factor` times longer (ESS per chain scaled by it) pass
    longer = assess(ar1(rho_for(factor * np.median(short.ess_bulk) / 4), n_params=p, seed=4))
    assert longer.converged


def test_advice_without_draw_count_is_the_plain_sentence():
    from skbayes_sg.diagnostics import convergence_problems

    rhat, ess = np.array([1.05, 1.0]), np.array([50.0, 500.0])
    assert convergence_problems(rhat, ess, ess, 4)[-1] == ("Run longer: increase n_draws (and "
                                                           "n_warmup).")
