"""Subsampling strategies: where to look (index samplers) x how to correct.

Use a string (``subsampling="control_variates"``) or an object.
"""

from ._base import BaseStrategy, GradientEstimator, Problem
from ._control_variates import ControlVariates
from ._index import UniformIndex
from ._plain import Full, Uniform

# [imports: stratified, compressed]
# [imports: preferential, preferential_cv, adaptive]
# [imports: svrg, ewsg]

SUBSAMPLING = {
    "uniform": Uniform,
    "full": Full,
    "control_variates": ControlVariates,
    # [registry: stratified, compressed]
    # [registry: preferential, preferential_cv, adaptive]
    # [registry: svrg, ewsg]
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
    # [all: stratified, compressed]
    # [all: preferential, preferential_cv, adaptive]
    # [all: svrg, ewsg]
]
