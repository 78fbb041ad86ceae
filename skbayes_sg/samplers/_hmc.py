"""Full-gradient Hamiltonian Monte Carlo with a dual-averaging step size."""

from functools import partial
from typing import NamedTuple

import numpy as np

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval

from ._base import POSITIVE, BaseSampler, Kernel, chain_block

__all__ = ["HMC", "HMCState"]

# Hoffman & Gelman (2014), Algorithm 5.
_GAMMA, _T0, _KAPPA = 0.05, 10.0, 0.75
_JITTER = (0.9, 1.1)
# parameters from which a leapfrog step evaluates only the chains still moving, multiplies by a
# dense M in float32 and kicks with the estimator's kick() (float32 rows): there the gradient and
# the product dominate a step's cost
_LARGE = 256


class HMCState(NamedTuple):
    """State of ``C`` HMC chains.

    ``position`` ``(C, p)``; ``potential`` ``(C,)`` and preconditioned gradient ``M grad U``
    ``(C, p)`` at the position (None until the first step, which computes them); dual averaging per chain:
    ``log_step``, ``log_step_bar``, ``h_bar`` ``(C,)``, ``t`` (updates so far) and ``adapting``;
    counts since the end of warm-up: ``n_steps`` transitions and, per chain ``(C,)``, ``n_accept``,
    ``n_divergent``, ``n_leapfrog``.
    """

    position: np.ndarray
    potential: np.ndarray
    gradient: np.ndarray
    log_step: np.ndarray
    log_step_bar: np.ndarray
    h_bar: np.ndarray
    t: int
    adapting: bool
    n_steps: int
    n_accept: np.ndarray
    n_divergent: np.ndarray
    n_leapfrog: np.ndarray


