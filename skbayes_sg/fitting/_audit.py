"""The Metropolis audit: exact-gradient Metropolis steps from stored draws, to see a shared bias.

R-hat compares chains with each other, so a bias every chain shares (a discretisation error, a
tail excursion nothing rejects) passes it.  The posterior is invariant under an exact
Metropolis-corrected kernel: from draws of the posterior, a few such steps leave every moment
where it was.  :func:`metropolis_audit` takes ``m`` stored draws spread over chains and draws,
runs ``n_transitions`` HMC transitions on the exact potential from all of them at once (one
batched pass over the rows per leapfrog step, whitened by the Laplace approximation like the
sampler), and tests, per coordinate, the paired differences of the coordinate and of its
squared standardized deviation.  A significant shift measures the sampler's bias.

The test is Wilcoxon's signed rank on the paired sample (exact under the null: see
:func:`_signed_rank`), its size taken as ``min(m, ESS)`` (the selected draws are no more
independent than the chains' effective sample size allows), with a Bonferroni correction over
the ``2 p`` tests.  Its cost is ``1 + n_transitions * n_leapfrog`` passes over
the rows, each evaluating ``m`` positions: ``m`` times that in per-example evaluations, the
library's data passes (a batched evaluation costs per example about half a minibatch step's).
``fit`` runs it by default (:func:`audit_fit`) where that is at most ``config.audit_budget``
of the fit's own evaluations, with as many positions as fit in it (at least
``config.audit_min_positions``): on a fit of few data passes (the default SGHMC on many rows)
it is asked for explicitly (``FitConfig(audit=True)``).
"""

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from ..diagnostics import effective_sample_size
from ..samplers import from_laplace

__all__ = ["Audit", "audit_passes", "metropolis_audit"]

_TRAJECTORY = 1.5  # whitened integration time per transition (about pi / 2: a Gaussian refresh)


@dataclass(frozen=True, kw_only=True)
class Audit:
    """What :func:`metropolis_audit` measured.

    ``mean_shift`` ``(p,)``: the mean move of each coordinate in sd of the draws; ``var_shift``
    ``(p,)``: the mean change of its squared standardized deviation (the relative change of its
    variance); ``z_mean``, ``z_var``: their t statistics; ``p_value``: the smallest
    Bonferroni-corrected p-value of the ``2 p`` tests; ``worst``: the coordinate it belongs to;
    ``passed``: ``p_value >= alpha``; ``row_passes``: passes over the rows (each with
    ``n_positions`` positions); ``grad_evals``: per-example evaluations and ``data_passes``
    the same over the rows (``n_positions * row_passes``); ``accept_rate``.
    """

    mean_shift: np.ndarray
    var_shift: np.ndarray
    z_mean: np.ndarray
    z_var: np.ndarray
    p_value: float
    worst: int
    passed: bool
    alpha: float
    n_positions: int
    n_transitions: int
    n_leapfrog: int
    row_passes: int
    grad_evals: int
    data_passes: float
    accept_rate: float

    def as_dict(self):
        """Plain figures for ``diagnostics_["audit"]``."""
        return asdict(self)


def leapfrog_steps(p):
    """``(eps, n_leapfrog)``: the whitened step (energy error of order ``p eps^4``) and the
    leapfrog steps of one transition."""
    eps = 0.5 * min(1.0, (4.0 / p) ** 0.25)
    return eps, int(np.ceil(_TRAJECTORY / eps))


def audit_passes(p, n_transitions):
    """Passes over the rows :func:`metropolis_audit` costs for ``p`` parameters."""
    return 1 + n_transitions * leapfrog_steps(p)[1]


