"""The Monte-Carlo error of a pooled posterior predictive, in total-variation units.

A network's chains start in different modes and local samplers do not move between them, so
their predictions need not agree however long they run.  What ``predict_proba`` returns is the
average over all chains; its Monte-Carlo error is what a user consumes.  Each chain is one draw
of a mode (independent starts) and a run within it, so the pooled mean of a predicted quantity
has variance ``(v_modes + v_within) / C`` over ``C`` chains, where ``v_within`` is a chain mean's
own Monte-Carlo variance (``sd^2 / ESS``, averaged over the chains) and ``v_modes`` the spread of
the modes' means (the between-chain variance of the chain means less ``v_within``, at least 0).
Doubling every chain halves ``v_within`` and leaves ``v_modes``: only more chains reduce that.
The error floors ``v_modes`` at 0 per quantity (conservative where modes do not spread); the
modes' share of the variance, which projects the doublings, comes from the unfloored sums.

A row's error is in total-variation units, the distance the NeurIPS 2021 approximate-inference
competition measured predictive distributions by: ``0.5 sum_k se_k`` over the class
probabilities; for a Gaussian predictive of sd ``sigma`` whose mean has standard error ``se``,
``se / (sigma sqrt(2 pi))`` (the total variation of a small shift of the mean).
"""

from typing import NamedTuple

import numpy as np

from ._ess import effective_sample_size

__all__ = ["POOLED_TOLERANCE", "PooledError", "pooled_error"]

POOLED_TOLERANCE = 0.02  # largest acceptable Monte-Carlo error of a pooled predictive (mean TV)


class PooledError(NamedTuple):
    """The pooled predictive's Monte-Carlo error (mean over rows, total-variation units).

    ``error``: now; ``modes_share``: the fraction of its variance from the spread of the chains'
    modes (which only more chains reduce); ``doublings``: the doublings of every chain that bring
    ``error`` to ``tolerance`` (0 when it is met, ``inf`` when no number does).
    """

    error: float
    modes_share: float
    doublings: float
    tolerance: float


def _components(values):
    """``(v_modes, v_within, modes_share)`` of ``values (C, D, q)``: the modes' part per
    quantity floored at 0 (so the error is conservative), the share from the unfloored sums."""
    C = values.shape[0]
    var = values.var(axis=1, ddof=1)
    ess = np.stack([effective_sample_size(values[c:c + 1], method="basic") for c in range(C)])
    ess = np.where(np.isfinite(ess), ess, values.shape[1])  # constant quantities: no error
    within = np.mean(var / ess, axis=0)
    if C < 2:
        return np.zeros_like(within), within, 0.0
    excess = values.mean(axis=1).var(axis=0, ddof=1) - within
    modes = np.maximum(excess, 0.0)
    total = float(np.sum(modes + within))
    share = float(np.clip(np.sum(excess) / total, 0.0, 1.0)) if total > 0 else 0.0
    return modes, within, share


def pooled_error(values, *, tolerance, scale=None, max_doublings=30):
    """The Monte-Carlo error of the pooled mean of ``values`` over chains and draws.

    Parameters
    ----------
    values : ndarray of shape (n_chains, n_draws, n_rows, n_classes) or (n_chains, n_draws, n_rows)
        Per draw, the predicted class probabilities of the rows, or (with ``scale``) the
        predictive mean of a Gaussian predictive.
    tolerance : float
        The error (mean total variation over the rows) a pooled predictive may carry.
    scale : ndarray of shape (n_rows,), optional
        The Gaussian predictive's sd per row (means only).
    max_doublings : int, default=30
        Largest number of doublings searched before ``doublings`` is ``inf``.

    Returns
    -------
    PooledError
    """
    C, D, rows = values.shape[:3]
    modes, within, share = _components(values.reshape(C, D, -1))
    if scale is None:
        def tv(var):
            return 0.5 * np.sqrt(var / C).reshape(rows, -1).sum(axis=1).mean()
    else:
        def tv(var):
            return float(np.mean(np.sqrt(var / C) / (np.sqrt(2 * np.pi) * scale)))
    error = float(tv(modes + within))
    # a doubling halves the within part: with the same share on every row the error scales by
    # sqrt(share + (1 - share) / 2^k)
    doublings = next((float(k) for k in range(max_doublings + 1)
                      if error * np.sqrt(share + (1.0 - share) / 2.0**k) <= tolerance), np.inf)
    return PooledError(error, share, doublings, float(tolerance))
