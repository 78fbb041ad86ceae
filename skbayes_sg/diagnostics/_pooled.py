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
``se / (sigma sqrt(2 pi))`` (the total variation of a small shift of the mean), plus, where the
noise sd is sampled, ``2 phi(1) se(log noise sd)`` times the noise's share of the row's variance
(the total variation of a small change of the sd).
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


def _parts(values, C, rows, scale, log_noise):
    """``[(error, modes_share), ...]`` of the parts of a row's total variation: the class
    probabilities; or a Gaussian's mean and, with ``log_noise``, its noise sd."""
    modes, within, share = _components(values.reshape(C, values.shape[1], -1))
    if scale is None:
        return [(float(0.5 * np.sqrt((modes + within) / C).reshape(rows, -1).sum(axis=1).mean()),
                 share)]
    if not np.all(np.isfinite(scale)):  # an overflowed predictive: no error can be given
        return [(np.inf, 0.0)]
    parts = [(float(np.mean(np.sqrt((modes + within) / C) / (np.sqrt(2 * np.pi) * scale))),
              share)]
    if log_noise is not None:
        # N(m, s^2) against N(m, s^2 (1 + e)^2): TV ~ |e| E|Z^2 - 1| / 2 = 2 phi(1) |e|; a change
        # of log sigma moves a row's sd by the noise's share sigma^2 / s^2 of it
        n_modes, n_within, n_share = _components(log_noise.reshape(C, -1, 1))
        se = float(np.sqrt((n_modes + n_within)[0] / C))
        with np.errstate(over="ignore", invalid="ignore"):
            weight = np.exp(2.0 * np.mean(log_noise)) / scale**2
        weight = np.where(np.isfinite(weight), np.minimum(weight, 1.0), 1.0)  # overflowed: all
        parts.append((float(2.0 * _PHI_1 * se * np.mean(weight)), n_share))
    return parts


_PHI_1 = float(np.exp(-0.5) / np.sqrt(2.0 * np.pi))  # the standard normal density at 1


def pooled_error(values, *, tolerance, scale=None, log_noise=None, max_doublings=30):
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
    log_noise : ndarray of shape (n_chains, n_draws), optional
        Per draw, the log of the Gaussian's noise sd (with ``scale``): its Monte-Carlo error
        moves every row's predictive sd, and adds to the rows' error.
    max_doublings : int, default=30
        Largest number of doublings searched before ``doublings`` is ``inf``.

    Returns
    -------
    PooledError
    """
    C, D, rows = values.shape[:3]
    parts = _parts(values, C, rows, scale, log_noise)
    error = sum(e for e, _ in parts)
    share = (sum(e * e * sh for e, sh in parts) / sum(e * e for e, _ in parts)
             if 0.0 < error < np.inf else 0.0)

    def after(k):  # a doubling halves each part's within variance
        return sum(e * np.sqrt(sh + (1.0 - sh) / 2.0**k) for e, sh in parts)

    doublings = next((float(k) for k in range(max_doublings + 1) if after(k) <= tolerance),
                     np.inf)
    return PooledError(error, float(share), doublings, float(tolerance))
