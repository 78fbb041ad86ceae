"""Rank-normalised split R-hat (Vehtari et al. 2021), vectorised over parameters.

Each chain is split in half (the middle draw of an odd chain is dropped), so a single chain still
gives a diagnostic (its first half against its second). The *bulk* R-hat is the classical potential
scale reduction of the normal scores of the pooled ranks; the *folded* R-hat does the same for the
distance to the pooled median, so it detects chains whose scales differ even when their locations
agree. The default reports the larger of the two.

A parameter whose draws are all equal, or that holds a non-finite value, gets R-hat = NaN (as Stan
does): there is no variance to compare. Chains stuck at different values (no within-chain variance)
get R-hat = inf. No warning is raised in either case.
"""

from types import MappingProxyType

import numpy as np

from ._ess import _as_draws, _by_columns, _rank_normalize, _split_chains

__all__ = ["split_rhat"]


def _psrf(x):
    """Potential scale reduction ``sqrt(var+ / W)`` of ``(m, n, k)`` chains."""
    n = x.shape[1]
    within = x.var(axis=1, ddof=1).mean(axis=0)
    between = n * x.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = between / within
    ratio = np.where(within > 0, ratio, np.where(between > 0, np.inf, 0.0))
    return np.sqrt((ratio + n - 1.0) / n)


def _rhat_bulk(split):
    return _psrf(_rank_normalize(split))


def _rhat_folded(split, median=None):
    if median is None:
        median = np.median(split.reshape(-1, split.shape[-1]), axis=0)
    return _psrf(_rank_normalize(np.abs(split - median)))


def _rhat_rank(split):
    return np.maximum(_rhat_bulk(split), _rhat_folded(split))


_METHODS = MappingProxyType({"rank": _rhat_rank, "bulk": _rhat_bulk, "folded": _rhat_folded})


def split_rhat(draws, method="rank"):
    """Rank-normalised split R-hat of every parameter.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, n_params) or (n_chains, n_draws)
        Post-warmup draws (a 1-D array is one chain). At least 4 draws per chain;
        one chain is allowed (its two halves are compared).
    method : {"rank", "bulk", "folded"}, default="rank"
        ``"rank"`` is ``max(bulk, folded)``, the recommended diagnostic;
        the other two return one component.

    Returns
    -------
    rhat : float or ndarray of shape (n_params,)
        A float for 1-D or 2-D input. Values above 1.01 signal chains that have
        not mixed. NaN for a constant or non-finite parameter.

    Notes
    -----
    For ``m`` split chains of ``n`` draws, ``W`` the mean within-chain variance and
    ``B = n Var(chain means)``, ``R-hat = sqrt(((n - 1)/n W + B/n) / W)``, applied to the normal
    scores ``Phi^-1((r - 3/8) / (S + 1/4))`` of the pooled ranks ``r`` of ``S`` draws (bulk) and of
    the ranks of ``|x - median(x)|`` (folded).

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C.
       (2021). Rank-normalization, folding, and localization: an improved R-hat
       for assessing convergence of MCMC. Bayesian Analysis, 16(2), 667-718.
    .. [2] Gelman, A. and Rubin, D. B. (1992). Inference from iterative
       simulation using multiple sequences. Statistical Science, 7(4), 457-472.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}.")
    x, squeeze = _as_draws(draws)
    func = _METHODS[method]
    rhat = _by_columns(x, lambda block: func(_split_chains(block)))
    return float(rhat[0]) if squeeze else rhat
