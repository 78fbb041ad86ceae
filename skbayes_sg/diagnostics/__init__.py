"""Convergence and accuracy diagnostics on ``(n_chains, n_draws, n_params)`` draws.

Rank-normalised split R-hat and bulk/tail effective sample size follow Vehtari et al. (2021); the
kernel Stein discrepancy (inverse multiquadric kernel) needs only the scores ``grad log pi`` at the
samples; ``gaussian_kl`` compares moment-matched Gaussians in closed form.
"""

from ._assess import (ESS_PER_CHAIN, MIN_DRAWS, RHAT_MAX, Assessment, assess, convergence_problems,
                      longer_factor)
from ._autocorr import autocorrelation, integrated_time
from ._ess import effective_sample_size
from ._ksd import gaussian_kl, kernel_stein_discrepancy
from ._pooled import POOLED_TOLERANCE, PooledError, pooled_error
from ._rhat import split_rhat
from ._summary import format_table, summarize

__all__ = [
    "Assessment", "ESS_PER_CHAIN", "MIN_DRAWS", "RHAT_MAX", "assess", "convergence_problems",
    "autocorrelation", "effective_sample_size", "format_table", "gaussian_kl", "integrated_time",
    "kernel_stein_discrepancy", "longer_factor", "POOLED_TOLERANCE", "PooledError", "pooled_error",
    "split_rhat", "summarize",
]