def _positions(draws, m):
    """``m`` stored draws spread evenly over chains and draws: ``(m, p)``."""
    C, n, p = draws.shape
    flat = draws.reshape(C * n, p)
    per = np.linspace(0, n - 1, max(1, -(-m // C))).round().astype(int)
    idx = (np.arange(C)[:, None] * n + np.unique(per)[None]).ravel()
    return flat[idx[np.linspace(0, idx.size - 1, min(m, idx.size)).round().astype(int)]]


def _transition(posterior, precond, state, eps, n_leap, rng):
    """One HMC transition of every position (whitened momenta, Metropolis test)."""
    theta, u, g = state
    r0 = rng.standard_normal(theta.shape)
    e = eps * rng.uniform(0.9, 1.1)
    r = r0 - 0.5 * e * precond.to_u(g)
    x = theta
    for i in range(n_leap):
        x = x + e * precond.from_u(r)
        u1, g1 = posterior.value_and_grad(x)
        r = r - (1.0 if i < n_leap - 1 else 0.5) * e * precond.to_u(g1)
    with np.errstate(invalid="ignore", over="ignore"):
        log_a = (u + 0.5 * np.sum(r0 * r0, 1)) - (u1 + 0.5 * np.sum(r * r, 1))
    accept = np.log(rng.random(theta.shape[0])) < np.where(np.isfinite(log_a), log_a, -np.inf)
    keep = accept[:, None]
    return (np.where(keep, x, theta), np.where(accept, u1, u), np.where(keep, g1, g)), accept


def _signed_rank(d, m_eff):
    """``(shift, z)``: the mean of the paired differences ``d (m, p)`` and Wilcoxon's
    signed-rank statistic, normal and scaled to the sample size ``m_eff`` per column.

    From draws of the posterior, a reversible kernel's pairs are exchangeable, so each
    difference is symmetric about 0: the signed-rank test is exact there, whatever the tails of
    the squared deviations (a t-test's level drifts with their skewness at the small p-values
    a multiplicity correction asks for)."""
    m = d.shape[0]
    ranks = stats.rankdata(np.abs(d), axis=0)
    w = np.sum(np.where(d > 0, ranks, 0.0) - np.where(d < 0, ranks, 0.0), axis=0)  # W+ - W-
    sd = np.sqrt(np.sum(np.where(d != 0, ranks, 0.0) ** 2, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sd > 0, w / sd, 0.0) * np.sqrt(m_eff / m)
    return d.mean(0), z


def metropolis_audit(posterior, laplace, draws, rng, *, n_positions=64, n_transitions=2,
                     alpha=0.001):
    """Audit ``draws (C, n, p)`` of ``posterior`` with exact Metropolis-corrected HMC steps.

    Parameters
    ----------
    posterior : Posterior
        Gives the exact ``(U, grad U)`` of ``(S, p)`` positions in one pass.
    laplace : Laplace
        Whitens the steps (the sampler's preconditioner).
    draws : ndarray of shape (n_chains, n_draws, n_params)
    rng : numpy.random.Generator
        The audit's own stream (the fit's draws do not depend on it).
    n_positions, n_transitions : int
        Stored draws audited, and HMC transitions from each.
    alpha : float
        Family-wise level of the ``2 p`` tests.

    Returns
    -------
    Audit
    """
    draws = np.asarray(draws, dtype=float)
    p = draws.shape[-1]
    eps, n_leap = leapfrog_steps(p)
    precond = from_laplace(laplace)
    start = _positions(draws, n_positions)
    state = (start, *posterior.value_and_grad(start))
    accepted = 0
    for _ in range(n_transitions):
        state, acc = _transition(posterior, precond, state, eps, n_leap, rng)
        accepted += int(acc.sum())
    mu, sd = draws.reshape(-1, p).mean(0), draws.reshape(-1, p).std(0)
    sd = np.where(sd > 0, sd, 1.0)
    ess = np.minimum(effective_sample_size(draws, "bulk"), effective_sample_size(draws, "tail"))
    ess = np.where(np.isfinite(ess), ess, start.shape[0])
    z0, z1 = (start - mu) / sd, (state[0] - mu) / sd
    m_eff = np.minimum(start.shape[0], ess)
    mean_shift, t_mean = _signed_rank(z1 - z0, m_eff)
    var_shift, t_var = _signed_rank(z1**2 - z0**2, m_eff)
    pv = 2 * stats.norm.sf(np.abs(np.r_[t_mean, t_var]))
    p_min = float(min(1.0, pv.min() * pv.size))
    passes = 1 + n_transitions * n_leap
    m = start.shape[0]
    return Audit(mean_shift=mean_shift, var_shift=var_shift, z_mean=t_mean, z_var=t_var,
                 p_value=p_min, worst=int(np.argmin(pv) % p), passed=p_min >= alpha,
                 alpha=alpha, n_positions=m, n_transitions=n_transitions, n_leapfrog=n_leap,
                 row_passes=passes, grad_evals=int(passes * m * posterior.n_rows),
                 data_passes=float(passes * m),
                 accept_rate=accepted / max(m * n_transitions, 1))


def audit_fit(plan, draws, fit_evals, config, rng):
    """The :class:`Audit` of a fit's ``draws``, or None where ``config.audit`` does not ask for
    one (see the module docstring; ``fit_evals``: the fit's per-example evaluations,
    preprocessing included).  Never for a multimodal model."""
    m = _positions_wanted(plan, draws, fit_evals, config)
    if m == 0:
        return None
    return metropolis_audit(plan.posterior, plan.laplace, draws, rng, n_positions=m,
                            n_transitions=config.audit_transitions, alpha=config.audit_alpha)


def _positions_wanted(plan, draws, fit_evals, config):
    """Positions to audit: 0 for none."""
    if config.audit is not True and config.audit != "auto":
        return 0
    if plan.posterior.model.multimodal or not np.all(np.isfinite(draws)):
        return 0
    if config.audit is True:
        return config.audit_positions
    if plan.estimator.exact:
        return 0
    per_position = audit_passes(draws.shape[-1], config.audit_transitions) * plan.posterior.n_rows
    m = min(config.audit_positions, int(config.audit_budget * fit_evals // per_position))
    return m if m >= config.audit_min_positions else 0
