"""The scikit-learn estimators (the only layer that knows scikit-learn)."""

from ._linear import BayesianLinearRegression
from ._logistic import BayesianLogisticRegression
from ._mlp import BayesianMLPClassifier
from ._mlp_regressor import BayesianMLPRegressor

__all__ = ["BayesianLinearRegression", "BayesianLogisticRegression", "BayesianMLPClassifier",
           "BayesianMLPRegressor"]
