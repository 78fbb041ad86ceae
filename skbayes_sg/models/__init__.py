"""Likelihoods: per-example negative log-likelihood gradients, no data, no RNG.

See :mod:`skbayes_sg.models._base` for the protocol every model follows.
"""

from ._arrays import as_float64, design, minibatch_dtype
from ._priors import GaussianPrior, NoisePrior
from ._blocks import BlockCovariance
from ._coupled import CoupledInterceptCovariance
from ._kronecker import KroneckerCovariance
from ._linear import GaussianLinearModel
from ._logistic import LogisticModel
from ._lowrank import LowRankCovariance
from ._mlp import MLPModel
from ._mlp_regression import MLPRegressionModel
from ._posterior import Laplace, Posterior
from ._sparse import ChainRows

__all__ = [
    "BlockCovariance", "ChainRows", "CoupledInterceptCovariance", "GaussianPrior", "NoisePrior",
    "GaussianLinearModel", "KroneckerCovariance", "LogisticModel", "LowRankCovariance", "MLPModel",
    "MLPRegressionModel", "Laplace", "Posterior", "as_float64", "design", "minibatch_dtype",
]
