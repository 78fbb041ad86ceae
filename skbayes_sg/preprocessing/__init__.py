"""Everything done once in ``fit`` before sampling: mode, Laplace, pilots."""

from ._laplace import DENSE_MAX_PARAMS, laplace_covariance, whitened_curvature
from ._mode import adam_mode, find_mode, lbfgs_mode
from ._pilot import gradient_noise, laplace_draws, power_curvature

__all__ = [
    "DENSE_MAX_PARAMS",
    "adam_mode",
    "find_mode",
    "gradient_noise",
    "laplace_covariance",
    "laplace_draws",
    "lbfgs_mode",
    "power_curvature",
    "whitened_curvature",
]
