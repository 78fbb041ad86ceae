"""Small shared helpers: random streams, the parameter protocol, exceptions."""

from ._exceptions import (ApproximationWarning, ConvergenceWarning, DivergenceError,
                          SkbayesSGWarning)
from ._chunks import row_chunks
from ._params import ParamsMixin
from ._random import Streams, make_rng, make_streams
from ._scale import location_scale, standardize
from ._threads import blas_threads, one_blas_thread
from ._warn import user_stacklevel, warn_user

__all__ = ["ApproximationWarning", "ConvergenceWarning", "DivergenceError", "ParamsMixin",
           "SkbayesSGWarning", "Streams", "blas_threads", "location_scale", "make_rng",
           "make_streams", "one_blas_thread", "row_chunks", "standardize", "user_stacklevel",
           "warn_user"]
