"""The fit engine: from a posterior and the estimator's settings to stored draws.

It knows nothing of scikit-learn's estimator API.  The estimators validate their inputs and
hand this package a :class:`~skbayes_sg.models.Posterior` and a :class:`FitSettings` record;
:func:`fit_posterior` resolves every ``"auto"`` (:mod:`._plan`), runs the preprocessing (mode,
Laplace approximation, curvature, the strategy's data, tuning: a :class:`Plan`), samples the
chains and extends them until the verdict passes, and returns one :class:`FitResult` record.
"""

from ._config import DEFAULT_CONFIG, FitConfig
from ._engine import FitResult, check_settings, fit_posterior
from ._extend import doublings_needed, extend_until_converged
from ._compat import check_combination
from ._fit import Run, sample, sample_with_retries
from ._plan import FitSettings, resolve
from ._prepare import Plan, prepare
from ._starts import STARTS, ChainStarts
from ._tuning import Curvature, Tuning, measure_curvature, tune

__all__ = ["DEFAULT_CONFIG", "STARTS", "ChainStarts", "Curvature", "FitConfig", "FitResult",
           "FitSettings", "Plan", "Run", "Tuning", "check_combination", "check_settings",
           "doublings_needed", "extend_until_converged", "fit_posterior", "measure_curvature",
           "prepare", "resolve", "sample", "sample_with_retries", "tune"]
