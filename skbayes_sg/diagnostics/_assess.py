"""The one convergence assessment used by ``fit``, ``summary()``, progress and benchmarks.

The standard is that of Vehtari et al. (2021): rank-normalised split R-hat at most
:data:`RHAT_MAX` = 1.01 and bulk and tail ESS at least :data:`ESS_PER_CHAIN` = 100 per chain
(400 for the default four chains), for every parameter.

With many parameters the R-hat half binds: chains that mix perfectly still give a largest R-hat
above 1.01 by chance unless every chain holds many effective draws (:func:`ess_for_rhat`; 10,000
parameters on four chains of 1,000 draws need a bulk ESS near 480 per chain, and at 110-160 per
chain -- which passes the ESS half -- the largest R-hat is 1.02-1.04).  The advice then says how
much longer to run.
"""

from functools import partial
from typing import NamedTuple

import numpy as np
from scipy.stats import chi2

from ._ess import (_as_draws, _by_columns, _ess_tail, _geyer_ess, _rank_normalize, _split_chains,
                   TAIL_PROBS, sorted_median, sorted_quantile)
from ._rhat import _psrf, _rhat_folded

__all__ = ["ESS_PER_CHAIN", "MIN_DRAWS", "RHAT_MAX", "Assessment", "assess",
           "convergence_problems", "ess_for_rhat", "longer_factor"]

RHAT_MAX = 1.01  # largest acceptable rank-normalised split R-hat
ESS_PER_CHAIN = 100  # smallest acceptable bulk and tail ESS, per chain
MIN_DRAWS = 4  # draws per chain below which ESS and R-hat are undefined (NaN)


class Assessment(NamedTuple):
    """Per-parameter ``rhat``, ``ess_bulk``, ``ess_tail`` and the ``problems`` found.

    ``problems`` is a tuple of plain-language sentences, empty when every R-hat is at most
    :data:`RHAT_MAX` and every bulk and tail ESS at least :data:`ESS_PER_CHAIN` per chain.
    ``note`` is an optional short sentence for the warning of a failing verdict.  ``pooled`` is
    the :class:`~skbayes_sg.diagnostics.PooledError` of a verdict taken on the pooled predictive
    (the networks'): it then decides, and projects the doublings still needed; ``off_data``
    is the same error on rows away from the training data (the networks' second judgement).
    """

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    problems: tuple
    note: str = ""
    pooled: object = None
    off_data: object = None

    @property
    def converged(self):
        """True when no problem was found."""
        return not self.problems


def ess_for_rhat(n_quantities, n_chains, n_draws, *, alpha=0.1):
    """Bulk ESS per chain at which mixing chains keep every R-hat at most :data:`RHAT_MAX`.

    For ``m = 2 n_chains`` split chains of ``n = n_draws / 2`` draws with ``e`` effective draws
    each, ``R^2 ≈ 1 - 1/n + chi2_{m-1} / ((m - 1) e)`` (the between-chain variance of the means is
    ``1/e`` of the within-chain one).  Asking the largest of ``2 n_quantities`` such statistics
    (bulk and folded) to stay below :data:`RHAT_MAX` with probability ``1 - alpha`` (Bonferroni)
    gives ``e``; the result is ``2 e``.  On independent and AR(1) draws of 10,000 quantities the
    predicted largest R-hat was within 0.004 of the simulated one from 50 to 700 ESS per chain.

    Parameters
    ----------
    n_quantities, n_chains, n_draws : int
        Quantities judged, chains, stored draws per chain.
    alpha : float, default=0.1

    Returns
    -------
    float
    """
    m = 2 * int(n_chains)
    if m < 2 or n_draws < MIN_DRAWS:
        return np.inf
    q = chi2.isf(alpha / (2 * max(int(n_quantities), 1)), m - 1)
    return float(2.0 * q / ((m - 1) * (RHAT_MAX**2 - 1.0 + 2.0 / n_draws)))


def longer_factor(rhat, ess_bulk, ess_tail, n_chains, n_draws):
    """``(factor, need_ess)``: about how much longer to sample, and the bulk ESS per chain that
    keeps every R-hat at most :data:`RHAT_MAX` (:func:`ess_for_rhat`).

    The factor is the larger of the R-hat and the ESS shortfalls, ESS growing like the sampling
    steps; NaN where it cannot be estimated (no ESS computed: an early assessment; no shortfall).

    Parameters
    ----------
    rhat, ess_bulk, ess_tail : ndarray
        Per-quantity columns (ESS of all chains together).
    n_chains, n_draws : int
        Chains and stored draws per chain (``n_draws=0``: unknown).

    Returns
    -------
    factor, need_ess : float
    """
    if np.all(np.isnan(ess_bulk)) or np.all(np.isnan(rhat)):
        return np.nan, np.inf
    rhat_bad = bool(np.nanmax(rhat) > RHAT_MAX)
    ess_min = ESS_PER_CHAIN * int(n_chains)
    with np.errstate(invalid="ignore", divide="ignore"):
        need_ess = ess_for_rhat(rhat.size, n_chains, n_draws) if n_draws else np.inf
        factor = max(need_ess * n_chains / np.nanmedian(ess_bulk) if rhat_bad else 0.0,
                     ess_min / np.nanmin(np.minimum(ess_bulk, ess_tail)))
    return (float(factor) if np.isfinite(factor) and factor > 1.0 else np.nan), need_ess


