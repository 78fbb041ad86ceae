"""Sampler x strategy pairs: each incompatible one refused with its own message, before any
pass over the data (``fitting.check_combination``).
"""

import numpy as np
import pytest

from skbayes_sg import BayesianLogisticRegression


rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
y_bin = (X[:, 0] > 0).astype(int)


def test_hmc_with_subsampled_gradient_is_refused():
    with pytest.raises(ValueError, match="exact full-data gradient.*full"):
        BayesianLogisticRegression(sampler="hmc", subsampling="uniform").fit(X, y_bin)


def _combination_cases():
    from skbayes_sg.samplers import HMC, PSGLD, SGHMC
    from skbayes_sg.subsampling import EWSG, Compressed

    return {
        "exact gradient": (
            HMC(), Compressed(inner="uniform"),
            r"sampler='hmc' needs the exact full-data gradient and potential, but "
            r"subsampling=Compressed\(inner='uniform'\) gives a stochastic estimate\. Use "
            r"subsampling in \['compressed', 'full'\] .*stochastic-gradient sampler in "
            r"\['psgld', 'sghmc', 'sgld', 'sgnht'\]"),
        "integrator cannot couple": (
            SGHMC(integrator="aboba"), EWSG(),
            r"subsampling='ewsg' gives candidate gradients .* Euler kernel's energies; "
            r"sampler=SGHMC\(integrator='aboba'\) cannot\. Use integrator in \['euler'\]"),
        "sampler cannot couple": (
            PSGLD(), Compressed(inner="ewsg"),
            r"subsampling=Compressed\(inner='ewsg'\) gives candidate gradients .*; "
            r"sampler='psgld' cannot\. Use sampler in \['sghmc', 'sgld', 'sgnht'\] "
            r"\('sghmc' with integrator in \['euler'\]\)"),
    }


@pytest.mark.parametrize("case", list(_combination_cases()))
def test_each_incompatible_combination_has_its_own_message(case, no_data_pass):
    # the one check (skbayes_sg.fitting.check_combination) says what is wrong and what works,
    # and fit raises it before any pass over the data
    from skbayes_sg.fitting import check_combination

    sampler, strategy, message = _combination_cases()[case]
    with pytest.raises(ValueError, match=message):
        check_combination(sampler, strategy)
    with pytest.raises(ValueError, match=message):
        BayesianLogisticRegression(sampler=sampler, subsampling=strategy).fit(X, y_bin)


def test_compatible_combinations_pass_the_check():
    from skbayes_sg.fitting import check_combination
    from skbayes_sg.samplers import HMC, SGHMC, SGLD, SGNHT
    from skbayes_sg.subsampling import EWSG, Compressed, Full, Uniform

    for sampler, strategy in [(HMC(), Full()), (HMC(), Compressed()), (SGHMC(), EWSG()),
                              (SGNHT(), EWSG()), (SGLD(), Compressed(inner="ewsg")),
                              (SGHMC(integrator="aboba"), Uniform())]:
        check_combination(sampler, strategy)
