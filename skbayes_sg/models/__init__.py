"""Likelihoods: per-example negative log-likelihood gradients, no data, no RNG.

See :mod:`skbayes_sg.models._base` for the protocol every model follows.
"""

from ._base import GaussianPrior, NoisePrior, as_float64, design
from ._linear import GaussianLinearModel
from ._logistic import LogisticModel
from ._mlp import MLPModel
from ._posterior import Laplace, Posterior

__all__ = [
    "GaussianPrior", "NoisePrior", "GaussianLinearModel", "LogisticModel", "MLPModel", "Laplace",
    "Posterior", "as_float64", "design",
]
