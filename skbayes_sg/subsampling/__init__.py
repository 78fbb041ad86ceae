"""Subsampling strategies: where to look (index samplers) x how to correct.

Use a string (``subsampling="control_variates"``) or an object.
"""

from ._base import BaseStrategy, GradientEstimator, Problem
from ._control_variates import ControlVariates
from ._index import UniformIndex
from ._plain import Full, Uniform

from ._compressed import Compressed
from ._stratified import Stratified, StratifiedIndex
# [imports: stratified, compressed]
from ._adaptive import Adaptive
from ._preferential import Preferential, PreferentialCV, PreferentialIndex
# [imports: preferential, preferential_cv, adaptive]
from ._ewsg import EWSG
from ._svrg import SVRG
# [imports: svrg, ewsg]

SUBSAMPLING = {
    "uniform": Uniform,
    "full": Full,
    "control_variates": ControlVariates,
    "stratified": Stratified,
    "compressed": Compressed,
    # [registry: stratified, compressed]
    "preferential": Preferential,
    "preferential_cv": PreferentialCV,
    "adaptive": Adaptive,
    # [registry: preferential, preferential_cv, adaptive]
    "svrg": SVRG,
    "ewsg": EWSG,
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
    "Compressed",
    "Stratified",
    "StratifiedIndex",
    # [all: stratified, compressed]
    "Adaptive",
    "Preferential",
    "PreferentialCV",
    "PreferentialIndex",
    # [all: preferential, preferential_cv, adaptive]
    "EWSG",
    "SVRG",
    # [all: svrg, ewsg]
]
