"""skbayes_sg: Bayesian scikit-learn estimators sampled by variance-reduced SG-MCMC.

Four estimators -- :class:`BayesianLogisticRegression`,
:class:`BayesianLinearRegression`, :class:`BayesianMLPClassifier`,
:class:`BayesianMLPRegressor` -- whose
``fit`` draws posterior samples by stochastic-gradient MCMC (``sampler=``)
with a choice of gradient estimators (``subsampling=``).  Their warnings --
:class:`SkbayesSGWarning` and its subclasses :class:`ConvergenceWarning` and
:class:`ApproximationWarning` -- are the library's own, not scikit-learn's.
"""

import importlib

from .utils._exceptions import (ApproximationWarning, ConvergenceWarning, DivergenceError,
                                SkbayesSGWarning)

__version__ = "0.1.0"

__all__ = [
    "BayesianLinearRegression", "BayesianLogisticRegression", "BayesianMLPClassifier",
    "BayesianMLPRegressor", "ApproximationWarning", "ConvergenceWarning", "DivergenceError", "SkbayesSGWarning",
    "__version__",
]


def __getattr__(name):
    """Load the estimators on first use, so ``import skbayes_sg.models`` stays light."""
    if name in __all__[:4]:
        return getattr(importlib.import_module(".estimators", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