def _longer(rhat, ess_bulk, ess_tail, n_chains, n_draws):
    """``"Run longer"`` advice; given ``n_draws``, about how much longer (:func:`longer_factor`;
    the plain advice when it cannot be estimated)."""
    factor, need_ess = longer_factor(rhat, ess_bulk, ess_tail, n_chains, n_draws)
    if np.isnan(factor):
        return "Run longer: increase n_draws (and n_warmup)."
    rhat_bad = bool(np.nanmax(rhat) > RHAT_MAX)
    why = (f"; with {rhat.size} quantities, chains that mix pass R-hat <= {RHAT_MAX} only with "
           f"a bulk ESS near {need_ess:.0f} per chain" if rhat_bad and rhat.size > 1 else "")
    return (f"Run longer, about {factor:.1f}x the sampling{why}: increase n_draws (and "
            "n_warmup) or max_doublings.")


def _count(mask, what, noun):
    return f"{what} for {int(mask.sum())} of {mask.size} {noun}"


def convergence_problems(rhat, ess_bulk, ess_tail, n_chains, *, hint="", noun="parameters",
                         n_draws=None):
    """Plain-language problems of per-parameter R-hat and ESS columns.

    Parameters
    ----------
    rhat, ess_bulk, ess_tail : ndarray
        Per-quantity columns (ESS of all chains together).
    n_chains : int
        The ESS threshold is ``ESS_PER_CHAIN * n_chains``.
    hint : str, optional
        Appended to the R-hat sentence (e.g. what the quantities are).
    noun : str, optional
        What the columns are, for the sentences.
    n_draws : int, optional
        Stored draws per chain: the advice then says about how much longer to run
        (:func:`ess_for_rhat`).
    """
    if np.all(np.isnan(rhat)):
        return (f"ESS and R-hat are undefined (fewer than {MIN_DRAWS} draws per chain, or "
                "constant draws): increase n_draws.",)
    ess_min = ESS_PER_CHAIN * int(n_chains)
    out = []
    with np.errstate(invalid="ignore"):
        bad_rhat, bad_bulk, bad_tail = rhat > RHAT_MAX, ess_bulk < ess_min, ess_tail < ess_min
    if bad_rhat.any():
        out.append(f"{_count(bad_rhat, f'R-hat above {RHAT_MAX}', noun)} (max {np.nanmax(rhat):.3f}):"
                   f" the chains disagree.{hint}")
    meaning = {"bulk": "posterior means carry a Monte-Carlo error above "
                       f"{100 / np.sqrt(ess_min):.0f}% of a posterior sd",
               "tail": "the 5% and 95% quantiles are unreliable"}
    for kind, bad, ess in (("bulk", bad_bulk, ess_bulk), ("tail", bad_tail, ess_tail)):
        if bad.any():
            out.append(f"{_count(bad, f'{kind} ESS below {ess_min}', noun)} (min {np.nanmin(ess):.0f},"
                       f" {ESS_PER_CHAIN} per chain): {meaning[kind]}.")
    if out:
        out.append(_longer(rhat, ess_bulk, ess_tail, n_chains, n_draws or 0))
    return tuple(out)


def assess(draws, *, hint="", noun="parameters", early=False):
    """Rank-normalised split R-hat, bulk and tail ESS of ``draws``, judged.

    Parameters
    ----------
    draws : ndarray of shape (n_chains, n_draws, n_quantities)
        Parameters, or any scalar functions of them (the MLP's predictive log-probabilities).
    hint, noun : str, optional
        See :func:`convergence_problems`.
    early : bool, default=False
        Stop at a failing R-hat: the ESS of a column block with an R-hat above
        :data:`RHAT_MAX` is left NaN (the verdict fails on R-hat alone, and a caller that will
        run longer anyway -- ``fit``'s doublings -- has no use for them; for the default
        logistic fit's 51 quantities half the time of an assessment).  The R-hat, the
        convergence and the passing verdicts are those of the full assessment.

    Returns
    -------
    Assessment
        Columns are NaN below :data:`MIN_DRAWS` draws per chain.

    References
    ----------
    Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C.
    (2021). Rank-normalization, folding, and localization: an improved R-hat
    for assessing convergence of MCMC. Bayesian Analysis, 16(2), 667-718.
    """
    if draws.shape[1] < MIN_DRAWS:
        nan = np.full(draws.shape[-1], np.nan)
        cols = (nan, nan.copy(), nan.copy())
    else:
        stats = partial(_statistics, early=early)
        cols = tuple(_by_columns(_as_draws(draws)[0], stats, n_out=3))
    return Assessment(*cols, convergence_problems(*cols, draws.shape[0], hint=hint,
                                                  noun=noun, n_draws=draws.shape[1]))


def _statistics(block, early=False):
    """``split_rhat``, bulk and tail ``effective_sample_size`` of a column block, in one pass:
    the bulk R-hat and the bulk ESS share the rank normalisation of the split chains, whose sort
    also gives the median of the folded R-hat and, when no middle draw was dropped, the tail
    quantiles (the same values as the three calls; 79,510 network weights: one sort fewer per
    weight, and no partitions: a third of the statistics' time went to them).  ``early``: NaN
    ESS when an R-hat fails (:func:`assess`)."""
    split = _split_chains(block)
    z, s = _rank_normalize(split, sorted_out=True)
    rhat = np.maximum(_psrf(z), _rhat_folded(split, sorted_median(s)))
    if early and np.any(rhat > RHAT_MAX):
        nan = np.full_like(rhat, np.nan)
        return np.stack([rhat, nan, nan])
    cuts = None
    if split.shape[0] * split.shape[1] == block.shape[0] * block.shape[1]:
        cuts = [sorted_quantile(s, q) for q in TAIL_PROBS]
    return np.stack([rhat, _geyer_ess(z), _ess_tail(block, TAIL_PROBS, cuts)])
