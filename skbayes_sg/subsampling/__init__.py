"""Subsampling strategies: where to look (index samplers) x how to correct.

Use a string (``subsampling="control_variates"``) or an object
(``Stratified(n_clusters=10, correction="svrg")``).  See
:mod:`~skbayes_sg.subsampling._base` for the protocol.
"""

from types import MappingProxyType

from ._adaptive import Adaptive, AdaptiveSizeIndex
from ._base import CORRECTIONS, BaseStrategy, IndexedStrategy, StrategyData
from ._compressed import Compressed
from ._corrections import BaseCorrection, ControlVariate, PlainCorrection
from ._estimator import ExactGradient, GradientEstimator
from ._ewsg import EWSG
from ._index import AllRows, BlockIndex, UniformIndex
from ._preferential import Preferential, PreferentialCV, WeightedIndex
from ._rows import ROW_NEEDS, InMemoryRows, rows_of
from ._stratified import Stratified, StratifiedIndex
from ._svrg import SVRGAnchor
from ._uniform import SVRG, ControlVariates, Full, Uniform

SUBSAMPLING = MappingProxyType({
    strategy.name: strategy
    for strategy in (Uniform, Full, ControlVariates, Stratified, Compressed, Preferential,
                     PreferentialCV, Adaptive, SVRG, EWSG)
})

__all__ = [
    "CORRECTIONS", "SUBSAMPLING", "BaseStrategy", "IndexedStrategy", "StrategyData", "Adaptive",
    "Compressed",
    "ControlVariates", "EWSG", "Full", "Preferential", "PreferentialCV", "SVRG", "Stratified",
    "Uniform", "BaseCorrection", "ControlVariate", "PlainCorrection", "SVRGAnchor",
    "AdaptiveSizeIndex", "AllRows", "BlockIndex", "StratifiedIndex", "UniformIndex",
    "WeightedIndex", "ExactGradient", "GradientEstimator", "ROW_NEEDS", "InMemoryRows",
    "rows_of",
]
