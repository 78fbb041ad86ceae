"""The one convergence assessment used by ``fit``, ``summary()``, progress and benchmarks.

The standard is that of Vehtari et al. (2021): rank-normalised split R-hat at most
:data:`RHAT_MAX` = 1.01 and bulk and tail ESS at least :data:`ESS_PER_CHAIN` = 100 per chain
(400 for the default four chains), for every parameter.
"""

from typing import NamedTuple

import numpy as np

from ._ess import effective_sample_size
from ._rhat import split_rhat

__all__ = ["ESS_PER_CHAIN", "MIN_DRAWS", "RHAT_MAX", "Assessment", "assess",
           "convergence_problems"]

RHAT_MAX = 1.01  # largest acceptable rank-normalised split R-hat
ESS_PER_CHAIN = 100  # smallest acceptable bulk and tail ESS, per chain
MIN_DRAWS = 4  # draws per chain below which ESS and R-hat are undefined (NaN)


class Assessment(NamedTuple):
    """Per-parameter ``rhat``, ``ess_bulk``, ``ess_tail`` and the ``problems`` found.

    ``problems`` is a tuple of plain-language sentences, empty when every R-hat is at most
    :data:`RHAT_MAX` and every bulk and tail ESS at least :data:`ESS_PER_CHAIN` per chain.
    """

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    problems: tuple

    @property
    def converged(self):
        """True when no problem was found."""
        return not self.problems


def _count(mask, what, noun):
    return f"{what} for {int(mask.sum())} of {mask.size} {noun}"


def convergence_problems(rhat, ess_bulk, ess_tail, n_chains, *, hint="", noun="parameters"):
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
        out.append("Run longer: increase n_draws (and n_warmup).")
    return tuple(out)


def assess(draws, *, hint="", noun="parameters"):
    """Rank-normalised split R-hat, bulk and tail ESS of ``draws``, judged.

    Parameters
    ----------
    draws : ndarray of shape (n_chains, n_draws, n_quantities)
        Parameters, or any scalar functions of them (the MLP's predictive log-probabilities).
    hint, noun : str, optional
        See :func:`convergence_problems`.

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
        cols = (split_rhat(draws), effective_sample_size(draws),
                effective_sample_size(draws, method="tail"))
    return Assessment(*cols, convergence_problems(*cols, draws.shape[0], hint=hint,
                                                  noun=noun))
