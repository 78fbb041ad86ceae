"""EWSG: the sampler's Gaussian kernel picks one of ``M`` candidate gradients per step.

A gradient estimator with ``n_candidates = M > 1`` returns ``M`` plain uniform-minibatch estimates
``g_m`` ``(M, C, p)`` of ``∇U`` per step (``estimator.candidates``); the samplers that declare
``couples_index`` (SGHMC, SGNHT, SGLD) keep one per chain, chosen by an independence Metropolis
chain on the index with the energies below.

Notes
-----
*Kernel matching (Theorem 2).*  In whitened coordinates the Euler-Maruyama
momentum update ``r' = (1 - h c) r - h L^T g_B + sqrt(2 D h) xi`` with the
estimate ``g_B`` of minibatch ``B`` has the Gaussian kernel::

    k_B(r' | r) ∝ exp(-||x + h L^T g_B||^2 / (4 D h)),   x = r' - r + h c r

Choosing ``P(B) ∝ 1 / k_B = exp(+||x + h L^T g_B||^2 / (4 D h))`` makes ``P(B) k_B(r' | r)`` the
same for every ``B``; so the mixture over ``B`` is (up to the normaliser) the full-gradient kernel,
whose own factor ``exp(-||x + h L^T ∇U||^2 / (4 D h))`` is shared by all ``B``.  Two approximations
make it computable: the unknown ``r'`` is replaced by ``r`` (``x = h c r``), and the normaliser, a
sum over all minibatches, is avoided by a Metropolis chain over ``M`` uniform candidates with
energies::

    E_m = ||x + h L^T g_m||^2 / (4 D h)

It starts at candidate 0 and proposes ``m = 1..M-1`` in turn, accepting with probability
``min(1, exp(E_m - E_cur))`` (``M - 1`` uniforms per step and chain, drawn in blocks from the
chain's noise stream).  ``c`` is SGHMC's ``gamma`` or SGNHT's current thermostat ``z``; ``D`` is
``gamma`` or SGNHT's ``A``.  The ``+`` favours kicks that oppose the current momentum and so
counteracts the heating by gradient noise; the ``-`` sign of an earlier version heats the chain
further (on the seed-002 §5.1 toy, at equal cost, it makes uniform subsampling's variance excess
4-7 times larger, while ``+`` shrinks it: ``tests/test_ewsg.py``).

*Overdamped variant (SGLD).*  ``u' = u - (h/2) L^T g_B + sqrt(h) xi`` has
``k_B ∝ exp(-||x + (h/2) L^T g_B||^2 / (2 h))`` with ``x = u' - u``: the
energies above with ``h/2`` in place of ``h`` and ``D = 1``; ``x`` is
approximated by the chain's previous whitened move (a deviation, see
:class:`~skbayes_sg.samplers.SGLD`).  Cost: ``M`` minibatch gradients per
step.

References
----------
Li, R., Wang, X., Zha, H. and Tao, M. (2020). Improving sampling accuracy of
stochastic gradient MCMC methods via non-uniform subsampling of gradients.
arXiv:2002.08949 (Theorem 2, §4.3, Algorithm 1, appendix F).
"""

from typing import Callable, NamedTuple

import numpy as np

from ._base import chain_block

__all__ = ["GradientSource", "coupled_gradient", "ewsg_energy", "index_uniforms",
           "metropolis_pick", "plain_gradient", "select_gradient"]


class GradientSource(NamedTuple):
    """What a kernel gets from the estimator, chosen once when the kernel is built.

    ``gradient(index_rngs, theta, est_state, state, u) -> (g (C, p), est_state, n)``: the plain
    estimate, or EWSG's pick (which reads the kernel ``state`` and the step's uniforms ``u``).
    ``uniforms(rngs, n_steps)``: the pick's per-step uniforms (:func:`index_uniforms`; Nones for
    the plain estimate), drawn after the block's normals.
    """

    gradient: Callable
    uniforms: Callable


def ewsg_energy(G, x, h, diffusion, to_u):
    """``E_m`` of candidates ``G`` ``(M, C, p)`` -> ``(M, C)``; ``x`` ``(C, p)`` (0 at rest)."""
    M, C, p = G.shape
    e = h * to_u(G.reshape(M * C, p)).reshape(M, C, p) + x
    return np.einsum("mcp,mcp->mc", e, e) / (4.0 * diffusion * h)


def metropolis_pick(energy, uniforms):
    """Final state of the independence Metropolis chain over ``m = 0..M-1``.

    ``energy`` is ``(M, C)``; start at ``m = 0``, then propose ``m = 1, 2,
    ...`` in turn and accept when ``log u < E_m - E_cur`` (``uniforms``
    ``(C, M-1)``).  Returns the chosen ``m`` per chain ``(C,)``.
    """
    pick = np.zeros(energy.shape[1], dtype=np.intp)
    current = energy[0].copy()
    log_u = np.log(uniforms)
    for m in range(1, energy.shape[0]):
        accept = log_u[:, m - 1] < energy[m] - current
        pick[accept] = m
        current[accept] = energy[m, accept]
    return pick


def index_uniforms(rngs, n_steps, n_candidates):
    """The index chain's ``(n_steps, C, M-1)`` uniforms, or ``n_steps`` Nones when ``M = 1``."""
    if n_candidates == 1:
        return [None] * n_steps
    return chain_block(rngs, n_steps, n_candidates - 1, "random")


def plain_gradient(estimator):
    """``gradient(index_rngs, theta, est_state, state, u)``: ``estimator.estimate``."""
    estimate = estimator.estimate

    def gradient(index_rngs, theta, est_state, state, u):
        return estimate(index_rngs, theta, est_state)

    return gradient


def coupled_gradient(estimator, h, precond, diffusion, x_of, energy=ewsg_energy):
    """``gradient(index_rngs, theta, est_state, state, u) -> (g (C, p), est_state, n)``.

    ``g``: per chain, the candidate that :func:`metropolis_pick` keeps (``u`` ``(C, M-1)``), with
    the energies of ``energy`` (:func:`ewsg_energy`'s signature) at ``x = x_of(state)``.
    """
    candidates, to_u = estimator.candidates, precond.to_u

    def pick(index_rngs, theta, est_state, state, u):
        G, est_state, n = candidates(index_rngs, theta, est_state)
        m = metropolis_pick(energy(G, x_of(state), h, diffusion, to_u), u)
        return G[m, np.arange(G.shape[1])], est_state, n

    return pick


def select_gradient(estimator, h, precond, diffusion, x_of, energy=ewsg_energy):
    """The :class:`GradientSource` of a kernel that can couple the index: EWSG's pick (energy
    step ``h``, ``diffusion`` ``D``, ``x = x_of(state)``, energies ``energy``, the sampler's
    ``index_energy``) when ``estimator.n_candidates > 1``, else the plain estimate."""
    M = estimator.n_candidates

    def uniforms(rngs, n_steps):
        return index_uniforms(rngs, n_steps, M)

    if M == 1:
        return GradientSource(plain_gradient(estimator), uniforms)
    return GradientSource(coupled_gradient(estimator, h, precond, diffusion, x_of, energy),
                          uniforms)
