"""``run_chains``: the one sampling loop.

Advances all chains of a group together as ``(C, p)`` arrays, pre-draws the kernel's random inputs
in blocks, fills a preallocated draws array, and checks for divergence once per block (never per
step).  BLAS is limited to one thread inside the loop: the products are small, so more threads
add hand-off costs and contend with other work for the cores.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

from ..utils import DivergenceError

__all__ = ["Trace", "run_chains"]

_BLOCK = 256  # steps per pre-drawn block ...
_BLOCK_ELEMENTS = 1 << 20  # ... at most this many noise numbers per block (8 MB in float64)
_EXPLODED = 1e8  # squared whitened distance per coordinate from the start
# noise numbers per step from which blocks are drawn in a worker thread: below it the thread
# hand-offs cost more than drawing the block in line
_BACKGROUND = 300


class Trace(NamedTuple):
    """What a run returns.

    draws : ndarray (C, n_draws, p); n_grad_evals : int (all chains);
    step_size : ndarray (C,); info : dict from the kernel.
    """

    draws: np.ndarray
    n_grad_evals: int
    step_size: np.ndarray
    info: dict


def run_chains(sampler, estimator, theta0, noise_rngs, index_rngs, *, step_size, precond,
               n_warmup, n_draws, thin=1, progress=None, chain_ids=None, noise_correction=None,
               block_elements=_BLOCK_ELEMENTS, background=_BACKGROUND):
    """Run ``len(noise_rngs)`` chains of ``sampler`` on ``estimator``.

    Parameters
    ----------
    sampler : BaseSampler
    estimator : GradientEstimator
        Built by a subsampling strategy: ``init(rngs, theta)``,
        ``estimate(rngs, theta, state)`` (``candidates`` for EWSG),
        ``exact``, ``n_data``, ``n_candidates`` (``potential`` when exact).
    theta0 : ndarray of shape (C, p)
        Starting points.
    noise_rngs, index_rngs : sequence of Generator
        Each chain's own noise and minibatch streams.
    step_size : float
    precond : Preconditioner
    n_warmup, n_draws, thin : int
        A chain runs ``n_warmup + n_draws * thin`` steps and keeps every
        ``thin``-th step after warm-up.
    noise_correction : ndarray of shape (p,), optional
        Measured gradient-noise variance per whitened coordinate, subtracted from the injected
        noise (SGLD, SGHMC; :meth:`~skbayes_sg.samplers.BaseSampler.build_kernel`).
    progress : callable, optional
        ``progress(phase, done, total, seconds, chain_ids)`` after every block
        (seconds since the phase started).
    chain_ids : sequence of int, optional
        Global chain numbers, for error messages.
    block_elements, background : int, optional
        The memory budget of a pre-drawn block of noise numbers (all chains), and the noise
        numbers per step from which blocks are drawn in a worker thread; the draws do not
        depend on either.

    Returns
    -------
    Trace
    """
    C, p = theta0.shape
    index_rngs = tuple(index_rngs)
    kernel = sampler.build_kernel(estimator, step_size, precond, noise_correction)
    state = kernel.init(theta0, noise_rngs)
    est_state = estimator.init(index_rngs, state.position)
    draws = np.empty((C, n_draws, p))
    ctx = _Context(kernel, noise_rngs, index_rngs, precond, theta0, progress,
                   chain_ids if chain_ids is not None else range(C), (block_elements, background))
    with np.errstate(all="ignore"), threadpool_limits(1, user_api="blas"):
        state, est_state = ctx.advance(state, est_state, n_warmup, "warmup", None, 1)
        state = kernel.end_warmup(state)
        state, est_state = ctx.advance(state, est_state, n_draws * thin, "sampling", draws, thin)
    return Trace(draws, ctx.n_evals, kernel.step_size(state), kernel.info(state))


class _Context:
    """Loop state shared by the warm-up and sampling phases of one run."""

    def __init__(self, kernel, rngs, index_rngs, precond, theta0, progress, chain_ids, budgets):
        self.kernel, self.rngs, self.index_rngs, self.precond = kernel, rngs, index_rngs, precond
        self.theta0, self.progress, self.chain_ids = theta0, progress, list(chain_ids)
        self.block_elements, self.background = budgets
        self.n_evals = 0

    def advance(self, state, est_state, n_steps, phase, draws, thin):
        """Run ``n_steps`` steps in blocks; store every ``thin``-th in ``draws``."""
        C, p = self.theta0.shape
        block = int(np.clip(self.block_elements // (C * p), 1, _BLOCK))  # need not divide thin
        sizes = [min(block, n_steps - start) for start in range(0, n_steps, block)]
        blocks = self._blocks(sizes, p)
        try:
            return self._run_blocks(state, est_state, zip(sizes, blocks), n_steps, phase,
                                    draws, thin)
        finally:
            blocks.close()  # stops a worker thread at once if a chain diverged

    def _run_blocks(self, state, est_state, blocks, n_steps, phase, draws, thin):
        step, index_rngs, done, kept = self.kernel.step, self.index_rngs, 0, 0
        t_phase = time.perf_counter()
        for n, randoms in blocks:
            evals = 0
            if draws is None:
                for i in range(n):
                    state, est_state, k = step(index_rngs, state, est_state, randoms[i])
                    evals += k
            else:
                for i in range(n):
                    state, est_state, k = step(index_rngs, state, est_state, randoms[i])
                    evals += k
                    if (done + i + 1) % thin == 0:
                        draws[:, kept] = state.position
                        kept += 1
            self.n_evals += evals
            done += n
            self._check(state, phase, done)
            if self.progress is not None:
                self.progress(phase, done, n_steps, time.perf_counter() - t_phase,
                              self.chain_ids)
        return state, est_state

    def _blocks(self, sizes, p):
        """The kernel's random blocks of ``sizes`` steps, in order.

        With ``C p >= background`` noise numbers per step (a 10-class softmax; the MLP: ~10^5)
        the next block is drawn in a worker thread while this one is used (numpy's generators
        release the GIL, so it runs on another core).  One worker draws the blocks strictly in
        order from the same streams, so the numbers are exactly those of drawing them in line:
        draws stay reproducible.
        """
        draw, rngs = self.kernel.draw_block, self.rngs
        if len(sizes) < 2 or len(rngs) * p < self.background:
            for n in sizes:
                yield draw(rngs, n, p)
            return
        with ThreadPoolExecutor(max_workers=1) as worker:
            pending = worker.submit(draw, rngs, sizes[0], p)
            for n in sizes[1:]:
                current, pending = pending.result(), worker.submit(draw, rngs, n, p)
                yield current
            yield pending.result()

    def _check(self, state, phase, done):
        theta = state.position
        finite = np.isfinite(theta).all(axis=1)
        dist = np.full(theta.shape[0], np.inf)
        dist[finite] = np.mean(self.precond.inv(theta[finite] - self.theta0[finite]) ** 2, axis=1)
        bad = np.flatnonzero(~(dist < _EXPLODED))
        if bad.size:
            c = bad[0]
            h = self.kernel.step_size(state)[c]
            what = "non-finite" if not finite[c] else "exploding"
            err = DivergenceError(
                f"Chain {self.chain_ids[c]} diverged during {phase} (step {done}): "
                f"{what} parameters with step_size={h:.3g}. Use a smaller step_size, "
                "standardize X (e.g. StandardScaler), or keep the default preconditioner."
            )
            err.phase = phase
            raise err
