"""Which samplers run on which subsampling strategies: one check, one message per case.

``fit`` calls :func:`check_combination` before any pass over the data.  The samplers'
``build_kernel`` keeps only a short guard for estimators built outside ``fit``.
"""

from ..samplers import INTEGRATORS, SAMPLERS
from ..subsampling import SUBSAMPLING

__all__ = ["check_combination"]


def check_combination(sampler, strategy):
    """Raise a ValueError if ``sampler`` cannot run on ``strategy``'s gradient estimates.

    Parameters
    ----------
    sampler : BaseSampler
    strategy : BaseStrategy

    Notes
    -----
    The cases, checked in this order, each with its own message (what is wrong, what works):

    * the sampler needs the exact gradient and potential (HMC), the strategy gives an estimate;
    * the strategy gives candidate gradients (EWSG) and the sampler's integrator cannot pick
      among them (``SGHMC(integrator="aboba")``), though another of its integrators can;
    * the strategy gives candidate gradients and the sampler cannot pick among them (pSGLD).
    """
    for case in _CASES:
        message = case(sampler, strategy)
        if message is not None:
            raise ValueError(message)


def _show(obj):
    """``'name'`` for an object at its defaults, else its repr (``SGHMC(integrator='aboba')``)."""
    text = repr(obj)
    return repr(obj.name) if text.endswith("()") and obj.name else text


def _exact_gradient(sampler, strategy):
    if not sampler.needs_exact_gradient or strategy.exact:
        return None
    exact = sorted(k for k, v in SUBSAMPLING.items() if v().exact)
    stochastic = sorted(k for k, v in SAMPLERS.items() if not v.needs_exact_gradient)
    return (f"sampler={_show(sampler)} needs the exact full-data gradient and potential, but "
            f"subsampling={_show(strategy)} gives a stochastic estimate. Use subsampling in "
            f"{exact} (at their defaults) with this sampler, or a stochastic-gradient sampler in "
            f"{stochastic}.")


def _integrator_coupling(sampler, strategy):
    if (strategy.n_candidates == 1 or sampler.couples_index
            or "integrator" not in sampler.get_params()):
        return None
    return (f"subsampling={_show(strategy)} gives candidate gradients that the sampler picks "
            f"among with the Euler kernel's energies; sampler={_show(sampler)} cannot. Use "
            f"integrator in {_coupling_integrators()}, or another subsampling.")


def _index_coupling(sampler, strategy):
    if strategy.n_candidates == 1 or sampler.couples_index:
        return None
    coupling = sorted(k for k, v in SAMPLERS.items() if v().couples_index)
    return (f"subsampling={_show(strategy)} gives candidate gradients that the sampler picks "
            f"among with its Gaussian kernel; sampler={_show(sampler)} cannot. Use sampler in "
            f"{coupling} ('sghmc' with integrator in {_coupling_integrators()}), or another "
            "subsampling.")


def _coupling_integrators():
    return sorted(k for k, v in INTEGRATORS.items() if v.couples_index)


_CASES = (_exact_gradient, _integrator_coupling, _index_coupling)
