"""Subsampling strategies: where to look (index samplers) x how to correct.

Use a string (``subsampling="control_variates"``) or an object.
"""

from ._base import BaseStrategy, GradientEstimator, Problem
from ._control_variates import ControlVariates
from ._index import UniformIndex
from ._plain import Full, Uniform

SUBSAMPLING = {
    "uniform": Uniform,
    "full": Full,
    "control_variates": ControlVariates,
}

__all__ = [
    "BaseStrategy",
    "ControlVariates",
    "Full",
    "GradientEstimator",
    "Problem",
    "SUBSAMPLING",
    "Uniform",
    "UniformIndex",
]
