"""Small shared helpers: random streams, the parameter protocol, exceptions."""

from ._exceptions import ApproximationWarning, ConvergenceWarning, DivergenceError
from ._chunks import row_chunks
from ._params import ParamsMixin
from ._random import Streams, make_rng, make_streams

__all__ = ["ApproximationWarning", "ConvergenceWarning", "DivergenceError", "ParamsMixin",
           "Streams", "make_rng", "make_streams", "row_chunks"]