class HMC(BaseSampler):
    """Metropolis-corrected HMC on the full-data potential.

    Parameters
    ----------
    trajectory_length : float, default=1.5
        Integration time per transition in whitened units (finite, > 0; close
        to ``pi / 2``, which decorrelates a Laplace-whitened ``N(0, I)`` target).
    target_accept : float, default=0.8
        Mean acceptance probability in (0, 1) that dual averaging aims at in warm-up.
    max_leapfrog : int, default=100
        Upper bound (>= 1) on the leapfrog steps of one transition.

    Notes
    -----
    Whitened momentum ``r ~ N(0, I)`` (mass matrix ``M^{-1}``, ``M = L L^T``),
    ``H = U(theta) + |r|^2 / 2``.  Each chain ``c`` has its own step
    ``eps_c = exp(log_step_c) * j`` with jitter ``j ~ U[0.9, 1.1]`` and runs
    ``n_c = clip(ceil(trajectory_length / eps_c), 1, max_leapfrog)`` steps::

        r     <- r - (eps/2) L^T grad U(theta)
        theta <- theta + eps L r           } n_c times, the kick being a
        r     <- r - eps L^T grad U(theta) } half kick on the last step

    The proposal is accepted with probability ``min(1, exp(H_0 - H_1))``; a non-finite ``H_1`` is
    rejected and counted as divergent.  Chains advance together, each with its own ``n_c`` (a chain
    is frozen once its steps are done), so a chain's result never depends on the chains it runs
    with.  ``n_c`` and ``eps_c`` are fixed before the transition, independently of the state, which
    keeps detailed balance.  Gradients are evaluated for all chains at every step of the longest
    trajectory (counted in the returned gradient evaluations); from 256 parameters on, for the
    chains still moving only, a dense ``M`` multiplies in float32 and the gradient is the
    estimator's ``kick()`` (the exact gradient's: its rows' sums in float32).  Any fixed kick
    field keeps the leapfrog reversible and volume-preserving: the Metropolis test, on the
    float64 potential, stays exact.

    During warm-up dual averaging adapts ``log eps`` per chain from the
    acceptance probability ``a_t`` of each transition (``delta`` the target,
    ``mu = log(10 eps_0)``, ``gamma = 0.05``, ``t_0 = 10``, ``kappa = 0.75``)::

        hbar_t        = (1 - 1/(t + t_0)) hbar_{t-1} + (delta - a_t) / (t + t_0)
        log eps_t     = mu - sqrt(t) hbar_t / gamma
        log epsbar_t  = t^-kappa log eps_t + (1 - t^-kappa) log epsbar_{t-1}

    and ``end_warmup`` freezes ``eps = epsbar``.  ``epsbar_0 = eps_0``, so a run without warm-up
    keeps the given step.  Acceptance, divergence and leapfrog counts restart at the end of
    warm-up.  The frozen step usually accepts a little more often than ``target_accept`` (the
    acceptance is concave in ``log eps`` near the target).  In very few dimensions, where a
    trajectory is only one or two leapfrog steps, acceptance is not monotone in ``eps`` and a low
    target can be overshot by far; sampling stays exact.

    References
    ----------
    Neal, R. M. (2011). MCMC using Hamiltonian dynamics. In Handbook of Markov
    Chain Monte Carlo, 113-162.

    Hoffman, M. D. and Gelman, A. (2014). The No-U-Turn sampler: adaptively
    setting path lengths in Hamiltonian Monte Carlo. JMLR, 15, 1593-1623.
    """

    name = "hmc"
    needs_exact_gradient = adapts_step_size = True

    def __init__(self, trajectory_length=1.5, target_accept=0.8, max_leapfrog=100):
        self.trajectory_length = trajectory_length
        self.target_accept = target_accept
        self.max_leapfrog = max_leapfrog

    _parameter_constraints = {"trajectory_length": POSITIVE,
                              "target_accept": [Interval(Real, 0, 1, closed="neither")],
                              "max_leapfrog": [Interval(Integral, 1, None, closed="left")]}

    def gradients_per_step(self, step_size):
        """Leapfrog steps (gradient evaluations) of one transition at ``step_size``."""
        return float(np.clip(np.ceil(self.trajectory_length / step_size), 1, self.max_leapfrog))

    def initial_step_size(self, lam_max):
        """``step_size="auto"``: start dual averaging at ``1 / sqrt(lam_max)``."""
        return 1.0 / np.sqrt(lam_max)

    def _build(self, estimator, eps0, precond):
        delta, potential = float(self.target_accept), estimator.potential
        length, max_leap = float(self.trajectory_length), int(self.max_leapfrog)
        apply, kick = _fast_apply(precond), estimator.kick()

        def grad_m(index_rngs, theta, est_state, rows=None):
            rngs = (index_rngs if rows is None or not index_rngs
                    else [index_rngs[c] for c in rows])
            estimate = (kick if theta.shape[1] >= _LARGE else estimator).estimate
            g, est_state, n = estimate(rngs, theta, est_state)
            return apply(g), est_state, n

        def init(theta0, rngs):
            theta = np.array(theta0, dtype=float)
            C = theta.shape[0]
            log0, count = np.full(C, np.log(eps0)), np.zeros(C, dtype=int)
            return HMCState(theta, None, None, log0, log0.copy(), np.zeros(C), 0, True, 0,
                            count, count.copy(), count.copy())

        def step(index_rngs, state, est_state, randoms):
            evals = 0
            if state.gradient is None:
                gm, est_state, evals = grad_m(index_rngs, state.position, est_state)
                state = state._replace(potential=potential(state.position), gradient=gm)
            eps = np.exp(state.log_step) * randoms[2]
            n_leap = np.clip(np.ceil(length / eps), 1, max_leap).astype(int)
            (theta, v, gm), est_state, k = _leapfrog(
                state, precond.from_u(randoms[0]), eps, n_leap, est_state,
                partial(grad_m, index_rngs))
            proposal = (theta, _whitened(precond, v), gm)
            state, alpha = _metropolis(state, randoms, proposal, potential(theta), n_leap)
            if state.adapting:
                state = _dual_average(state, alpha, delta, np.log(10.0 * eps0))
            return state, est_state, evals + k

        sizes = lambda state: np.exp(state.log_step)  # noqa: E731
        return Kernel(init, _draw_block, step, sizes, _end_warmup, _info)


def _draw_block(rngs, n_steps, p):
    """Momenta ``(n, C, p)``, log-uniforms and jitters ``(n, C)``; chain c uses rngs[c]."""
    momenta = chain_block(rngs, n_steps, p)
    log_u = np.log(chain_block(rngs, n_steps, 1, "random")[..., 0])
    jitter = chain_block(rngs, n_steps, 1, "uniform", *_JITTER)[..., 0]
    return list(zip(momenta, log_u, jitter))


