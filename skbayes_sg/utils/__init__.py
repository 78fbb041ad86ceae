"""Small shared helpers: random streams, the parameter protocol, exceptions."""

from ._exceptions import (ApproximationWarning, ConvergenceWarning, DivergenceError,
                          SkbayesSGWarning)
from ._checks import (WEIGHT_SUM_MAX, X_CURVATURE_FRACTION, check_class_weight,
                      check_weight_total, check_X_scale)
from ._chunks import row_chunks
from ._params import ParamsMixin
from ._random import Streams, make_rng, make_streams
from ._scale import SAFE_MOMENTS, location_scale, standardize
from ._threads import blas_threads, one_blas_thread
from ._warn import user_stacklevel, warn_user

__all__ = ["ApproximationWarning", "ConvergenceWarning", "DivergenceError", "ParamsMixin",
           "SAFE_MOMENTS", "SkbayesSGWarning", "Streams", "WEIGHT_SUM_MAX", "X_CURVATURE_FRACTION",
           "check_X_scale", "check_class_weight", "check_weight_total", "blas_threads", "location_scale", "make_rng",
           "make_streams", "one_blas_thread", "row_chunks", "standardize", "user_stacklevel",
           "warn_user"]
