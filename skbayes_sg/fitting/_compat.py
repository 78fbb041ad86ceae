"""Which samplers run on which subsampling strategies, on which row sources: one check, one
message per case.

``fit`` calls :func:`check_combination` before any pass over the data.  The samplers'
``build_kernel`` keeps only a short guard for estimators built outside ``fit``.
"""

from ..samplers import INTEGRATORS, SAMPLERS
from ..subsampling import CORRECTIONS, ROW_NEEDS, SUBSAMPLING, InMemoryRows

__all__ = ["check_combination"]


def check_combination(sampler, strategy, rows=InMemoryRows):
    """Raise a ValueError if ``sampler`` cannot run on ``strategy``'s gradient estimates, or
    ``strategy`` on the rows.

    Parameters
    ----------
    sampler : BaseSampler
    strategy : BaseStrategy
    rows : row-source class, default=InMemoryRows
        Where the rows live (its ``kind`` and ``offers``, :mod:`~skbayes_sg.subsampling._rows`).

    Notes
    -----
    The cases, checked in this order, each with its own message (what is wrong, what works):

    * the sampler needs the exact gradient and potential (HMC), the strategy gives an estimate;
    * the strategy gives candidate gradients (EWSG) and the sampler's integrator cannot pick
      among them (``SGHMC(integrator="aboba")``), though another of its integrators can;
    * the strategy gives candidate gradients and the sampler cannot pick among them (pSGLD);
    * the strategy shares minibatches between chains, which the row source cannot;
    * the strategy (or its correction) needs what the row source does not offer: the message
      names the strategies and corrections that run there.
    """
    for case in _CASES:
        message = case(sampler, strategy, rows)
        if message is not None:
            raise ValueError(message)


def _show(obj):
    """``'name'`` for an object at its defaults, else its repr (``SGHMC(integrator='aboba')``)."""
    text = repr(obj)
    return repr(obj.name) if text.endswith("()") and obj.name else text


def _exact_gradient(sampler, strategy, rows):
    if not sampler.needs_exact_gradient or strategy.exact:
        return None
    exact = sorted(k for k, v in SUBSAMPLING.items() if v().exact)
    stochastic = sorted(k for k, v in SAMPLERS.items() if not v.needs_exact_gradient)
    return (f"sampler={_show(sampler)} needs the exact full-data gradient and potential, but "
            f"subsampling={_show(strategy)} gives a stochastic estimate. Use subsampling in "
            f"{exact} (at their defaults) with this sampler, or a stochastic-gradient sampler in "
            f"{stochastic}.")


def _integrator_coupling(sampler, strategy, rows):
    if (strategy.n_candidates == 1 or sampler.couples_index
            or "integrator" not in sampler.get_params()):
        return None
    return (f"subsampling={_show(strategy)} gives candidate gradients that the sampler picks "
            f"among with the Euler kernel's energies; sampler={_show(sampler)} cannot. Use "
            f"integrator in {_coupling_integrators()}, or another subsampling.")


def _index_coupling(sampler, strategy, rows):
    if strategy.n_candidates == 1 or sampler.couples_index:
        return None
    coupling = sorted(k for k, v in SAMPLERS.items() if v().couples_index)
    return (f"subsampling={_show(strategy)} gives candidate gradients that the sampler picks "
            f"among with its Gaussian kernel; sampler={_show(sampler)} cannot. Use sampler in "
            f"{coupling} ('sghmc' with integrator in {_coupling_integrators()}), or another "
            "subsampling.")


def _coupling_integrators():
    return sorted(k for k, v in INTEGRATORS.items() if v.couples_index)


def _shared_rows(sampler, strategy, rows):
    if strategy.row_needs() - rows.offers != {"shared"}:
        return None
    return (f"subsampling={strategy!r}: shared_minibatch=True is not available on {rows.kind} "
            "input (its rows are gathered per chain); use shared_minibatch=False or in-memory "
            "data.")


def _row_source(sampler, strategy, rows):
    missing = strategy.row_needs() - rows.offers - {"shared"}
    if not missing:
        return None
    why = " or ".join(ROW_NEEDS[need] for need in sorted(missing))
    works = sorted(k for k, v in SUBSAMPLING.items() if v().row_needs() <= rows.offers)
    fixes = " or ".join(repr(k) for k, v in CORRECTIONS.items() if v.needs_rows <= rows.offers)
    return (f"subsampling={strategy!r} cannot run on {rows.kind} input: {why}. On {rows.kind} "
            f"input use subsampling in {works} (the default 'auto' and 'preferential_cv' work), "
            f"with a {fixes} correction, or fit in-memory data.")


_CASES = (_exact_gradient, _integrator_coupling, _index_coupling, _shared_rows, _row_source)