def _leapfrog(state, v, eps, n_leap, est_state, grad_m):
    """``n_leap[c]`` leapfrog steps of chain ``c``; a chain is frozen once done.

    In the velocity ``v = L r`` the whitened updates of the class docstring read
    ``v <- v - eps M grad U``, ``theta <- theta + eps v``: one product with ``M`` per step (in
    ``grad_m``) where ``L`` and ``L^T`` took two.  From ``_LARGE`` parameters on, once some
    chains are done the gradient is evaluated at the others' positions only (the exact gradient
    has no state to keep per chain).  Returns ``((theta, v, M grad U), est_state,
    n_grad_evals)`` at the end.
    """
    theta, gm, e, evals = state.position, state.gradient, eps[:, None], 0
    v = v - 0.5 * e * gm
    theta, gm, subset = theta.copy(), gm.copy(), theta.shape[1] >= _LARGE
    for i in range(int(n_leap.max())):
        kick = np.where(i < n_leap - 1, 1.0, 0.5)[:, None] * e
        if i < n_leap.min() or not subset:
            active = (i < n_leap)[:, None]
            theta = np.where(active, theta + e * v, theta)
            g_new, est_state, k = grad_m(theta, est_state)
            gm = np.where(active, g_new, gm)
            v = np.where(active, v - kick * gm, v)
        else:
            rows = np.flatnonzero(i < n_leap)
            theta[rows] += e[rows] * v[rows]
            gm[rows], est_state, k = grad_m(theta[rows], est_state, rows)
            v[rows] -= kick[rows] * gm[rows]
        evals += k
    return (theta, v, gm), est_state, evals


def _fast_apply(precond, min_params=_LARGE):
    """``precond.apply``; for a dense ``M`` of at least ``min_params`` rows, the product in
    float32 (the leapfrog's ``M grad U``: half the memory traffic of a product bound by it).

    Any fixed field of kicks keeps the leapfrog map reversible and volume-preserving, so the
    Metropolis test on the float64 ``H`` stays exact; the rounding only perturbs ``H`` by ~1e-7
    relative.
    """
    if precond.kind != "dense" or precond.factor.shape[0] < min_params:
        return precond.apply
    full32 = (precond.factor @ precond.factor.T).astype(np.float32)
    return lambda g: (g.astype(np.float32) @ full32).astype(np.float64)


def _whitened(precond, v):
    """The whitened momenta ``r = L^-1 v``; NaN rows where ``v`` is not finite (divergent)."""
    ok = np.isfinite(v).all(axis=1)
    if ok.all():
        return precond.inv(v)
    r = np.full_like(v, np.nan)
    r[ok] = precond.inv(v[ok])
    return r


def _metropolis(state, randoms, proposal, u_new, n_leap):
    """Accept or reject each chain's proposal; returns (state, acceptance probability)."""
    r0, log_u, _ = randoms
    theta, r, gm = proposal
    h0 = state.potential + 0.5 * np.einsum("cp,cp->c", r0, r0)
    h1 = u_new + 0.5 * np.einsum("cp,cp->c", r, r)
    divergent = ~np.isfinite(h1)
    log_alpha = np.where(divergent, -np.inf, np.minimum(0.0, h0 - h1))
    log_alpha = np.where(np.isnan(log_alpha), -np.inf, log_alpha)
    accept = log_u < log_alpha
    keep = accept[:, None]
    state = state._replace(
        position=np.where(keep, theta, state.position),
        potential=np.where(accept, u_new, state.potential),
        gradient=np.where(keep, gm, state.gradient),
        n_steps=state.n_steps + 1,
        n_accept=state.n_accept + accept,
        n_divergent=state.n_divergent + divergent,
        n_leapfrog=state.n_leapfrog + n_leap,
    )
    return state, np.exp(log_alpha)


def _dual_average(state, alpha, delta, mu):
    """One dual-averaging update of every chain's log step (Hoffman & Gelman, Alg. 5)."""
    t = state.t + 1
    w, eta = 1.0 / (t + _T0), t**-_KAPPA
    h_bar = (1.0 - w) * state.h_bar + w * (delta - alpha)
    log_step = mu - np.sqrt(t) / _GAMMA * h_bar
    log_step_bar = eta * log_step + (1.0 - eta) * state.log_step_bar
    return state._replace(log_step=log_step, log_step_bar=log_step_bar, h_bar=h_bar, t=t)


def _end_warmup(state):
    """Freeze each chain's step at its averaged value and restart the counts."""
    C = state.position.shape[0]
    zeros = np.zeros(C, dtype=int)
    return state._replace(log_step=state.log_step_bar.copy(), adapting=False, n_steps=0,
                          n_accept=zeros, n_divergent=zeros.copy(), n_leapfrog=zeros.copy())


def _info(state):
    """Acceptance rate and divergences per chain, mean leapfrog steps per transition."""
    n = max(state.n_steps, 1)
    return {"accept_rate": state.n_accept / n, "n_divergent": state.n_divergent.copy(),
            "n_leapfrog": float(np.mean(state.n_leapfrog) / n)}
