"""skbayes_sg: Bayesian scikit-learn estimators sampled by variance-reduced SG-MCMC.

Three estimators -- :class:`BayesianLogisticRegression`,
:class:`BayesianLinearRegression`, :class:`BayesianMLPClassifier` -- whose
``fit`` draws posterior samples by stochastic-gradient MCMC (``sampler=``)
with a choice of gradient estimators (``subsampling=``).
"""

from .estimators import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianMLPClassifier,
)

__version__ = "0.1.0"

__all__ = [
    "BayesianLinearRegression",
    "BayesianLogisticRegression",
    "BayesianMLPClassifier",
    "__version__",
]
