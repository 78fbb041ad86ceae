"""Multi-chain effective sample size (bulk, tail, basic) after Vehtari et al. (2021).

Draws are ``(n_chains, n_draws, n_params)``. Every method splits each chain in half (the middle
draw of an odd chain is dropped), transforms the draws, and applies Geyer's initial positive and
initial monotone sequence to the multi-chain autocorrelation, as Stan and ArviZ do. Parameters are
processed in column blocks so memory stays bounded for large models.

A parameter whose draws are all equal, or that holds a non-finite value, gets
ESS = NaN (as Stan does): there is no variance to estimate, and a stuck
sampler must not look perfectly efficient. No warning is raised.
"""

from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType

import numpy as np
from scipy.special import ndtri

from ..utils import blas_threads, one_blas_thread
from ._autocorr import mean_autocovariance

__all__ = ["effective_sample_size"]

_BLOCK_ELEMENTS = 2**20  # draws per column block: bounds the FFT workspace
TAIL_PROBS = (0.05, 0.95)  # the tail ESS's quantiles


def _as_draws(draws, min_draws=4):
    """Return ``(x, squeeze)``: a ``(n_chains, n_draws, n_params)`` float array.

    Floating input keeps its dtype (no float64 copy of a big draws array);
    :func:`_by_columns` promotes one block at a time.
    """
    x = np.asarray(draws)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(float)
    squeeze = x.ndim < 3
    if x.ndim == 1:
        x = x[None, :, None]
    elif x.ndim == 2:
        x = x[:, :, None]
    elif x.ndim != 3:
        raise ValueError(
            "draws must be shaped (n_chains, n_draws[, n_params]), "
            f"got an array with shape {x.shape}."
        )
    if x.shape[1] < min_draws:
        raise ValueError(f"need at least {min_draws} draws per chain, got {x.shape[1]}.")
    return x, squeeze


def _by_columns(x, func, n_out=None, *, block_elements=_BLOCK_ELEMENTS):
    """Apply ``func`` to float64 column blocks (of at most ``block_elements`` draws, or one
    column) of valid parameters, NaN elsewhere.

    A parameter is valid when all its draws are finite and not all equal.  Several blocks (a
    network's weights) run in as many Python threads as BLAS may use (sorts and FFTs release
    the GIL; BLAS itself is held to one thread meanwhile); one block runs here.  With
    ``n_out``, ``func`` returns ``(n_out, columns)`` and so does this (several statistics from
    one pass over the blocks).
    """
    out = np.full(x.shape[2] if n_out is None else (n_out, x.shape[2]), np.nan)
    step = max(1, block_elements // (x.shape[0] * x.shape[1]))
    starts = range(0, x.shape[2], step)

    def one(start):
        block = np.asarray(x[:, :, start : start + step], dtype=float)
        finite = np.isfinite(block).all(axis=(0, 1))
        spread = np.where(finite, np.ptp(block, axis=(0, 1)), 0.0)
        valid = np.flatnonzero(finite & (spread > 0))
        if valid.size:
            out[..., start + valid] = func(block[:, :, valid])

    threads = min(len(starts), blas_threads())
    if threads < 2:
        for start in starts:
            one(start)
        return out
    with one_blas_thread(), ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, starts))
    return out


