"""The one convergence assessment used by ``fit``, ``summary()``, progress and benchmarks."""

from typing import NamedTuple

import numpy as np

from ._ess import effective_sample_size
from ._rhat import split_rhat

__all__ = ["ESS_MIN", "MIN_DRAWS", "RHAT_MAX", "Assessment", "assess", "convergence_problems"]

RHAT_MAX = 1.1  # largest acceptable rank-normalised split R-hat
ESS_MIN = 20  # smallest acceptable bulk and tail ESS (all chains together)
MIN_DRAWS = 4  # draws per chain below which ESS and R-hat are undefined (NaN)


class Assessment(NamedTuple):
    """Per-parameter ``rhat``, ``ess_bulk``, ``ess_tail`` and the ``problems`` found.

    ``problems`` is a tuple of plain-language sentences, empty when every
    R-hat is at most :data:`RHAT_MAX` and every bulk and tail ESS at least
    :data:`ESS_MIN`.
    """

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray
    problems: tuple

    @property
    def converged(self):
        """True when no problem was found."""
        return not self.problems


def _count(mask, what):
    return f"{what} for {int(mask.sum())} of {mask.size} parameters"


def convergence_problems(rhat, ess_bulk, ess_tail, hint=""):
    """Plain-language problems of per-parameter R-hat and ESS columns.

    ``hint`` is appended to the R-hat sentence (e.g. the MLP's note that raw weights are not
    identified).  All-NaN columns (too few draws or constant draws) give one sentence saying so.
    """
    if np.all(np.isnan(rhat)):
        return (f"ESS and R-hat are undefined (fewer than {MIN_DRAWS} draws per chain, or "
                "constant draws): increase n_draws.",)
    out = []
    with np.errstate(invalid="ignore"):
        bad_rhat, bad_bulk, bad_tail = rhat > RHAT_MAX, ess_bulk < ESS_MIN, ess_tail < ESS_MIN
    if bad_rhat.any():
        out.append(f"{_count(bad_rhat, f'R-hat above {RHAT_MAX}')} (max {np.nanmax(rhat):.3f}): "
                   f"the chains disagree; run longer (increase n_warmup and n_draws).{hint}")
    meaning = {"bulk": f"posterior means carry a Monte-Carlo error above "
                       f"{100 / np.sqrt(ESS_MIN):.0f}% of a posterior sd",
               "tail": "the 5% and 95% quantiles are unreliable"}
    for kind, bad, ess in (("bulk", bad_bulk, ess_bulk), ("tail", bad_tail, ess_tail)):
        if bad.any():
            out.append(f"{_count(bad, f'{kind} ESS below {ESS_MIN}')} (min {np.nanmin(ess):.0f}):"
                       f" {meaning[kind]}; run longer (increase n_draws).")
    return tuple(out)


def assess(draws, hint=""):
    """Rank-normalised split R-hat, bulk and tail ESS of ``draws``, judged.

    Parameters
    ----------
    draws : ndarray of shape (n_chains, n_draws, n_params)
    hint : str, optional
        Appended to the R-hat problem (see :func:`convergence_problems`).

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
    return Assessment(*cols, convergence_problems(*cols, hint=hint))
