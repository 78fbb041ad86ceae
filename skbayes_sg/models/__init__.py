"""Likelihoods: per-example negative log-likelihood gradients, no data, no RNG.

See :mod:`skbayes_sg.models._base` for the protocol every model follows.
"""

from ._base import GaussianPrior, NoisePrior, as_float64
from ._linear import GaussianLinearModel
from ._logistic import LogisticModel
from ._mlp import MLPModel

__all__ = [
    "GaussianPrior", "NoisePrior", "GaussianLinearModel", "LogisticModel", "MLPModel", "as_float64",
]