def _split_chains(x):
    """Split every chain in two halves, ``(m, n, k) -> (2m, n // 2, k)``."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half :]], axis=0)


def _average_ranks(a):
    """``(ranks, sorted)``: ranks ``1..N`` down the columns of ``a`` (N, k), ties getting their
    mean rank, and the sorted columns as rows ``(k, N)``."""
    at = np.ascontiguousarray(a.T)  # sorting along contiguous rows is faster
    k, n = at.shape
    order = np.argsort(at, axis=1)
    ranked = np.take_along_axis(at, order, axis=1)
    pos = np.broadcast_to(np.arange(n, dtype=float), (k, n))
    tie = ranked[:, 1:] == ranked[:, :-1]  # sorted entries i and i+1 are equal
    rows = np.flatnonzero(tie.any(axis=1))
    if rows.size:  # average the positions of each run of equal values
        pos, tie = pos.copy(), tie[rows]
        no = np.zeros((rows.size, 1), dtype=bool)
        start = np.where(np.hstack([no, tie]), 0.0, pos[rows])
        end = np.where(np.hstack([tie, no]), n - 1.0, pos[rows])
        start = np.maximum.accumulate(start, axis=1)
        end = np.minimum.accumulate(end[:, ::-1], axis=1)[:, ::-1]
        pos[rows] = 0.5 * (start + end)
    ranks = np.empty((k, n))
    np.put_along_axis(ranks, order, pos + 1.0, axis=1)
    return ranks.T, ranked


def _rank_normalize(x, sorted_out=False):
    """Normal scores of the pooled ranks (Blom offset 3/8), column-wise (and, with
    ``sorted_out``, the pooled draws sorted, as rows ``(k, S)``).

    Average ranks are multiples of 1/2 (a run of ties averages consecutive integers), so the
    scores come from a table of ``ndtri`` at the ``2 S - 1`` possible ranks of ``S`` draws: the
    same values as ``ndtri`` of every rank, for a gather instead of ``S k`` inverse normal CDFs.
    """
    flat = x.reshape(-1, x.shape[-1])
    S = flat.shape[0]
    ranks, ranked = _average_ranks(flat)
    table = ndtri((np.arange(1.0, S + 0.25, 0.5) - 0.375) / (S + 0.25))
    z = table[(2.0 * ranks - 2.0).astype(np.intp)].reshape(x.shape)
    return (z, ranked) if sorted_out else z


def sorted_median(s):
    """``np.median`` of each row of the sorted ``s (k, S)``, read off the sort."""
    S = s.shape[1]
    return s[:, S // 2] if S % 2 else (s[:, S // 2 - 1] + s[:, S // 2]) / 2.0


def sorted_quantile(s, q):
    """``np.quantile(..., q)`` (its default linear method, the same floating-point steps) of each
    row of the sorted ``s (k, S)``, read off the sort."""
    at = (s.shape[1] - 1) * q
    j = int(np.floor(at))
    t = at - j
    a, b = s[:, j], s[:, min(j + 1, s.shape[1] - 1)]
    diff = b - a
    out = b - diff * (1.0 - t) if t >= 0.5 else a + diff * t
    return np.where(a == b, a, out)


def _geyer_tau(rho):
    """Integrated time ``-1 + 2 sum rho`` truncated by Geyer's rules, per column.

    ``rho`` is ``(n, k)`` with ``rho[0] = 1``. Pairs ``P_j = rho_2j + rho_2j+1``
    are summed up to the first non-positive pair (initial positive sequence),
    made non-increasing by a running minimum (initial monotone sequence), and
    the even term of the stopping pair is added when positive.
    """
    n, k = rho.shape
    k_max = max((n - 3) // 2, 0)
    pairs = rho[: 2 * k_max + 2].reshape(k_max + 1, 2, k).sum(axis=1)
    stop = np.vstack([pairs[1:] <= 0, np.ones((1, k), dtype=bool)])
    last = np.minimum(stop.argmax(axis=0) + 1, k_max)
    last = np.where(pairs[0] > 0, last, 0)
    running = np.minimum.accumulate(pairs, axis=0)
    csum = np.vstack([np.zeros((1, k)), np.cumsum(running, axis=0)])
    cols = np.arange(k)
    even = rho[2 * last, cols]
    keep = (pairs[last, cols] >= 0) | (even > 0)
    return -1.0 + 2.0 * csum[last, cols] + np.where(keep, even, 0.0)


def _geyer_ess(x):
    """ESS of already split and transformed chains ``(m, n, k) -> (k,)``.

    A column with no variance (a constant indicator in the tail ESS) is
    estimated exactly: its ESS is the number of draws.
    """
    m, n, k = x.shape
    total = m * n
    mean_acov = mean_autocovariance(x)  # (n, k)
    within = mean_acov[0] * n / (n - 1.0)
    var_plus = mean_acov[0].copy()
    if m > 1:
        var_plus += x.mean(axis=1).var(axis=0, ddof=1)
    flat = var_plus <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (within - mean_acov) / var_plus
    rho[0] = 1.0
    rho[:, flat] = 0.0
    tau = np.maximum(_geyer_tau(rho), 1.0 / np.log10(total))
    return np.where(flat, float(total), total / tau)


def _ess_bulk(x):
    return _geyer_ess(_rank_normalize(_split_chains(x)))


def _ess_basic(x):
    return _geyer_ess(_split_chains(x))


def _ess_tail(x, probs=TAIL_PROBS, cuts=None):
    """Tail ESS; ``cuts``: the pooled quantiles at ``probs`` when the caller has them."""
    if cuts is None:
        cuts = np.quantile(x.reshape(-1, x.shape[-1]), probs, axis=0)
    ess = [_geyer_ess(_split_chains((x <= cut).astype(float))) for cut in cuts]
    return np.minimum.reduce(ess)


_METHODS = MappingProxyType({"bulk": _ess_bulk, "tail": _ess_tail, "basic": _ess_basic})


def effective_sample_size(draws, method="bulk"):
    """Effective sample size of every parameter from several chains.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, n_params) or (n_chains, n_draws)
        Post-warmup draws (a 1-D array is one chain). At least 4 draws per chain.
    method : {"bulk", "tail", "basic"}, default="bulk"
        ``"bulk"``: rank-normalised split chains (efficiency for the centre).
        ``"tail"``: minimum ESS of the indicators ``x <= q05`` and ``x <= q95``.
        ``"basic"``: split chains, no rank normalisation (ESS of the mean).

    Returns
    -------
    ess : float or ndarray of shape (n_params,)
        A float for 1-D or 2-D input. NaN for a constant or non-finite parameter. In the tail ESS,
        a quantile indicator that never changes (a quantile at the edge of a discrete support)
        counts as exact: ESS = number of draws, as in ArviZ.

    Notes
    -----
    With ``W`` the mean within-chain variance, ``var+ = (n-1)/n W + B/n`` and ``acov_t`` the mean
    within-chain autocovariance at lag ``t``, ``rho_t = 1 - (W - acov_t) / var+`` and
    ``ESS = m n / tau`` with ``tau = 1 + 2 sum_t rho_t`` truncated by Geyer's initial positive and
    monotone sequences (the seed 000 formula ``n / (1 + 2 sum rho)``, made multi-chain). ``tau`` is
    bounded below by ``1/log10(m n)``, as in Stan.

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C.
       (2021). Rank-normalization, folding, and localization: an improved R-hat
       for assessing convergence of MCMC. Bayesian Analysis, 16(2), 667-718.
    .. [2] Geyer, C. J. (1992). Practical Markov chain Monte Carlo.
       Statistical Science, 7(4), 473-483.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}.")
    x, squeeze = _as_draws(draws)
    ess = _by_columns(x, _METHODS[method])
    return float(ess[0]) if squeeze else ess
