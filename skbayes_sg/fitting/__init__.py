"""The fit engine: from validated data to stored draws, without scikit-learn's estimator API.

The estimators validate their inputs and hand this package a posterior and their settings; it
resolves every ``"auto"``, runs the preprocessing (mode, Laplace approximation, the strategy's
data, tuning), samples the chains and extends them until the verdict passes.
"""

from ._extend import doublings_needed, extend_until_converged
from ._fit import Prepared, check_combination, prepare, resolve, sample, sample_with_retries
from ._starts import STARTS, ChainStarts
from ._tuning import AUTO_BATCH, AUTO_BATCH_MAX, Tuning, tune

__all__ = ["AUTO_BATCH", "AUTO_BATCH_MAX", "STARTS", "ChainStarts", "Prepared", "Tuning",
           "check_combination", "doublings_needed", "extend_until_converged", "prepare",
           "resolve", "sample", "sample_with_retries", "tune"]
