"""The tail check: no stored draw may lie where a log-concave posterior has no mass.

For a log-concave density ``pi = exp(-U) / Z`` in ``p`` dimensions, ``U(X) - min U`` is at most
``p`` on average and its deviations are those of a ``Gamma(p, 1)`` variable at most (the
product of exponentials is extremal: Fradelizi, Madiman and Wang, 2016).  A stochastic-gradient
chain that makes a deep excursion, which no Metropolis test rejects (a logistic intercept on a
handful of positive rows has an exponential tail), leaves draws far beyond that.
:func:`tail_check` evaluates ``U`` at the ``k`` stored draws farthest from the mode in the
Laplace approximation's metric (one batched pass over the rows) and compares the largest
``U - U(mode)`` with ``p`` plus the ``Gamma(p, 1)`` quantile at ``1 - alpha / n`` for the ``n``
stored draws.  R-hat cannot see an excursion every chain may make.
"""

from typing import NamedTuple

import numpy as np
from scipy import stats

from ..samplers import from_laplace

__all__ = ["TailCheck", "check_fit_tail", "tail_check"]


class TailCheck(NamedTuple):
    """``excess``: the largest ``U - U(mode)`` of the checked draws; ``bound``: the most a
    log-concave posterior allows there; ``passed``; ``grad_evals``: per-example evaluations."""

    excess: float
    bound: float
    passed: bool
    grad_evals: int

    def as_dict(self):
        return self._asdict()


def tail_check(posterior, laplace, draws, *, n_points=8, alpha=1e-3):
    """:class:`TailCheck` of ``draws (C, n, p)`` of a log-concave ``posterior``."""
    flat = np.asarray(draws, dtype=float).reshape(-1, draws.shape[-1])
    u = from_laplace(laplace).inv(flat - laplace.mode)
    far = np.argsort(np.einsum("sp,sp->s", u, u))[-n_points:]
    points = np.concatenate([laplace.mode[None], flat[far]])
    values = posterior.potential(points)
    with np.errstate(invalid="ignore"):
        excess = float(np.max(values[1:] - values[0]))
    excess = excess if np.isfinite(excess) else np.inf
    p = flat.shape[1]
    bound = float(p + stats.gamma.isf(alpha / flat.shape[0], p))
    return TailCheck(excess, bound, excess <= bound, int(points.shape[0] * posterior.n_rows))


def check_fit_tail(plan, draws, config):
    """:func:`tail_check` of a fit's draws where its gradient was subsampled and its model is
    log-concave (``config.tail_points`` draws at level ``config.audit_alpha``), else None."""
    if not plan.posterior.model.log_concave or plan.estimator.exact:
        return None
    return tail_check(plan.posterior, plan.laplace, draws, n_points=config.tail_points,
                      alpha=config.audit_alpha)
